"""The reference PyTorch model (smelt.torch) against smelt's counts, term by term.

Parameters: sum(p.numel()) per smelt term equals smelt.count(cfg).params.terms
exactly, for every example config the model builds (shrunk to tiny sizes by
smelt.torch.shrink, the rule in docs/reference-model.md, and cut to their leading
dense layers and two periods of their layer pattern) and a looped config
from smelt.derive. FLOPs: FlopCounterMode on a forward of T tokens equals
smelt's flop-counter convention per term, and smelt's own (causal) attention
terms after the (T + 1) / (2T) conversion. Skipped where torch is missing.
"""

from __future__ import annotations

import glob
import os

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_support import (  # noqa: E402
    check_forward_flops,
    check_training_flops,
    derived_looped,
    example,
    fewer_layers,
    mixed,
)

# Every example config: the model builds each of them.
BUILT = [
    "tiny-moe.json",
    "mixtral-8x7b.json",
    "smelt-baseline-12l.json",
    "smelt-looped-12l.json",
    "smelt-baseline-54b.json",
    "bench-moe-2048.json",
    "bench-moe-2048-smelt.json",
    "hf/llama-3.1-8b.json",
    "hf/mixtral-8x7b.json",
    "hf/qwen1.5-moe-a2.7b.json",
    "hf/qwen3-30b-a3b.json",
    "hf/olmoe-1b-7b-0924.json",
    "hf/ouro-1.4b.json",
    "hf/ouro-2.6b.json",
    "hf/nanbeige4.2-3b.json",
    "hf/dbrx.json",
    "hf/gpt-oss-20b.json",
    "hf/gpt-oss-120b.json",
    "hf/huginn-0125.json",
    "hf/deepseek-v2-lite.json",
    "hf/llama4-scout.json",
    "hf/llama4-maverick.json",
    "deepseek-v3-mla.json",
    "hf/deepseek-v3.json",
]
def test_every_example_is_listed():
    names = {os.path.relpath(p, example("")) for p in glob.glob(example("*.json")) + glob.glob(example("hf/*.json"))}
    assert names == set(BUILT)


def check_params(cfg: dict) -> dict:
    got = st.param_terms(st.build_model(cfg, device="meta"))
    want = smelt.count(cfg).to_dict()["params"]["terms"]
    assert got == want
    return got


@pytest.mark.parametrize("name", BUILT)
def test_params_equal_smelt_terms(name):
    cfg = fewer_layers(st.shrink(example(name)))
    assert cfg["hidden_size"] <= 128 and cfg["vocab_size"] <= 1024
    check_params(cfg)


def test_a_full_size_config_builds_on_the_meta_device():
    # docs/reference-model.md: DBRX at full size, 40 layers of 16 experts, nothing allocated; from its
    # config.json path, so build_model reads the Hugging Face routing too.
    model = st.build_model(example("hf/dbrx.json"), device="meta")
    assert sum(st.param_terms(model).values()) == 131_596_523_520
    assert st.param_terms(model) == smelt.count(example("hf/dbrx.json")).to_dict()["params"]["terms"]


def test_params_of_a_derived_looped_config_count_the_span_once():
    cfg = derived_looped()
    assert smelt.count(cfg).to_dict()["layers_executed"] == 18
    got = check_params(cfg)
    # The solver's pick: H = 64, 1 head and 1 KV head of 32, 280 experts of 16 (top-8), V = 1024.
    # 12 stored layers, not 18 executed: attention 12 * (64*(32 + 2*32) + 32*64) = 12 * 8,192;
    # experts 12 * 280 * 3*64*16 = 10,321,920; norms 12*2*64 + 64 = 1,600.
    assert (cfg["hidden_size"], cfg["attention"]["num_heads"], cfg["moe"]["num_experts"]) == (64, 1, 280)
    assert got["attention"] == 98_304
    assert got["experts"] == 10_321_920
    assert got["norms"] == 1_600


def test_params_of_the_mixed_switches():
    check_params(mixed())


def test_tiny_moe_by_hand():
    # examples/tiny-moe.json: V = 1000, H = 64, 4 layers (layer 1 dense), 4/2 heads of 16,
    # 8 experts of 32 (top-2), one shared of 32, dense 128; docs/counting.md section 10.
    got = st.param_terms(st.build_model(example("tiny-moe.json"), device="meta"))
    assert got == {
        "embedding": 64_000,  # 1000*64
        "lm_head": 64_000,
        "attention": 49_152,  # 4 * (64*(64 + 2*32) + 64*64)
        "norms": 576,  # 4*2*64 + 64
        "router": 1_536,  # 3 MoE layers * 64*8
        "experts": 147_456,  # 3 * 8 * 3*64*32
        "shared_experts": 18_432,  # 3 * 3*64*32
        "dense_ffn": 24_576,  # 3*64*128
        "loop_extras": 0,  # no exit gate
    }


def test_forward_shape_and_looped_layers_are_the_same_objects():
    model = st.build_model(example("tiny-moe.json"), seed=1)
    # span "2-3" twice: layers 1, 2, 3, 2, 3, 4 (1-based), the looped visits scaled by 0.5.
    assert model.schedule == [(0, 1.0), (1, 0.5), (2, 0.5), (1, 0.5), (2, 0.5), (3, 1.0)]
    visits = [model.layers[i] for i, _ in model.schedule]
    assert visits[1] is visits[3] and visits[2] is visits[4]
    assert len(model.layers) == 4
    logits = model(torch.randint(0, 1000, (2, 8))).logits
    assert logits.shape == (2, 8, 1000)
    assert torch.isfinite(logits).all()


