"""Multi-head Latent Attention in the reference model (smelt.torch) against smelt's counts.

Parameters per term exact for the shrunk MLA examples and an MLA config without a query latent; FLOPs under
FlopCounterMode per term exact (the core converted as for GQA with w_qk = n_h*(d_nope + d_rope), w_v = n_h*d_v);
the cache holds the latent and the rope key (r_kv + d_rope per token per visit), never full K and V.
Skipped where torch is missing.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_support import check_forward_flops, check_training_flops, example, measured_flop_terms, mla_switches, v3_mla  # noqa: E402


def tiny_mla() -> dict:
    """Two dense layers, H = 32, MLA with 2 heads, r_q = 8, r_kv = 6, d_nope = 4, d_rope = 2, d_v = 3, V = 64."""
    return smelt.read_config(
        {
            "schema_version": 1,
            "name": "tiny-mla",
            "vocab_size": 64,
            "tie_embeddings": False,
            "num_layers": 2,
            "hidden_size": 32,
            "norm": "rmsnorm",
            "context_length": 16,
            "kv_cache_bytes": 2,
            "attention": {
                "type": "mla",
                "num_heads": 2,
                "q_lora_rank": 8,
                "kv_lora_rank": 6,
                "qk_nope_head_dim": 4,
                "qk_rope_head_dim": 2,
                "v_head_dim": 3,
                "pattern": ["full"],
            },
            "ffn": {"type": "gated", "bias": False, "dense_width": 16},
        }
    ).to_dict()


CASES = {
    "deepseek-v3-mla": lambda: v3_mla(5),  # 3 dense + 2 MoE layers: every kind of the 61
    "deepseek-v2-lite": lambda: st.shrink(example("hf/deepseek-v2-lite.json")),
    "no-query-latent": lambda: v3_mla(5, q_lora_rank=0),
    "switches": mla_switches,
    "tiny-mla": tiny_mla,
}


# hf/deepseek-v2-lite.json (q_lora_rank null) is in test_torch_params.py's BUILT list.
@pytest.mark.parametrize("name", ["deepseek-v3-mla", "no-query-latent", "switches", "tiny-mla"])
def test_mla_params_equal_smelt_terms(name):
    cfg = CASES[name]()
    assert cfg["attention"]["type"] == "mla" and cfg["hidden_size"] <= 128 and cfg["vocab_size"] <= 1024
    model = st.build_model(cfg, device="meta")
    assert st.param_terms(model) == smelt.count(cfg).to_dict()["params"]["terms"]
    assert all(isinstance(m.attn, st.MLA) for m in model.layers)


def test_v2_lite_has_one_query_projection_and_v3_a_query_latent():
    lite = st.build_model(dict(st.shrink(example("hf/deepseek-v2-lite.json")), num_layers=2), device="meta")
    lite = lite.layers[0].attn
    v3 = st.build_model(v3_mla(4), device="meta").layers[0].attn
    # V2-Lite: H = 2048 -> f = 16, H = 128, 16 heads of 128/16 + 64/16 = 12: q_proj 128 x 192.
    assert tuple(lite.q_proj.weight.shape) == (192, 128) and not hasattr(lite, "q_a_proj")
    # V3: q_a_proj 112 -> 24, q_b_proj 24 -> 128*(2 + 1), kv_a 112 -> 8 + 1, kv_b 8 -> 128*(2 + 2), o 256 -> 112.
    shapes = {n: tuple(p.shape) for n, p in v3.named_parameters()}
    assert shapes == {
        "q_a_proj.weight": (24, 112),
        "q_a_layernorm.weight": (24,),
        "q_b_proj.weight": (384, 24),
        "kv_a_proj_with_mqa.weight": (9, 112),
        "kv_a_layernorm.weight": (8,),
        "kv_b_proj.weight": (512, 8),
        "o_proj.weight": (112, 256),
    }


def test_tiny_mla_by_hand():
    cfg = tiny_mla()
    t = 16
    model = st.build_model(cfg, seed=0)
    assert st.param_terms(model) == {
        "embedding": 2_048,  # 64*32
        "lm_head": 2_048,
        # per layer: q 32*8 + 8*2*(4 + 2) = 352; kv down 32*(6 + 2) = 256; kv up 6*2*(4 + 3) = 84;
        # o 2*3*32 = 192; latent norms 8 + 6 = 14: 898, two layers 1,796
        "attention": 1_796,
        "norms": 160,  # 2*2*32 + 32
        "router": 0,
        "experts": 0,
        "shared_experts": 0,
        "dense_ffn": 3_072,  # 2 * 3*32*16
        "loop_extras": 0,
    }
    got, total = measured_flop_terms(model, t)
    assert got == {
        "attention_qkv": 2_768,  # 2 layers * 2*(352 + 256 + 84)
        "attention_out": 768,  # 2 * 2*192
        # Q K^T 2*(2*6)*16 + softmax V 2*(2*3)*16 per layer, the full 16 x 16 scores: 2 * 576
        "attention_core": 1_152,
        "router": 0,
        "experts": 0,
        "shared_experts": 0,
        "dense_ffn": 6_144,  # 2 * 2*3*32*16
        "loop_extras": 0,
        "lm_head": 4_096,  # 2*32*64
    }
    assert total == 16 * 14_928  # 2,768 + 768 + 1,152 + 6,144 + 4,096 per token
    own = smelt.count(cfg, context=t).to_dict()
    # smelt: the causal average A = 17/2 keys: scores 2 * 2*12*8.5 = 408, values 2 * 2*6*8.5 = 204,
    # together 1,152 * 17/32 = 612.
    terms = own["flops_per_token"]["terms"]
    assert (terms["attention_scores"], terms["attention_values"]) == (408, 204)
    cache = st.KVCache()
    model(torch.randint(0, 64, (1, t)), cache=cache)
    # per visit and token r_kv + d_rope = 6 + 2 = 8 elements (full K and V would be 2*2*(4 + 2 + 3) = 36):
    # 2 visits * 16 tokens * 8 = 256 elements, * 2 bytes = 512 bytes at context 16.
    assert [tuple(x.shape) for x in cache.slots[0]] == [(1, 16, 6), (1, 1, 16, 2)]
    assert cache.elements() == 256
    assert own["kv_cache"]["bytes_at_context"] == 512


# The query latent (q_a_proj, q_b_proj) in tiny-mla, one query projection in V2-Lite and "switches".
@pytest.mark.parametrize("name", ["tiny-mla", "deepseek-v2-lite", "switches"])
def test_mla_forward_flops_equal_smelt_per_term(name):
    cfg = CASES[name]()
    if name == "deepseek-v2-lite":  # its dense layer and one MoE layer keep it short
        cfg = smelt.read_config(dict(cfg, num_layers=2)).to_dict()
    check_forward_flops(cfg, t=16)


@pytest.mark.parametrize("name", ["deepseek-v2-lite", "switches"])
def test_the_mla_cache_holds_the_latent_and_the_rope_key(name):
    cfg = smelt.read_config(dict(CASES[name](), num_layers=2 if name == "deepseek-v2-lite" else 4)).to_dict()
    t = 12  # > W = 5 and C = 4 in "switches"
    model = st.build_model(cfg, seed=0)
    cache = st.KVCache()
    model(torch.randint(0, cfg["vocab_size"], (1, t)), cache=cache)
    kv = smelt.count(cfg, context=t, every_layer=True).to_dict()
    a = cfg["attention"]
    assert len(cache) == len(model.schedule)
    for slot, (i, _) in zip(cache, model.schedule):
        layer = kv["layers"][i]
        latent, k_rope = slot
        assert latent.shape[-1] == a["kv_lora_rank"] and k_rope.shape[-1] == a["qk_rope_head_dim"]
        assert latent.numel() + k_rope.numel() == layer["kv_elements_per_token_held"] * layer["kv_tokens_held"]
    assert cache.elements() * kv["kv_cache"]["element_bytes"] == kv["kv_cache"]["bytes_at_context"]
    # docs/reference-model.md ("KV cache"): V2-Lite shrunk by 16 holds 32 + 4 elements per token and visit:
    # 2 visits * 12 tokens * 36 * 2 bytes = 1,728. The switches (8 + 1 per token): visits of layers 1, 2, 3, 2, 3,
    # 4 (sliding W = 5, chunked C = 4, full, chunked, full, sliding) hold 5, 4, 12, 4, 12, 5 tokens: 42 * 9 * 2 = 756.
    want = {"deepseek-v2-lite": 2 * 12 * (32 + 4) * 2, "switches": (5 + 4 + 12 + 4 + 12 + 5) * (8 + 1) * 2}[name]
    assert want == {"deepseek-v2-lite": 1_728, "switches": 756}[name]
    assert kv["kv_cache"]["bytes_at_context"] == want


@pytest.mark.parametrize("name", ["tiny-mla", "switches"])
def test_mla_forward_and_backward_are_three_forwards(name):
    # As for GQA (test_torch_params.py): each product's backward multiplies two matrices of its size, the
    # latent's lift and the shared rope key included, so forward + backward = 3 x the flop-counter forward.
    cfg = CASES[name]()
    model = check_training_flops(cfg, t=16)
    for i, _ in model.schedule:  # the latent's lift learns on every visit
        assert model.layers[i].attn.kv_b_proj.weight.grad.abs().sum() > 0
