"""`smelt-match export --to megatron` against Megatron's own code (megatron-core 0.14.0, CPU, torch alone).

Megatron-LM's argument parser (megatron/training/arguments.py) ships in no pip package, so `megatron_config`
below reads the exported lines as its parser and `core_transformer_config_from_args` would for the flags smelt
writes (defaults as arguments.py has them: learned absolute positions, tied embeddings). Megatron's own code
then judges the result: `TransformerConfig.__post_init__` (its checks) and `GPTModel` (the parameters it
builds, counted and compared with smelt's). Skipped where megatron-core is not installed.

megatron-core 0.14.0 is the newest release whose requirements admit torch 2.5.1; it predates gpt-oss's support
(biases in MoE layers, learnable softmax), so the gpt-oss check builds its router arguments alone.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, cli_path

torch = pytest.importorskip("torch")
pytest.importorskip("megatron.core")
from megatron.core.transformer.transformer_config import MLATransformerConfig, TransformerConfig  # noqa: E402

TINY = ROOT / "tests" / "data" / "transformers"


def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(cli_path()), *args], capture_output=True, text=True, cwd=ROOT)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def exported_args(path: Path) -> dict[str, str]:
    """The exported arguments, flag to value ("" for a switch); comments dropped as `grep -v '^#'` drops them."""
    lines = [line for line in run("export", str(path), "--to", "megatron").stdout.splitlines()]
    out: dict[str, str] = {}
    for line in lines:
        if line.startswith("#"):
            continue
        flag, _, value = line.partition(" ")
        out[flag] = value
    return out


def megatron_config(a: dict[str, str], router_only: bool = False):
    """TransformerConfig (MLATransformerConfig with --multi-latent-attention) and GPTModel's keyword arguments."""
    kw = dict(
        num_layers=int(a["--num-layers"]),
        hidden_size=int(a["--hidden-size"]),
        num_attention_heads=int(a["--num-attention-heads"]),
        use_cpu_initialization=True,
    )
    if "--num-experts" in a:
        kw.update(
            num_moe_experts=int(a["--num-experts"]),
            moe_router_topk=int(a["--moe-router-topk"]),
            moe_router_score_function=a["--moe-router-score-function"],
            moe_router_enable_expert_bias="--moe-router-enable-expert-bias" in a,
        )
    if router_only:  # 0.14.0 asserts "Bias is not supported for MoE", a limit later releases lift
        return TransformerConfig(add_bias_linear=False, **kw), {}
    kw.update(
        kv_channels=int(a["--kv-channels"]),
        ffn_hidden_size=int(a["--ffn-hidden-size"]),
        normalization=a["--normalization"],
        add_bias_linear="--disable-bias-linear" not in a,
        add_qkv_bias="--add-qkv-bias" in a,
        qk_layernorm="--qk-layernorm" in a,
        gated_linear_unit="--swiglu" in a,
    )
    if "--swiglu" in a:
        kw["activation_func"] = torch.nn.functional.silu
    if "--group-query-attention" in a:
        kw["num_query_groups"] = int(a["--num-query-groups"])
    if "--num-experts" in a:
        kw["moe_ffn_hidden_size"] = int(a["--moe-ffn-hidden-size"])
        freq = a["--moe-layer-freq"]
        kw["moe_layer_freq"] = ast.literal_eval(freq)
        if "--moe-shared-expert-intermediate-size" in a:
            kw["moe_shared_expert_intermediate_size"] = int(a["--moe-shared-expert-intermediate-size"])
    if "--mtp-num-layers" in a:
        kw["mtp_num_layers"] = int(a["--mtp-num-layers"])
    if "--multi-latent-attention" in a:
        kw.update(
            multi_latent_attention=True,
            q_lora_rank=int(a["--q-lora-rank"]) if "--q-lora-rank" in a else None,
            kv_lora_rank=int(a["--kv-lora-rank"]),
            qk_head_dim=int(a["--qk-head-dim"]),
            qk_pos_emb_head_dim=int(a["--qk-pos-emb-head-dim"]),
            v_head_dim=int(a["--v-head-dim"]),
        )
        config = MLATransformerConfig(**kw)
    else:
        config = TransformerConfig(**kw)
    model = dict(
        max_sequence_length=int(a["--max-position-embeddings"]),
        position_embedding_type=a.get("--position-embedding-type", "learned_absolute"),  # arguments.py's default
        share_embeddings_and_output_weights="--untie-embeddings-and-output-weights" not in a,
    )
    return config, model


