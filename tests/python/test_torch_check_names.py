"""`python -m smelt check-model` shows a config's name as smelt-match's tables show it: whole up to 64 bytes,
else its first 64 bytes, "..." and its length (src/util/excerpt.cpp, name_excerpt); --json keeps it whole, as
smelt-match's JSON reports do. An unnamed config is named by its path, as `smelt-match count` names it."""

from __future__ import annotations

import json
import pathlib

import pytest

pytest.importorskip("torch")

from torch_support import ROOT, run_check  # noqa: E402

TINY = json.loads((pathlib.Path(ROOT) / "examples" / "tiny-moe.json").read_text())
TAIL = "context 8 tokens, seed 0, 4 layers stored, 6 executed"


def write(tmp_path: pathlib.Path, name: str) -> str:
    path = tmp_path / "named.json"
    path.write_text(json.dumps(dict(TINY, name=name), ensure_ascii=False))
    return str(path)


def test_a_long_name_is_cut_in_the_table_and_whole_in_the_json(capsys, tmp_path: pathlib.Path) -> None:
    name = "é" * 100_000  # 200,000 bytes of UTF-8: the cut falls on a character boundary, 32 characters
    path = write(tmp_path, name)
    code, out, err = run_check(capsys, path)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"check-model {'é' * 32}... (200000 bytes) ('{path}'): {TAIL}"
    assert len(out) < 3000  # the table, not the name
    code, out, err = run_check(capsys, path, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["model"] == name


def test_a_name_of_64_bytes_is_whole_and_an_empty_one_is_the_path(capsys, tmp_path, monkeypatch) -> None:
    path = write(tmp_path, "m" * 64)
    assert run_check(capsys, path)[1].splitlines()[0] == f"check-model {'m' * 64} ('{path}'): {TAIL}"
    write(tmp_path, "")
    monkeypatch.chdir(tmp_path)
    first = run_check(capsys, "named.json")[1].splitlines()[0]
    assert first == f"check-model named.json ('named.json'): {TAIL}"
