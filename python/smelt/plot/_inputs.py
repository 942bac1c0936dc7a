"""The four plots' inputs: each report checked (docs/json-schema.md) and reduced to what its plot draws.

Every reader takes a report dict or a path, checks `schema_version` and `kind`, then every field the plot
uses, and raises one ReportError listing every violation (see _report_fields.py). Each report is read by
smelt._report.read_json, the package's one reader of report JSON. What it returns holds the report's
own numbers, unchanged, so the plot can be tested against the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._errors import ReportError
from .._report import TERMS, read_json
from ._report_fields import Reader

BUDGETS = ("flops_per_token", "params_non_embedding", "kv_bytes_per_token")
BUDGET_OF_MATCH = {"flops": "flops_per_token", "params": "params_non_embedding", "kv": "kv_bytes_per_token"}
# A layer's terms, as the count report's writer lists them.
FLOP_TERMS = TERMS["layer_flops"]
PARAM_TERMS = TERMS["layer_params"]


@dataclass
class Candidate:
    name: str
    knobs: dict[str, int]
    mismatch: list[dict[str, float]]  # per context of the recipe: budget -> mismatch_pct


@dataclass
class MatchInput:
    baseline: str
    contexts: list[int]
    tolerance_pct: float
    matched: list[str]  # budget keys, in BUDGETS' names
    within_tolerance: bool
    candidates: list[Candidate]  # best first


def read_match(source: Any) -> MatchInput:
    report, name = read_json(source, "match report")
    r = Reader(name, "match report")
    r.header(report, "match", (1, 2, 3), "smelt-match derive --json", "mismatch")
    recipe = r.object(report, "", "recipe")
    contexts = r.array(recipe, "recipe", "contexts", nonempty=True) or []
    for i, c in enumerate(contexts):
        if isinstance(c, bool) or not isinstance(c, int) or c <= 0:
            r.fail(f"recipe.contexts[{i}]", "must be a positive integer (tokens)", c)
    tolerance = r.number(recipe, "recipe", "tolerance_pct")
    matched = r.array(recipe, "recipe", "match", nonempty=True) or []
    for i, m in enumerate(matched):
        if not isinstance(m, str) or m not in BUDGET_OF_MATCH:
            r.fail(f"recipe.match[{i}]", 'must be "flops", "params" or "kv"', m)
    within = r.boolean(report, "", "within_tolerance")
    baseline = r.string(r.object(report, "", "baseline"), "baseline", "name")
    entries = [(r.object(report, "", "best"), "best")]
    for i, alt in enumerate(r.array(report, "", "alternatives") or []):
        entries.append((alt if isinstance(alt, dict) else None, f"alternatives[{i}]"))
        if not isinstance(alt, dict):
            r.fail(f"alternatives[{i}]", "must be an object", alt)
    candidates = [read_candidate(r, obj, path, len(contexts)) for obj, path in entries if obj is not None]
    r.raise_if_any()
    return MatchInput(baseline, contexts, tolerance, [BUDGET_OF_MATCH[m] for m in matched], within, candidates)


def read_candidate(r: Reader, obj: dict, path: str, n_contexts: int) -> Candidate:
    name = r.string(obj, path, "name")
    knobs_obj = r.object(obj, path, "knobs")
    knobs = {
        k: r.integer(knobs_obj, f"{path}.knobs", k)
        for k in ("hidden_size", "num_experts", "num_heads", "num_kv_heads", "head_dim")
    }
    # One budgets object per context; `budgets` alone (the first context) when the report has one context.
    if "contexts" in obj or n_contexts > 1:
        per_context = r.array(obj, path, "contexts") or []
        if isinstance(obj.get("contexts"), list) and len(per_context) != n_contexts:
            r.fail(
                f"{path}.contexts",
                f"must hold one entry per recipe.contexts ({n_contexts})",
                f"{len(per_context)} entries",
            )
        where = [(c, f"{path}.contexts[{i}]") for i, c in enumerate(per_context)]
    else:
        where = [(r.object(obj, path, "budgets"), f"{path}.budgets")]
    mismatch = []
    for budgets, at in where:
        values = {}
        for b in BUDGETS:
            values[b] = r.number(r.object(budgets, at, b), f"{at}.{b}", "mismatch_pct")
        mismatch.append(values)
    return Candidate(name, knobs, mismatch)


@dataclass
class SweepInput:
    baseline: str
    tolerance_pct: float
    rows: list[dict[str, Any]]


_SWEEP_FIELDS = (
    ("span_fraction", "number"),
    ("depth_multiplier", "number"),
    ("span", "string"),
    ("loops", "integer"),
    ("depth", "integer"),
    ("executed_layers", "integer"),
    ("max_abs_mismatch_pct", "number"),
    ("within_tolerance", "boolean"),
)


def read_sweep(source: Any) -> SweepInput:
    report, name = read_json(source, "sweep report")
    r = Reader(name, "sweep report")
    r.header(report, "sweep", (1,), "smelt-match sweep --json", "sweep")
    baseline = r.string(report, "", "baseline")
    tolerance = r.number(report, "", "tolerance_pct")
    rows = []
    for i, row in enumerate(r.array(report, "", "rows", nonempty=True) or []):
        at = f"rows[{i}]"
        if not isinstance(row, dict):
            r.fail(at, "must be an object", row)
            continue
        out = {"kind": r.string(row, at, "kind", allowed=("baseline", "loop", "depth"))}
        for key, kind in _SWEEP_FIELDS:
            out[key] = getattr(r, kind)(row, at, key)
        rows.append(out)
    if not r.errors and not any(row["kind"] == "loop" for row in rows):
        r.fail("rows", 'must hold a loop row (kind "loop") for the span x loops grid: sweep with --spans above 0')
    r.raise_if_any()
    return SweepInput(baseline, tolerance, rows)


@dataclass
class LayersInput:
    model: str
    loop: dict[str, Any] | None
    layers: list[dict[str, Any]]  # layer, visits, flops (term -> per visit), params (term -> count)


# The deepest config smelt reads (include/smelt/detail/bounds.hpp, kMaxLayers): a report's runs never name more layers.
MAX_LAYERS = 65536


def read_layers(source: Any) -> LayersInput:
    """A count report's layers, one entry per layer in order: version 1's ``layers``, or version 2's
    ``layer_runs`` with each run written out for its layers (every layer in exactly one run)."""
    report, name = read_json(source, "count report")
    r = Reader(name, "count report")
    if isinstance(report, list):
        if len(report) != 1:
            raise ReportError(
                f"while reading count report '{name}':\n  (top level) = an array of {len(report)} "
                "reports: must hold one config's report (count one config)"
            )
        report = report[0]
    r.header(report, "count", (1, 2), "smelt-match count --json", "layers")
    model = r.string(report, "", "model")
    loop = r.object(report, "", "loop") if isinstance(report, dict) and "loop" in report else None
    if loop is not None:
        span = r.string(loop, "loop", "span")
        if span is not None and not valid_span(span, stored_layers(report)):
            r.fail("loop.span", 'must be "first-last", 1-based layers with first <= last <= layers_stored', span)
            loop = None
        r.integer(loop, "loop", "count", minimum=1)
    layers = _runs(r, report) if report["schema_version"] == 2 else _layers(r, report)
    r.raise_if_any()
    return LayersInput(model, loop, layers)


def _costs(r: Reader, entry: dict, at: str, number_key: str | None = None) -> dict[str, Any]:
    """What the plot draws of one layer (or of each layer of a run); with number_key, the layer's number too."""
    flops, params = r.object(entry, at, "flops_per_visit"), r.object(entry, at, "params")
    out = {"layer": r.integer(entry, at, number_key, minimum=1)} if number_key else {}
    out["visits"] = r.integer(entry, at, "visits", minimum=1)
    out["flops"] = {t: r.number(flops, f"{at}.flops_per_visit", t) for t in FLOP_TERMS}
    out["params"] = {t: r.number(params, f"{at}.params", t) for t in PARAM_TERMS}
    return out


