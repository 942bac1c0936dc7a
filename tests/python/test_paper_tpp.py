"""The SMELT paper's TPP table against frontier's TPP = D* / (F* / 6) = 6 C / F*^2.

The paper's fitted coefficients are not reproduced here, so its table cannot be recomputed from them. What it
can check is the sparsity dependence: for a smelt law, F* ~ (1 - S)^(b / (a + c)), so
TPP(S) / TPP(0.85) = ((1 - S) / 0.15)^(-2b / (a + c)) whatever the other coefficients. A law built to give the
paper's first two cells (TPP 56 at S = 0.85, 78 or 75 at S = 0.95, at C = 1e21) must then give its third (91 or
86 at S = 0.97) within the paper's rounding, through the whole frontier code path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import smelt

C = 1e21
A_EXP = C_EXP = 0.35  # a and c: any positive pair; only b / (a + c) and A / K matter for TPP
K = 2000.0


def law_through(tpp_85: float, tpp_95: float) -> dict:
    # x = 2b / (a + c) from the ratio: tpp_95 / tpp_85 = (0.05 / 0.15)^(-x) = 3^x.
    x = math.log(tpp_95 / tpp_85) / math.log(3)
    b = x * (A_EXP + C_EXP) / 2
    # F* at S = 0.85 from TPP = 6 C / F*^2, then A from F*^(a+c) = a A (1 - S)^b C^c / (c K).
    f_star = math.sqrt(6 * C / tpp_85)
    a_coef = f_star ** (A_EXP + C_EXP) * C_EXP * K / (A_EXP * 0.15**b * C**C_EXP)
    return {"form": "smelt", "params": {"E": 1.8, "A": a_coef, "a": A_EXP, "b": b, "K": K, "c": C_EXP}}


@pytest.mark.parametrize(
    ("arch", "paper"), [("baseline", (56, 78, 91)), ("smelt", (56, 75, 86))]
)
def test_the_papers_tpp_table_follows_the_sparsity_exponent(tmp_path: Path, arch: str, paper: tuple) -> None:
    law_file = tmp_path / f"{arch}.json"
    law_file.write_text(json.dumps(law_through(paper[0], paper[1])))
    got = [smelt.frontier(str(law_file), [C], sparsity=s).budgets[0].laws[0].tpp for s in (0.85, 0.95, 0.97)]
    assert got[0] == pytest.approx(paper[0], rel=1e-9) and got[1] == pytest.approx(paper[1], rel=1e-9)
    # The third cell is predicted: 56 * 5^x = 90.99 (Baseline, x = 0.3016) and 85.90 (SMELT, x = 0.2658).
    assert round(got[2]) == paper[2]
    assert got[2] == pytest.approx(paper[0] * 5 ** (math.log(paper[1] / paper[0]) / math.log(3)), rel=1e-9)
