"""smelt: compute-matched looped Mixture-of-Experts configurations, from Python.

The same C++ library as the ``smelt-match`` CLI, called directly: every report
is the JSON the CLI's ``--json`` prints (docs/json-schema.md), read by
attribute. Nothing here prints or exits; failures raise ``smelt.Error`` and its
kinds with the library's messages (field, value, rule). docs/python.md has a
worked example.

Units: FLOPs are per token (forward = 2 x multiply-accumulates, training = 3 x
forward); parameters are elements; the KV cache is bytes per token of context;
mismatches are percent; training compute is FLOPs.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Iterable, Mapping, Sequence, Union

from . import _core, _options
from ._errors import ConfigError, CudaError, Error, InfeasibleError, IOError, SmeltIOError
from ._report import (
    Config,
    CountReport,
    Flops,
    FrontierReport,
    KvCache,
    Laws,
    Layer,
    LayerRun,
    MatchResult,
    MemoryReport,
    TimeReport,
    Node,
    Params,
    SweepReport,
)

__version__: str = _core.__version__

__all__ = [
    "Config",
    "ConfigError",
    "CountReport",
    "CudaError",
    "Error",
    "FrontierReport",
    "IOError",
    "InfeasibleError",
    "Laws",
    "MatchResult",
    "MemoryReport",
    "TimeReport",
    "SmeltIOError",
    "SweepReport",
    "MegatronArguments",
    "count",
    "derive",
    "export_hf",
    "export_megatron",
    "fit",
    "layer_anatomy",
    "memory",
    "time",
    "frontier",
    "read_config",
    "supported_hf_model_types",
    "sweep",
]

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any], Config]


def _plain(value: Any) -> Any:
    """json.dumps' fallback: numpy and other integer or real scalars as Python's; a numpy bool as Python's bool,
    which every numeric keyword refuses as it refuses True (never 1 or 1.0)."""
    if getattr(getattr(value, "dtype", None), "kind", None) == "b" and getattr(value, "ndim", None) == 0:
        return bool(value)
    if hasattr(value, "__index__"):
        return int(value.__index__())
    if hasattr(value, "__float__"):
        return float(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"{type(value).__name__} is not a number, string, list or bool")


def _keywords(function: str, kwargs: Mapping[str, Any]) -> str:
    """Keyword arguments as the JSON object smelt._core reads; a value JSON cannot hold names its keyword."""
    for key, value in kwargs.items():
        try:
            json.dumps(value, default=_plain, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as e:
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:60] + "..."
            rule = "must be finite" if isinstance(e, ValueError) else "must be a number, string, list or bool"
            raise ConfigError(f"{function}(): {key} = {shown}: {rule}", [(key, shown, rule)]) from None
    return json.dumps(kwargs, default=_plain)


def _argument(function: str, key: str, value: Any, kind: type, rule: str, optional: bool = False,
              default: Any = None) -> Any:
    """A positional argument of ``kind`` as the extension takes it: None is ``default`` (or kept, when
    ``optional``); a numpy scalar is Python's; a bool is no int; anything else raises ConfigError naming ``key``."""
    if value is None:
        return None if optional else default
    if not isinstance(value, (str, bool, int, float)):
        try:
            value = _plain(value)
        except TypeError:
            pass
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        return value
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:60] + "..."
    raise ConfigError(f"{function}(): {key} = {shown}: {rule}", [(key, shown, rule)])


