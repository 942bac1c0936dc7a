"""``shrink``: a tiny copy of a config, every ratio the counts depend on kept (docs/reference-model.md)."""

from __future__ import annotations

from typing import Any

import smelt

from ..reference.args import check_int
from ._model import native


def shrink(cfg: Any, max_hidden: int = 128, max_vocab: int = 1024) -> dict:
    """A tiny copy of ``cfg`` (native dict) for tests (docs/reference-model.md, "Shrinking").

    f is the smallest power of two with hidden_size / f <= max_hidden; every
    width (hidden, head_dim, MLA ranks and head sizes, expert, shared and dense
    widths) is divided by f (rounded down, at least 1), the vocabulary too
    (at most max_vocab). Counts of heads, KV heads, experts, top_k, shared
    experts, layers, the attention pattern, the MoE layers and the loop are
    kept, so every ratio between them is unchanged. The context becomes at
    most 32 tokens, a window or chunk at most 8. ``max_hidden`` and
    ``max_vocab`` must be integers of at least 1 (smelt.ConfigError).
    """
    check_int("shrink", "max_hidden", max_hidden, 1)  # before the loop below, which a limit under 1 never stops
    check_int("shrink", "max_vocab", max_vocab, 1)
    c = native(cfg)
    f = 1
    while c["hidden_size"] // f > max_hidden:
        f *= 2

    def div(w: int) -> int:
        return max(1, w // f) if w else 0

    c["hidden_size"] = div(c["hidden_size"])
    c["vocab_size"] = min(max_vocab, div(c["vocab_size"]))
    c["context_length"] = min(c["context_length"], 32)
    a = c["attention"]
    for key in ("head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        if key in a:
            a[key] = div(a[key])
    a["window"], a["chunk"] = min(a["window"], 8), min(a["chunk"], 8)
    c["ffn"]["dense_width"] = div(c["ffn"]["dense_width"])
    if c.get("moe"):
        c["moe"]["expert_width"] = div(c["moe"]["expert_width"])
        c["moe"]["shared_width"] = div(c["moe"]["shared_width"])
    return smelt.read_config(c).to_dict()
