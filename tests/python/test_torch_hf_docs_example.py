"""docs/training.md's first Python block runs as written, and each print shows what its comment says."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_the_training_page_s_example_prints_what_it_says(monkeypatch, tmp_path):
    text = open(os.path.join(ROOT, "docs", "training.md"), encoding="utf-8").read()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    want = [line.split("# ", 1)[1].split(" (")[0].strip() for line in block.splitlines() if line.startswith("print(")]
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the block's mkdtemp() under this test's folder
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "docs/training.md", "exec"), {})
    got = printed.getvalue().splitlines()
    assert got == want
