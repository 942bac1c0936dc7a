"""An independent transcription of Megatron-LM's theoretical memory formula, the oracle of test_memory_megatron.py.

NVIDIA/Megatron-LM, megatron/training/theoretical_memory_usage.py, in the form of its pull request #4687 (routed
experts sharded over expert-tensor x expert parallelism, their distributed-optimizer shard over the expert
data-parallel ranks), restated from the formula with Python's own int and float arithmetic, so that the values
are what Megatron prints. It takes Megatron's argument names; ``args_from_native`` maps a smelt native config
and a layout to them (docs/memory.md, "The megatron convention"). It checks itself against the values Megatron's
own unit tests assert (tests/unit_tests/test_theoretical_memory_usage.py, commit c88312c9).
"""

from __future__ import annotations

import math
from typing import Any


def _resolved(args: dict[str, Any]) -> dict[str, Any]:
    a = {"num_experts": None, "moe_shared_expert_intermediate_size": None, "moe_shared_expert_gate": False,
         "moe_layer_freq": 1, "mtp_num_layers": None, "normalization": "LayerNorm", "swiglu": False,
         "add_bias_linear": True, "multi_latent_attention": False, "q_lora_rank": None,
         "untie_embeddings_and_output_weights": False, "tensor_model_parallel_size": 1,
         "pipeline_model_parallel_size": 1, "virtual_pipeline_model_parallel_size": None,
         "context_parallel_size": 1, "expert_model_parallel_size": 1, "expert_tensor_parallel_size": None,
         "data_parallel_size": 1, "use_distributed_optimizer": False, "sequence_parallel": False,
         "recompute_granularity": None, "num_microbatches": None, "group_query_attention": False}
    a.update(args)
    tp = a["tensor_model_parallel_size"]
    if a["expert_tensor_parallel_size"] is None:
        a["expert_tensor_parallel_size"] = tp
    if "padded_vocab_size" not in a:  # padded to a multiple of 128 x tp
        a["padded_vocab_size"] = int(math.ceil(a["vocab_size"] / (128 * tp)) * 128 * tp)
    if not a["group_query_attention"]:
        a["num_query_groups"] = a["num_attention_heads"]
    return a


def _moe_layers(a: dict[str, Any]) -> list[int]:
    if a["num_experts"] is None:
        return [0] * a["num_layers"]
    f = a["moe_layer_freq"]
    return [1 if i % f == 0 else 0 for i in range(a["num_layers"])] if isinstance(f, int) else list(f)


def weight_and_optimizer_bytes(args: dict[str, Any]) -> float:
    a = _resolved(args)
    h, n = a["hidden_size"], a["num_attention_heads"]
    tp, pp = a["tensor_model_parallel_size"], a["pipeline_model_parallel_size"]
    moe = a["num_experts"] is not None
    experts = a["num_experts"] if moe else 1
    glu = 3 / 2 if a["swiglu"] else 1
    shared_width = a["moe_shared_expert_intermediate_size"] or 0
    pattern = _moe_layers(a)
    n_moe = sum(pattern)
    n_dense = a["num_layers"] - n_moe
    mtp = a["mtp_num_layers"] or 0
    mtp_moe, mtp_dense = (mtp, 0) if pattern[-1] else (0, mtp)
    norm = 1 if a["normalization"] == "RMSNorm" else 2
    if a["multi_latent_attention"]:
        qk, rope, v = a["qk_head_dim"], a["qk_pos_emb_head_dim"], a["v_head_dim"]
        q = h * n * (qk + rope) if a["q_lora_rank"] is None else a["q_lora_rank"] * (h + n * (qk + rope) + norm)
        attention = q + a["kv_lora_rank"] * (h + n * (qk + v) + norm) + h * rope + (n * v) * h
    else:
        attention = 2 * h * h * ((1 + (a["num_query_groups"] / n)) * ((a["kv_channels"] * n) / h))
    dense_mlp = 2 * h * a["ffn_hidden_size"] * glu
    shared = 2 * h * shared_width * glu
    routed = 2 * h * (a["moe_ffn_hidden_size"] if moe else 0) * experts * glu
    norms = 2 * h * norm
    router = (h * experts + (experts if a["add_bias_linear"] else 0)) if moe else 0
    gate = h if shared_width > 0 and a["moe_shared_expert_gate"] else 0
    embedding = h * a["padded_vocab_size"]

    tp_block = (attention + dense_mlp) * n_dense + (attention + shared) * n_moe
    rep_block = norms * n_dense + (norms + 0 + router + gate) * n_moe + norm * h
    tp_mtp = (attention + dense_mlp) * mtp_dense + (attention + shared) * mtp_moe
    rep_mtp = norms * mtp_dense + (norms + 0 + router + gate) * mtp_moe
    tp_shard = ((tp_block / pp) + tp_mtp + embedding) / tp
    rep_shard = (rep_block / pp) + rep_mtp
    exp_shard = ((routed * n_moe / pp) + routed * mtp_moe) / (a["expert_tensor_parallel_size"] * a["expert_model_parallel_size"])
    if a["untie_embeddings_and_output_weights"] and pp == 1:
        tp_shard += embedding / tp
    world = tp * pp * a["context_parallel_size"] * a["data_parallel_size"]
    edp = world // (a["expert_tensor_parallel_size"] * a["expert_model_parallel_size"] * pp)

    def per_param(ranks: int) -> float:
        return 18 if not a["use_distributed_optimizer"] else 6 + (12 / ranks)

    return (tp_shard + rep_shard) * per_param(a["data_parallel_size"]) + exp_shard * per_param(edp)