def test_seeded_init_is_reproducible():
    a = st.build_model(example("tiny-moe.json"), seed=3)
    b = st.build_model(example("tiny-moe.json"), seed=3)
    c = st.build_model(example("tiny-moe.json"), seed=4)
    tokens = torch.arange(8)[None, :]
    assert torch.equal(a(tokens).logits, b(tokens).logits)
    assert not torch.equal(a(tokens).logits, c(tokens).logits)


FLOP_CASES = ["tiny-moe.json", "hf/qwen1.5-moe-a2.7b.json", "hf/gpt-oss-20b.json", "derived", "mixed"]


@pytest.mark.parametrize("name", FLOP_CASES)
def test_forward_flops_equal_smelt_per_term(name):
    cfg = {"derived": derived_looped, "mixed": mixed}.get(name, lambda: st.shrink(example(name)))()
    if name == "hf/gpt-oss-20b.json":
        cfg["num_layers"] = 4  # 2 sliding + 2 full layers keep the test short; its pattern repeats
    t = 16
    _, got = check_forward_flops(cfg, t)
    # For all-full configs every visit lets P = T(T + 1)/2 pairs through: smelt = measured * (T + 1)/(2T).
    own_all = smelt.count(cfg, context=t).to_dict()["flops_per_token"]
    own = own_all["terms"]
    if set(cfg["attention"]["pattern"]) == {"full"}:
        assert got["attention_core"] * (t + 1) / (2 * t) == own["attention_scores"] + own["attention_values"]
    # The worked examples of docs/reference-model.md ("FlopCounterMode against smelt", "Measured agreement"):
    if name == "tiny-moe.json":  # 6 visits of 2 * 2*64*16 measured; x 17/32 on smelt's convention
        assert got["attention_core"] == 6 * 2 * 2 * 64 * 16 == 24_576
        assert own["attention_scores"] + own["attention_values"] == 13_056
        assert own_all["forward"] == 527_104 and 527_104 + 24_576 - 13_056 == 538_624 == 8_617_984 // 16
    if name == "hf/gpt-oss-20b.json":  # per visit 2*2*128*16 measured; sliding W = 8 lets P = 100 pairs through
        assert got["attention_core"] == 4 * 8_192
        assert own["attention_scores"] + own["attention_values"] == 2 * 8_192 * (100 + 136) / 256 == 15_104


def test_shrink_by_hand():
    # Mixtral-8x7B: H = 4096 -> f = 32; head_dim 128/32 = 4, expert width 14336/32 = 448,
    # vocabulary 32000/32 = 1000; 32 heads, 8 KV heads, 8 experts top-2, 32 layers kept.
    c = st.shrink(example("mixtral-8x7b.json"))
    a, m = c["attention"], c["moe"]
    assert (c["hidden_size"], c["vocab_size"], c["num_layers"], c["context_length"]) == (128, 1000, 32, 32)
    assert (a["num_heads"], a["num_kv_heads"], a["head_dim"]) == (32, 8, 4)
    assert (m["num_experts"], m["top_k"], m["expert_width"]) == (8, 2, 448)


@pytest.mark.parametrize("name", ["tiny-moe.json", "derived", "mixed"])
def test_forward_and_backward_flops_are_smelt_s_training_convention(name):
    # Backward multiplies two matrices of each forward product's size (input and weight gradients:
    # counting.md, section 2), so forward + backward = 3 x forward under FlopCounterMode, the looped
    # layers once per visit in both directions; smelt's training = 3 x (forward + mtp), mtp = 0 here.
    cfg = {"derived": derived_looped, "mixed": mixed}.get(name, lambda: st.shrink(example(name)))()
    model = check_training_flops(cfg, t=16)
    own = smelt.count(cfg, context=16).to_dict()["flops_per_token"]
    assert own["training"] == 3 * own["forward"]
    # The looped layers' weights collect gradient from every visit.
    for i, _ in model.schedule:
        assert model.layers[i].attn.q_proj.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("name", ["tiny-moe.json", "hf/gpt-oss-20b.json", "derived", "mixed"])
def test_the_prefill_cache_holds_smelt_s_kv_elements(name):
    # counting.md, section 7: one (K, V) slot per attention visit (a looped layer caches on every visit),
    # 2 * n_kv * d elements per token held, T tokens on full layers, min(W, T) sliding, min(C, T) chunked.
    cfg = {"derived": derived_looped, "mixed": mixed}.get(name, lambda: st.shrink(example(name)))()
    t = 16
    model = st.build_model(cfg, seed=0)
    cache: list = []
    model(torch.randint(0, cfg["vocab_size"], (1, t)), cache=cache)
    assert len(cache) == len(model.schedule)
    elements = sum(k.numel() + v.numel() for k, v in cache)
    kv = smelt.count(cfg, context=t).to_dict()["kv_cache"]
    assert elements * kv["element_bytes"] == kv["bytes_at_context"]
    if name == "tiny-moe.json":
        assert elements == 6 * 2 * 2 * 16 * 16  # 6 visits x (K, V) x 2 KV heads x 16 x 16 tokens
