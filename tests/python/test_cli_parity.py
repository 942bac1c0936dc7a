"""Every entry point of the package against its CLI twin, on the same inputs: a report's text equals the CLI's
output byte for byte, an error's message equals the CLI's (after `smelt-match: error: `) and its class is the
one of the CLI's exit code (ConfigError 2, InfeasibleError 3, IOError 4). Hostile inputs are the ones every
reader must survive: a missing file, a directory, malformed JSON, 100,000 levels of nesting, and /dev/zero.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import pytest

import smelt
from conftest import EXAMPLES, ROOT, cli_path

EXIT_CODE = {smelt.ConfigError: 2, smelt.InfeasibleError: 3, smelt.IOError: 4}


@dataclass(frozen=True)
class Entry:
    python: Callable[[str, pathlib.Path], str]  # (input, folder for outputs) -> the report's text
    cli: Callable[[str, pathlib.Path], list[str]]  # (input, folder) -> smelt-match's arguments
    outputs: tuple[str, ...] = ()  # files the CLI writes into the folder, appended to its standard output
    ok_codes: tuple[int, ...] = (0,)


def _derive(path: str, out: pathlib.Path) -> str:
    r = smelt.derive(path, tolerance_pct=5.0)
    return r.to_json() + r.best_config.to_json()  # the report, then what --out writes


def _sweep(path: str, out: pathlib.Path) -> str:
    return smelt.sweep(path, spans=[0.5], loops=[2], depths=[]).to_json()


def _frontier(path: str, out: pathlib.Path) -> str:
    return smelt.frontier(path, budgets=[1e20, 1e22]).to_json()


ENTRIES = {
    "read_config": Entry(lambda p, o: smelt.read_config(p).to_json(), lambda p, o: ["convert", p]),
    "count": Entry(lambda p, o: smelt.count(p).to_json(), lambda p, o: ["count", "--json", p]),
    "layer_anatomy": Entry(
        lambda p, o: json.dumps(smelt.layer_anatomy(p, 1), indent=2) + "\n", lambda p, o: ["anatomy", "--json", p]
    ),
    "derive": Entry(
        _derive, lambda p, o: ["derive", "--json", "--tolerance", "5", p, "--out", str(o / "d.json")], ("d.json",)
    ),
    "sweep": Entry(
        _sweep, lambda p, o: ["sweep", "--json", "--spans", "0.5", "--loops", "2", "--depths", "", p], ok_codes=(0, 3)
    ),
    "export_hf": Entry(lambda p, o: smelt.export_hf(p), lambda p, o: ["export", p, "--to", "hf"]),
    "export_megatron": Entry(
        lambda p, o: smelt.export_megatron(p).text(), lambda p, o: ["export", p, "--to", "megatron"]
    ),
    "fit": Entry(
        lambda p, o: smelt.fit(p, group_by="arch", threads=1).to_json(),
        lambda p, o: ["fit", "--json", "--group-by", "arch", "--threads", "1", p],
    ),
    "frontier": Entry(_frontier, lambda p, o: ["frontier", "--json", "--law", p, "--budget", "1e20,1e22"]),
    "memory": Entry(
        lambda p, o: smelt.memory(p, micro_batch=2, seq=64, pp=2, zero=1, dp=4).to_json(),
        lambda p, o: ["memory", "--json", "--micro-batch", "2", "--seq", "64", "--pp", "2", "--zero", "1", "--dp", "4", p],
    ),
    "time": Entry(
        lambda p, o: smelt.time(p, "h200", micro_batch=2, seq=64, pp=2, dp=4, imbalance=1.5).to_json(),
        lambda p, o: ["time", "--json", "--hardware", "h200", "--micro-batch", "2", "--seq", "64", "--pp", "2",
                      "--dp", "4", "--imbalance", "1.5", p],
    ),
}


def test_every_entry_point_of_the_package_is_compared() -> None:
    # smelt.__all__'s calls, less supported_hf_model_types (no input) and the classes.
    calls = {n for n in smelt.__all__ if callable(getattr(smelt, n)) and not isinstance(getattr(smelt, n), type)}
    assert calls - {"supported_hf_model_types"} == set(ENTRIES)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("inputs")
    looped = json.loads((EXAMPLES / "smelt-looped-12l.json").read_text())
    (d / "unnamed.json").write_text(json.dumps(dict(looped, name="")))  # derive names it "smelt", not by path
    (d / "accented.json").write_text(json.dumps(dict(looped, name="looped-ß"), ensure_ascii=False))
    (d / "malformed.json").write_text('{"schema_version": 1,\n  "name": }\n')
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "folder").mkdir()
    laws = d / "laws.json"
    laws.write_text(smelt.fit(EXAMPLES / "runs-dense-looped.csv", group_by="arch", threads=1).to_json())
    return {
        "unnamed": str(d / "unnamed.json"),
        "accented": str(d / "accented.json"),
        "hf": str(EXAMPLES / "hf" / "olmoe-1b-7b-0924.json"),
        "runs": str(EXAMPLES / "runs-dense-looped.csv"),
        "laws": str(laws),
        "malformed": str(d / "malformed.json"),
        "deep": str(d / "deep.json"),
        "missing": str(d / "missing.json"),
        "folder": str(d / "folder"),
        "zero": "/dev/zero",
    }


HOSTILE = ("malformed", "deep", "missing", "folder", "zero")
# Good inputs an entry refuses, the CLI alike: olmoe normalises q and k over all heads, which Megatron-LM's
# --qk-layernorm (per head) cannot express.
REFUSED = {("export_megatron", "hf")}
GOOD = {"fit": ("runs",), "frontier": ("laws",)}
CASES = [
    (entry, given)
    for entry in ENTRIES
    for given in (*GOOD.get(entry, ("unnamed", "accented", "hf")), *HOSTILE)
]


@pytest.mark.parametrize("entry, given", CASES, ids=[f"{e}-{g}" for e, g in CASES])
def test_the_package_and_the_cli_give_the_same_report_or_error(
    entry: str, given: str, inputs: dict[str, str], tmp_path: pathlib.Path
) -> None:
    e, path = ENTRIES[entry], inputs[given]
    py_out, py_dir, cli_dir = tmp_path / "py", tmp_path / "py", tmp_path / "cli"
    py_dir.mkdir()
    cli_dir.mkdir()
    try:
        python, python_error = e.python(path, py_out), None
    except smelt.Error as error:
        python, python_error = None, error
    done = subprocess.run([str(cli_path()), *e.cli(path, cli_dir)], capture_output=True, cwd=ROOT)
    if python_error is None:
        assert given not in HOSTILE and (entry, given) not in REFUSED
        assert done.returncode in e.ok_codes, done.stderr.decode()
        written = b"".join((cli_dir / name).read_bytes() for name in e.outputs)
        assert python.encode() == done.stdout + written
    else:
        assert done.stdout == b""
        assert done.stderr.decode() == f"smelt-match: error: {python_error}\n"
        assert done.returncode == EXIT_CODE[type(python_error)]
        assert given in HOSTILE or (entry, given) in REFUSED
