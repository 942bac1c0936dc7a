"""docs/reference-model.md's example ("Install and use"), run as the doc shows it.

The first ```python block of that section is read from the markdown file and executed from the repository's
root; every line it prints must equal the comment on its `print` line, so the doc and the test cannot drift.
The block derives from the Baseline of the README's main job (`smelt-match derive examples/smelt-baseline-54b.json`).
Skipped where torch is missing.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

pytest.importorskip("torch")

from conftest import ROOT  # noqa: E402

DOC = ROOT / "docs" / "reference-model.md"
README_JOB = "smelt-match derive examples/smelt-baseline-54b.json"


def example_block() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("\n## Install and use\n") :]
    section = section[: section.index("\n## ", 1)]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "no ```python block in the doc's 'Install and use' section"
    return m.group(1)


def expected_prints(block: str) -> list[str]:
    """The comment of every `print(...)` line: the output that line promises."""
    out = []
    for line in block.splitlines():
        if line.startswith("print("):
            m = re.fullmatch(r"print\(.*?\)\s+# (.*)", line)
            assert m, f"a print line without its output in a comment: {line}"
            out.append(m.group(1).rstrip())
    return out


def test_the_example_derives_from_the_readme_s_baseline():
    assert README_JOB in (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'smelt.derive("examples/smelt-baseline-54b.json")' in example_block()


def test_the_example_prints_what_the_doc_says(monkeypatch):
    block = example_block()
    want = expected_prints(block)
    # The derived config, its full-size parameters against smelt's, a shrunk forward pass, its parameters.
    assert len(want) == 4
    monkeypatch.chdir(ROOT)  # the block names examples/ relative to the repository's root
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
    assert printed.getvalue().splitlines() == want
