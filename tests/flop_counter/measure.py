"""Measures torch.utils.flop_counter.FlopCounterMode on forwards of tiny Hugging Face
models, for tests/convention_flop_counter_test.cpp.

Run by hand (torch and transformers installed; the test itself needs neither):
    python tests/flop_counter/measure.py tests/data/flop_counter

Writes, per model, NAME.config.json (the config transformers saves) and
NAME.flops.json (the FlopCounterMode total of one forward of a batch of one
sequence, per attention and experts implementation, and the versions that
made it).
"""

import json
import pathlib
import sys

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode
from transformers import (
    DeepseekV3Config,
    DeepseekV3ForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
)

SEQ = 16


def models():
    # Dense GQA with head_dim != hidden / heads (24 vs 16), untied head.
    yield "llama-tiny", LlamaForCausalLM, LlamaConfig(
        vocab_size=100, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=24,
        max_position_embeddings=64, tie_word_embeddings=False)
    # MoE: 4 experts, top-2, odd widths, tied head.
    yield "mixtral-tiny", MixtralForCausalLM, MixtralConfig(
        vocab_size=90, hidden_size=48, intermediate_size=40, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_local_experts=4,
        num_experts_per_tok=2, max_position_embeddings=64, tie_word_embeddings=True)
    # MLA with a query latent, one dense layer first, a shared expert, 6 experts top-2.
    yield "deepseek-v3-tiny", DeepseekV3ForCausalLM, DeepseekV3Config(
        vocab_size=80, hidden_size=40, intermediate_size=56, moe_intermediate_size=24,
        num_hidden_layers=3, first_k_dense_replace=1, num_attention_heads=4,
        num_key_value_heads=4, q_lora_rank=20, kv_lora_rank=12, qk_nope_head_dim=8,
        qk_rope_head_dim=4, v_head_dim=6, n_routed_experts=6, num_experts_per_tok=2,
        n_shared_experts=1, n_group=1, topk_group=1, max_position_embeddings=64,
        tie_word_embeddings=False)


def measure(cls, config, attn, experts):
    torch.manual_seed(0)
    config._attn_implementation = attn
    if experts:
        config._experts_implementation = experts
    model = cls(config).eval()
    ids = torch.randint(0, config.vocab_size, (1, SEQ))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids)
    return counter.get_total_flops()


def main(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, cls, config in models():
        # transformers 5.x runs experts with "grouped_mm" by default; FlopCounterMode
        # has no formula for it, so both other implementations are measured too.
        moe = hasattr(config, "num_local_experts") or hasattr(config, "n_routed_experts")
        flops = {}
        for attn in ("eager", "sdpa"):
            for experts in ("eager", "batched_mm", "grouped_mm") if moe else (None,):
                key = f"attention={attn}" + (f",experts={experts}" if experts else "")
                flops[key] = measure(cls, config, attn, experts)
        config.save_pretrained(out / name)
        (out / name / "config.json").rename(out / f"{name}.config.json")
        (out / name).rmdir()
        (out / f"{name}.flops.json").write_text(json.dumps({
            "seq_len": SEQ, "batch": 1, "forward_flops": flops,
            "torch": torch.__version__, "transformers": transformers.__version__}, indent=2) + "\n")
        print(name, flops)


if __name__ == "__main__":
    main(sys.argv[1])
