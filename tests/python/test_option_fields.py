"""The option structs' field tables (include/smelt/option_fields.hpp) against the
Python docs: every row is a keyword the function takes, its docstring lists it with
its doc and bounds, and docs/python.md names it; the keyword reader takes exactly
the table's names."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

import smelt
from smelt import _core, _options

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAKERS = {
    "LoopRecipe": [smelt.derive],
    "SearchSpace": [smelt.derive, smelt.sweep],
    "MatchOptions": [smelt.derive, smelt.sweep],
    "SweepOptions": [smelt.sweep],
    "FitOptions": [smelt.fit],
    "MemoryLayout": [smelt.memory, smelt.time, smelt.derive, smelt.sweep],
    "TimeOptions": [smelt.time, smelt.derive, smelt.sweep],
}
ROWS = json.loads(_core.option_fields())


def test_the_tables_are_the_seven_option_structs():
    # 4 + 15 + 9 + 3 + 5 + 25 + 3 rows: LoopRecipe, SearchSpace, MatchOptions, SweepOptions, FitOptions,
    # MemoryLayout, TimeOptions
    counts = {owner: sum(1 for r in ROWS if r["owner"] == owner) for owner in TAKERS}
    assert counts == {
        "LoopRecipe": 4,
        "SearchSpace": 15,
        "MatchOptions": 9,
        "SweepOptions": 3,
        "FitOptions": 5,
        "MemoryLayout": 25,
        "TimeOptions": 3,
    }
    assert next(r for r in ROWS if r["name"] == "align_hidden") == {
        "owner": "SearchSpace",
        "name": "align_hidden",
        "kind": "integer",
        "lo": 1.0,
        "hi": 16777216.0,
        "doc": "Hidden sizes are multiples of this",
    }


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['owner']}::{r['name']}")
def test_every_row_is_in_its_functions_docstrings_and_docs_python_md(row):
    line = _options.keyword_doc(row)
    for function in TAKERS[row["owner"]]:
        assert line in function.__doc__, function.__name__
    python_md = (ROOT / "docs" / "python.md").read_text()
    assert f"`{row['name']}`" in python_md


def test_a_keyword_line_renders_bounds_and_other_fields():
    row = next(r for r in ROWS if r["name"] == "head_dim")
    assert _options.keyword_doc(row) == (
        "``head_dim`` (range, 1 to 2^24): Head size: a value or LO:HI (default: multiples of ``align_head_dim`` in "
        "[``min_head_dim``, ``max_head_dim``])"
    )


def test_the_reader_takes_each_row_by_name_and_refuses_others():
    # A wrong type for every SearchSpace row at once: each is named by the table's owner and name.
    bad = {r["name"]: "x" for r in ROWS if r["owner"] == "SearchSpace" and r["kind"] != "word"}
    with pytest.raises(smelt.ConfigError) as e:
        smelt.derive(str(ROOT / "examples" / "tiny-moe.json"), **bad)
    named = re.findall(r"SearchSpace::(\w+) = ", str(e.value))
    assert named == list(bad)
