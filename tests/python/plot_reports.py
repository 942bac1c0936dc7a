"""Reports for the plot tests, made by the built smelt-match (SMELT_MATCH, else build/dev/cli/smelt-match)
from the examples, and the helpers that run the CLI and `python -m smelt plot`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data"


def smelt_match() -> str:
    path = os.environ.get("SMELT_MATCH", str(ROOT / "build" / "dev" / "cli" / "smelt-match"))
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"smelt-match not found at {path}: build it (cmake --build --preset dev --target "
            "smelt-match) or set SMELT_MATCH"
        )
    return path


def run_json(*args: str, cwd: Path | None = None) -> dict:
    done = subprocess.run([smelt_match(), *args], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(done.stdout)


def write(path: Path, report: dict) -> Path:
    path.write_text(json.dumps(report))
    return path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "smelt", "plot", *args], capture_output=True, text=True, cwd=cwd, env=os.environ.copy()
    )


@pytest.fixture(autouse=True)
def empty_working_directory(tmp_path_factory, monkeypatch) -> Path:
    """Each test, and the commands it runs, in an empty folder of its own: a report names its law files relative to
    the working directory first (smelt.plot._laws.resolve), so a stray laws.json where pytest was started (the
    README's fit line leaves one in the repository's root) must not be read in place of the report's."""
    folder = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture(scope="module")
def derive_report() -> dict:
    # Two contexts, so that the plot has one panel per context and FLOPs and KV differ between them.
    return run_json(
        "derive", str(EXAMPLES / "smelt-baseline-54b.json"), "--json", "--top", "3", "--context", "4096,32768"
    )


@pytest.fixture(scope="module")
def frontier_files(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("frontier")
    subprocess.run(
        [smelt_match(), "fit", str(EXAMPLES / "runs-dense-looped.csv"), "--group-by", "arch", "--out", "laws.json"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    report = run_json("frontier", "--law", "laws.json", "--budget", "1e20,1e21,1e22", "--json", cwd=folder)
    return write(folder / "frontier.json", report), report


def line(ax, gid: str):
    found = [x for x in ax.lines if x.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


@pytest.fixture(scope="module")
def looped_count(tmp_path_factory) -> dict:
    """The count report (layers in runs) of the 54B Baseline's derived config: 30 layers, 8-22 looped twice."""
    folder = tmp_path_factory.mktemp("layers")
    subprocess.run(
        [smelt_match(), "derive", str(EXAMPLES / "smelt-baseline-54b.json"), "--out", "smelt.json"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return run_json("count", "smelt.json", "--json", cwd=folder)


def every_layer(count_report: dict) -> list[dict]:
    """A count report's runs written out, one entry per layer in order (each a run's entry)."""
    layers = [(n, run) for run in count_report["layer_runs"] for n in range(run["first"], run["last"] + 1, run["step"])]
    return [run for _, run in sorted(layers, key=lambda x: x[0])]


def bad(tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "out.png"
    done = run_cli(*args, "--out", str(out)) if "--out" not in args else run_cli(*args)
    assert done.stdout == "" and not out.exists() and not list(tmp_path.glob(".*.tmp"))
    return done.returncode, done.stderr
