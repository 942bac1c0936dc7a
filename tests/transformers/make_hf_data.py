#!/usr/bin/env python3
"""Builds the transformers-made test data under tests/data/transformers/.

For every model_type smelt imports, tiny configs are built with transformers'
own config classes (odd sizes, head_dim != hidden / heads, tied and untied,
sliding, chunked, MLA with and without q_lora_rank, shared experts, dense-first
layers, biases on and off). Each is saved with save_pretrained (the config.json
a user gets) and its model is built with AutoModelForCausalLM.from_config on
the CPU. The expectations file records, per case, the exact parameter count of
each smelt term (named parameters, deduplicated as model.parameters() does, plus
persistent buffers such as DeepSeek-V3's e_score_correction_bias) and the KV
cache a short forward leaves in its DynamicCache, layer by layer.

Run by hand, with torch and transformers installed:

    python tests/transformers/make_hf_data.py [--out tests/data/transformers]

The output is deterministic for one transformers version; the C++ test
tests/unit/config/hf_transformers_test.cpp compares smelt's counts with it to the integer.
"""

import argparse
import json
import pathlib
import re
import sys
import tempfile

import torch
import transformers
from transformers import AutoModelForCausalLM

TERMS = ["embedding", "lm_head", "attention", "norms", "router", "experts", "shared_experts", "dense_ffn"]

# First match wins: parameter (or buffer) name -> smelt's ParamTerms field
# (include/smelt/count.hpp, docs/counting.md section 5). q/k norms and MLA's
# latent norms sit under the attention module and belong to smelt's attention
# term; the layer and final norms are smelt's norms.
RULES = [
    (r"(^|\.)lm_head\.", "lm_head"),
    (r"(^|\.)(embed_tokens|wte)\.", "embedding"),
    (r"\.shared_experts?(_gate)?\.", "shared_experts"),
    (r"\.experts\.", "experts"),
    (r"\.(gate|router)\.(weight|bias|e_score_correction_bias|layer\.weight)$", "router"),
    (r"\.(self_attn|attn)\.", "attention"),
    (r"(norm|norm_\d|norm_f)\.weight$", "norms"),
    (r"\.(mlp|feed_forward|ffn)\.", "dense_ffn"),
]


def term_of(name):
    for pattern, term in RULES:
        if re.search(pattern, name):
            return term
    raise SystemExit(f"no smelt term for transformers tensor '{name}'")


def count_terms(model):
    """Exact elements per smelt term. named_parameters() lists a tied weight
    once (under the embedding, which is registered first), so a tied head
    counts 0 as smelt's lm_head does. Persistent buffers are stored weights
    too (they are in every checkpoint); non-persistent ones (RoPE inv_freq)
    are not."""
    terms = dict.fromkeys(TERMS, 0)
    names = {}
    for name, p in model.named_parameters():
        terms[term_of(name)] += p.numel()
        names[name] = term_of(name)
    for mod_name, mod in model.named_modules():
        for b_name, b in mod.named_buffers(recurse=False):
            if b_name in mod._non_persistent_buffers_set:
                continue
            full = f"{mod_name}.{b_name}"
            terms[term_of(full)] += b.numel()
            names[full] = term_of(full)
    terms["total"] = sum(terms[t] for t in TERMS)
    return terms, names


def kv_cache(model, tokens):
    """Per layer, the key and value elements one sequence's cache holds after
    a forward of `tokens` tokens (batch 1), and the element size in bytes."""
    ids = torch.arange(tokens).remainder(model.config.get_text_config().vocab_size).unsqueeze(0)
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    layers, size = [], 0
    for layer in out.past_key_values.layers:
        layers.append(layer.keys.numel() + layer.values.numel())
        size = layer.keys.element_size()
    return {"tokens": tokens, "elements_per_layer": layers, "element_bytes": size}


TINY = dict(vocab_size=101, max_position_embeddings=64)


