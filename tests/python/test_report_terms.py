"""The count report's term names have one list, its writer's (src/count/report_terms.hpp), which the extension
exports: the report's keys, the plots' terms, smelt.torch's and the typed-report stub all agree with it."""

from __future__ import annotations

import ast
import pathlib

import smelt
from smelt import _core, _report

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_the_report_writes_exactly_the_exported_terms_in_their_order():
    terms = _core.report_terms()
    report = smelt.count(EXAMPLES / "tiny-moe.json", every_layer=True).to_dict()
    assert tuple(report["params"]["terms"]) == terms["params"]
    assert tuple(report["flops_per_token"]["terms"]) == terms["flops"]
    for layer in report["layers"] + report["layer_runs"]:
        assert tuple(layer["params"]) == terms["layer_params"]
        assert tuple(layer["flops_per_visit"]) == terms["layer_flops"] + ("total",)
    assert _report.TERMS == terms


def test_the_typed_report_stub_declares_the_same_terms():
    stub = pathlib.Path(_report.__file__).with_suffix(".pyi")
    classes = {n.name: n for n in ast.parse(stub.read_text()).body if isinstance(n, ast.ClassDef)}

    def fields(name: str) -> tuple[str, ...]:
        return tuple(a.target.id for a in classes[name].body if isinstance(a, ast.AnnAssign))

    assert fields("ParamTerms") == _report.TERMS["params"]
    assert fields("FlopTerms") == _report.TERMS["flops"]
