#!/usr/bin/env python3
"""Writes the Baselines of the SMELT paper's Appendix A table as smelt native JSON.

The paper reports, per scale, the layer count and hidden size H, and four expert counts, every layer a top-8 MoE.
It does not report head geometry, expert width, vocabulary or context; the assumptions below fill them in and are
explained in docs/paper.md. Run from anywhere: python3 examples/paper/make_baselines.py [OUT_DIR]
(default: this script's folder).
"""
import json
import pathlib
import sys

# scale, layers, H, reconstruction A (head_dim, KV heads), reconstruction B (head_dim, KV heads).
# A: head_dim 128 (112 at 100M) with 2 KV heads; it reproduces the paper's KV ratios to three decimals
#    (1.5 x 88/128 = 1.031, 1.5 x 84/128 = 0.984, 1.5 x 72/112 = 0.964).
# B: half the head_dim, twice the query heads, GQA groups of 4 (KV heads = query heads / 4).
# Query heads = H / head_dim in both.
SCALES = [
    ("100m", 10, 672, (112, 2), (56, 3)),
    ("200m", 12, 1280, (128, 2), (64, 5)),
    ("600m", 20, 1792, (128, 2), (64, 7)),
    ("1p6b", 30, 2304, (128, 2), (64, 9)),
]
EXPERTS = [8, 64, 192, 336]
TOP_K = 8
VOCAB = 50304  # GPT-2 / GPT-NeoX BPE (50257) padded to a multiple of 64, as in nanoGPT-era MoE work
CONTEXT = 4096
EXPERT_WIDTH_DIVISOR = 4  # expert FFN width = H / 4, the rule of examples/smelt-baseline-12l.json


def baseline(scale, layers, hidden, head_dim, kv_heads, experts):
    heads = hidden // head_dim
    assert heads * head_dim == hidden and heads % kv_heads == 0
    name = f"paper-{scale}-e{experts}-kv{kv_heads}x{head_dim}"
    return name, {
        "schema_version": 1,
        "name": name,
        "vocab_size": VOCAB,
        "tie_embeddings": False,
        "num_layers": layers,
        "hidden_size": hidden,
        "norm": "rmsnorm",
        "context_length": CONTEXT,
        "kv_cache_bytes": 2,
        "attention": {
            "type": "gqa",
            "num_heads": heads,
            "num_kv_heads": kv_heads,
            "head_dim": head_dim,
            "qkv_bias": False,
            "out_bias": False,
            "qk_norm": "none",
            "sinks": False,
            "pattern": ["full"],
            "window": 0,
            "chunk": 0,
        },
        "ffn": {"type": "gated", "bias": False, "dense_width": 0},
        "moe": {
            "num_experts": experts,
            "top_k": TOP_K,
            "expert_width": hidden // EXPERT_WIDTH_DIVISOR,
            "num_shared_experts": 0,
            "shared_width": 0,
            "shared_gate": False,
            "router_bias": False,
            "router_score": "softmax",
            "layers": {"first_dense": 0, "every": 1, "phase": 0},
        },
        "mtp_modules": 0,
    }


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    for scale, layers, hidden, geom_a, geom_b in SCALES:
        for head_dim, kv_heads in (geom_a, geom_b):
            for experts in EXPERTS:
                name, cfg = baseline(scale, layers, hidden, head_dim, kv_heads, experts)
                (out / f"{name}.json").write_text(json.dumps(cfg, indent=2) + "\n")


if __name__ == "__main__":
    main()