@pytest.fixture(scope="module")
def model_parallel():
    """Megatron's one-process model-parallel state on the CPU (gloo, loopback only)."""
    from megatron.core import parallel_state

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("gloo", world_size=1, rank=0)
    parallel_state.initialize_model_parallel()
    yield
    parallel_state.destroy_model_parallel()


def build_gpt(config, model_kw: dict, vocab: int):
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec, get_gpt_mtp_block_spec

    # The per-layer spec (dense or MoE by moe_layer_freq), Megatron's own local (non-Transformer-Engine) modules.
    spec = get_gpt_decoder_block_spec(config, use_transformer_engine=False, normalization=config.normalization)
    layer = spec.layer_specs[-1]
    mtp = get_gpt_mtp_block_spec(config, layer, use_transformer_engine=False) if config.mtp_num_layers else None
    return GPTModel(config, spec, vocab_size=vocab, mtp_block_spec=mtp, **model_kw)


def stored(model) -> int:
    """Parameters and persistent buffers (the expert bias is one), each tensor once."""
    seen = {}
    for name, t in model.state_dict(keep_vars=True).items():
        if isinstance(t, torch.Tensor) and not name.endswith("_extra_state"):
            seen[id(t)] = t.numel()
    return sum(seen.values())


def smelt_params(path: Path) -> dict:
    return json.loads(run("count", str(path), "--json").stdout)["params"]


# Finding 1: gpt-oss's softmax router with an expert bias, which TransformerConfig refuses.


def test_gpt_oss_router_arguments_pass_transformer_config():
    a = exported_args(EXAMPLES / "hf" / "gpt-oss-20b.json")
    assert a["--moe-router-score-function"] == "softmax"
    assert "--moe-router-enable-expert-bias" not in a  # the router linear's bias (add_bias_linear) carries it
    assert "--disable-bias-linear" not in a
    config, _ = megatron_config(a, router_only=True)
    assert config.moe_router_enable_expert_bias is False


def test_transformer_config_refuses_what_the_export_used_to_write():
    # The pair the export wrote before: the check it now passes is Megatron's, and it fires.
    a = dict(exported_args(EXAMPLES / "hf" / "gpt-oss-20b.json"), **{"--moe-router-enable-expert-bias": ""})
    with pytest.raises(ValueError, match="Expert bias for aux-loss-free routing only supports sigmoid"):
        megatron_config(a, router_only=True)


@pytest.mark.parametrize(
    "path",
    [EXAMPLES / "hf" / "deepseek-v3.json", EXAMPLES / "hf" / "qwen3-30b-a3b.json", EXAMPLES / "hf" / "mixtral-8x7b.json",
     EXAMPLES / "smelt-baseline-54b.json", EXAMPLES / "deepseek-v3-mla.json"],
    ids=lambda p: p.name,
)
def test_full_arguments_pass_transformer_config(path):
    config, model = megatron_config(exported_args(path))
    assert model["position_embedding_type"] == "rope"
    if "deepseek-v3" in path.name:
        assert config.moe_router_score_function == "sigmoid" and config.moe_router_enable_expert_bias


# Finding 2: the position embedding. Megatron builds the model from the arguments; its parameters are smelt's.


@pytest.mark.parametrize(
    "path",
    [TINY / "deepseek_v3.json", TINY / "qwen3_moe.json", TINY / "mixtral.json", TINY / "llama.json",
     EXAMPLES / "tiny-moe.json"],
    ids=lambda p: p.name,
)
def test_gpt_model_builds_what_smelt_counts(path, model_parallel):
    a = exported_args(path)
    if "--multi-latent-attention" in a and not torch.cuda.is_available():
        pytest.skip("megatron-core 0.14.0 builds MLA's rotary embedding on a CUDA device")
    config, model_kw = megatron_config(a)
    params = smelt_params(path)
    vocab = params["terms"]["embedding"] // config.hidden_size
    model = build_gpt(config, model_kw, vocab)
    # Megatron's MTP modules are part of its model; smelt counts them apart (params.mtp).
    assert stored(model) == params["total"] + params["mtp"]


def test_without_rope_megatron_adds_a_position_table(model_parallel):
    # What the arguments built before: Megatron's default learned absolute positions, a
    # max_position_embeddings x hidden table that smelt's models do not have.
    path = TINY / "qwen3_moe.json"
    a = exported_args(path)
    a.pop("--position-embedding-type")
    config, model_kw = megatron_config(a)
    params = smelt_params(path)
    vocab = params["terms"]["embedding"] // config.hidden_size
    extra = int(a["--max-position-embeddings"]) * config.hidden_size
    assert stored(build_gpt(config, model_kw, vocab)) == params["total"] + extra
