"""Typed views of the library's JSON reports.

A report keeps the parsed JSON (key order as the C++ writer wrote it) and reads
it by attribute: ``r.params.total`` is ``r.to_dict()["params"]["total"]``.
``to_dict()`` is the report itself, so ``json.dumps(r.to_dict())`` equals
``json.dumps(json.loads(cli_output))`` for the same input (docs/json-schema.md
names every key).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator


class Node:
    """One JSON object of a report, read by attribute or by key."""

    __slots__ = ("_data",)
    # Attribute names that read another key (short names for long keys).
    _aliases: dict[str, str] = {}

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        key = self._aliases.get(name, name)
        try:
            return _wrap(self._data[key], _CHILDREN.get((type(self).__name__, key)))
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field '{name}' (keys: {', '.join(self._data)})") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key], _CHILDREN.get((type(self).__name__, key)))

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> list[str]:
        return sorted(set(self._data) | set(self._aliases) | set(super().__dir__()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and self._data == other._data

    def __repr__(self) -> str:
        text = json.dumps(self._data)
        return f"{type(self).__name__}({text if len(text) < 200 else text[:200] + '...'})"

    def keys(self) -> list[str]:
        return list(self._data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object as plain dicts and lists (a copy), in the writer's key order."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The JSON text, two-space indented as the CLI prints it."""
        return json.dumps(self._data, indent=2) + "\n"


def _wrap(value: Any, cls: type[Node] | None) -> Any:
    if isinstance(value, dict):
        return (cls or Node)(value)
    if isinstance(value, list):
        return [_wrap(v, cls) for v in value]
    return value


class Params(Node):
    """Parameter counts (elements): total, embedding, lm_head, non_embedding, active, active_non_embedding, mtp, terms."""


class Flops(Node):
    """FLOPs per token (2 x multiply-accumulates): forward, forward_non_embedding, training (3 x (forward + mtp)), terms."""


class KvCache(Node):
    """KV cache: bytes_per_token and elements_per_token (per token of context), bytes_at_context, element_bytes."""


class Layer(Node):
    """One weight-owning layer: layer (1-based), kind, attention, visits, params, active_params,
    flops_per_visit (FLOPs per token, one visit), kv_bytes_per_visit (bytes per token of context, one visit)."""


class CountReport(Node):
    """What one token costs a model (``smelt-match count --json``).

    ``params`` in elements, ``flops`` (the JSON's ``flops_per_token``) in FLOPs per
    token, ``kv`` (``kv_cache``) in bytes per token of context, ``layers`` one per
    weight-owning layer.
    """

    _aliases = {"flops": "flops_per_token", "kv": "kv_cache"}


class Config(Node):
    """A validated model config in smelt's native form (docs/config.md).

    Built by ``smelt.read_config``; ``to_json()`` is the canonical native JSON
    that ``smelt-match convert`` writes, which the CLI reads back unchanged.
    """

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        super().__init__(json.loads(text))
        object.__setattr__(self, "_text", text)

    def to_json(self) -> str:
        return self._text


class MatchResult(Node):
    """The solver's answer (``smelt-match derive --json``, match schema 2).

    ``best`` is the best candidate, ``alternatives`` the next ones; ``best_config`` its native
    config, ready for ``smelt.count``; ``within_tolerance``, ``why`` and
    ``relaxations`` say how close it came. Mismatches are in percent.
    """

    @property
    def best_config(self) -> Config:
        return Config(json.dumps(self._data["best"]["config"], indent=2) + "\n")


class SweepReport(Node):
    """The matched ablation grid (``smelt-match sweep --json``): ``rows``, one solve each."""


class Laws(Node):
    """Fitted scaling laws, a law file (``smelt-match fit --json``): ``laws``, one per label."""


class FrontierReport(Node):
    """Compute-optimal frontiers and gains (``smelt-match frontier --json``); compute in FLOPs."""


# Which typed view a child key gets: (parent class, key) -> class.
_CHILDREN: dict[tuple[str, str], type[Node]] = {
    ("CountReport", "params"): Params,
    ("CountReport", "flops_per_token"): Flops,
    ("CountReport", "kv_cache"): KvCache,
    ("CountReport", "layers"): Layer,
}
