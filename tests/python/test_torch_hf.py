"""The reference model against Hugging Face transformers' own model classes (docs/reference-model.md).

For each family smelt imports: a tiny config made with transformers' config class, its model (eager attention,
float64, eval) with seeded random weights, the config imported by ``smelt.read_config``, ``build_model`` of it,
the weights copied by ``load_hf_state_dict``, and the logits of one forward of T = 12 tokens compared.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
if not transformers.utils.is_torch_available():
    pytest.skip(f"transformers {transformers.__version__} cannot use torch {torch.__version__}",
                allow_module_level=True)

from torch.overrides import TorchFunctionMode  # noqa: E402

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from smelt.torch._hf_weights import load_hf_state_dict  # noqa: E402

T = 12
ATOL = 1e-10
# Neutral values: RoPE theta as smelt.torch's, default (unscaled) RoPE, RMSNorm eps as smelt.torch's.
NEUTRAL = dict(
    vocab_size=128,
    max_position_embeddings=64,
    rope_parameters=dict(rope_type="default", rope_theta=10000.0),
    rms_norm_eps=1e-6,
)
ATTN = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
MLA = dict(kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, num_key_value_heads=4)
DS = dict(NEUTRAL, **dict(ATTN, **MLA), intermediate_size=96, moe_intermediate_size=32, n_routed_experts=6)
DS.update(num_experts_per_tok=2, first_k_dense_replace=1, n_group=1, topk_group=1, routed_scaling_factor=1.0)

CASES = {
    "llama": ("LlamaConfig", dict(NEUTRAL, **ATTN, intermediate_size=96)),
    "llama_mqa_bias_tied": ("LlamaConfig", dict(
        NEUTRAL, **dict(ATTN, num_key_value_heads=1), intermediate_size=96, attention_bias=True, mlp_bias=True,
        tie_word_embeddings=True)),
    "mistral_sliding": ("MistralConfig", dict(NEUTRAL, **ATTN, head_dim=8, intermediate_size=96, sliding_window=4)),
    "qwen2_sliding": ("Qwen2Config", dict(
        NEUTRAL, **ATTN, intermediate_size=96, use_sliding_window=True, sliding_window=4, max_window_layers=1)),
    "qwen3": ("Qwen3Config", dict(NEUTRAL, **ATTN, head_dim=16, intermediate_size=96, attention_bias=True)),
    "mixtral_sliding_tied": ("MixtralConfig", dict(
        NEUTRAL, **ATTN, intermediate_size=48, num_local_experts=4, num_experts_per_tok=2, sliding_window=4,
        tie_word_embeddings=True)),
    "mixtral": ("MixtralConfig", dict(
        NEUTRAL, **ATTN, intermediate_size=48, num_local_experts=4, num_experts_per_tok=2)),
    "qwen2_moe": ("Qwen2MoeConfig", dict(
        NEUTRAL, **ATTN, intermediate_size=96, moe_intermediate_size=32, shared_expert_intermediate_size=48,
        num_experts=4, num_experts_per_tok=2)),
    "qwen2_moe_norm_topk": ("Qwen2MoeConfig", dict(
        NEUTRAL, **ATTN, intermediate_size=96, moe_intermediate_size=32, shared_expert_intermediate_size=48,
        num_experts=4, num_experts_per_tok=2, norm_topk_prob=True, mlp_only_layers=[0])),
    "qwen3_moe": ("Qwen3MoeConfig", dict(
        NEUTRAL, **ATTN, head_dim=16, intermediate_size=96, moe_intermediate_size=32, num_experts=4,
        num_experts_per_tok=2, norm_topk_prob=True)),
    "olmoe": ("OlmoeConfig", dict(NEUTRAL, **ATTN, intermediate_size=32, num_experts=4, num_experts_per_tok=2)),
    "deepseek_v2_lite": ("DeepseekV2Config", dict(DS, q_lora_rank=None, n_shared_experts=2, topk_method="greedy")),
    # transformers builds no MTP module: none here either.
    "deepseek_v3": ("DeepseekV3Config", dict(DS, q_lora_rank=24, n_shared_experts=1, num_nextn_predict_layers=0)),
    "deepseek_v3_rotate_half": ("DeepseekV3Config", dict(
        DS, q_lora_rank=None, n_shared_experts=2, num_nextn_predict_layers=0, rope_interleave=False)),
    "olmoe_bias_tied": ("OlmoeConfig", dict(
        NEUTRAL, **ATTN, intermediate_size=32, num_experts=4, num_experts_per_tok=2, attention_bias=True,
        tie_word_embeddings=True)),
    "gpt_oss": ("GptOssConfig", dict(
        NEUTRAL, **ATTN, head_dim=16, intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
        sliding_window=4)),
    # NoPE layers, the L2 q/k norm and temperature tuning switched off (docs/reference-model.md): RoPE everywhere,
    # chunked attention of 4 on every layer.
    "llama4_text": ("Llama4TextConfig", dict(
        NEUTRAL, **ATTN, head_dim=16, intermediate_size=32, intermediate_size_mlp=96, num_local_experts=4,
        num_experts_per_tok=1, attention_chunk_size=4, no_rope_layers=[1, 1], use_qk_norm=False,
        attn_temperature_tuning=False, interleave_moe_layer_step=2)),
}


class Float64(TorchFunctionMode):
    """Every float32 the forward asks for becomes float64: transformers upcasts RMSNorm, softmax, RoPE and some
    routers to float32 (a guard for half precision), which would round a float64 model to 1e-7. Nothing else
    changes: the same operations run, in float64."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = {k: (torch.float64 if v is torch.float32 else v) for k, v in (kwargs or {}).items()}
        args = tuple(torch.float64 if a is torch.float32 else a for a in args)
        if func is torch.Tensor.float:
            func = torch.Tensor.double
        return func(*args, **kwargs)