def read_config(config: ConfigLike, source: str = "<dict>") -> Config:
    """Reads a model config: a path to a file, or a dict.

    Native JSON (a top-level ``schema_version``) or a Hugging Face config.json (a
    ``model_type``) are told apart as the CLI does. A dict goes through the same
    parser as a file, so a wrong type gets the same message, with its JSON path
    (``attention.num_kv_heads = 6: must divide attention.num_heads = 16``);
    ``source`` names the dict in messages. The name is kept as the file gives it,
    empty or not, as ``smelt-match convert`` writes it (``count`` names an unnamed
    config by its path, as ``smelt-match count`` does). ``"-"`` reads standard input.

    Raises ConfigError for a broken rule, IOError for a file that cannot be read.
    """
    if isinstance(config, Config):
        return config
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        return Config._read(_core.read_config(path), source=path)
    if isinstance(config, Mapping):
        try:
            text = json.dumps(config, allow_nan=False, default=_plain)
        except (TypeError, ValueError, RecursionError) as e:
            raise ConfigError(f"{source}: not a JSON object: {e}") from None
        return Config._read(_core.parse_config(text, source))
    raise ConfigError(f"config = {type(config).__name__}: must be a path, a dict or a smelt.Config")


def _native(config: ConfigLike) -> _core.NativeConfig:
    """The config as the library read it: read once here, or as a Config keeps it."""
    return read_config(config)._native_config()


def count(
    config: ConfigLike,
    context: int | None = None,
    convention: str = "smelt",
    elementwise: bool = False,
    sparsity_reference: ConfigLike | None = None,
    every_layer: bool = False,
) -> CountReport:
    """What one token costs a model: parameters, FLOPs per token and KV cache.

    ``context`` (tokens) sets the context for attention FLOPs and the KV cache
    (default: the config's ``context_length``); ``convention`` is ``smelt``,
    ``megatron``, ``torchtitan`` or ``flop-counter`` (docs/counting.md);
    ``elementwise`` adds norms, activations, softmax and residual adds.

    The report: ``params`` (elements: total, non_embedding, active, terms),
    ``flops`` (FLOPs per token: forward, forward_non_embedding, training, terms),
    ``kv`` (bytes_per_token of context, bytes_at_context), ``sparsity`` (the
    SMELT paper's S = 1 - (F / F0) N0 / N against ``sparsity_reference``, a
    config counted at the same context, or against the config with every expert
    active when None; docs/counting.md), ``layer_runs`` (the
    layers that cost the same, once: ``first``, ``last``, ``step``, ``count`` and
    what each of them costs, ``visits`` executions per token; ``layer_numbers``
    lists them). ``every_layer`` adds ``layers``, one per weight-owning layer.
    ``to_dict()`` is ``smelt-match count --json`` (``--sparsity-reference REF``,
    ``--every-layer``).

    ``context`` and ``convention`` given as None mean their defaults; a value of another type (a bool for
    ``context``, a word that is no string, a flag that is no bool) raises ConfigError naming the keyword.
    """
    context = _argument("count", "context", context, int, "must be an integer", optional=True)
    convention = _argument("count", "convention", convention, str, "must be a string", default="smelt")
    elementwise = _argument("count", "elementwise", elementwise, bool, "must be True or False")
    every_layer = _argument("count", "every_layer", every_layer, bool, "must be True or False")
    # The CLI names a config whose name is empty by the path it was given.
    source = os.fspath(config) if isinstance(config, (str, os.PathLike)) else ""
    config = read_config(config)
    name_if_empty = source or (config.source or "")
    reference, reference_name = None, ""
    if sparsity_reference is not None:
        if isinstance(sparsity_reference, (str, os.PathLike)):
            reference_name = os.fspath(sparsity_reference)
        reference_config = read_config(sparsity_reference)
        reference_name = reference_name or (reference_config.source or "")
        reference = reference_config._native_config()
    return CountReport(
        _core.count(
            config._native_config(),
            context,
            convention,
            elementwise,
            name_if_empty,
            reference,
            reference_name,
            every_layer,
        )
    )


