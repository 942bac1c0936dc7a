"""Shared fixtures: the repository's examples and the CLI whose JSON the package must equal.

The CLI is $SMELT_MATCH (scripts/test.sh sets it), else the one built beside the
extension (build/python, `cmake --build build/python --target smelt-match`), else
build/dev's. A fit agrees byte for byte only with a CLI of the same build type:
its optimiser's last bits depend on the compiler's optimisation.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def cli_path() -> pathlib.Path:
    given = os.environ.get("SMELT_MATCH")
    candidates = [ROOT / "build" / "python" / "cli" / "smelt-match", ROOT / "build" / "dev" / "cli" / "smelt-match"]
    path = pathlib.Path(given) if given else next((p for p in candidates if p.exists()), candidates[0])
    if not path.exists():
        pytest.skip(f"smelt-match not built ({path}); set SMELT_MATCH")
    return path


def cli_json(*args: str, ok_codes: tuple[int, ...] = (0,)) -> dict:
    """The CLI's --json output of `smelt-match ARGS...`, parsed (key order kept)."""
    done = subprocess.run([str(cli_path()), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode in ok_codes, done.stderr
    return json.loads(done.stdout)


def same_bytes(python_dict: dict, cli_dict: dict) -> None:
    """Equal byte for byte after json.dumps(sort_keys=False): values and key order."""
    assert json.dumps(python_dict, sort_keys=False) == json.dumps(cli_dict, sort_keys=False)


@pytest.fixture(autouse=True, scope="session")
def one_torch_thread():
    """The smelt.torch tests multiply tiny matrices: a second intra-op thread only adds waiting (on a busy
    2-core machine a training step took 20 times longer with two). Set once torch is imported (by a torch
    test module at collection), so the other tests never import it."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    yield
