"""Tests of smelt.plot and `python -m smelt plot` (docs/plots.md).

The reports come from the built smelt-match (SMELT_MATCH, else build/dev/cli/smelt-match) run on the examples;
each test reads the plotted numbers back from the matplotlib artists and asserts that they equal the report's.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from smelt import plot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data"


def smelt_match() -> str:
    path = os.environ.get("SMELT_MATCH", str(ROOT / "build" / "dev" / "cli" / "smelt-match"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"smelt-match not found at {path}: build it (cmake --build --preset dev --target "
                    "smelt-match) or set SMELT_MATCH")
    return path


def run_json(*args: str, cwd: Path | None = None) -> dict:
    done = subprocess.run([smelt_match(), *args], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(done.stdout)


def write(path: Path, report: dict) -> Path:
    path.write_text(json.dumps(report))
    return path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "smelt", "plot", *args], capture_output=True, text=True,
                          cwd=cwd, env=os.environ.copy())


@pytest.fixture(scope="module")
def derive_report() -> dict:
    # Two contexts, so that the plot has one panel per context and FLOPs and KV differ between them.
    return run_json("derive", str(EXAMPLES / "smelt-baseline-54b.json"), "--json", "--top", "3",
                    "--context", "4096,32768")


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
    assert params[0] == params[1] and kv == [c["kv_bytes_per_token"]["mismatch_pct"]
                                             for c in derive_report["best"]["contexts"]]
    ticks = [t.get_text() for t in axes[-1].get_xticklabels()]
    k = derive_report["best"]["knobs"]
    assert ticks[0] == (f"smelt-baseline-54b-smelt\nH {k['hidden_size']}, E {k['num_experts']}, "
                        f"{k['num_heads']}/{k['num_kv_heads']}/{k['head_dim']}")


def test_mismatch_hatches_the_budgets_that_were_not_matched():
    report = run_json("derive", str(EXAMPLES / "smelt-baseline-54b.json"), "--json", "--top", "1",
                      "--match", "flops,params")
    ax = plot.plot_mismatch(report).axes[0]
    assert [c.get_label() for c in ax.containers][2] == "KV cache bytes per token (not matched)"
    assert ax.containers[2][0].get_hatch() == "//" and ax.containers[0][0].get_hatch() is None
    # One context: the bars are the candidate's `budgets`.
    assert ax.containers[2][0].get_height() == report["best"]["budgets"]["kv_bytes_per_token"]["mismatch_pct"]


@pytest.fixture(scope="module")
def frontier_files(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("frontier")
    subprocess.run([smelt_match(), "fit", str(EXAMPLES / "runs-dense-looped.csv"), "--group-by", "arch",
                    "--out", "laws.json"], cwd=folder, check=True, capture_output=True)
    report = run_json("frontier", "--law", "laws.json", "--budget", "1e20,1e21,1e22", "--json", cwd=folder)
    return write(folder / "frontier.json", report), report


def line(ax, gid: str):
    found = [x for x in ax.lines if x.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


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
    report = run_json("frontier", "--law", str(DATA / "law-ref.json"), "--law", str(DATA / "law-target.json"),
                      "--budget", "1e20,1e22", "--json")
    ax = plot.plot_frontier(report).axes[0]
    xs, ys = list(line(ax, "frontier:dense").get_xdata()), list(line(ax, "frontier:dense").get_ydata())
    # docs/scaling.md: L* = 1.8169 + 0.1660406801 + 0.1578702803 = 2.1408109604 at C = 1e22.
    assert ys[xs.index(1e22)] == pytest.approx(2.1408109604, rel=1e-9)
    texts = [t.get_text() for t in ax.texts]
    # gain = 1 - (400 / 482.01)^(1/0.3478) = 0.41505 at every budget, interval from the five samples.
    assert texts == ["looped +41.5% [+34.7%, +45.9%]", "looped +41.5% [+39.2%, +45.7%]"]


def test_frontier_of_a_smelt_law_at_a_sparsity_follows_the_report(tmp_path):
    report = run_json("frontier", "--law", str(DATA / "law-ref.json"), "--law", str(DATA / "law-smelt.json"),
                      "--budget", "1e20,1e22,1e24", "--sparsity", "0.85", "--json")
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
    assert lines[1].endswith(f"at compute 1e+20, the report {report['budgets'][0]['laws'][1]['loss']:.9g}: its "
                             "law file is not the one the report was made from")


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
    assert [t.get_text() for t in mismatch_ax.get_yticklabels()] == ["25% (5-7)", "50% (4-9)", "75% (2-10)",
                                                                     "100% (1-12)"]
    assert [t.get_text() for t in mismatch_ax.get_xticklabels()] == ["×2", "×3", "×4"]
    cell = mismatch_ax.texts[0].get_text()
    assert cell == f"{rows[0]['max_abs_mismatch_pct']:.2f}% ✗"  # 1.56%: outside the 1% tolerance
    off_grid = [t.get_text() for t in fig.texts if t.get_gid() == "off-grid"]
    assert off_grid[0].startswith("baseline: 12 layers, max 0.000% (yes); depth 0.5x: 6 layers, max 0.391% (yes)")


@pytest.fixture(scope="module")
def looped_count(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("layers")
    subprocess.run([smelt_match(), "derive", str(EXAMPLES / "smelt-baseline-54b.json"), "--out",
                    "smelt.json"], cwd=folder, check=True, capture_output=True)
    return run_json("count", "smelt.json", "--json", cwd=folder)


def test_layers_stack_each_terms_flops_per_token_and_parameters_and_mark_the_loop(looped_count):
    fig = plot.plot_layers(looped_count)
    top, bottom = fig.axes
    layers = looped_count["layers"]
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


def test_the_command_writes_each_kind(tmp_path, derive_report, frontier_files, looped_count):
    inputs = {"mismatch": write(tmp_path / "derive.json", derive_report), "frontier": frontier_files[0],
              "layers": write(tmp_path / "count.json", looped_count)}
    for kind, path in inputs.items():
        out = tmp_path / f"{kind}.svg"
        done = run_cli(kind, str(path), "--out", str(out))
        assert (done.returncode, done.stdout) == (0, "")
        assert done.stderr == f"smelt: wrote {kind} plot of '{path}' to {out}\n"
        assert out.read_text().startswith("<?xml") and not list(tmp_path.glob(".*.tmp"))
        mask = os.umask(0o022)
        os.umask(mask)
        assert out.stat().st_mode & 0o777 == 0o666 & ~mask  # as open() would create it, not mkstemp's 0600
    out = tmp_path / "layers.png"
    assert run_cli("layers", str(inputs["layers"]), "--out", str(out)).returncode == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_same_report_gives_the_same_bytes(tmp_path, looped_count):
    for suffix in (".png", ".svg"):
        a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
        plot.plot("layers", looped_count, out=a)
        plot.plot("layers", looped_count, out=b)
        assert a.read_bytes() == b.read_bytes()


def bad(tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "out.png"
    done = run_cli(*args, "--out", str(out)) if "--out" not in args else run_cli(*args)
    assert done.stdout == "" and not out.exists() and not list(tmp_path.glob(".*.tmp"))
    return done.returncode, done.stderr


def test_a_report_of_another_kind_is_refused_naming_the_file_field_and_rule(tmp_path, looped_count):
    path = write(tmp_path / "count.json", looped_count)
    assert bad(tmp_path, "mismatch", str(path)) == (
        2, f"smelt: error: while reading match report '{path}':\n  kind = \"count\": must be \"match\" for a "
        "mismatch plot (the report of smelt-match derive --json)\n")


def test_every_bad_field_is_listed_at_once(tmp_path, derive_report):
    report = json.loads(json.dumps(derive_report))
    report["best"]["contexts"][1]["kv_bytes_per_token"]["mismatch_pct"] = "x"
    del report["recipe"]["tolerance_pct"]
    report["alternatives"][0]["knobs"]["hidden_size"] = None
    path = write(tmp_path / "derive.json", report)
    assert bad(tmp_path, "mismatch", str(path)) == (
        2, f"smelt: error: while reading match report '{path}':\n"
        "  recipe.tolerance_pct: missing (required)\n"
        "  best.contexts[1].kv_bytes_per_token.mismatch_pct = \"x\": must be a finite number\n"
        "  alternatives[0].knobs.hidden_size = null: must be a finite number\n")


def test_bad_files_and_outputs_get_their_own_exit_codes(tmp_path, looped_count):
    (tmp_path / "broken.json").write_text('{"kind": ')
    assert bad(tmp_path, "layers", str(tmp_path / "broken.json")) == (
        2, f"smelt: error: while reading count report '{tmp_path / 'broken.json'}':\n"
        "  not JSON: Expecting value at line 1, column 10\n")
    assert bad(tmp_path, "layers", str(tmp_path / "none.json")) == (
        4, f"smelt: error: cannot read count report '{tmp_path / 'none.json'}': No such file or directory\n")
    path = write(tmp_path / "count.json", looped_count)
    assert bad(tmp_path, "layers", str(path), "--out", str(tmp_path / "out.pdf")) == (
        2, f"smelt: error: out = \"{tmp_path / 'out.pdf'}\": must end in .png or .svg (the format is taken "
        "from the suffix)\n")
    assert not (tmp_path / "out.pdf").exists()
    missing = tmp_path / "no-folder" / "out.png"
    assert bad(tmp_path, "layers", str(path), "--out", str(missing)) == (
        4, f"smelt: error: cannot write plot '{missing}': No such file or directory\n")
    code, err = bad(tmp_path, "pie", str(path))
    assert code == 2 and "argument kind: invalid choice: 'pie'" in err


def test_a_frontier_report_whose_law_file_is_gone_names_it(tmp_path, frontier_files):
    report = json.loads(frontier_files[0].read_text())
    path = write(tmp_path / "frontier.json", report)  # laws.json is not beside this copy
    assert bad(tmp_path, "frontier", str(path)) == (
        4, "smelt: error: cannot read laws 'laws.json': No such file or directory\n")
    laws = str(frontier_files[0].parent / "laws.json")
    out = tmp_path / "frontier.png"
    assert run_cli("frontier", str(path), "--law", laws, "--out", str(out)).returncode == 0 and out.exists()
    assert bad(tmp_path, "frontier", str(path), "--law", str(DATA / "law-ref.json")) == (
        2, f"smelt: error: --law files {DATA / 'law-ref.json'}: hold 1 laws: must hold the 2 laws of frontier "
        f"report '{path}'\n")


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_save_leaves_no_file_and_an_old_one_unchanged(tmp_path, monkeypatch, looped_count, error):
    fig = plot.plot_layers(looped_count)
    out = tmp_path / "layers.png"

    def half_written(self, fname, **kwargs):
        fname.write(b"\x89PNG partial")
        raise error

    monkeypatch.setattr(Figure, "savefig", half_written)
    with pytest.raises(type(error)):
        plot.save(fig, out)
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(b"old picture")
    with pytest.raises(type(error)):
        plot.save(fig, out)
    assert list(tmp_path.iterdir()) == [out] and out.read_bytes() == b"old picture"


def test_plot_imports_nothing_compiled_and_the_command_imports_plot_only_to_plot():
    # The plots read JSON only: their modules import the standard library, matplotlib and each other.
    allowed = {"__future__", "dataclasses", "json", "math", "os", "tempfile", "typing", "matplotlib",
               "matplotlib.figure", "_inputs", "_laws", "_report"}
    package = Path(plot.__file__).parent
    for module in ("plot", "_inputs", "_laws", "_report"):
        tree = ast.parse((package / f"{module}.py").read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.module
                  for a in n.names}
        assert names <= allowed, (module, names - allowed)
    code = "import sys, smelt.__main__; print('smelt.plot' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"