def layer_anatomy(config: ConfigLike, layer: int) -> dict[str, Any]:
    """Stored layer ``layer`` (1-based, as the count report numbers layers) as the library counts it
    (docs/anatomy.md); ``smelt-match anatomy CONFIG --layer N --json``.

    ``tensors``: each weight tensor in the reference model's order, ``name`` within the layer as
    ``smelt.torch``'s modules hold it (an expert's with ``*`` for its index), ``term`` (the count's parameter
    term), ``elements`` of one instance, ``instances`` (routed or shared experts) and ``trainable`` (False for
    DeepSeek's correction bias); ``products``: each per-token matrix product, ``op`` (the FLOP term and the
    time model's op), ``n`` x ``k`` over all heads and ``times`` per token; the attention core's ``qk_width``,
    ``v_width`` and the ``kv_elements`` cached per token.
    """
    if layer is None:
        raise ConfigError("layer_anatomy(): layer = None: must be an integer", [("layer", "None", "must be an integer")])
    layer = _argument("layer_anatomy", "layer", layer, int, "must be an integer")
    return json.loads(_core.layer_anatomy(read_config(config)._native_config(), layer))


def derive(baseline: ConfigLike, **space_and_recipe: Any) -> MatchResult:
    """The looped config matching the Baseline's FLOPs, non-embedding parameters and KV cache.

    Keywords are the library's fields (docs/solver.md), listed below from
    their tables: a range knob takes a value or a pair (lo, hi); ``span``
    also a pair (first, last) of 1-based layers.

    Returns the match report (``smelt-match derive --json``): ``best``,
    ``alternatives`` (distinct: each with its ``equivalent_head_splits`` and
    ``head_splits``), ``best_config``, budgets per context (FLOPs per token,
    parameters, KV bytes per token; mismatches in percent), each candidate's
    per-GPU ``memory_bytes`` beside the Baseline's under the MemoryLayout keywords
    (``memory_limit`` drops those that do not fit, ``match`` with ``memory`` matches it),
    with ``hardware`` each one's predicted ``training_seconds_per_token`` and
    ``decode_seconds_per_token`` beside the Baseline's under them and the TimeOptions keywords
    (``time_limit`` drops those slower than that multiple of the Baseline's, ``match`` with ``time`` matches it),
    ``within_tolerance``, ``why`` and ``relaxations``. A best outside the tolerance is returned, not
    raised; messages and relaxations name the library's fields (the keywords),
    where the CLI names its flags. A bad keyword or value raises ConfigError.
    """
    return MatchResult(_core.derive(_native(baseline), _keywords("derive", space_and_recipe)))


def sweep(baseline: ConfigLike, **options: Any) -> SweepReport:
    """The matched ablation grid: loop spans x loop counts, and depth-to-width variants.

    The SweepOptions keywords below, and the SearchSpace, MatchOptions, MemoryLayout and TimeOptions
    keywords of ``derive`` (each row is the best candidate). Returns ``smelt-match sweep --json``: ``rows``, each with its
    config, knobs, signed mismatches in percent, per-GPU memory and, with ``hardware``, its training time per token.
    """
    return SweepReport(_core.sweep(_native(baseline), _keywords("sweep", options)))


def memory(config: ConfigLike, **layout: Any) -> MemoryReport:
    """The bytes one GPU holds to train (or serve) ``config`` under a parallel layout (docs/memory.md).

    The MemoryLayout keywords below (``micro_batch``, ``seq``, ``tp``, ``pp``, ``recompute``, ...). Returns
    ``smelt-match memory --json``: ``total`` (bytes of the most loaded rank), ``worst_rank`` (its ``weights``,
    ``gradients``, ``optimizer`` and ``activations``, each with ``total`` and ``terms``, its ``layer_visits``
    and their ``visit_runs``: visits of one kind as runs of layers and passes), ``per_stage``, ``layout`` as
    resolved and ``fraction_of_device``.
    """
    return MemoryReport(_core.memory(_native(config), _keywords("memory", layout)))


