"""Sigmoid routing in the reference model: DeepSeek-V3's selection-only correction bias and Llama 4's form.

The routing by hand on four experts, then parameters and FlopCounterMode's forward FLOPs per term against
smelt's count on configs that route with a sigmoid (docs/reference-model.md, "Sigmoid routing"). Skipped without torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_support import deepseek_gqa, example, measured_flop_terms, sigmoid_routed  # noqa: E402


# sigmoid of the logits 2, 1, 0, -1 (the token below): 0.880797, 0.731059, 0.5, 0.268941.
S2, S1, S0 = 0.880797, 0.731059, 0.5


def four_experts(score: str, bias: bool, top_k: int = 2, renormalize: bool | None = None) -> st.MoE:
    """A MoE layer of H = 4, 4 experts of width 3, its router the identity: the logits are the token itself."""
    cfg = {
        "schema_version": 1, "vocab_size": 8, "num_layers": 1, "hidden_size": 4,
        "attention": {"num_heads": 1, "num_kv_heads": 1, "head_dim": 4},
        "moe": {"num_experts": 4, "top_k": top_k, "expert_width": 3, "router_bias": bias, "router_score": score},
    }
    if renormalize is not None:  # otherwise the default of the form the score and bias give
        cfg["moe"]["renormalize"] = renormalize
    torch.manual_seed(0)
    moe = st.MoE(st.ModelConfig.from_native(cfg))
    with torch.no_grad():
        moe.router.weight.copy_(torch.eye(4))
        if moe.router.bias is not None:
            moe.router.bias.zero_()
    return moe


TOKEN = torch.tensor([[2.0, 1.0, 0.0, -1.0]])


def test_sigmoid_routing_without_the_correction_bias_by_hand():
    moe = four_experts("sigmoid", bias=True)
    with torch.no_grad():
        moe.router.e_score_correction_bias.zero_()
    weight, chosen, on_input = moe.router.route(TOKEN, 2, True)
    # scores 0.8808, 0.7311, 0.5, 0.2689: the top two are experts 0 and 1,
    # renormalised 0.880797 / (0.880797 + 0.731059) = 0.546449 and 0.731059 / 1.611856 = 0.453551.
    assert chosen.tolist() == [[0, 1]] and not on_input
    assert weight[0].tolist() == pytest.approx([0.546449, 0.453551], abs=1e-6)


def test_the_correction_bias_moves_the_choice_and_not_the_weights():
    moe = four_experts("sigmoid", bias=True)
    with torch.no_grad():
        moe.router.e_score_correction_bias.copy_(torch.tensor([0.0, 0.0, 0.3, 0.5]))
    weight, chosen, _ = moe.router.route(TOKEN, 2, True)
    # scores + bias = 0.8808, 0.7311, 0.8000, 0.7689: experts 0 and 2 are chosen (expert 1 drops out),
    # weighed by their uncorrected scores 0.880797 and 0.5, renormalised: 0.880797 / 1.380797 = 0.637890, 0.362110.
    assert chosen.tolist() == [[0, 2]]
    assert weight[0].tolist() == pytest.approx([0.637890, 0.362110], abs=1e-6)
    raw, _, _ = moe.router.route(TOKEN, 2, False)
    assert raw[0].tolist() == pytest.approx([S2, S0], abs=1e-6)  # without norm_topk_prob: the scores themselves
    # The layer's output: the two experts on the token, weighted; the other two never run.
    want = 0.637890 * moe.experts[0](TOKEN) + 0.362110 * moe.experts[2](TOKEN)
    assert torch.allclose(moe(TOKEN), want, atol=1e-6)


def test_the_correction_bias_is_a_router_parameter_that_is_not_trained():
    moe = four_experts("sigmoid", bias=True)
    names = dict(moe.router.named_parameters())
    assert set(names) == {"weight", "e_score_correction_bias"}  # no bias on the logits
    assert names["e_score_correction_bias"].shape == (4,) and not names["e_score_correction_bias"].requires_grad
    moe(TOKEN).sum().backward()
    assert moe.router.weight.grad.abs().sum() > 0 and names["e_score_correction_bias"].grad is None


def test_llama4_routing_scales_the_expert_input_by_hand():
    moe = four_experts("sigmoid", bias=False, top_k=1)
    weight, chosen, on_input = moe.router.route(TOKEN, 1, True)
    # top-1 on the logits 2, 1, 0, -1: expert 0, weight sigmoid(2) = 0.880797, not renormalised (that would
    # make every top-1 weight 1 and cut the router off from the gradient); it scales the expert's input.
    assert chosen.tolist() == [[0]] and on_input
    assert weight[0].tolist() == pytest.approx([S2], abs=1e-6)
    out = moe(TOKEN)
    assert torch.allclose(out, moe.experts[0](S2 * TOKEN), atol=1e-6)
    assert not torch.allclose(out, S2 * moe.experts[0](TOKEN), atol=1e-4)  # the gated FFN is not linear
    out.sum().backward()
    assert moe.router.weight.grad.abs().sum() > 0


def test_softmax_with_router_bias_stays_gpt_oss_s_bias_on_the_logits():
    moe = four_experts("softmax", bias=True)
    assert moe.router.e_score_correction_bias is None and moe.router.bias.shape == (4,)
    with torch.no_grad():
        moe.router.bias.copy_(torch.tensor([0.0, 0.0, 1.5, 0.0]))
    weight, chosen, _ = moe.router.route(TOKEN, 2, True)
    # logits + bias = 2, 1, 1.5, -1: experts 0 and 2, weights e^2 / (e^2 + e^1.5) = 0.622459 and 0.377541.
    assert chosen.tolist() == [[0, 2]]
    assert weight[0].tolist() == pytest.approx([0.622459, 0.377541], abs=1e-6)


CASES = {
    "sigmoid + correction bias": lambda: sigmoid_routed(bias=True),
    "sigmoid (Llama 4)": lambda: sigmoid_routed(bias=False),
    "deepseek-v3 with GQA, 4 layers": lambda: deepseek_gqa(num_layers=4),
    "hf/llama4-scout.json, 4 layers": lambda: {**st.shrink(example("hf/llama4-scout.json")), "num_layers": 4},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_params_equal_smelt_terms(name):
    cfg = CASES[name]()
    got = st.param_terms(st.build_model(cfg, device="meta"))
    assert got == smelt.count(cfg).to_dict()["params"]["terms"]


def test_deepseek_v3_router_by_hand():
    # The first 3 of 5 layers dense, 2 MoE: H*E weights + E correction biases each, 2 * (112*256 + 256) = 57,856
    # (the full 61 layers: 58 * 28,928 = 1,677,824, the 14,848 biases of counting.md section 12.3 at H = 112).
    cfg = deepseek_gqa(num_layers=5)
    got = st.param_terms(st.build_model(cfg, device="meta"))
    assert got["router"] == 2 * (112 * 256 + 256) == 57_856
    assert got == smelt.count(cfg).to_dict()["params"]["terms"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_flops_equal_smelt_per_term(name):
    cfg, t = CASES[name](), 16
    model = st.build_model(cfg, seed=0)
    got, total = measured_flop_terms(model, t)
    fc = smelt.count(cfg, context=t, convention="flop-counter").to_dict()["flops_per_token"]
    own = smelt.count(cfg, context=t).to_dict()["flops_per_token"]["terms"]
    assert total == fc["forward_per_sequence"]
    # The router is one H x E product whatever the score: 2*H*E per MoE visit; the sigmoid, the correction
    # bias and the top-k are elementwise (0 FLOPs on both sides).
    for term in ("attention_qkv", "attention_out", "router", "experts", "shared_experts", "dense_ffn", "lm_head"):
        assert got[term] == fc["terms"][term] == own[term], term
    # Attention: smelt = measured * P / T^2 per visit, P the pairs the layer's mask lets through.
    a = cfg["attention"]
    per_visit = got["attention_core"] / len(model.schedule)
    kinds = [a["pattern"][i % len(a["pattern"])] for i, _ in model.schedule]
    causal = sum(per_visit * int(st.attention_mask(k, t, a["window"], a["chunk"]).sum()) / t**2 for k in kinds)
    assert causal == pytest.approx(own["attention_scores"] + own["attention_values"], rel=1e-12)


def test_llama4_scout_flops_by_hand():
    # Shrunk Scout (f = 64): H = 80, 40 heads and 8 KV heads of 2, 16 experts of 128 (top-1), one shared
    # expert of 128, every layer MoE. Per MoE visit: router 2*80*16 = 2,560; routed 1 * 2*3*80*128 = 61,440;
    # shared the same; 4 visits.
    cfg = CASES["hf/llama4-scout.json, 4 layers"]()
    got, _ = measured_flop_terms(st.build_model(cfg, seed=0), 16)
    assert (got["router"], got["experts"], got["shared_experts"]) == (4 * 2_560, 4 * 61_440, 4 * 61_440)
