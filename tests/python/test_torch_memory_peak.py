"""The peak of a real training step on the CPU against smelt's total (docs/memory.md, "Measuring").

benchmarks/memory_peak.py measures one steady AdamW step of the reference model (gradients kept between steps) with
the profiler's allocator events, exact to the byte. The baseline is smelt's weights, gradients and AdamW state
to the byte; the peak is smelt's total, whose ``transient`` part is the largest temporaries of one of four points of
the backward (src/memory/transient.cpp). Each case must come within 5% of smelt's total (and here within 1 KiB);
a miss prints what was live at the peak beyond the saved activations, by op and shape.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

import smelt
from smelt.torch import shrink

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"

_spec = importlib.util.spec_from_file_location("memory_peak", ROOT / "benchmarks" / "memory_peak.py")
peak = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peak)

BATCH, SEQ = 4, 128


def _case(path: str, layers: int = 0, **edits) -> dict:
    """``path`` shrunk (hidden <= 64, vocabulary <= 256) and cut to its first ``layers`` layers (0: all), which
    keeps every kind of layer the config has while the profiled step stays short; ``edits`` set top-level
    fields, ``moe_KEY`` sets ``moe.KEY``."""
    cfg = shrink(EX / path, max_hidden=64, max_vocab=256)
    if layers:
        cfg["num_layers"] = layers
    for key, value in edits.items():
        node, keys = cfg, key.split("_", 1) if key.startswith("moe_") else [key]
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return smelt.read_config(cfg).to_dict()


CASES = [
    ("tiny-moe", _case("tiny-moe.json")),  # looped MoE with a shared expert
    ("smelt-baseline-12l", _case("smelt-baseline-12l.json", 3)),
    # its loop cut to layers 2-3 of 4, twice (6 visits), and 32 of its 288 experts (top-8 still), for time: each
    # expert is a module of its own, and 288 of them took 12 s of the profiled step
    ("smelt-looped-12l", _case("smelt-looped-12l.json", 4, loop={"span": "2-3", "count": 2, "residual_scale": 0.5},
                               moe_num_experts=32)),
    ("deepseek-v3-mla", _case("deepseek-v3-mla.json", 4)),  # MLA, 3 dense + 1 MoE, shared expert, MTP
    ("mixtral-8x7b", _case("mixtral-8x7b.json", 4)),
    ("hf-olmoe-1b-7b", _case("hf/olmoe-1b-7b-0924.json", 3)),  # q/k norms over all heads
    ("hf-qwen3-30b-a3b", _case("hf/qwen3-30b-a3b.json", 3)),  # per-head q/k norms
    ("hf-gpt-oss-20b", _case("hf/gpt-oss-20b.json", 4)),  # sliding and full layers, sinks, biases
    ("hf-llama4-scout", _case("hf/llama4-scout.json", 4)),  # chunked layers, sigmoid routing, shared expert
    ("hf-deepseek-v2-lite", _case("hf/deepseek-v2-lite.json", 3)),  # MLA without a query latent, 2 shared
    ("hf-qwen1.5-moe-a2.7b", _case("hf/qwen1.5-moe-a2.7b.json", 3)),  # shared gate
    ("hf-dbrx", _case("hf/dbrx.json", 3)),
    # the loop ends on the last layer: its first gradients wait for the loop's earlier visit
    ("hf-dbrx-loop-last", _case("hf/dbrx.json", 3, loop={"span": "2-3", "count": 2, "residual_scale": 0.5})),
    ("hf-llama-3.1-8b", _case("hf/llama-3.1-8b.json", 4)),  # dense
    ("hf-llama-3.1-8b-tied", _case("hf/llama-3.1-8b.json", 4, tie_embeddings=True)),
    # Short sequences and a small vocabulary, where the MoE layer's backward is the peak (SHAPES).
    ("hf-olmoe-1b-7b-short", _case("hf/olmoe-1b-7b-0924.json", 3)),
    ("hf-deepseek-v2-lite-v32", _case("hf/deepseek-v2-lite.json", 3, vocab_size=32)),  # with 2 shared experts
    ("hf-qwen1.5-moe-v32-top8", _case("hf/qwen1.5-moe-a2.7b.json", 3, vocab_size=32, moe_top_k=8)),  # shared gate
]
# (micro-batch, sequence) where not (BATCH, SEQ)
SHAPES = {name: (16, 32) for name, _ in CASES if name.endswith(("-short", "-v32", "-top8"))}


def _explain(measured: dict, rank: dict, terms: dict[str, int]) -> str:
    """What was live at the peak beyond the saved activations, by op, for a failure message."""
    lines = [f"peak {measured['peak']:,} B in the {measured['peak_phase']}; smelt total {rank['total']:,} B;"
             f" smelt transient {terms}; saved activations live at the peak {measured['saved_live_at_peak']:,} B;"
             f" baseline {measured['baseline']}; transients live at the peak:"]
    for t in measured["transients"][:12]:
        lines.append(f"  {t['bytes']:>12,} B  x{t['count']:<3} {t['phase']:8s} {t['where']:22s} {t['op']}")
    return "\n".join(lines)


@pytest.mark.parametrize("name,cfg", CASES, ids=[c[0] for c in CASES])
def test_peak_of_a_training_step_is_smelt_total_plus_transients(name: str, cfg: dict) -> None:
    b, s = SHAPES.get(name, (BATCH, SEQ))
    measured = peak.measure(cfg, b, s)
    rank = smelt.memory(cfg, micro_batch=b, seq=s).to_dict()["worst_rank"]
    # What is live before the step is smelt's weights, gradients and AdamW state to the byte, + the token batch.
    base = measured["baseline"]
    assert [base[k] for k in ("weights", "gradients", "optimizer")] == [
        rank[k]["total"] for k in ("weights", "gradients", "optimizer")]
    assert base["tokens"] == rank["activations"]["terms"]["token_ids"]
    terms = rank["transient"]["terms"]
    assert abs(measured["peak"] / rank["total"] - 1) <= 0.05, _explain(measured, rank, terms)
    # Tighter than the issue asks: the only bytes smelt leaves out are Python floats autograd keeps as 8-byte
    # tensors (a residual scale, 1/sqrt(d)), the loss and its seed gradient: under 1 KiB here.
    assert 0 <= measured["peak"] - rank["total"] < 1024, _explain(measured, rank, terms)


@pytest.mark.parametrize("name", ["tiny-moe", "hf-llama-3.1-8b", "hf-dbrx"])
def test_the_same_terms_hold_in_bfloat16(name: str) -> None:
    """A bfloat16 model (weights, gradients, AdamW state, activations) against smelt's bf16 report, e = 2."""
    import torch

    cfg = dict(CASES)[name]
    measured = peak.measure(cfg, BATCH, SEQ, dtype=torch.bfloat16)
    rank = smelt.memory(cfg, micro_batch=BATCH, seq=SEQ, param_dtype="bf16").to_dict()["worst_rank"]
    assert 0 <= measured["peak"] - rank["total"] < 1024, _explain(measured, rank, rank["transient"]["terms"])


def test_the_measured_peak_repeats_to_the_byte() -> None:
    cfg = dict(CASES)["hf-llama-3.1-8b"]
    assert peak.measure(cfg, BATCH, SEQ)["peak"] == peak.measure(cfg, BATCH, SEQ)["peak"]