def _layers(r: Reader, report: dict) -> list[dict[str, Any]]:
    """Version 1: one object per layer in ``layers``."""
    return [_costs(r, layer, at, "layer") for at, layer in r.objects(report, "", "layers", nonempty=True)]


def _runs(r: Reader, report: dict) -> list[dict[str, Any]]:
    """Version 2: ``layer_runs`` written out, one entry per layer 1..layers_stored in order. The runs must hold
    each of those layers once, so that no run names more layers than the report has."""
    stored = r.integer(report, "", "layers_stored", minimum=1)
    if stored is not None and stored > MAX_LAYERS:
        r.fail("layers_stored", f"must be at most {MAX_LAYERS}, the deepest config smelt counts", stored)
        stored = None
    owner: list[int | None] = [None] * (stored or 0)  # which run holds each layer
    runs = []
    for k, (at, run) in enumerate(r.objects(report, "", "layer_runs", nonempty=True)):
        first, last = r.integer(run, at, "first", minimum=1), r.integer(run, at, "last", minimum=1)
        step, count = r.integer(run, at, "step", minimum=1), r.integer(run, at, "count", minimum=1)
        runs.append((at, _costs(r, run, at)))
        if stored is None or None in (first, last, step, count):
            continue
        if not first <= last <= stored:
            r.fail(f"{at}.last", f"must be from first = {first} to layers_stored = {stored}", last)
        elif (last - first) % step != 0 or count != (last - first) // step + 1:
            r.fail(f"{at}.count", "must be (last - first) / step + 1, a whole number", count)
        else:
            for number in range(first, last + 1, step):
                held = owner[number - 1]
                if held is not None:
                    r.fail(at, f"holds layer {number}, which {runs[held][0]} holds too")
                    break
                owner[number - 1] = k
    missing = next((i + 1 for i, o in enumerate(owner) if o is None), None)
    if missing is not None and not r.errors:
        r.fail("layer_runs", f"must hold every layer from 1 to layers_stored = {stored}; layer {missing} is in none")
    if r.errors:
        return []
    return [{"layer": i + 1, **runs[k][1]} for i, k in enumerate(owner) if k is not None]