def activation_bytes(args: dict[str, Any]) -> float:
    a = _resolved(args)
    s, b, h = a["seq_length"], a["micro_batch_size"], a["hidden_size"]
    tp, pp, vpp, m = (a["tensor_model_parallel_size"], a["pipeline_model_parallel_size"],
                      a["virtual_pipeline_model_parallel_size"], a["num_microbatches"])
    sp_path = a["sequence_parallel"] and a["recompute_granularity"] == "selective"
    act = (s * b * h) * (18 + (4 * (a["ffn_hidden_size"] / h))) if sp_path else s * b * h * (10 + (24 / tp))
    act *= a["num_layers"]
    act += 8 * s * b * pp
    act += s * b * h * pp
    if vpp is not None:
        act *= 1 + ((pp - 1) / (pp * vpp))
    elif pp > 1 and m is not None:
        act *= min(1, m / pp)
    if sp_path:
        if pp == 1:
            act += s * b * h * 4 * (1 + (a["padded_vocab_size"] / h))
        return act / tp
    if pp == 1:
        logits = s * b * a["padded_vocab_size"]
        logits /= tp
        act += (logits + s * b * h) * 2
    return act * 1.05


def _moe_pattern(native: dict[str, Any]) -> list[int] | int:
    """smelt's MoE layers (the first_dense layers dense, then every `every`-th from `phase`) as Megatron's list."""
    layers = native["moe"]["layers"]
    if isinstance(layers, list):
        pattern = [1 if i + 1 in layers else 0 for i in range(native["num_layers"])]
    else:
        pattern = [1 if i >= layers["first_dense"] and i % layers["every"] == layers["phase"] else 0
                   for i in range(native["num_layers"])]
    return 1 if all(pattern) else pattern


def args_from_native(native: dict[str, Any], layout: dict[str, Any]) -> dict[str, Any]:
    """Megatron's arguments for a smelt native config (``Config.to_dict()``) and a layout in Megatron's words."""
    att, ffn, moe = native["attention"], native["ffn"], native.get("moe")
    a: dict[str, Any] = {
        "num_layers": native["num_layers"], "hidden_size": native["hidden_size"],
        "num_attention_heads": att["num_heads"], "vocab_size": native["vocab_size"],
        "normalization": "RMSNorm" if native["norm"] == "rmsnorm" else "LayerNorm",
        "swiglu": ffn["type"] == "gated", "add_bias_linear": bool(ffn.get("bias", False)),
        "untie_embeddings_and_output_weights": not native["tie_embeddings"],
        "mtp_num_layers": native.get("mtp_modules", 0) or None,
    }
    if att["type"] == "mla":
        a.update(multi_latent_attention=True, q_lora_rank=att["q_lora_rank"] or None, kv_lora_rank=att["kv_lora_rank"],
                 qk_head_dim=att["qk_nope_head_dim"], qk_pos_emb_head_dim=att["qk_rope_head_dim"],
                 v_head_dim=att["v_head_dim"])
    else:
        a.update(group_query_attention=att["num_kv_heads"] != att["num_heads"], num_query_groups=att["num_kv_heads"],
                 kv_channels=att["head_dim"])
    dense_width = ffn.get("dense_width", 0)
    if moe and moe.get("num_experts", 0):
        a.update(num_experts=moe["num_experts"], moe_ffn_hidden_size=moe["expert_width"],
                 moe_shared_expert_intermediate_size=(moe.get("num_shared_experts", 0) * moe.get("shared_width", 0))
                 or None, moe_shared_expert_gate=bool(moe.get("shared_gate", False)),
                 moe_layer_freq=_moe_pattern(native))
        a["ffn_hidden_size"] = dense_width or moe["expert_width"]
    else:
        a["ffn_hidden_size"] = dense_width
    a.update(layout)
    return a
