"""`pip install .` brings the command line: smelt-match in this environment's scripts directory, the same
executable the C++ build makes, and `python -m smelt --help` names it."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import sysconfig

import pytest

import smelt

INSTALLED = pathlib.Path(sysconfig.get_path("scripts")) / "smelt-match"


def test_help_names_the_installed_command_line():
    done = subprocess.run([sys.executable, "-m", "smelt", "--help"], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0
    expected = f"smelt-match (counts, derive, sweep, fit, frontier, export, bench): {INSTALLED}"
    if not INSTALLED.is_file():
        pytest.skip(f"smelt imported from a tree, not an installed wheel ({smelt.__file__})")
    assert done.stdout.rstrip().splitlines()[-1] == expected


def test_the_installed_command_line_runs():
    if not INSTALLED.is_file():
        pytest.skip("no smelt-match beside this interpreter")
    done = subprocess.run([str(INSTALLED), "--version"], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "smelt-match 0.1.0\n")
    # tiny-moe's forward FLOPs per token, the same number the package counts.
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([str(INSTALLED), "count", "--json", str(root / "examples/tiny-moe.json")],
                         capture_output=True, text=True, check=True).stdout
    assert '"forward": 520960' in out.replace(" ", "") or '"forward":520960' in out.replace(" ", "")
    assert smelt.count(str(root / "examples/tiny-moe.json")).flops.forward == 520960