def time(config: ConfigLike, hardware: str, **options: Any) -> TimeReport:
    """Predicted seconds per token of a training step, its forward and a decode step of ``config`` on
    ``hardware`` (a shipped device name such as ``"h200"``, or a spec file), op by op (docs/time.md).

    The MemoryLayout keywords (``micro_batch``, ``seq``, ``tp``, ...) and the TimeOptions keywords
    (``imbalance``, ``decode_batch``, ``decode_context``) below. Returns ``smelt-match time --json``.
    """
    return TimeReport(_core.time(_native(config), str(hardware), _keywords("time", options)))


def _runs_json(rows: Iterable[Any], source: str) -> str:
    out = []
    for i, row in enumerate(rows):
        clean = {}
        for k, v in dict(row).items():
            v = _plain(v) if not isinstance(v, (str, int, float, type(None))) else v
            if isinstance(v, float) and math.isinf(v):  # JSON holds no infinity: the reader's words for it
                raise ConfigError(f"{source}: row {i + 1}: {k} = {v}: must be a finite number")
            # A missing value (pandas' NaN) as JSON's null, which the reader names by row and column.
            clean[k] = None if isinstance(v, float) and math.isnan(v) else v
        out.append(clean)
    return json.dumps(out)


def fit(
    runs: Union[str, "os.PathLike[str]", Sequence[Mapping[str, Any]], Any],
    form: str = "chinchilla",
    group_by: str | None = None,
    **options: Any,
) -> Laws:
    """Fits a scaling law to training runs, one per value of the ``group_by`` column.

    ``runs``: a CSV or JSON file, a list of dicts, or a pandas DataFrame, with
    columns N (parameters) or F (training FLOPs per token) and S (sparsity), D
    (tokens) or C (training compute, FLOPs), and loss. ``form``: "chinchilla"
    (L = E + A/N^alpha + B/D^beta) or "smelt" (L = E + A (1-S)^b / F^a + K/D^c).
    The FitOptions keywords are below; ``renames={"Model Size": "N"}`` reads a
    column under another name. A missing column names the nearest one. Returns the law
    file (``smelt-match fit --json``), which ``frontier`` takes.
    """
    kwargs = dict(options, form=form, group_by=group_by)
    if isinstance(runs, (str, os.PathLike)):
        text = _core.fit(os.fspath(runs), True, "", _keywords("fit", kwargs))
    elif hasattr(runs, "to_dict") and hasattr(runs, "columns"):  # a pandas DataFrame
        rows = runs.to_dict(orient="records")
        text = _core.fit(_runs_json(rows, "<DataFrame>"), False, "<DataFrame>", _keywords("fit", kwargs))
    elif isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        text = _core.fit(_runs_json(runs, "<runs>"), False, "<runs>", _keywords("fit", kwargs))
    else:
        raise ConfigError(f"runs = {type(runs).__name__}: must be a path, a list of dicts or a pandas DataFrame")
    return Laws(text)


LawsLike = Union[str, "os.PathLike[str]", Laws]


def frontier(laws: LawsLike | Sequence[LawsLike], budgets: float | Sequence[float], sparsity: float = 0.0) -> FrontierReport:
    """Each law's compute-optimal allocation at each training budget, and the gain over the first law.

    ``laws``: law files (paths, as ``smelt-match fit --out`` writes them) or
    ``smelt.fit`` results, or a list of them; the first law is the reference.
    ``budgets``: training compute in FLOPs. ``sparsity``: S in [0, 1) for smelt-form
    laws. Returns ``smelt-match frontier --json``: per budget and law the size (N*
    parameters or F* FLOPs per token), tokens, loss, tokens per parameter ``tpp``
    (D* / N*, or D* / (F*/6) for smelt) with its interval over the law's bootstrap
    samples, and the compute-equivalent gain 1 - C / C_ref (a fraction) with its
    bootstrap interval.
    """
    items = [laws] if isinstance(laws, (str, os.PathLike, Laws)) else list(laws)
    inputs, is_path, sources = [], [], []
    for i, law in enumerate(items):
        if isinstance(law, Laws):
            inputs.append(json.dumps(law.to_dict()))
            is_path.append(False)
            sources.append("laws" if len(items) == 1 else f"laws{i}")
        elif isinstance(law, (str, os.PathLike)):
            inputs.append(os.fspath(law))
            is_path.append(True)
            sources.append("")
        else:
            raise ConfigError(f"laws[{i}] = {type(law).__name__}: must be a law file's path or a smelt.fit result")
    values = [budgets] if isinstance(budgets, (int, float)) else list(budgets)
    return FrontierReport(_core.frontier(inputs, is_path, sources, [float(b) for b in values], float(sparsity)))