@dataclass
class FrontierInput:
    reference: str
    sparsity: float
    laws: list[dict[str, str]]  # name, form, file
    # compute, laws: [name, size, tokens, loss, gain, gain_interval] (the plot reads no more of the report)
    budgets: list[dict[str, Any]]


def read_frontier(source: Any) -> tuple[FrontierInput, str]:
    """The frontier report and its name (law files are looked up beside it)."""
    report, name = read_json(source, "frontier report")
    r = Reader(name, "frontier report")
    r.header(report, "frontier", (1,), "smelt-match frontier --json", "frontier")
    reference = r.string(report, "", "reference")
    sparsity = r.number(report, "", "sparsity")
    laws = []
    for at, law in r.objects(report, "", "laws", nonempty=True):
        laws.append(
            {"name": r.string(law, at, "name"), "form": r.string(law, at, "form"), "file": r.string(law, at, "file")}
        )
    budgets = []
    for at, budget in r.objects(report, "", "budgets", nonempty=True):
        points = []
        entries = r.objects(budget, at, "laws")
        if len(entries) != len(laws):
            r.fail(f"{at}.laws", f"must hold one entry per law ({len(laws)})", f"{len(entries)} entries")
        for j, (pa, point) in enumerate(entries):
            out = {"name": r.string(point, pa, "name")}
            for key in ("size", "tokens", "loss"):
                out[key] = r.number(point, pa, key, positive=True)
            out["gain"] = None if j == 0 else optional_number(r, point, pa, "gain")
            if out["gain"] is not None and out["gain"] >= 1:
                r.fail(f"{pa}.gain", "must be below 1 (the gain 1 - C / C_ref, C_ref finite)", out["gain"])
                out["gain"] = None
            interval = r.field(point, pa, "gain_interval")
            if interval is not None and not (
                isinstance(interval, list)
                and len(interval) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in interval)
            ):
                r.fail(f"{pa}.gain_interval", "must be null or an array of two numbers", interval)
                interval = None
            out["gain_interval"] = interval
            points.append(out)
        budgets.append({"compute": r.number(budget, at, "compute", positive=True), "laws": points})
    r.raise_if_any()
    return FrontierInput(reference, sparsity, laws, budgets), name


def stored_layers(report: dict) -> int:
    """The layers a loop span may name: version 1's ``layers`` entries, version 2's ``layers_stored``."""
    if report.get("schema_version") == 2:
        stored = report.get("layers_stored")
        return stored if isinstance(stored, int) and not isinstance(stored, bool) else 0
    layers = report.get("layers")
    return len(layers) if isinstance(layers, list) else 0


def valid_span(span: str, layers: int) -> bool:
    first, _, last = span.partition("-")
    if not (first.isdigit() and last.isdigit()):
        return False
    return 1 <= int(first) <= int(last) <= max(layers, 1)


def optional_number(r: Reader, obj: Any, path: str, key: str) -> float | None:
    return None if isinstance(obj, dict) and obj.get(key, 0) is None else r.number(obj, path, key)
