"""The routing ``build_model`` takes from a config's ``moe`` fields, which smelt's readers set from a Hugging Face
config: its top-k renormalisation (``norm_topk_prob`` and its kin), the router form of a DeepSeek or Llama 4 config
and gpt-oss's clamped SwiGLU (docs/config.md, section 1.4; docs/reference-model.md, "Routing"). Skipped without
torch.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from conftest import EXAMPLES  # noqa: E402
from torch_support import example  # noqa: E402

# A tiny MoE body for any family's config.json: 2 layers, H = 64, 4 heads, 4 experts of 16, top-2.
TINY = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
        "vocab_size": 128, "intermediate_size": 32, "moe_intermediate_size": 16, "num_experts_per_tok": 2}


def hf(name: str, **change) -> dict:
    d = json.loads((EXAMPLES / "hf" / name).read_text())
    return dict(d, **change)


def renormalised(model: st.ReferenceModel) -> set[bool]:
    return {layer.ffn.renormalize for layer in model.layers if isinstance(layer.ffn, st.MoE)}


@pytest.mark.parametrize(
    "name, change, want",
    [
        # qwen1.5-moe and OLMoE say norm_topk_prob = false, Qwen3 true: transformers' routers follow it.
        ("qwen1.5-moe-a2.7b.json", dict(TINY, num_experts=4, shared_expert_intermediate_size=16), False),
        ("olmoe-1b-7b-0924.json", dict(TINY, num_experts=4), False),
        ("qwen3-30b-a3b.json", dict(TINY, num_experts=4, head_dim=16), True),
        ("qwen3-30b-a3b.json", dict(TINY, num_experts=4, head_dim=16, norm_topk_prob=False), False),
        # Mixtral always renormalises (softmax over the chosen logits).
        ("mixtral-8x7b.json", dict(TINY, num_local_experts=4), True),
    ],
)
def test_an_hf_config_routes_with_its_own_renormalisation(name, change, want):
    d = hf(name, **change)
    assert smelt.read_config(d).to_dict()["moe"].get("renormalize", True) is want  # the native field, as read
    assert renormalised(st.build_model(d, device="meta")) == {want}
    native = smelt.read_config(d).to_dict()
    native["moe"]["renormalize"] = not want  # the config decides, whatever family it came from
    assert renormalised(st.build_model(native, device="meta")) == {not want}


def test_an_hf_path_routes_with_its_own_renormalisation(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(hf("olmoe-1b-7b-0924.json", **TINY, num_experts=4)))
    assert renormalised(st.build_model(path, device="meta")) == {False}
    assert renormalised(st.build_model(str(path), device="meta")) == {False}


def test_a_native_config_renormalises_by_default():
    assert renormalised(st.build_model(smelt.read_config(example("tiny-moe.json")).to_dict(), device="meta")) == {True}


def test_dbrx_without_moe_normalize_expert_weights_renormalises():
    # The released DBRX config.json has no moe_normalize_expert_weights; DbrxFFNConfig's default is 1.0, and
    # transformers divides the top-k weights by their 1-norm: their sum.
    d = hf("dbrx.json")
    assert "moe_normalize_expert_weights" not in d["ffn_config"]
    transformers = pytest.importorskip("transformers")
    assert transformers.DbrxConfig(ffn_config=d["ffn_config"]).ffn_config.moe_normalize_expert_weights == 1.0
    assert renormalised(st.build_model(d, device="meta")) == {True}
    none = dict(d, ffn_config=dict(d["ffn_config"], moe_normalize_expert_weights=None))
    assert renormalised(st.build_model(none, device="meta")) == {False}
    p2 = dict(d, ffn_config=dict(d["ffn_config"], moe_normalize_expert_weights=2.0))
    with pytest.raises(smelt.ConfigError, match=r"ffn_config.moe_normalize_expert_weights = 2: must be 1 .*or null"):
        st.build_model(p2, device="meta")  # smelt's reader refuses what no field can say


DEEPSEEK_V2 = dict(TINY, n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=8,
                   qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, q_lora_rank=None)


def _router_of(model: st.ReferenceModel):
    return next(layer.ffn for layer in model.layers if isinstance(layer.ffn, st.MoE))


def test_deepseek_v2_sigmoid_weighs_the_expert_outputs():
    # A DeepSeek config's sigmoid scores weigh the experts' outputs (DeepseekV3TopkRouter without the
    # correction bias), never Llama 4's inputs: transformers' DeepseekV2 has no sigmoid router at all.
    model = st.build_model(hf("deepseek-v2-lite.json", **DEEPSEEK_V2, scoring_func="sigmoid"), seed=0)
    moe = _router_of(model)
    assert moe.router.e_score_correction_bias is None and moe.router.form == "deepseek"
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(1))
    weight, chosen, on_input = moe.router.route(x, 2, moe.renormalize)
    assert not on_input and not moe.renormalize  # DeepSeek-V2 never renormalises
    top, want = torch.topk(torch.sigmoid(moe.router(x)), 2, dim=-1)
    assert torch.equal(chosen, want) and torch.allclose(weight, top)
    by_hand = torch.stack([
        sum(weight[n, j] * moe.experts[int(chosen[n, j])](x[n]) for j in range(2)) + moe.shared[0](x[n])
        for n in range(3)
    ])
    with torch.no_grad():
        assert torch.allclose(moe(x), by_hand, atol=1e-6)


def test_the_sigmoid_form_of_a_native_config_is_llama4_unless_it_says_deepseek():
    cfg = smelt.read_config(example("tiny-moe.json")).to_dict()
    cfg["moe"]["router_score"] = "sigmoid"
    model = st.build_model(cfg, device="meta")
    assert _router_of(model).router.form == "llama4" and renormalised(model) == {False}
    cfg["moe"]["router_form"] = "deepseek"
    told = st.build_model(cfg, device="meta")
    assert _router_of(told).router.form == "deepseek" and renormalised(told) == {True}
    cfg["moe"]["router_form"] = "v3"
    with pytest.raises(smelt.ConfigError, match=r'moe.router_form = "v3": must be one of plain, deepseek, llama4'):
        st.build_model(cfg, device="meta")


def test_a_gpt_oss_config_clamps_its_experts_and_a_native_one_says_so():
    cfg = hf("gpt-oss-20b.json", **dict(TINY, num_local_experts=4, head_dim=16, experts_per_token=2), swiglu_limit=5.0)
    del cfg["layer_types"]
    model = st.build_model(cfg, device="meta")
    assert {e.clamp for layer in model.layers for e in layer.ffn.experts} == {(1.702, 5.0)}
    native = smelt.read_config(cfg).to_dict()
    assert native["moe"]["clamped_swiglu"] == {"alpha": 1.702, "limit": 5.0}
    del native["moe"]["clamped_swiglu"]
    assert {e.clamp for layer in st.build_model(native, device="meta").layers for e in layer.ffn.experts} == {None}


DEEPSEEK_V3 = dict(DEEPSEEK_V2, q_lora_rank=16, n_group=1, topk_group=1, num_nextn_predict_layers=0)


def test_a_deepseek_v3_correction_bias_only_chooses_whatever_the_score():
    # A deepseek_v3 config with scoring_func "softmax": smelt reads softmax routing with V3's router_bias, the
    # e_score_correction_bias, which DeepSeek adds to the scores for the choice alone; not gpt-oss's bias on the
    # logits, which would move the weights too.
    cfg = hf("deepseek-v3.json", **DEEPSEEK_V3, scoring_func="softmax")
    moe = _router_of(st.build_model(cfg, seed=0))
    r = moe.router
    assert r.score == "softmax" and r.bias is None and not r.e_score_correction_bias.requires_grad
    with torch.no_grad():
        r.e_score_correction_bias.copy_(torch.tensor([0.0, 0.0, 0.0, 1.0]))  # expert 3 always chosen
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(1))
    weight, chosen, on_input = r.route(x, 2, False)
    probs = torch.softmax(r(x), dim=-1)
    assert not on_input and (chosen == 3).any(dim=-1).all()
    assert torch.allclose(weight, probs.gather(-1, chosen))  # the uncorrected probabilities
    got = st.param_terms(st.build_model(cfg, device="meta"))
    assert got == smelt.count(cfg).to_dict()["params"]["terms"]


def test_check_model_of_an_hf_path_builds_the_family_s_router(tmp_path, monkeypatch):
    import smelt.torch._measure as measure_module

    built = []

    def build(*args, **kwargs):
        built.append(st.build_model(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(measure_module, "build_model", build)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(hf("olmoe-1b-7b-0924.json", **TINY, num_experts=4)))
    assert st.measure(path, parts=("params",)).rows[-1].exact
    assert renormalised(built[0]) == {False}  # OLMoE's norm_topk_prob false, as build_model(path) reads it
