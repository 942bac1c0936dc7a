"""Tests of smelt.plot (docs/plots.md): each test reads the plotted numbers back from the matplotlib artists and
asserts that they equal the numbers of the report smelt-match wrote (tests/python/plot_reports.py makes them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import matplotlib
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # plot_reports, whatever the import mode
import plot_reports  # noqa: E402
from plot_reports import DATA, EXAMPLES, bad, line, run_json, smelt_match, write  # noqa: E402
from smelt import plot  # noqa: E402

# The module-scoped fixtures of the reports (made once per test module).
derive_report = plot_reports.derive_report
frontier_files = plot_reports.frontier_files
looped_count = plot_reports.looped_count
empty_working_directory = plot_reports.empty_working_directory  # autouse: no test reads the folder pytest runs in


def test_mismatch_bars_are_the_reports_mismatches_per_candidate_and_context(derive_report):
    fig = plot.plot_mismatch(derive_report)
    axes = fig.axes
    candidates = [derive_report["best"], *derive_report["alternatives"]]
    assert len(candidates) == 3
    assert len(axes) == 2  # one per context: 4096 and 32768
    for ci, ax in enumerate(axes):
        assert ax.get_title(loc="left") == f"context {derive_report['recipe']['contexts'][ci]} tokens"
        labels = [c.get_label() for c in ax.containers]
        assert labels == ["FLOPs per token", "parameters (non-embedding)", "KV cache bytes per token"]
        for container, budget in zip(ax.containers, plot._inputs.BUDGETS):
            heights = [bar.get_height() for bar in container]
            assert heights == [c["contexts"][ci][budget]["mismatch_pct"] for c in candidates]
        band = [p for p in ax.patches if p.get_label() == "tolerance ±1%"]
        assert len(band) == 1 and band[0].get_y() == -1.0 and band[0].get_height() == 2.0
        shown = [t.get_text() for t in ax.texts]
        first = candidates[0]["contexts"][ci]["flops_per_token"]["mismatch_pct"]
        assert shown[0] == f"{first:+.2f}%"
    # The KV cache per token changes with the context; the parameters do not.
    kv = [ax.containers[2][0].get_height() for ax in axes]
    params = [ax.containers[1][0].get_height() for ax in axes]
    assert params[0] == params[1] and kv == [
        c["kv_bytes_per_token"]["mismatch_pct"] for c in derive_report["best"]["contexts"]
    ]
    ticks = [t.get_text() for t in axes[-1].get_xticklabels()]
    k = derive_report["best"]["knobs"]
    assert ticks[0] == (
        f"smelt-baseline-54b-smelt\nH {k['hidden_size']}, E {k['num_experts']}, "
        f"{k['num_heads']}/{k['num_kv_heads']}/{k['head_dim']}"
    )


def test_mismatch_hatches_the_budgets_that_were_not_matched():
    report = run_json(
        "derive", str(EXAMPLES / "smelt-baseline-54b.json"), "--json", "--top", "1", "--match", "flops,params"
    )
    ax = plot.plot_mismatch(report).axes[0]
    assert [c.get_label() for c in ax.containers][2] == "KV cache bytes per token (not matched)"
    assert ax.containers[2][0].get_hatch() == "//" and ax.containers[0][0].get_hatch() is None
    # One context: the bars are the candidate's `budgets`.
    assert ax.containers[2][0].get_height() == report["best"]["budgets"]["kv_bytes_per_token"]["mismatch_pct"]


def test_mismatch_of_an_mla_baseline_names_its_kept_attention_and_the_miss():
    # An MLA Baseline keeps its attention, so its KV cache grows with the loop: outside the tolerance (exit 3).
    done = subprocess.run(
        [smelt_match(), "derive", str(EXAMPLES / "deepseek-v3-mla.json"), "--json", "--top", "2"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3
    report = json.loads(done.stdout)
    fig = plot.plot_mismatch(report)
    k = report["best"]["knobs"]
    assert k["head_dim"] == 0
    tick = fig.axes[0].get_xticklabels()[0].get_text()
    assert tick == f"deepseek-v3-mla-smelt\nH {k['hidden_size']}, E {k['num_experts']}, {k['num_heads']}/MLA"
    assert (
        fig.axes[0].containers[2][0].get_height()
        == report["best"]["budgets"]["kv_bytes_per_token"]["mismatch_pct"]
        > 1.0
    )
    assert fig.get_suptitle().endswith("(the best is outside the 1% tolerance)")


def test_frontier_curves_pass_through_the_reports_points_and_arrows_show_the_gain(frontier_files):
    path, report = frontier_files
    ax = plot.plot_frontier(str(path)).axes[0]  # the law files are found beside the report
    for li, name in enumerate(["dense", "looped"]):
        computes = [b["compute"] for b in report["budgets"]]
        losses = [b["laws"][li]["loss"] for b in report["budgets"]]
        points = line(ax, f"points:{name}")
        assert list(points.get_xdata()) == computes and list(points.get_ydata()) == losses
        frontier = line(ax, f"frontier:{name}")
        xs, ys = list(frontier.get_xdata()), list(frontier.get_ydata())
        for compute, loss in zip(computes, losses):
            # The curve, computed here from the law file's parameters, meets the C++ frontier's loss.
            assert ys[xs.index(compute)] == pytest.approx(loss, rel=1e-9)
        for bi, budget in enumerate(report["budgets"]):
            iso = line(ax, f"size:{name}:{bi}")  # the optimal size's curve touches the frontier there
            xs_i, ys_i = list(iso.get_xdata()), list(iso.get_ydata())
            assert ys_i[xs_i.index(budget["compute"])] == pytest.approx(budget["laws"][li]["loss"], rel=1e-9)
            assert min(ys_i) <= budget["laws"][li]["loss"] <= max(ys_i)
    arrows = [t for t in ax.texts if isinstance(t, matplotlib.text.Annotation)]
    assert len(arrows) == 3
    dense = line(ax, "frontier:dense")
    ref = plot.frontier_laws(plot._inputs.read_frontier(str(path))[0], str(path), None)[0]
    for arrow, budget in zip(arrows, report["budgets"]):
        looped = budget["laws"][1]
        assert arrow.get_text() == f"looped {100 * looped['gain']:+.1f}%"
        assert arrow.xy == (budget["compute"], looped["loss"])
        c_ref = budget["compute"] / (1 - looped["gain"])
        assert arrow.xyann == (c_ref, looped["loss"])
        # The arrow starts on the reference's frontier: dense at C_ref reaches looped's loss at C.
        assert ref.frontier_loss(c_ref) == pytest.approx(looped["loss"], rel=1e-9)
    assert dense.get_color() != line(ax, "frontier:looped").get_color()


def test_frontier_of_the_worked_example_gives_its_hand_computed_numbers(tmp_path):
    report = run_json(
        "frontier",
        "--law",
        str(DATA / "law-ref.json"),
        "--law",
        str(DATA / "law-target.json"),
        "--budget",
        "1e20,1e22",
        "--json",
    )
    ax = plot.plot_frontier(report).axes[0]
    xs, ys = list(line(ax, "frontier:dense").get_xdata()), list(line(ax, "frontier:dense").get_ydata())
    # docs/scaling.md: L* = 1.8169 + 0.1660406801 + 0.1578702803 = 2.1408109604 at C = 1e22.
    assert ys[xs.index(1e22)] == pytest.approx(2.1408109604, rel=1e-9)
    texts = [t.get_text() for t in ax.texts]
    # gain = 1 - (400 / 482.01)^(1/0.3478) = 0.41505 at every budget, interval from the five samples.
    assert texts == ["looped +41.5% [+34.7%, +45.9%]", "looped +41.5% [+39.2%, +45.7%]"]


def test_frontier_of_a_smelt_law_at_a_sparsity_follows_the_report(tmp_path):
    report = run_json(
        "frontier",
        "--law",
        str(DATA / "law-ref.json"),
        "--law",
        str(DATA / "law-smelt.json"),
        "--budget",
        "1e20,1e22,1e24",
        "--sparsity",
        "0.85",
        "--json",
    )
    ax = plot.plot_frontier(report).axes[0]
    frontier = line(ax, "frontier:sparse")
    xs, ys = list(frontier.get_xdata()), list(frontier.get_ydata())
    for budget in report["budgets"]:
        assert budget["laws"][1]["size_unit"] == "flops_per_token"
        assert ys[xs.index(budget["compute"])] == pytest.approx(budget["laws"][1]["loss"], rel=1e-9)
    # docs/scaling.md: gain = 1 - 0.15^(0.1/0.3478) = 0.42043 at every budget.
    assert [t.get_text() for t in ax.texts] == ["sparse +42.0%"] * 3
    assert "smelt laws at sparsity 0.85" in ax.get_title()


def test_a_law_file_changed_since_the_report_is_refused(tmp_path, frontier_files):
    path, report = frontier_files
    laws = json.loads((path.parent / "laws.json").read_text())
    laws["laws"][1]["params"]["A"] = 400.0
    write(tmp_path / "laws.json", laws)
    copy = write(tmp_path / "frontier.json", report)
    code, err = bad(tmp_path, "frontier", str(copy))
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == f"smelt: error: while reading frontier report '{copy}':"
    assert len(lines) == 4 and all(x.startswith("  law 'looped' has frontier loss ") for x in lines[1:])
    assert lines[1].endswith(
        f"at compute 1e+20, the report {report['budgets'][0]['laws'][1]['loss']:.9g}: its "
        "law file is not the one the report was made from"
    )


def test_sweep_heatmaps_hold_the_reports_mismatch_and_executed_depth(tmp_path):
    report = run_json("sweep", str(EXAMPLES / "smelt-baseline-12l.json"), "--json")
    fig = plot.plot_sweep(report)
    mismatch_ax, executed_ax = [ax for ax in fig.axes if ax.images]  # the colour bars hold no image
    rows = [r for r in report["rows"] if r["kind"] == "loop"]
    assert len(rows) == 12  # spans 25%, 50%, 75%, 100% x loops 2, 3, 4
    mismatch = mismatch_ax.images[0].get_array()
    executed = executed_ax.images[0].get_array()
    assert mismatch.shape == (4, 3)
    for n, row in enumerate(rows):
        i, j = divmod(n, 3)
        assert mismatch[i, j] == row["max_abs_mismatch_pct"]
        assert executed[i, j] == row["executed_layers"]
    assert executed[3].tolist() == [24, 36, 48]  # 12 layers all looped 2, 3, 4 times
    assert [t.get_text() for t in mismatch_ax.get_yticklabels()] == [
        "25% (5-7)",
        "50% (4-9)",
        "75% (2-10)",
        "100% (1-12)",
    ]
    assert [t.get_text() for t in mismatch_ax.get_xticklabels()] == ["×2", "×3", "×4"]
    cell = mismatch_ax.texts[0].get_text()
    assert cell == f"{rows[0]['max_abs_mismatch_pct']:.2f}% ✗"  # 1.56%: outside the 1% tolerance
    off_grid = [t.get_text() for t in fig.texts if t.get_gid() == "off-grid"]
    assert off_grid[0].startswith("baseline: 12 layers, max 0.000% (yes); depth 0.5x: 6 layers, max 0.391% (yes)")


def test_a_version_1_report_with_one_object_per_layer_draws_the_same_bars():
    # count --json --every-layer writes the version-1 "layers" beside the runs: as a version-1 report (no
    # layer_runs) it must draw what the runs draw.
    runs = run_json("count", "--json", str(EXAMPLES / "smelt-looped-12l.json"))
    every = run_json("count", "--json", "--every-layer", str(EXAMPLES / "smelt-looped-12l.json"))
    v1 = {k: v for k, v in every.items() if k != "layer_runs"}
    v1["schema_version"] = 1
    assert len(runs["layer_runs"]) == 3 and len(v1["layers"]) == 12

    def bars(report):
        return [[(b.get_x(), b.get_height()) for b in c] for ax in plot.plot_layers(report).axes for c in ax.containers]

    assert bars(v1) == bars(runs)
    assert len(bars(runs)[0]) == 12


def test_layers_stack_each_terms_flops_per_token_and_parameters_and_mark_the_loop(looped_count):
    fig = plot.plot_layers(looped_count)
    top, bottom = fig.axes
    # The report's runs: 1-7, 8-22 (looped), 23-30; one bar per layer, at its run's cost.
    runs = [(x["first"], x["last"], x["visits"]) for x in looped_count["layer_runs"]]
    assert runs == [(1, 7, 1), (8, 22, 2), (23, 30, 1)]
    layers = plot_reports.every_layer(looped_count)
    assert len(layers) == 30
    assert looped_count["loop"]["span"] == "8-22" and looped_count["loop"]["count"] == 2
    for container in top.containers:
        term = container.get_label()
        assert [b.get_height() for b in container] == [x["flops_per_visit"][term] * x["visits"] for x in layers]
    drawn = [c.get_label() for c in top.containers]
    # Zero terms (no shared experts, dense FFN or elementwise FLOPs in this model) are left out.
    assert drawn == [t for t in plot._inputs.FLOP_TERMS if any(x["flops_per_visit"][t] for x in layers)]
    for container in bottom.containers:
        term = container.get_label()
        assert [b.get_height() for b in container] == [x["params"][term] for x in layers]
    # The stacks add up to the report's totals: per visit x visits, and the stored parameters.
    tops = [max(b.get_y() + b.get_height() for c in top.containers for b in [c[i]]) for i in range(len(layers))]
    assert tops == pytest.approx([x["flops_per_visit"]["total"] * x["visits"] for x in layers], rel=1e-12)
    marks = [t for t in top.texts if t.get_text() == "×2"]
    assert [int(t.get_position()[0]) for t in marks] == list(range(8, 23))  # the 15 looped layers
    span = [p for p in top.patches if p.get_label() == "looped span 8-22 (×2)"]
    assert len(span) == 1 and (span[0].get_x(), span[0].get_width()) == (7.5, 15.0)
