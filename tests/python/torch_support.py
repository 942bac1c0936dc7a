"""Shared cases of the smelt.torch tests: example paths, a derived looped config, the mixed-switch config,
and FlopCounterMode's counts mapped onto smelt's FLOP terms."""

from __future__ import annotations

import os

import torch
from torch.utils.flop_counter import FlopCounterMode

import smelt
import smelt.torch as st
from smelt.torch._measure import flop_terms

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", name)


def derived_looped() -> dict:
    """A looped config the solver derives from the shrunk 12-layer Baseline (span 4-9, twice)."""
    base = st.shrink(example("smelt-baseline-12l.json"))
    cfg = smelt.derive(base, span="middle-half", loops=2).best_config.to_dict()
    assert cfg["loop"] == {"span": "4-9", "count": 2, "residual_scale": 0.5}
    return cfg


def measured_flop_terms(model, t: int) -> tuple[dict, int]:
    """FlopCounterMode on one forward of t tokens, per smelt term, per token (smelt.torch's own mapping of the
    module tree onto the terms, docs/reference-model.md "check-model"); nothing is left unmapped."""
    tokens = torch.randint(0, model.config["vocab_size"], (1, t), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        model(tokens)
    per = {k: sum(v.values()) for k, v in fc.get_flop_counts().items()}
    terms, _ = flop_terms(model, per)
    assert terms.pop("other") == 0
    assert all(n % t == 0 for n in terms.values())
    return {k: n // t for k, n in terms.items()}, per["Global"]


def mixed() -> dict:
    """tiny-moe with every other switch the slice builds: chunked, sliding and full layers, q/k norms over
    all heads, LayerNorm, plain FFNs with biases, a tied head, one shared expert with its gate."""
    cfg = st.shrink(example("tiny-moe.json"))
    cfg["attention"].update(pattern=["chunked", "sliding", "full"], window=5, chunk=4, qk_norm="full", out_bias=True)
    cfg.update(norm="layernorm", tie_embeddings=True)
    cfg["ffn"].update(type="plain", bias=True)
    cfg["moe"]["shared_gate"] = True
    return smelt.read_config(cfg).to_dict()
