"""The one reader of the library's JSON reports, and typed views of them.

``read_json`` and ``decode`` are where the package reads a report's JSON: the
typed reports below decode the text the C++ writer returns, and the plots
(smelt.plot) read a report file or dict through ``read_json``, with the
library's bounded file reader.

A report keeps the parsed JSON (key order as the C++ writer wrote it) and reads
it by attribute: ``r.params.total`` is ``r.to_dict()["params"]["total"]``.
``to_dict()`` is the report itself, and ``to_json()`` the text the C++ writer
wrote, so it equals the CLI's ``--json`` output byte for byte for the same input
(docs/json-schema.md names every key). Each object prints as what it is, with
its field names: ``Knobs(hidden_size=1536, num_experts=232, ...)``.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Iterator

from . import _core
from ._errors import ConfigError, ReportError


def decode(text: str) -> Any:
    """JSON text as Python values, in the writer's key order: every report and config the package reads."""
    return json.loads(text)


def read_json(source: str | os.PathLike[str] | Any, what: str) -> tuple[Any, str]:
    """A report (or law file) and the name messages use for it: the path as given (``<stdin>`` for ``-``, which
    reads standard input), or ``<dict>`` for a value, which is returned as it is.

    A file is read and parsed by the library's bounded reader, as every smelt-match input is (64 MiB, 64 levels
    of nesting, 4,194,304 values, numbers a double holds): a file that cannot be read raises smelt.IOError, an
    OSError (exit code 4 on the command line), text that is not such JSON a ReportError (exit code 2), each with
    the library's message under ``while reading WHAT 'NAME':``.
    """
    if not isinstance(source, (str, os.PathLike)):
        return source, f"<{type(source).__name__}>"
    path = os.fspath(source)
    name = "<stdin>" if path == "-" else path
    try:
        text = _core.read_json_text(path, what)
    except ConfigError as e:
        raise ReportError(str(e)) from None
    return decode(text), name


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
            return self[key]
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
        """``Type(key=value, ...)`` in the writer's key order, as a dataclass prints; a nested object shows as
        ``Type(...)`` (print it to see its fields), a long list by its first entries and its length, a long
        string cut as the CLI's tables cut names."""
        fields = ", ".join(f"{key}={_brief(self[key])}" for key in self._data)
        return f"{type(self).__name__}({fields})"

    def keys(self) -> list[str]:
        return list(self._data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object as plain dicts and lists (a copy), in the writer's key order."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The JSON text, two-space indented as the CLI prints it."""
        return json.dumps(self._data, indent=2) + "\n"


# A list longer than this shows its first entries and its length.
_SHOWN_ENTRIES = 6


def _brief(value: Any) -> str:
    if isinstance(value, Node):
        return f"{type(value).__name__}(...)"
    if isinstance(value, list):
        shown = [_brief(v) for v in value[: _SHOWN_ENTRIES - 1 if len(value) > _SHOWN_ENTRIES else len(value)]]
        more = [f"... {len(value)} entries"] if len(value) > _SHOWN_ENTRIES else []
        return "[" + ", ".join(shown + more) + "]"
    if isinstance(value, str):
        return repr(_core.name_excerpt(value))
    return repr(value)


def _wrap(value: Any, cls: type[Node] | None) -> Any:
    if isinstance(value, dict):
        return (cls or Node)(value)
    if isinstance(value, list):
        return [_wrap(v, cls) for v in value]
    return value


class Report(Node):
    """A whole report, kept with the text the C++ writer wrote: ``to_json()`` returns it unchanged."""

    __slots__ = ("_text",)

    def __init__(self, text: str | dict[str, Any]) -> None:
        if isinstance(text, str):
            super().__init__(decode(text))
            object.__setattr__(self, "_text", text)
        else:
            super().__init__(text)
            object.__setattr__(self, "_text", None)

    def to_json(self) -> str:
        """The report's JSON text as the library wrote it (the CLI's ``--json`` output, byte for byte)."""
        return self._text if self._text is not None else super().to_json()


# The count report's term names, in its order, from its writer (src/count/report_terms.hpp).
TERMS: dict[str, tuple[str, ...]] = _core.report_terms()


class ParamTerms(Node):
    __doc__ = (
        f"Parameters (elements) per part: {', '.join(TERMS['params'])} "
        f"(a layer's ``params`` holds the per-layer parts: {', '.join(TERMS['layer_params'])})."
    )


class FlopTerms(Node):
    __doc__ = (
        f"FLOPs per token per part: {', '.join(TERMS['flops'])} "
        f"(a layer's ``flops_per_visit`` holds {', '.join(TERMS['layer_flops'])} and their ``total``)."
    )


class Params(Node):
    """Parameter counts (elements): total, embedding, lm_head, non_embedding, active, active_non_embedding, mtp, terms."""


class Flops(Node):
    """FLOPs per token (2 x multiply-accumulates): forward, forward_non_embedding, training (3 x (forward + mtp)), terms."""


class KvCache(Node):
    """KV cache: bytes_per_token and elements_per_token (per token of context), bytes_at_context, element_bytes."""


class Sparsity(Node):
    """The SMELT paper's sparsity: S = 1 - (F / F0) N0 / N, the reference (every_expert_active or config,
    reference_model), F and N (flops_forward_non_embedding, params_non_embedding) and the reference's F0 and N0."""


class Loop(Node):
    """A looped span: span ("first-last", 1-based), count (passes), residual_scale."""


class Layer(Node):
    """One weight-owning layer: layer (1-based), kind, attention, visits, params, active_params,
    flops_per_visit (FLOPs per token, one visit), kv_bytes_per_visit (bytes per token of context, one visit)."""


class LayerRun(Node):
    """Layers that cost the same, written once: first, last (1-based, inclusive), step, count (the layers
    first, first + step, ..., last), then what each of them costs, as a Layer holds it."""

    @property
    def layer_numbers(self) -> range:
        """The run's layers, 1-based: ``range(first, last + 1, step)``."""
        return range(self.first, self.last + 1, self.step)


class CountReport(Report):
    """What one token costs a model (``smelt-match count --json``).

    ``params`` in elements, ``flops`` (the JSON's ``flops_per_token``) in FLOPs per
    token, ``kv`` (``kv_cache``) in bytes per token of context, ``layer_runs`` every
    layer in runs of layers that cost the same; ``layers`` one per weight-owning
    layer, with ``smelt.count(..., every_layer=True)``.
    """

    _aliases = {"flops": "flops_per_token", "kv": "kv_cache"}

    def __getattr__(self, name: str) -> Any:
        if name == "layers" and "layers" not in self._data and "layer_runs" in self._data:
            raise AttributeError(
                "CountReport has no field 'layers': smelt.count(..., every_layer=True) writes one per layer "
                "(smelt-match count --json --every-layer); layer_runs holds every layer in runs"
            )
        return super().__getattr__(name)


class Attention(Node):
    """A config's attention (docs/config.md): type, heads, KV heads, head_dim, pattern, window, ..."""


class Ffn(Node):
    """A config's FFN: type, bias, dense_width."""


class Moe(Node):
    """A config's experts: num_experts, top_k, expert_width, shared experts, router, layers."""


class MoeLayers(Node):
    """Which layers are MoE: first_dense, every, phase."""


class Config(Report):
    """A validated model config in smelt's native form (docs/config.md).

    Built by ``smelt.read_config``; ``to_json()`` is the canonical native JSON
    that ``smelt-match convert`` writes, which the CLI reads back unchanged.
    ``source`` is the path it was read from (None otherwise).

    The library reads (parses and validates) a config once and the config keeps
    what it read (``_native``), which every other call takes as it is; its JSON
    is written, and read in Python, only when asked for.
    """

    __slots__ = ("source", "_native")

    def __init__(self, text: str | dict[str, Any], source: str | None = None) -> None:
        super().__init__(text)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "_native", None)

    @classmethod
    def _read(cls, native: _core.NativeConfig, source: str | None = None) -> Config:
        """A config the library has read: its fields are decoded on the first one asked for."""
        self = cls.__new__(cls)
        object.__setattr__(self, "_text", None)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "_native", native)
        return self

    def __getattr__(self, name: str) -> Any:
        if name == "_data":  # not decoded yet (Config._read)
            data = decode(self.to_json())
            object.__setattr__(self, "_data", data)
            return data
        return super().__getattr__(name)

    def __copy__(self) -> Config:
        return self  # read-only, as a tuple is

    def __deepcopy__(self, memo: dict[int, Any]) -> Config:
        return self

    def _native_config(self) -> _core.NativeConfig:
        """The config as the library read it; a config inside a report is read (once) when first asked for."""
        if self._native is None:
            text = self._text if self._text is not None else json.dumps(self._data)
            object.__setattr__(self, "_native", _core.parse_config(text, "<config>"))
        return self._native

    def to_json(self) -> str:
        if self._text is None:  # canonical text from the library's own writer
            object.__setattr__(self, "_text", self._native_config().to_json())
        return self._text


