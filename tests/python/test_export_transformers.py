"""Every `smelt-match export --to hf` file builds with transformers' own class, and stores what smelt counts.

For each family smelt writes, and for every real config in examples/hf/, the exported config.json is given to
`AutoConfig.for_model` and `AutoModelForCausalLM.from_config` on the meta device (no memory, any size), and the
model's stored tensors (its state_dict, each shared tensor once) are added up: they must equal smelt's
`params.total` for the same file, to the parameter. The oracle is transformers' modeling code, not smelt's
reading of it. Skipped where transformers or torch is not installed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, cli_path

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = ROOT / "tests" / "data" / "transformers"

# One tiny config per family smelt exports (tests/transformers/make_hf_data.py wrote them with transformers'
# own classes), each exported in its own family.
FAMILY_INPUTS = {
    "dbrx": TINY / "dbrx_float32.json",
    "deepseek_v2": TINY / "deepseek_v2_lite.json",
    "deepseek_v3": TINY / "deepseek_v3.json",
    "gpt_oss": TINY / "gpt_oss.json",
    "llama": TINY / "llama_tied_bias.json",
    "llama4": TINY / "llama4_wrapper_text_tied.json",
    "llama4_text": TINY / "llama4_text.json",
    "mistral": TINY / "mistral_sliding.json",
    "mixtral": TINY / "mixtral_sliding_tied.json",
    "olmoe": TINY / "olmoe.json",
    "qwen2": TINY / "qwen2_sliding.json",
    "qwen2_moe": TINY / "qwen2_moe.json",
    "qwen3": TINY / "qwen3_sliding_bias.json",
    "qwen3_moe": TINY / "qwen3_moe_step2_tied.json",
}

# Ouro's, Huginn's and Nanbeige's modeling code is the Hub's remote code, not a transformers class: their configs
# are proven in test_torch_loops.py and tests/unit/config/hf_looped_test.cpp instead.
REAL = sorted(p for p in (EXAMPLES / "hf").glob("*.json") if not p.name.startswith(("ouro", "huginn", "nanbeige")))
# smelt's own configs, exported in the first family that expresses each (examples/tiny-moe.json has none).
NATIVE = [EXAMPLES / "smelt-baseline-54b.json", EXAMPLES / "smelt-looped-12l.json", EXAMPLES / "deepseek-v3-mla.json"]


def run(*args: str) -> str:
    done = subprocess.run([str(cli_path()), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def exported(path: Path, tmp_path: Path, family: str | None = None) -> tuple[dict, int]:
    """The exported config.json and smelt's params.total for it."""
    out = tmp_path / "config.json"
    run("export", str(path), "--to", "hf", *(["--family", family] if family else []), "--out", str(out))
    total = json.loads(run("count", str(out), "--json"))["params"]["total"]
    return json.loads(out.read_text()), total


def stored_tensors(config: dict) -> int:
    """Elements in the state_dict of the model transformers builds from `config`, each tensor once."""
    built = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(built)
    if hasattr(model, "vision_model"):  # Llama 4's wrapper: the language model is what smelt counts
        model = model.language_model
    seen: dict[int, int] = {}
    for tensor in model.state_dict(keep_vars=True).values():
        seen[id(tensor)] = tensor.numel()
    return sum(seen.values())


@pytest.mark.parametrize("family", sorted(FAMILY_INPUTS))
def test_each_family_builds_what_smelt_counts(family, tmp_path):
    config, total = exported(FAMILY_INPUTS[family], tmp_path, family)
    assert config["model_type"] == family
    assert stored_tensors(config) == total


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_each_real_config_builds_what_smelt_counts(path, tmp_path):
    config, total = exported(path, tmp_path)
    assert stored_tensors(config) == total


@pytest.mark.parametrize("path", NATIVE, ids=lambda p: p.name)
def test_native_configs_build_what_smelt_counts(path, tmp_path):
    config, total = exported(path, tmp_path)
    assert stored_tensors(config) == total


def test_dbrx_carries_the_rope_theta_transformers_needs(tmp_path):
    # DbrxConfig reads attn_config.rope_theta and has no default for it in transformers 5: without the key,
    # AutoConfig.for_model fails ("'DbrxAttentionConfig' object has no attribute 'rope_theta'").
    config, total = exported(EXAMPLES / "hf" / "dbrx.json", tmp_path)
    assert config["attn_config"]["rope_theta"] == 10000.0
    # DBRX 132B: smelt's count, which transformers' DbrxForCausalLM stores tensor for tensor.
    assert stored_tensors(config) == total == 131_596_523_520
