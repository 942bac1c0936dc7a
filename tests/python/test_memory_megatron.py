"""smelt.memory's megatron convention against an independent transcription of Megatron-LM's formula.

The oracle (megatron_formula.py) first reproduces the four values Megatron's own unit tests assert; then, for
six Hugging Face examples at three layouts each (one GPU; tp 2, pp 2, ep 4 with the distributed optimizer,
sequence parallelism and selective recompute; pp 4 interleaved over 2 virtual stages, ep 8, full recompute),
smelt's weights + gradients + optimizer state and its activations equal Megatron's two floats, each rounded to
the byte (docs/memory.md, "The megatron convention").
"""

from __future__ import annotations

import math
import pathlib

import pytest

import smelt

from megatron_formula import activation_bytes, args_from_native, weight_and_optimizer_bytes

HF = pathlib.Path(__file__).resolve().parents[2] / "examples" / "hf"

# Megatron-LM tests/unit_tests/test_theoretical_memory_usage.py (commit c88312c9): its dense model's arguments.
MEGATRON_TEST = dict(kv_channels=4, num_attention_heads=8, hidden_size=16, num_query_groups=8, num_layers=2,
                     ffn_hidden_size=64, padded_vocab_size=128, seq_length=8, micro_batch_size=2,
                     sequence_parallel=True, recompute_granularity="selective")


def test_the_oracle_reproduces_megatrons_own_tests() -> None:
    assert weight_and_optimizer_bytes(MEGATRON_TEST) == 187200.0
    assert weight_and_optimizer_bytes({**MEGATRON_TEST, "use_distributed_optimizer": True,
                                       "data_parallel_size": 2}) == 124800.0
    assert activation_bytes(MEGATRON_TEST) == 27008.0
    assert activation_bytes({**MEGATRON_TEST, "sequence_parallel": False}) == 23520.0
    pp4 = {**MEGATRON_TEST, "sequence_parallel": False, "pipeline_model_parallel_size": 4}
    assert activation_bytes({**pp4, "num_microbatches": 2}) == activation_bytes(pp4) * 0.5


def _nearest(x: float) -> int:
    """Rounded half away from zero, as smelt rounds Megatron's floats (C++ llround)."""
    return math.floor(x + 0.5)


# Each layout in smelt's keywords and in Megatron's arguments.
LAYOUTS = {
    "one-gpu": (dict(), dict(num_microbatches=1)),
    "tp2-pp2-ep4": (dict(tp=2, pp=2, ep=4, etp=2, dp=8, distributed_optimizer=True, sequence_parallel=True,
                         recompute="selective", microbatches=8),
                    dict(tensor_model_parallel_size=2, pipeline_model_parallel_size=2, expert_model_parallel_size=4,
                         expert_tensor_parallel_size=2, data_parallel_size=8, use_distributed_optimizer=True,
                         sequence_parallel=True, recompute_granularity="selective", num_microbatches=8)),
    "pp4-vpp2-ep8": (dict(pp=4, vpp=2, ep=8, dp=8, distributed_optimizer=True, recompute="full", microbatches=8),
                     dict(pipeline_model_parallel_size=4, virtual_pipeline_model_parallel_size=2,
                          expert_model_parallel_size=8, expert_tensor_parallel_size=1, data_parallel_size=8,
                          use_distributed_optimizer=True, recompute_granularity="full", num_microbatches=8)),
}
MODELS = ["mixtral-8x7b", "qwen3-30b-a3b", "olmoe-1b-7b-0924", "deepseek-v2-lite", "llama4-scout", "llama4-maverick"]
CASES = [(m, name) for m in MODELS for name in LAYOUTS]


@pytest.mark.parametrize("model,layout", CASES, ids=[f"{m}-{n}" for m, n in CASES])
def test_megatron_convention_equals_megatrons_formula(model: str, layout: str) -> None:
    cfg = smelt.read_config(HF / f"{model}.json")
    ours, theirs = (dict(d) for d in LAYOUTS[layout])
    if model == "deepseek-v2-lite" and "pp" in ours:  # 27 layers: 3 stages (of 3 virtual ones)
        ours["pp"], theirs["pipeline_model_parallel_size"] = 3, 3
        if "vpp" in ours:
            ours["vpp"], theirs["virtual_pipeline_model_parallel_size"] = 3, 3
    theirs.update(seq_length=4096, micro_batch_size=1)
    rank = smelt.memory(cfg, convention="megatron", seq=4096, **ours).to_dict()["worst_rank"]
    args = args_from_native(cfg.to_dict(), theirs)
    assert rank["weights"]["total"] + rank["gradients"]["total"] + rank["optimizer"]["total"] == _nearest(
        weight_and_optimizer_bytes(args))
    assert rank["activations"]["total"] == _nearest(activation_bytes(args))