class Knobs(Node):
    """A candidate's sizes: hidden_size, num_experts, num_heads, num_kv_heads, head_dim, expert_width,
    shared_width, dense_width."""


class Budget(Node):
    """One budget: baseline, candidate, mismatch_pct (100 x (candidate - baseline) / baseline)."""


class Budgets(Node):
    """The five budgets at one context (and its ``context`` in ``contexts[]``): flops_per_token,
    params_non_embedding, kv_bytes_per_token, flops_per_token_with_head, flops_per_token_non_embedding."""


class HeadSplit(Node):
    """One split of a candidate's attention and KV widths into heads: num_heads, num_kv_heads, head_dim."""


class Candidate(Node):
    """A derived config: name, knobs, equivalent_head_splits (how many splits of its attention and KV widths the
    space holds, itself included), head_splits (each, its own first), budgets (first context),
    max_abs_mismatch_pct, contexts, layers_executed, depth_to_width, active_params, residual_scale, memory_bytes
    (per-GPU bytes under the memory layout beside the Baseline's, or None with memory_note saying why),
    training_seconds_per_token and decode_seconds_per_token (predicted on the ``hardware`` keyword's device beside the
    Baseline's, or None: without a device, or with time_note saying why), config."""


class Baseline(Node):
    """The Baseline of a match: name, hidden_size, layers_executed, depth_to_width, active_params, config."""