def _randomise(model, seed: int) -> None:
    """Seeded weights large enough that every tensor moves the logits: matrices N(0, 0.15^2), biases, sinks and
    DeepSeek-V3's correction bias N(0, 0.1^2), norm weights 1 + N(0, 0.1^2)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.state_dict().items():
            noise = torch.randn(t.shape, generator=g, dtype=torch.float64)
            if "norm" in name and t.dim() == 1:
                t.copy_(1 + 0.1 * noise)
            elif t.dim() == 1:
                t.copy_(0.1 * noise)
            else:
                t.copy_(0.15 * noise)


def _pair(case: str, change: dict | None = None, renormalize: bool | None = None, clamp: bool = True,
          loader: dict | None = None):
    """(transformers model, reference model with its weights) for ``case``; the keywords make one of the
    differences the comparison must see: ``change`` the transformers config, ``renormalize`` and ``clamp`` the
    reference model's routing and gpt-oss activation (its native config's fields changed from what smelt reads
    from the family's), ``loader`` keys of the config the loader is given."""
    cls, kwargs = CASES[case]
    cfg = getattr(transformers, cls)(**dict(kwargs, **(change or {})))
    hf = transformers.AutoModelForCausalLM.from_config(
        cfg, attn_implementation="eager", experts_implementation="eager"
    ).double().eval()
    _randomise(hf, seed=0)
    d = cfg.to_dict()
    # smelt reads the family's routing into the native config (moe.renormalize, router_form, clamped_swiglu)
    native = smelt.read_config(d).to_dict()
    if renormalize is not None:
        native["moe"]["renormalize"] = renormalize
    if not clamp:
        del native["moe"]["clamped_swiglu"]
    ref = st.build_model(native).double().eval()
    load_hf_state_dict(ref, hf.state_dict(), dict(d, **(loader or {})))
    return hf, ref


def _max_diff(case: str, float64: bool = True, **how) -> float:
    hf, ref = _pair(case, **how)
    tokens = torch.randint(0, 128, (2, T), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        with Float64() if float64 else torch.no_grad():
            want = hf(input_ids=tokens).logits
        got = ref(tokens).logits
    assert want.dtype == got.dtype == torch.float64
    assert want.abs().max() > 0.1  # the logits are not near zero, so the comparison means something
    return (want - got).abs().max().item()


@pytest.mark.parametrize("case", list(CASES))
def test_logits_equal_transformers(case):
    diff = _max_diff(case)
    assert diff < ATOL, f"{case}: max |logits diff| = {diff:.3e}"


# Each real difference, made on purpose, moves the logits far beyond ATOL: the comparison can fail.
DIFFERENCES = {
    "gpt-oss experts with plain SwiGLU": ("gpt_oss", dict(clamp=False), 0.1),
    "DeepSeek-V3's interleaved RoPE rows not permuted": ("deepseek_v3", dict(loader=dict(rope_interleave=False)), 0.1),
    "Qwen2-MoE renormalised against norm_topk_prob false": ("qwen2_moe", dict(renormalize=True), 0.1),
    "Qwen2-MoE not renormalised against norm_topk_prob true": ("qwen2_moe_norm_topk", dict(renormalize=False), 0.1),
    "Mixtral not renormalised": ("mixtral", dict(renormalize=False), 0.1),
    "DeepSeek-V2's routed_scaling_factor 2": ("deepseek_v2_lite", dict(change=dict(routed_scaling_factor=2.0)), 0.1),
    "Llama 4's L2 q/k norm on": ("llama4_text", dict(change=dict(use_qk_norm=True)), 0.1),
    "Llama 4's NoPE layer": ("llama4_text", dict(change=dict(no_rope_layers=[1, 0])), 0.1),
    # transformers' float32 upcasts, left on, round a float64 model to float32's precision: why Float64 exists
    "transformers' float32 upcasts": ("llama", dict(float64=False), 1e-8),
}


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_a_real_difference_is_seen(name):
    case, how, at_least = DIFFERENCES[name]
    diff = _max_diff(case, **how)
    assert diff > at_least, f"{name}: max |logits diff| = {diff:.3e}"


def test_loader_refuses_what_it_cannot_place():
    hf, ref = _pair("mixtral")
    sd, d = hf.state_dict(), hf.config.to_dict()
    with pytest.raises(ValueError, match=r"^transformers tensor 'model.layers.0.extra.weight': no reference tensor"):
        load_hf_state_dict(ref, dict(sd, **{"model.layers.0.extra.weight": torch.zeros(2)}), d)
    gone = {k: v for k, v in sd.items() if k != "model.layers.1.self_attn.k_proj.weight"}
    with pytest.raises(ValueError, match=r"^reference tensors that no transformers tensor fills: layers.1.attn.k_proj"):
        load_hf_state_dict(ref, gone, d)
    cut = dict(sd, **{"model.norm.weight": sd["model.norm.weight"][:63]})
    with pytest.raises(ValueError, match=r"^'final_norm.weight': transformers shape \(63,\), reference shape \(64,\)$"):
        load_hf_state_dict(ref, cut, d)
