"""The configs the time model is measured on (benchmarks/time_vs_reference.py, benchmarks/time_vs_step.py): Baseline and
looped-twin pairs, dense and MoE, built from examples/tiny-moe.json at several widths, depths and sequence lengths.
"""

from __future__ import annotations

import json
import os

ROOT = os.path.join(os.path.dirname(__file__), "..")


def config(name: str, h: int, layers: int, experts: int, loop: bool, vocab: int = 2048) -> dict:
    with open(os.path.join(ROOT, "examples", "tiny-moe.json"), encoding="utf-8") as f:
        c = json.load(f)
    c["name"] = name
    c["hidden_size"] = h
    c["num_layers"] = layers
    c["vocab_size"] = vocab
    c["context_length"] = 4096
    heads = max(1, h // 64)
    c["attention"].update(num_heads=heads, num_kv_heads=heads // 2 if heads % 2 == 0 else heads, head_dim=64)
    c["ffn"]["dense_width"] = 3 * h
    if experts:
        c["moe"].update(num_experts=experts, top_k=2, expert_width=h, num_shared_experts=0, shared_width=0)
        c["moe"]["layers"] = {"first_dense": 0, "every": 1, "phase": 0}
    else:
        del c["moe"]
    lo, hi = layers // 4 + 1, layers - layers // 4
    if loop:
        c["loop"] = {"span": f"{lo}-{hi}", "count": 2, "residual_scale": 0.5}
    else:
        del c["loop"]
    return c


def twin(base: dict) -> dict:
    """The SMELT recipe by hand: the middle half twice, H narrowed to pay the FLOPs, experts raised."""
    h = base["hidden_size"]
    t = config(base["name"] + "-looped", h * 4 // 5 // 64 * 64 or 64, base["num_layers"],
               (base["moe"].get("num_experts", 0) * 3 // 2) if base.get("moe") else 0, True, base["vocab_size"])
    return t


def pairs() -> list[tuple[dict, int, int]]:
    """(config, micro-batch, seq) in Baseline, twin order."""
    out = []
    for h, e, layers, b, s in [
        (512, 0, 4, 2, 256), (768, 0, 4, 2, 256), (1024, 0, 4, 1, 256), (512, 0, 8, 2, 512),
        (512, 8, 4, 2, 256), (768, 8, 4, 2, 256), (512, 16, 4, 2, 256), (1024, 8, 4, 1, 256),
        (512, 8, 8, 2, 512), (768, 16, 4, 1, 512), (384, 8, 4, 4, 128),
    ]:
        base = config(f"h{h}-e{e}-l{layers}", h, layers, e, False)
        for c in (base, twin(base)):
            out.append((c, b, s))
    return out
