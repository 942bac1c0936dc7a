"""Hostile reports for smelt.plot: each edit below once crashed a plot (a random edit of real reports found them)
and now gets a ReportError naming the field, the value and the rule."""

from __future__ import annotations

import copy
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # plot_reports, whatever the import mode
import plot_reports  # noqa: E402
from smelt import plot  # noqa: E402

derive_report = plot_reports.derive_report
frontier_files = plot_reports.frontier_files
looped_count = plot_reports.looped_count
empty_working_directory = plot_reports.empty_working_directory  # autouse: no test reads the folder pytest runs in


def refused(kind: str, report, edit) -> list[str]:
    report = copy.deepcopy(report)
    edit(report)
    with pytest.raises(plot.ReportError) as e:
        plot.plot(kind, report)
    lines = str(e.value).splitlines()
    assert lines[0] == f"while reading {kind.replace('mismatch', 'match').replace('layers', 'count')} report '<dict>':"
    return [x.strip() for x in lines[1:]]


def test_a_loop_span_that_is_not_first_last_is_named(looped_count):
    def edit(r):
        r["loop"]["span"] = "a-b"

    assert refused("layers", looped_count, edit) == [
        'loop.span = "a-b": must be "first-last", 1-based layers with first <= last <= layers_stored'
    ]

    def beyond(r):
        r["loop"]["span"] = "8-31"  # 30 layers

    assert refused("layers", looped_count, beyond)[0].startswith('loop.span = "8-31": must be')


def test_runs_that_overlap_leave_a_layer_out_or_miscount_are_named(looped_count):
    # The runs are 1-7, 8-22 (looped) and 23-30: each edit breaks the rule that every layer is in one run.
    def overlap(r):
        r["layer_runs"][1].update(first=7, count=16)

    assert refused("layers", looped_count, overlap) == ["layer_runs[1]: holds layer 7, which layer_runs[0] holds too"]

    def gap(r):
        del r["layer_runs"][2]

    assert refused("layers", looped_count, gap) == [
        "layer_runs: must hold every layer from 1 to layers_stored = 30; layer 23 is in none"
    ]

    def miscount(r):
        r["layer_runs"][0]["count"] = 8

    assert refused("layers", looped_count, miscount) == [
        "layer_runs[0].count = 8: must be (last - first) / step + 1, a whole number"
    ]

    def beyond(r):
        r["layer_runs"][2].update(last=31, count=9)

    assert refused("layers", looped_count, beyond) == [
        "layer_runs[2].last = 31: must be from first = 23 to layers_stored = 30"
    ]

    def deep(r):  # the runs are never written out past the deepest config
        r["layers_stored"] = 2**40
        r["layer_runs"][2].update(last=2**40, count=2**40 - 22)

    assert refused("layers", looped_count, deep) == [
        "layers_stored = 1099511627776: must be at most 65536, the deepest config smelt counts"
    ]


def test_an_integer_too_large_for_a_double_or_matplotlib_is_named(derive_report):
    def edit(r):
        r["alternatives"][0]["contexts"][0]["params_non_embedding"]["mismatch_pct"] = 10**400

    (line,) = refused("mismatch", derive_report, edit)
    assert line.startswith("alternatives[0].contexts[0].params_non_embedding.mismatch_pct = 1000000")
    assert line.endswith("...: must be a finite number")

    def knob(r):
        r["best"]["knobs"]["hidden_size"] = 1920.5

    assert refused("mismatch", derive_report, knob) == [
        "best.knobs.hidden_size = 1920.5: must be an integer from 0 to 2^53"
    ]


def test_a_match_budget_that_is_not_a_word_is_named(derive_report):
    def edit(r):
        r["recipe"]["match"][0] = ["flops"]

    assert refused("mismatch", derive_report, edit) == [
        'recipe.match[0] = ["flops"]: must be "flops", "params" or "kv"'
    ]


def test_frontier_entries_that_are_not_objects_or_too_few_are_named(frontier_files):
    report = frontier_files[1]

    def null_point(r):
        r["budgets"][0]["laws"][1] = None

    assert refused("frontier", report, null_point) == [
        "budgets[0].laws[1] = null: must be an object",
        'budgets[0].laws = "1 entries": must hold one entry per law (2)',
    ]

    def no_points(r):
        r["budgets"][2]["laws"] = []

    assert refused("frontier", report, no_points) == ['budgets[2].laws = "0 entries": must hold one entry per law (2)']

    def whole_gain(r):
        r["budgets"][1]["laws"][1]["gain"] = 1.0

    assert refused("frontier", report, whole_gain) == [
        "budgets[1].laws[1].gain = 1.0: must be below 1 (the gain 1 - C / C_ref, C_ref finite)"
    ]


def test_a_frontier_size_the_law_does_not_give_is_refused(frontier_files, monkeypatch):
    # A size far from the law's optimum once made the fixed-size curve divide by zero tokens.
    def edit(r):
        r["budgets"][0]["laws"][0]["size"] = 1e308

    monkeypatch.chdir(frontier_files[0].parent)  # a dict's law files are found from the working directory
    (line,) = refused("frontier", frontier_files[1], edit)
    assert line.startswith("law 'dense' has optimal size 850920398 ")
    assert line.endswith("at compute 1e+20, the report 1e+308: its law file is not the one the report was made from")


def test_a_report_that_is_not_an_object_is_named():
    with pytest.raises(plot.ReportError) as e:
        plot.plot_sweep([1, 2])
    assert str(e.value) == (
        "while reading sweep report '<list>':\n"
        "  (top level): must be an object, the report of smelt-match sweep --json; found an array"
    )


def test_a_sweep_without_loop_rows_says_how_to_get_them():
    report = plot_reports.run_json(
        "sweep", str(plot_reports.EXAMPLES / "smelt-baseline-12l.json"), "--spans", "0", "--json"
    )
    assert [row["kind"] for row in report["rows"]] == ["baseline", "depth", "depth", "depth", "depth"]
    with pytest.raises(plot.ReportError) as e:
        plot.plot_sweep(report)
    assert str(e.value) == (
        "while reading sweep report '<dict>':\n"
        '  rows: must hold a loop row (kind "loop") for the span x loops grid: sweep with --spans above 0'
    )


def test_too_few_curve_points_are_refused_before_the_report_is_read():
    with pytest.raises(plot.ReportError) as e:
        plot.plot_frontier("never-read.json", points=1)
    assert str(e.value) == "points = 1: must be an integer from 2 to 100000 (curve points per law)"