def cases():
    """(case name, config class, note, keyword arguments). Sizes are tiny and odd so no term can hide another."""
    ll = dict(TINY, hidden_size=48, intermediate_size=40, num_hidden_layers=3, num_attention_heads=6)
    yield "llama", "LlamaConfig", "GQA, head_dim 12 != 48/6, bf16", dict(
        ll, num_key_value_heads=2, head_dim=12, dtype="bfloat16")
    yield "llama_tied_bias", "LlamaConfig", "tied, attention and MLP biases, MHA, head_dim from hidden/heads", dict(
        ll, tie_word_embeddings=True, attention_bias=True, mlp_bias=True)

    ms = dict(TINY, hidden_size=40, intermediate_size=36, num_hidden_layers=2, num_attention_heads=4)
    yield "mistral_sliding", "MistralConfig", "every layer slides", dict(
        ms, num_key_value_heads=2, head_dim=14, sliding_window=8)
    yield "mistral_tied", "MistralConfig", "MQA, tied", dict(
        ms, num_key_value_heads=1, sliding_window=None, tie_word_embeddings=True)
    mx = dict(ms, num_local_experts=5, num_experts_per_tok=2)
    yield "mixtral", "MixtralConfig", "", dict(mx, num_key_value_heads=2, sliding_window=None)
    yield "mixtral_sliding_tied", "MixtralConfig", "head_dim 6 != 40/4", dict(
        mx, num_key_value_heads=4, head_dim=6, sliding_window=8, tie_word_embeddings=True)

    qw = dict(TINY, hidden_size=36, intermediate_size=44, num_hidden_layers=3, num_attention_heads=6,
              num_key_value_heads=2)
    yield "qwen2_tied", "Qwen2Config", "q/k/v biases", dict(qw, tie_word_embeddings=True)
    yield "qwen2_sliding", "Qwen2Config", "layers 1 and 2 slide", dict(
        qw, use_sliding_window=True, sliding_window=8, max_window_layers=1)
    yield "qwen3", "Qwen3Config", "per-head q/k norms", dict(qw, head_dim=10)
    yield "qwen3_sliding_bias", "Qwen3Config", "layer 2 slides", dict(
        qw, head_dim=8, attention_bias=True, use_sliding_window=True, sliding_window=8, max_window_layers=2)
    q2m = dict(qw, num_hidden_layers=4, moe_intermediate_size=20, num_experts=5, num_experts_per_tok=2)
    yield "qwen2_moe", "Qwen2MoeConfig", "shared expert with gate, layer 0 dense", dict(
        q2m, shared_expert_intermediate_size=28, decoder_sparse_step=1, mlp_only_layers=[0])
    yield "qwen2_moe_no_qkv_bias", "Qwen2MoeConfig", "qkv_bias false, every 2nd layer MoE, tied", dict(
        q2m, shared_expert_intermediate_size=28, decoder_sparse_step=2, qkv_bias=False, tie_word_embeddings=True)
    q3m = dict(q2m, head_dim=14)
    yield "qwen3_moe", "Qwen3MoeConfig", "saved as num_local_experts; layer 3 dense", dict(
        q3m, decoder_sparse_step=1, mlp_only_layers=[3], dtype="bfloat16")
    yield "qwen3_moe_step2_tied", "Qwen3MoeConfig", "every 2nd layer MoE", dict(
        q3m, decoder_sparse_step=2, tie_word_embeddings=True)

    om = dict(TINY, hidden_size=32, intermediate_size=18, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, num_experts=6, num_experts_per_tok=2)
    yield "olmoe", "OlmoeConfig", "q/k norms over all heads", om
    yield "olmoe_bias_tied", "OlmoeConfig", "attention_bias, tied", dict(om, attention_bias=True, tie_word_embeddings=True)

    ds = dict(TINY, hidden_size=40, intermediate_size=52, moe_intermediate_size=12, num_hidden_layers=3,
              num_attention_heads=4, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=6,
              n_routed_experts=6, num_experts_per_tok=2, first_k_dense_replace=1)
    v2 = dict(ds, topk_method="greedy", n_group=1, topk_group=1)
    yield "deepseek_v2_lite", "DeepseekV2Config", "MLA without q_lora_rank, softmax routing, layer 0 dense", dict(
        v2, q_lora_rank=None, n_shared_experts=2)
    yield "deepseek_v2_q_lora", "DeepseekV2Config", "MLA with q_lora_rank, tied", dict(
        v2, q_lora_rank=20, n_shared_experts=1, tie_word_embeddings=True)
    v3 = dict(ds, n_group=2, topk_group=1)
    yield "deepseek_v3", "DeepseekV3Config", (
        "sigmoid routing with e_score_correction_bias (a persistent buffer); the MTP layer is not built"), dict(
        v3, q_lora_rank=20, n_shared_experts=1, num_nextn_predict_layers=1, dtype="bfloat16")
    yield "deepseek_v3_no_q_lora", "DeepseekV3Config", "MLA without q_lora_rank, tied", dict(
        v3, q_lora_rank=None, n_shared_experts=2, tie_word_embeddings=True)

    yield "gpt_oss", "GptOssConfig", "sinks, biased attention, experts and router; alternating sliding", dict(
        TINY, hidden_size=44, intermediate_size=30, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=10, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
        dtype="bfloat16")

    yield "gpt_oss_full_tied", "GptOssConfig", "explicit layer_types, all full; tied", dict(
        TINY, hidden_size=28, intermediate_size=22, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=18, num_local_experts=3, num_experts_per_tok=1, sliding_window=8,
        layer_types=["full_attention", "full_attention"], tie_word_embeddings=True)

    # DbrxAttention reads attn_config.rope_theta, which DbrxAttentionConfig (5.24) does not declare, and its
    # forward clamps with clip_qkv, which must not be None: pass both, as the released DBRX config.json does.
    yield "dbrx_float32", "DbrxConfig", "KV bytes from dtype", dict(
        vocab_size=101, d_model=48, n_layers=2, n_heads=4, max_seq_len=64, dtype="float32",
        attn_config=dict(kv_n_heads=2, rope_theta=500000.0, clip_qkv=8),
        ffn_config=dict(ffn_hidden_size=20, moe_num_experts=4, moe_top_k=2))

    l4 = dict(TINY, hidden_size=32, intermediate_size=24, intermediate_size_mlp=40, num_hidden_layers=4,
              num_attention_heads=4, num_key_value_heads=2, head_dim=12, num_local_experts=3, num_experts_per_tok=1,
              attention_chunk_size=8)
    yield "llama4_text", "Llama4TextConfig", "chunked, NoPE every 4th layer, MoE every 2nd", dict(
        l4, interleave_moe_layer_step=2)
    yield "llama4_text_tied", "Llama4TextConfig", "MoE everywhere, tied", dict(
        l4, interleave_moe_layer_step=1, tie_word_embeddings=True)
    yield "llama4_text_listed", "Llama4TextConfig", "explicit moe_layers [0, 3] and no_rope_layers", dict(
        l4, interleave_moe_layer_step=1, moe_layers=[0, 3], no_rope_layers=[0, 1, 1, 0])
    vision = dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, image_size=28,
                  patch_size=14, vision_output_dim=16, projector_input_dim=16, projector_output_dim=32)
    yield "llama4_wrapper_top_tied", "Llama4Config", "top-level tie ignored: text_config's decides (untied)", dict(
        text_config=dict(l4, tie_word_embeddings=False), vision_config=vision, tie_word_embeddings=True)
    yield "llama4_wrapper_text_tied", "Llama4Config", "tied by text_config; the top level says false", dict(
        text_config=dict(l4, tie_word_embeddings=True), vision_config=vision, tie_word_embeddings=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = pathlib.Path(__file__).resolve().parent
    ap.add_argument("--out", type=pathlib.Path, default=here.parent / "data" / "transformers")
    ap.add_argument("--tokens", type=int, default=12, help="forward length for the KV cache (above every window)")
    ap.add_argument("--names", action="store_true", help="print each tensor's smelt term")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    expected = {
        "generator": "tests/transformers/make_hf_data.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "terms": TERMS,
        "conventions": [
            "params: named_parameters() (a tied head is listed once, under the embedding: lm_head 0) plus "
            "persistent buffers (DeepSeek-V3's e_score_correction_bias, in the router term); module names map to "
            "smelt's terms by RULES in the generator",
            "kv_cache: key + value elements per layer in the DynamicCache after one forward of `tokens` tokens; "
            "sliding and chunked layers keep window - 1 (chunk - 1) tokens between steps",
            "element_bytes: the cache's element size with the model built in config_dtype (float32 when null)",
        ],
        "not_built": [],  # every family smelt imports builds with this transformers version
        "cases": [],
    }
    for name, cls, note, kwargs in cases():
        config = getattr(transformers, cls)(**kwargs)
        with tempfile.TemporaryDirectory() as tmp:
            config.save_pretrained(tmp)
            text = (pathlib.Path(tmp) / "config.json").read_text()
        (args.out / f"{name}.json").write_text(text)
        # The model in its config's dtype, so the cache's element size is what transformers holds.
        named = config.get_text_config().dtype  # before from_config, which sets it
        named = str(named).removeprefix("torch.") if named else None
        dtype = getattr(torch, named) if named else torch.float32
        # eager experts: grouped_mm needs 16-byte strides, which odd widths do not have. For the llama4
        # wrapper, AutoModelForCausalLM builds Llama4ForCausalLM from text_config (no vision tower, which
        # smelt does not count either); Llama4ForConditionalGeneration ties its head the same way.
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, experts_implementation="eager").eval()
        params, names = count_terms(model)
        emb, head = model.get_input_embeddings(), model.get_output_embeddings()
        assert (head.weight is emb.weight) == (params["lm_head"] == 0), name
        case = {
            "case": name,
            "config": f"{name}.json",
            "model_class": type(model).__name__,
            "note": note,
            "tied": head.weight is emb.weight,
            "config_dtype": named,
            "params": params,
            "kv_cache": kv_cache(model, args.tokens),
        }
        expected["cases"].append(case)
        print(f"{name:28} {case['model_class']:24} total {params['total']:>8}", file=sys.stderr)
        if args.names:
            for n, t in names.items():
                print(f"    {n} -> {t}", file=sys.stderr)
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
