"""The fitted laws behind a frontier report, and their curves, for the frontier plot.

`smelt-match frontier --json` holds each law's compute-optimal point at the requested budgets only, not the
law's parameters, so a curve between the budgets is computed here from the law files the report names
(``laws[i].file``), with the closed forms of docs/scaling.md:

    L(x, y) = E + P x^-p + Q y^-q  subject to  C = k x y
    chinchilla: x = N, k = 6, P = A, Q = B, p = alpha, q = beta
    smelt (at sparsity S): x = F, k = 1, P = A (1 - S)^b, Q = K, p = a, q = c
    x*(C) = (p P / (q Q))^(1/(p+q)) (C/k)^(q/(p+q)),  y* = C / (k x*),  L*(C) = L(x*, y*)

The tests check that these curves pass through the report's own points (to 1e-9 relative), so the plot and the
C++ library agree.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ._inputs import FrontierInput
from ._report_fields import Reader, ReportError, load_json

_PARAMS = {"chinchilla": ("E", "A", "B", "alpha", "beta"), "smelt": ("E", "A", "a", "b", "K", "c")}


@dataclass(frozen=True)
class Law:
    """One fitted law reduced to the frontier problem's constants (docs/scaling.md, section frontier)."""

    name: str
    form: str
    E: float
    P: float
    Q: float
    p: float
    q: float
    k: float

    def loss(self, size: float, compute: float) -> float:
        """The law's loss at model size x (N, or F FLOPs per token) trained with compute C."""
        tokens = compute / (self.k * size)
        return self.E + self.P * size**-self.p + self.Q * tokens**-self.q

    def optimal_size(self, compute: float) -> float:
        """x*(C), computed in logs so that no intermediate power overflows."""
        p, q = self.p, self.q
        log_g = (math.log(p * self.P) - math.log(q * self.Q)) / (p + q)
        return math.exp(log_g + q / (p + q) * math.log(compute / self.k))

    def frontier_loss(self, compute: float) -> float:
        return self.loss(self.optimal_size(compute), compute)

    @staticmethod
    def safe(f, *args: float) -> float:
        """f(*args), or NaN where a hand-edited law or report leaves the doubles (matplotlib skips NaN)."""
        try:
            return f(*args)
        except (OverflowError, ZeroDivisionError, ValueError):
            return math.nan


def read_law_file(path: str, sparsity: float) -> list[Law]:
    """Every law of a law file (``fit --out``) or a single hand-written law object, in file order."""
    data, name = load_json(path, "laws")
    r = Reader(name, "laws")
    if isinstance(data, dict) and "laws" in data:
        entries = r.objects(data, "", "laws", nonempty=True)
    elif isinstance(data, dict):
        entries = [("", data)]
    else:
        r.fail("(top level)", "must be a law file object or a law object", data)
        entries = []
    laws: list[Law] = []
    for path_i, entry in entries:
        form = r.string(entry, path_i, "form", allowed=tuple(_PARAMS))
        label = entry.get("label", "")
        params = r.object(entry, path_i, "params")
        if form is None or params is None:
            continue
        where = f"{path_i}.params" if path_i else "params"
        values = {key: r.number(params, where, key, positive=key != "E" and key != "b") for key in _PARAMS[form]}
        if any(v is None for v in values.values()):
            continue
        laws.append(frontier_constants(label if isinstance(label, str) else "", form, values, sparsity))
    r.raise_if_any()
    return laws


def frontier_constants(name: str, form: str, v: dict[str, float], sparsity: float) -> Law:
    if form == "chinchilla":
        return Law(name, form, v["E"], v["A"], v["B"], v["alpha"], v["beta"], 6.0)
    return Law(name, form, v["E"], v["A"] * (1.0 - sparsity) ** v["b"], v["K"], v["a"], v["c"], 1.0)


def resolve(file: str, report_name: str) -> str:
    """A law file as the report names it: relative to the working directory, else to the report's folder."""
    if os.path.isabs(file) or os.path.exists(file) or report_name.startswith("<"):
        return file
    beside = os.path.join(os.path.dirname(report_name), file)
    return beside if os.path.exists(beside) else file


def frontier_laws(f: FrontierInput, report_name: str, files: Sequence[str] | None) -> list[Law]:
    """The report's laws, in its order, read from their files: law i is the k-th law of its file when it is
    the k-th report entry naming that file (frontier reads every law of every file in order)."""
    if files is not None:
        names = list(files)
        read = [law for path in names for law in read_law_file(path, f.sparsity)]
        if len(read) != len(f.laws):
            raise ReportError(
                f"--law files {', '.join(names)}: hold {len(read)} laws: must hold the "
                f"{len(f.laws)} laws of frontier report '{report_name}'"
            )
        return [rename(law, entry["name"]) for law, entry in zip(read, f.laws)]
    by_file: dict[str, list[Law]] = {}
    out = []
    for i, entry in enumerate(f.laws):
        path = resolve(entry["file"], report_name)
        if path not in by_file:
            by_file[path] = read_law_file(path, f.sparsity)
        k = sum(1 for e in f.laws[:i] if e["file"] == entry["file"])
        if k >= len(by_file[path]):
            raise ReportError(
                f"while reading frontier report '{report_name}':\n  laws[{i}].file = "
                f'"{entry["file"]}": holds {len(by_file[path])} laws, not the {k + 1} the '
                "report names there"
            )
        out.append(rename(by_file[path][k], entry["name"]))
    return out


def check_agreement(f: FrontierInput, report_name: str, fitted: list[Law]) -> None:
    """Refuses law files that are not the ones the report was computed from (refitted or edited since): their
    curves would miss the report's points. The closed form here agrees with the library's to 2.2e-16 relative
    (one ulp) from 1e16 to 1e28 FLOPs, so 1e-9 only catches a different law."""
    errors = []
    for budget in f.budgets:
        for law, point in zip(fitted, budget["laws"]):
            at = f"  law '{law.name}' has"
            size, loss = law.safe(law.optimal_size, budget["compute"]), law.safe(law.frontier_loss, budget["compute"])
            if not math.isclose(loss, point["loss"], rel_tol=1e-9):
                errors.append(
                    f"{at} frontier loss {loss:.9g} at compute {budget['compute']:g}, the report {point['loss']:.9g}"
                )
            elif not math.isclose(size, point["size"], rel_tol=1e-9):
                errors.append(
                    f"{at} optimal size {size:.9g} at compute {budget['compute']:g}, the report {point['size']:.9g}"
                )
            else:
                continue
            errors[-1] += ": its law file is not the one the report was made from"
    if errors:
        raise ReportError(f"while reading frontier report '{report_name}':\n" + "\n".join(errors))


def rename(law: Law, name: str) -> Law:
    """The report's name for a law (a law file's label, or the file's stem where it has none)."""
    return Law(name, law.form, law.E, law.P, law.Q, law.p, law.q, law.k)
