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
from dataclasses import dataclass

from ._report import Reader, load_json

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


def read_law_file(path: str, sparsity: float) -> list[Law]:
    """Every law of a law file (``fit --out``) or a single hand-written law object, in file order."""
    data, name = load_json(path, "laws")
    r = Reader(name, "laws")
    if isinstance(data, dict) and "laws" in data:
        entries = r.array(data, "", "laws", nonempty=True) or []
        prefix = "laws"
    else:
        entries, prefix = [data], ""
    laws: list[Law] = []
    for i, entry in enumerate(entries):
        path_i = f"{prefix}[{i}]" if prefix else ""
        form = r.string(entry, path_i, "form", allowed=tuple(_PARAMS))
        label = entry.get("label", "") if isinstance(entry, dict) else ""
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
