"""The fitted laws behind a frontier report, and their curves, for the frontier plot.

`smelt-match frontier --json` holds each law's compute-optimal point at the requested budgets only, not the
law's parameters, so the law files the report names (``laws[i].file``) are read here, and the curves between
the budgets are the library's own: the compute-optimal frontier of ``optimal_allocation`` and the loss of a
model of fixed size of ``Law::predict`` (docs/scaling.md), through smelt._core. No closed form is computed in
Python, so the curves pass through the report's own points.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from .. import _core
from .._errors import ReportError
from .._report import read_json
from ._inputs import FrontierInput
from ._report_fields import Reader

_PARAMS = {"chinchilla": ("E", "A", "B", "alpha", "beta"), "smelt": ("E", "A", "a", "b", "K", "c")}


@dataclass(frozen=True)
class Law:
    """One fitted law at the report's sparsity: its form and parameters as its law file holds them."""

    name: str
    form: str
    params: tuple[float, ...]  # in _PARAMS[form] order, the library's parameter_names
    sparsity: float

    def losses(self, size: float, computes: Sequence[float]) -> list[float]:
        """The law's loss at model size x (N, or F FLOPs per token) trained with each compute C; NaN where the
        law gives no finite value (matplotlib leaves a gap)."""
        return _core.law_loss(self.form, list(self.params), self.sparsity, size, list(computes))

    def frontier(self, computes: Sequence[float]) -> tuple[list[float], list[float]]:
        """The compute-optimal sizes x*(C) and losses L*(C) at each compute; NaN where there is none."""
        return _core.law_frontier(self.form, list(self.params), self.sparsity, list(computes))

    def loss(self, size: float, compute: float) -> float:
        return self.losses(size, [compute])[0]

    def optimal_size(self, compute: float) -> float:
        return self.frontier([compute])[0][0]

    def frontier_loss(self, compute: float) -> float:
        return self.frontier([compute])[1][0]


def read_law_file(path: str, sparsity: float) -> list[Law]:
    """Every law of a law file (``fit --out``) or a single hand-written law object, in file order."""
    data, name = read_json(path, "laws")
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
        name_i = label if isinstance(label, str) else ""
        laws.append(Law(name_i, form, tuple(values[k] for k in _PARAMS[form]), sparsity))
    r.raise_if_any()
    return laws


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
    curves would miss the report's points. The curves are the library's, as the report's points are, so 1e-9
    only catches a different law."""
    errors = []
    curves = [law.frontier([budget["compute"] for budget in f.budgets]) for law in fitted]
    for bi, budget in enumerate(f.budgets):
        for law, (sizes, losses), point in zip(fitted, curves, budget["laws"]):
            size, loss = sizes[bi], losses[bi]
            at = f"  law '{law.name}' has"
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
    return Law(name, law.form, law.params, law.sparsity)
