"""Hostile files given to the Python side (docs/plots.md, docs/python.md): each is read by the library's bounded
reader, as smelt-match reads its own inputs, and refused with its message and exit code (2 for text that is not
bounded JSON, 4 for a file that cannot be read), never a traceback or a read without end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # plot_reports, whatever the import mode
import plot_reports  # noqa: E402
from plot_reports import bad, run_cli, write  # noqa: E402

import smelt  # noqa: E402

frontier_files = plot_reports.frontier_files
looped_count = plot_reports.looped_count
empty_working_directory = plot_reports.empty_working_directory  # autouse: no test reads the folder pytest runs in

# The input limit of src/util (kMaxInputBytes): 64 MiB.
LIMIT = "the 64 MiB (67108864 bytes) input limit"
# 1,000 levels is past Python's default recursion limit (json.loads and json.dumps recurse once per level).
DEEP = "[" * 1_000 + "]" * 1_000


def zero(what: str) -> str:
    return f"while reading {what} '/dev/zero': cannot read '/dev/zero': more than {LIMIT}"


def deep(what: str, path: str) -> str:
    # The 65th bracket opens level 65: column 65 of line 1.
    return f"while reading {what} '{path}':\n  {path}:1:65: JSON nested deeper than 64 levels (the limit on input)"


@pytest.mark.parametrize(
    "kind, what", [("mismatch", "match report"), ("sweep", "sweep report"), ("layers", "count report"),
                   ("frontier", "frontier report")]
)
def test_a_report_nested_1000_levels_or_endless_is_refused(tmp_path: Path, kind: str, what: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    assert bad(tmp_path, kind, str(path)) == (2, f"smelt: error: {deep(what, str(path))}\n")
    assert bad(tmp_path, kind, "/dev/zero") == (4, f"smelt: error: {zero(what)}\n")


def test_a_law_file_nested_or_endless_is_refused_given_by_law_or_named_in_the_report(
    tmp_path: Path, frontier_files
) -> None:
    report_path = frontier_files[0]
    law = tmp_path / "deep-laws.json"
    law.write_text(DEEP)
    assert bad(tmp_path, "frontier", str(report_path), "--law", str(law)) == (
        2,
        f"smelt: error: {deep('laws', str(law))}\n",
    )
    assert bad(tmp_path, "frontier", str(report_path), "--law", "/dev/zero") == (4, f"smelt: error: {zero('laws')}\n")
    report = json.loads(report_path.read_text())
    for entry in report["laws"]:
        entry["file"] = "/dev/zero"
    named = write(tmp_path / "frontier.json", report)
    assert bad(tmp_path, "frontier", str(named)) == (4, f"smelt: error: {zero('laws')}\n")
    for entry in report["laws"]:
        entry["file"] = str(law)
    named = write(tmp_path / "frontier.json", report)
    assert bad(tmp_path, "frontier", str(named)) == (2, f"smelt: error: {deep('laws', str(law))}\n")


def test_a_dash_reads_the_report_from_standard_input(tmp_path: Path, looped_count) -> None:
    out = tmp_path / "layers.svg"
    done = subprocess.run(
        [sys.executable, "-m", "smelt", "plot", "layers", "-", "--out", str(out)],
        input=json.dumps(looped_count),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", f"smelt: wrote layers plot of '-' to {out}\n")
    assert out.read_text().startswith("<?xml")
    done = subprocess.run(
        [sys.executable, "-m", "smelt", "plot", "layers", "-", "--out", str(out)],
        input=DEEP,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (2, f"smelt: error: {deep('count report', '<stdin>')}\n")


def test_a_file_that_is_not_bounded_json_gets_the_library_s_words(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": ')
    assert bad(tmp_path, "layers", str(broken)) == (
        2,
        f"smelt: error: while reading count report '{broken}':\n  {broken}:1:10: malformed JSON: syntax error "
        "while parsing value - unexpected end of input; expected '[', '{', or a literal\n",
    )
    huge = tmp_path / "huge.json"
    huge.write_text('{"size": 1e999}')
    assert bad(tmp_path, "layers", str(huge)) == (
        2,
        f"smelt: error: while reading count report '{huge}':\n  {huge}:1:10: size = 1e999: must be a number a "
        "double can hold (magnitude below 1.8e308)\n",
    )
    assert bad(tmp_path, "layers", str(tmp_path)) == (
        4,
        f"smelt: error: while reading count report '{tmp_path}': cannot read '{tmp_path}': Is a directory\n",
    )


def test_export_hf_reads_its_config_once_through_the_bounded_reader(tmp_path: Path) -> None:
    with pytest.raises(smelt.IOError) as e:
        smelt.export_hf("/dev/zero")
    assert str(e.value) == zero("config")
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    with pytest.raises(smelt.ConfigError) as e:
        smelt.export_hf(path)
    assert str(e.value) == deep("config", str(path))
    path.write_text('{"model_type": "mixtral", ')
    with pytest.raises(smelt.ConfigError) as e:
        smelt.export_hf(path)
    assert str(e.value).startswith(f"while reading config '{path}':\n  {path}:1:")


HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile"


def test_memory_of_4096_layers_looped_1024_times_is_one_run_of_visits() -> None:
    """tests/data/hostile/memory-4M-visits.json (571 bytes): 4,194,304 layer visits, one run of them, a report of a
    few KB (one row per visit took gigabytes and aborted the interpreter under a 4 GiB limit). tiny-moe's dense
    visit at 2 x 16 tokens in fp32 keeps 158,208 bytes; the embedding, final norm, head and loss 153,236."""
    report = smelt.memory(str(HOSTILE / "memory-4M-visits.json"), micro_batch=2, seq=16)
    rank = report.to_dict()["worst_rank"]
    assert rank["layer_visits"] == 4_194_304
    [run] = rank["visit_runs"]
    assert (run["first_layer"], run["last_layer"], run["first_visit"], run["last_visit"]) == (1, 4096, 1, 1024)
    assert run["count"] == 4_194_304
    assert rank["activations"]["total"] == 4_194_304 * 158_208 + 153_236
    assert len(report.to_json()) < 8192
