"""Checking the fields of smelt-match's JSON reports for the plots, with the library's error style.

A report (read by smelt._report.read_json, the package's one reader of report JSON) is checked before anything is
drawn, and every violation is listed at once, each naming the JSON path, the value and the rule
(docs/json-schema.md): ``best.budgets.kv_bytes_per_token.mismatch_pct = "x": must be a number``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from .._errors import ReportError

_MISSING = object()


def shown(value: Any) -> str:
    """A JSON value as a message shows it, cut to 64 characters (a report can hold whole configs)."""
    text = json.dumps(value)
    return text if len(text) <= 64 else text[:61] + "..."


class Reader:
    """Typed access to a report's fields that records every violation and raises them together at the end.

    Each getter returns the value, or None when the field is missing or of the wrong kind (the violation is
    recorded); a getter given None as its parent returns None silently, so one missing object is named once.
    """

    def __init__(self, name: str, what: str) -> None:
        self.name = name
        self.what = what
        self.errors: list[str] = []

    def fail(self, path: str, rule: str, value: Any = _MISSING) -> None:
        self.errors.append(f"{path}: {rule}" if value is _MISSING else f"{path} = {shown(value)}: {rule}")

    def raise_if_any(self) -> None:
        if self.errors:
            lines = "\n".join("  " + e for e in self.errors)
            raise ReportError(f"while reading {self.what} '{self.name}':\n{lines}")

    def get(self, obj: Any, path: str, key: str) -> Any:
        """obj[key] (null included), or _MISSING, recorded as missing when obj is an object without key."""
        if obj is None:
            return _MISSING
        if not isinstance(obj, dict) or key not in obj:
            self.fail(join(path, key), "missing (required)")
            return _MISSING
        return obj[key]

    def field(self, obj: Any, path: str, key: str) -> Any:
        """obj[key] of any type, None when missing or null."""
        value = self.get(obj, path, key)
        return None if value is _MISSING else value

    def object(self, obj: Any, path: str, key: str) -> dict | None:
        value = self.get(obj, path, key)
        if value is _MISSING:
            return None
        if not isinstance(value, dict):
            self.fail(join(path, key), "must be an object", value)
            return None
        return value

    def array(self, obj: Any, path: str, key: str, nonempty: bool = False) -> list | None:
        value = self.get(obj, path, key)
        if value is _MISSING:
            return None
        if not isinstance(value, list):
            self.fail(join(path, key), "must be an array", value)
            return None
        if nonempty and not value:
            self.fail(join(path, key), "must hold at least one entry", value)
            return None
        return value

    def objects(self, obj: Any, path: str, key: str, nonempty: bool = False) -> list[tuple[str, dict]]:
        """The object entries of an array, each with its path; an entry of another type is recorded."""
        out = []
        for i, entry in enumerate(self.array(obj, path, key, nonempty) or []):
            at = f"{join(path, key)}[{i}]"
            if isinstance(entry, dict):
                out.append((at, entry))
            else:
                self.fail(at, "must be an object", entry)
        return out

    def number(self, obj: Any, path: str, key: str, positive: bool = False) -> float | None:
        value = self.get(obj, path, key)
        if value is _MISSING:
            return None
        try:  # as a double: an integer past 2^63 would overflow matplotlib's arithmetic, one past 1e308 a double
            number = None if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
        except OverflowError:
            number = None
        if number is None or not math.isfinite(number):
            self.fail(join(path, key), "must be a finite number", value)
            return None
        value = number
        if positive and value <= 0:
            self.fail(join(path, key), "must be a positive number", value)
            return None
        return value

    def integer(self, obj: Any, path: str, key: str, minimum: int = 0) -> int | None:
        value = self.get(obj, path, key)
        if value is _MISSING:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value < 2**53:
            self.fail(join(path, key), f"must be an integer from {minimum} to 2^53", value)
            return None
        return value

    def string(self, obj: Any, path: str, key: str, allowed: Iterable[str] | None = None) -> str | None:
        value = self.get(obj, path, key)
        if value is _MISSING:
            return None
        if not isinstance(value, str):
            self.fail(join(path, key), "must be a string", value)
            return None
        if allowed is not None and value not in allowed:
            words = " or ".join(f'"{a}"' for a in allowed)
            self.fail(join(path, key), f"must be {words}", value)
            return None
        return value

    def boolean(self, obj: Any, path: str, key: str) -> bool | None:
        value = self.get(obj, path, key)
        if value is _MISSING:
            return None
        if not isinstance(value, bool):
            self.fail(join(path, key), "must be true or false", value)
            return None
        return value

    def header(self, report: Any, kind: str, versions: tuple[int, ...], writer: str, plot: str) -> None:
        """Checks `schema_version` and `kind` first: a report of another kind would only give confusing errors."""
        if not isinstance(report, dict):
            found = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(
                type(report), "a number"
            )
            self.fail("(top level)", f"must be an object, the report of {writer}; found {found}")
            self.raise_if_any()
        version = report.get("schema_version", _MISSING)
        if version is _MISSING:
            self.fail("schema_version", "missing (required)")
        elif isinstance(version, bool) or version not in versions:
            listed = " or ".join(str(v) for v in versions)
            self.fail(
                "schema_version",
                f"must be {listed}, the version{'s' if len(versions) > 1 else ''} this plot reads",
                version,
            )
        found = report.get("kind", _MISSING)
        if found is _MISSING:
            self.fail("kind", "missing (required)")
        elif found != kind:
            self.fail("kind", f'must be "{kind}" for a {plot} plot (the report of {writer})', found)
        self.raise_if_any()


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