def _family_named_by(config: ConfigLike) -> str:
    """The model_type a Hugging Face config names (a path or a dict), "" otherwise (smelt.torch asks too)."""
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        try:
            text = _core.read_json_text(path, "config")  # bounded, as every read of a file
        except (IOError, ConfigError):
            return ""  # read_config raises the library's message
        return _core.hf_family_of(text, path)
    if isinstance(config, Mapping):
        family = config.get("model_type", "")
        return family if isinstance(family, str) and "schema_version" not in config else ""
    return ""


def export_hf(config: ConfigLike, family: str | None = None) -> str:
    """The Hugging Face ``config.json`` text of a model, as ``smelt-match export --to hf`` writes it.

    It describes the physical model (each stored layer once) in the schema of ``family``, a ``model_type``
    (default: the family a Hugging Face input names, else the first that expresses the config exactly,
    docs/export.md), plus a ``loop`` block for a looped span that ``read_config`` reads back. What the
    family cannot express raises ConfigError naming the field, its value and the rule.
    """
    if isinstance(config, (str, os.PathLike)):
        # One bounded read gives the config and the family its text names, with the file's context on any error.
        native, named = _core.read_config_with_family(os.fspath(config))
    else:
        native, named = _native(config), _family_named_by(config)
    return _core.export_hf(native, family if family is not None else named)


class MegatronArguments:
    """Megatron-LM's model arguments of a model (``smelt-match export --to megatron``).

    ``arguments``: (flag, value) pairs, value "" for a switch; ``comments``: what the arguments leave to the
    user (Megatron-LM has no shared-weight layer loop: the span and count are given here); ``text()``: the
    comments as ``# `` lines, then one argument per line, as the CLI prints them.
    """

    def __init__(self, comments: list[str], arguments: list[tuple[str, str]], text: str) -> None:
        self.comments = list(comments)
        self.arguments = [tuple(a) for a in arguments]
        self._text = text

    def text(self) -> str:
        return self._text

    def argv(self) -> list[str]:
        """The arguments as a command line's words: ``["--num-layers", "30", "--swiglu", ...]``."""
        return [w for flag, value in self.arguments for w in ((flag, value) if value else (flag,))]

    def __repr__(self) -> str:
        return f"MegatronArguments({len(self.arguments)} arguments, {len(self.comments)} comments)"


def export_megatron(config: ConfigLike) -> MegatronArguments:
    """Megatron-LM's arguments of the physical model; ``--kv-channels`` and ``--moe-ffn-hidden-size`` always set.

    Raises ConfigError for what Megatron-LM's arguments cannot express (field, value and rule, all at once).
    """
    comments, arguments, text = _core.export_megatron(_native(config))
    return MegatronArguments(comments, arguments, text)


def supported_hf_model_types() -> list[str]:
    """The Hugging Face ``model_type`` values ``read_config`` understands, sorted."""
    return _core.supported_hf_model_types()


_options.document(derive, "LoopRecipe", "SearchSpace", "MatchOptions", "MemoryLayout", "TimeOptions")
_options.document(sweep, "SweepOptions", "SearchSpace", "MatchOptions", "MemoryLayout", "TimeOptions")
_options.document(fit, "FitOptions")
_options.document(memory, "MemoryLayout")
_options.document(time, "MemoryLayout", "TimeOptions")