class Recipe(Node):
    """What was matched and searched: the loop, the budgets, contexts, tolerance_pct, the space's ranges."""


class Change(Node):
    """One change of a relaxation: field, value (text)."""


class Relaxation(Node):
    """One relaxation solved alone: changes, max_abs_mismatch_pct, within_tolerance, knobs, error."""


class MatchResult(Report):
    """The solver's answer (``smelt-match derive --json``, match schema 3).

    ``best`` is the best candidate, ``alternatives`` the next distinct ones (no two the same but for
    the split of their heads, docs/solver.md section 6); ``best_config`` its native
    config, ready for ``smelt.count``; ``within_tolerance``, ``why`` and
    ``relaxations`` say how close it came. Mismatches are in percent.
    """

    @property
    def best_config(self) -> Config:
        """``best.config``: its ``to_json()`` is what ``smelt-match derive --out`` writes."""
        return self.best.config


class SweepRow(Node):
    """One solve of a sweep: kind, span_fraction, depth_multiplier, span, loops, depth, the knobs, the signed
    mismatches in percent, within_tolerance, depth_to_width, memory_bytes and memory_mismatch_pct (None where the
    memory layout cannot shard the row), training_seconds_per_token and training_time_mismatch_pct (None without the
    ``hardware`` keyword), config."""


class SweepReport(Report):
    """The matched ablation grid (``smelt-match sweep --json``): ``rows``, one solve each."""


class MemoryReport(Report):
    """Bytes one GPU holds (``smelt-match memory --json``, schema 2): ``total`` (the training step's peak, the
    backward's ``transient`` included), ``worst_rank`` (with its ``layer_visits`` and their ``visit_runs``),
    ``per_stage``, ``layout``."""


