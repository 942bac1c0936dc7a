"""The keywords of derive, sweep and fit, from the library's field tables.

Each option struct (LoopRecipe, SearchSpace, MatchOptions, SweepOptions,
FitOptions) has one table in its C++ header (include/smelt/option_fields.hpp):
the member, its kind, its bounds and a one-line doc. The extension exports the
tables (``_core.option_fields()``); the functions' docstrings list their
keywords from them, so that the docs and the code cannot drift.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

from . import _core

#: Every row: {"owner", "name", "kind", "lo", "hi", "doc"}; an unbounded end is None.
FIELDS: list[dict[str, Any]] = json.loads(_core.option_fields())


def _bound(v: float) -> str:
    if v >= 65536 and math.log2(v).is_integer():
        return f"2^{int(math.log2(v))}"
    return f"{int(v)}" if float(v).is_integer() else f"{v:f}".rstrip("0")


def keyword_doc(row: dict[str, Any]) -> str:
    """One keyword's line: ``name`` (kind, bounds): doc, other fields named as keywords."""
    doc = re.sub(r"\{(\w+)\}", r"``\1``", row["doc"])
    lo, hi = row["lo"], row["hi"]
    numeric = row["kind"] not in ("boolean", "word", "word list")
    if not numeric or (lo is None and hi is None) or (lo == 0 and hi is None):
        bounds = ""
    elif hi is None:
        bounds = f", at least {_bound(lo)}"
    else:
        bounds = f", {_bound(lo)} to {_bound(hi)}"
    return f"``{row['name']}`` ({row['kind']}{bounds}): {doc}"


def document(function: Callable[..., Any], *owners: str) -> None:
    """Appends the keywords of `owners`' tables to `function`'s docstring."""
    lines = [(function.__doc__ or "").rstrip(), "", "    Keywords:"]
    for owner in owners:
        lines.append(f"\n    {owner}:\n")
        lines += [f"    - {keyword_doc(row)}" for row in FIELDS if row["owner"] == owner]
    function.__doc__ = "\n".join(lines) + "\n"
