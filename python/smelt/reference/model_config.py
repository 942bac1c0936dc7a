"""``ModelConfig``: the native config as typed, frozen dataclasses, built once from its dict, every default resolved
by smelt's reader (``native_config.resolve``), fields named as in include/smelt/config.hpp. The modules of the
reference model read this, never the dict: no string lookups, no default restated.

Pure Python: a checkpoint's own copy of the code (smelt.hf, ``with_code``) builds it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .native_config import resolve


@dataclass(frozen=True)
class Attention:
    """``attention``: GQA's head counts and head_dim, or MLA's ranks and head widths (the other kind's are 0)."""

    type: str
    num_heads: int
    num_kv_heads: int
    head_dim: int
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    qkv_bias: bool
    qk_bias: bool
    out_bias: bool
    qk_norm: str
    sinks: bool
    pattern: tuple[str, ...]
    window: int
    chunk: int

    def kind(self, layer: int) -> str:
        """The attention of 0-based ``layer``: the pattern repeated over the layers."""
        return self.pattern[layer % len(self.pattern)]


@dataclass(frozen=True)
class Ffn:
    type: str
    bias: bool
    dense_width: int


@dataclass(frozen=True)
class Moe:
    """``moe`` with its routing choices resolved; ``layers`` the 0-based MoE layers (from the list or the rule)."""

    num_experts: int
    top_k: int
    expert_width: int
    num_shared_experts: int
    shared_width: int
    shared_gate: bool
    router_bias: bool
    router_score: str
    router_form: str
    renormalize: bool
    clamped_swiglu: tuple[float, float] | None  # (alpha, limit)
    layers: frozenset[int]


@dataclass(frozen=True)
class Loop:
    """One looped span: ``first`` and ``last`` 1-based as the config says them, ``lo`` and ``hi`` 0-based."""

    first: int
    last: int
    count: int
    residual_scale: float
    norm_each_pass: bool
    exit_gate: bool
    injection: str
    injection_bias: bool
    norm_after: bool
    backprop_passes: int
    kv_policy: str
    kv_keep: tuple[float, ...]
    lora_rank: int
    lora_targets: tuple[str, ...]

    @property
    def lo(self) -> int:
        return self.first - 1

    @property
    def hi(self) -> int:
        return self.last - 1


@dataclass(frozen=True)
class ModelConfig:
    name: str
    vocab_size: int
    tie_embeddings: bool
    num_layers: int
    hidden_size: int
    norm: str
    norm_placement: str
    context_length: int
    kv_cache_bytes: int
    attention: Attention
    ffn: Ffn
    moe: Moe | None
    loops: tuple[Loop, ...]  # the spans of `loop` or `loops`, in layer order
    mtp_modules: int

    @classmethod
    def from_native(cls, native: Mapping[str, Any] | ModelConfig) -> ModelConfig:
        """The typed config of a native config's dict (``smelt.Config.to_dict()``, config.json's ``"smelt"``):
        read by smelt's rules (``native_config.resolve``: a broken rule is a ``NativeConfigError``)."""
        if isinstance(native, ModelConfig):
            return native
        c = resolve(dict(native))
        a = c["attention"]
        attention = Attention(**{**dict.fromkeys(Attention.__dataclass_fields__, 0), **a,
                                 "pattern": tuple(a["pattern"])})
        moe = None
        m = c.get("moe")
        if m is not None and m["num_experts"] > 0:
            clamp = m["clamped_swiglu"]
            moe = Moe(**{k: m[k] for k in Moe.__dataclass_fields__ if k not in ("clamped_swiglu", "layers")},
                      clamped_swiglu=(clamp["alpha"], clamp["limit"]) if clamp else None,
                      layers=_moe_layers(m["layers"], c["num_layers"]))
        loops = tuple(Loop(**{**loop, "kv_keep": tuple(loop["kv_keep"]), "lora_targets": tuple(loop["lora_targets"])})
                      for loop in c["loops"] if loop["first"] > 0)
        top = {k: c[k] for k in cls.__dataclass_fields__ if k not in ("attention", "ffn", "moe", "loops")}
        return cls(**top, attention=attention, ffn=Ffn(**c["ffn"]), moe=moe, loops=loops)

    def is_moe_layer(self, layer: int) -> bool:
        return self.moe is not None and layer in self.moe.layers


def _moe_layers(layers: list | dict, num_layers: int) -> frozenset[int]:
    """0-based MoE layers (docs/config.md, section 1.4): the 1-based list, or i >= first_dense and i % every ==
    phase."""
    if isinstance(layers, list):
        return frozenset(i - 1 for i in layers)
    f, n, p = layers["first_dense"], layers["every"], layers["phase"]
    return frozenset(i for i in range(num_layers) if i >= f and i % n == p)