class TimeReport(Report):
    """Predicted step times (``smelt-match time --json``): ``training_seconds_per_token``,
    ``forward_seconds_per_token``, ``decode_seconds_per_token``, ``model_flops_utilization``, ``training``,
    ``forward`` and ``decode`` (each ``seconds``, ``seconds_by_bound``, ``seconds_by_term``; ``ops``), ``layout``,
    ``hardware``."""


class LawParams(Node):
    """A law's fitted constants: E, A, B, alpha, beta (chinchilla) or E, A, a, b, K, c (smelt)."""


class Law(Node):
    """One fitted law: form, label, params, objective, rmse_log_loss, runs, starts, bootstrap, ci, ..."""


class Laws(Report):
    """Fitted scaling laws, a law file (``smelt-match fit --json``): ``laws``, one per label."""


class FrontierLaw(Node):
    """A law of a frontier: name, form, file."""


class FrontierPoint(Node):
    """A law's compute-optimal point at a budget: name, size, size_unit, tokens, loss, tpp (tokens per parameter:
    tokens / size for chinchilla, tokens / (size / 6) for smelt), tpp_interval ([2.5%, 97.5%] over the law's
    bootstrap samples, or None), gain, gain_interval."""


class FrontierBudget(Node):
    """One training budget: compute (FLOPs), laws (one point per law)."""


class FrontierReport(Report):
    """Compute-optimal frontiers and gains (``smelt-match frontier --json``); compute in FLOPs."""


# Which typed view a child key gets: (parent class, key) -> class.
_CHILDREN: dict[tuple[str, str], type[Node]] = {
    ("CountReport", "loop"): Loop,
    ("CountReport", "loops"): Loop,
    ("CountReport", "params"): Params,
    ("CountReport", "flops_per_token"): Flops,
    ("CountReport", "kv_cache"): KvCache,
    ("CountReport", "sparsity"): Sparsity,
    ("CountReport", "layer_runs"): LayerRun,
    ("CountReport", "layers"): Layer,
    ("Params", "terms"): ParamTerms,
    ("Flops", "terms"): FlopTerms,
    ("Flops", "terms_training"): FlopTerms,
    ("Layer", "params"): ParamTerms,
    ("Layer", "flops_per_visit"): FlopTerms,
    ("LayerRun", "params"): ParamTerms,
    ("LayerRun", "flops_per_visit"): FlopTerms,
    ("Config", "attention"): Attention,
    ("Config", "ffn"): Ffn,
    ("Config", "moe"): Moe,
    ("Config", "loop"): Loop,
    ("Config", "loops"): Loop,
    ("Moe", "layers"): MoeLayers,
    ("MatchResult", "baseline"): Baseline,
    ("MatchResult", "recipe"): Recipe,
    ("MatchResult", "relaxations"): Relaxation,
    ("MatchResult", "best"): Candidate,
    ("MatchResult", "alternatives"): Candidate,
    ("Baseline", "config"): Config,
    ("Candidate", "knobs"): Knobs,
    ("Candidate", "head_splits"): HeadSplit,
    ("Candidate", "budgets"): Budgets,
    ("Candidate", "contexts"): Budgets,
    ("Candidate", "config"): Config,
    ("Relaxation", "changes"): Change,
    ("Relaxation", "knobs"): Knobs,
    ("SweepReport", "rows"): SweepRow,
    ("SweepRow", "config"): Config,
    ("Laws", "laws"): Law,
    ("Law", "params"): LawParams,
    ("FrontierReport", "laws"): FrontierLaw,
    ("FrontierReport", "budgets"): FrontierBudget,
    ("FrontierBudget", "laws"): FrontierPoint,
}
for _name in ("flops_per_token", "params_non_embedding", "kv_bytes_per_token", "flops_per_token_with_head",
              "flops_per_token_non_embedding"):
    _CHILDREN[("Budgets", _name)] = Budget
