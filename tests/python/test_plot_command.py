"""Tests of `python -m smelt plot` (docs/plots.md): the pictures it writes, its messages and exit codes on bad
input, and a save that fails leaving no file."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # plot_reports, whatever the import mode
import plot_reports  # noqa: E402
from plot_reports import DATA, bad, run_cli, write  # noqa: E402
from smelt import plot  # noqa: E402

# The module-scoped fixtures of the reports (made once per test module).
derive_report = plot_reports.derive_report
frontier_files = plot_reports.frontier_files
looped_count = plot_reports.looped_count
empty_working_directory = plot_reports.empty_working_directory  # autouse: no test reads the folder pytest runs in


def test_the_command_writes_each_kind(tmp_path, derive_report, frontier_files, looped_count):
    inputs = {
        "mismatch": write(tmp_path / "derive.json", derive_report),
        "frontier": frontier_files[0],
        "layers": write(tmp_path / "count.json", looped_count),
    }
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


def test_a_report_of_another_kind_is_refused_naming_the_file_field_and_rule(tmp_path, looped_count):
    path = write(tmp_path / "count.json", looped_count)
    assert bad(tmp_path, "mismatch", str(path)) == (
        2,
        f'smelt: error: while reading match report \'{path}\':\n  kind = "count": must be "match" for a '
        "mismatch plot (the report of smelt-match derive --json)\n",
    )


def test_every_bad_field_is_listed_at_once(tmp_path, derive_report):
    report = json.loads(json.dumps(derive_report))
    report["best"]["contexts"][1]["kv_bytes_per_token"]["mismatch_pct"] = "x"
    del report["recipe"]["tolerance_pct"]
    report["alternatives"][0]["knobs"]["hidden_size"] = None
    path = write(tmp_path / "derive.json", report)
    assert bad(tmp_path, "mismatch", str(path)) == (
        2,
        f"smelt: error: while reading match report '{path}':\n"
        "  recipe.tolerance_pct: missing (required)\n"
        '  best.contexts[1].kv_bytes_per_token.mismatch_pct = "x": must be a finite number\n'
        "  alternatives[0].knobs.hidden_size = null: must be an integer from 0 to 2^53\n",
    )


def test_bad_files_and_outputs_get_their_own_exit_codes(tmp_path, looped_count):
    (tmp_path / "broken.json").write_text('{"kind": ')
    assert bad(tmp_path, "layers", str(tmp_path / "broken.json")) == (
        2,
        f"smelt: error: while reading count report '{tmp_path / 'broken.json'}':\n"
        f"  {tmp_path / 'broken.json'}:1:10: malformed JSON: syntax error while parsing value - unexpected end of "
        "input; expected '[', '{', or a literal\n",
    )
    none = tmp_path / "none.json"
    assert bad(tmp_path, "layers", str(none)) == (
        4,
        f"smelt: error: while reading count report '{none}': cannot open '{none}': No such file or directory\n",
    )
    path = write(tmp_path / "count.json", looped_count)
    assert bad(tmp_path, "layers", str(path), "--out", str(tmp_path / "out.pdf")) == (
        2,
        f'smelt: error: out = "{tmp_path / "out.pdf"}": must end in .png or .svg (the format is taken '
        "from the suffix)\n",
    )
    assert not (tmp_path / "out.pdf").exists()
    missing = tmp_path / "no-folder" / "out.png"
    assert bad(tmp_path, "layers", str(path), "--out", str(missing)) == (
        4,
        f"smelt: error: cannot write plot '{missing}': No such file or directory\n",
    )
    code, err = bad(tmp_path, "pie", str(path))
    assert code == 2 and "argument kind: invalid choice: 'pie'" in err


def test_a_frontier_report_whose_law_file_is_gone_names_it(tmp_path, frontier_files):
    report = json.loads(frontier_files[0].read_text())
    path = write(tmp_path / "frontier.json", report)  # laws.json is not beside this copy
    assert bad(tmp_path, "frontier", str(path)) == (
        4,
        "smelt: error: while reading laws 'laws.json': cannot open 'laws.json': No such file or directory\n",
    )
    laws = str(frontier_files[0].parent / "laws.json")
    out = tmp_path / "frontier.png"
    assert run_cli("frontier", str(path), "--law", laws, "--out", str(out)).returncode == 0 and out.exists()
    assert bad(tmp_path, "frontier", str(path), "--law", str(DATA / "law-ref.json")) == (
        2,
        f"smelt: error: --law files {DATA / 'law-ref.json'}: hold 1 laws: must hold the 2 laws of frontier "
        f"report '{path}'\n",
    )


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


def test_plot_imports_only_the_bounded_reader_and_the_command_imports_plot_only_to_plot():
    # The plots read JSON only: their modules import the standard library, matplotlib, each other, the
    # package's one reader of report JSON (smelt._report) and the library's bounded file reader (smelt._core,
    # whose errors are smelt._errors').
    allowed = {
        "_core",
        "_errors",
        "_report",
        "__future__",
        "collections.abc",
        "dataclasses",
        "json",
        "math",
        "os",
        "tempfile",
        "typing",
        "matplotlib",
        "matplotlib.figure",
        "_inputs",
        "_laws",
        "_report_fields",
    }
    package = Path(plot.__file__).parent
    for module in ("__init__", "_inputs", "_laws", "_report_fields"):
        tree = ast.parse((package / f"{module}.py").read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.module for a in n.names}
        assert names <= allowed, (module, names - allowed)
    code = "import sys, smelt.__main__; print('smelt.plot' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"
