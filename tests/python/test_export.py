"""smelt.export_hf and smelt.export_megatron write what `smelt-match export` writes, byte for byte."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import smelt

from conftest import EXAMPLES, cli_path

CASES = [
    EXAMPLES / "smelt-baseline-54b.json",
    EXAMPLES / "smelt-looped-12l.json",
    EXAMPLES / "mixtral-8x7b.json",
    EXAMPLES / "deepseek-v3-mla.json",
    EXAMPLES / "hf" / "qwen3-30b-a3b.json",
]


def cli_export(path: Path, target: str) -> str:
    done = subprocess.run([str(cli_path()), "export", str(path), "--to", target], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_hf_export_is_the_clis(path):
    assert smelt.export_hf(path) == cli_export(path, "hf")


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_megatron_export_is_the_clis(path):
    assert smelt.export_megatron(path).text() == cli_export(path, "megatron")


def test_megatron_sets_kv_channels_and_the_expert_width_explicitly():
    # examples/smelt-baseline-54b.json: 24 heads of 96 (H 2304 / 24 = 96 too, but set anyway), experts of 768.
    a = dict(smelt.export_megatron(EXAMPLES / "smelt-baseline-54b.json").arguments)
    assert a["--num-layers"] == "30"
    assert a["--hidden-size"] == "2304"
    assert a["--kv-channels"] == "96"
    assert a["--moe-ffn-hidden-size"] == "768"
    assert a["--num-experts"] == "336"


def test_a_derived_config_exports_with_its_loop_and_reads_back():
    derived = smelt.derive(EXAMPLES / "smelt-baseline-54b.json").best_config
    text = smelt.export_hf(derived, family="mixtral")
    loop = json.loads(text)["loop"]
    # Middle half of 30 layers looped twice: layers 8-22 (1-based), residual scale 1/2.
    assert (loop["first_layer"], loop["last_layer"], loop["count"], loop["residual_scale"]) == (8, 22, 2, 0.5)
    back = smelt.read_config(json.loads(text))
    assert smelt.count(back).to_dict()["params"] == smelt.count(derived).to_dict()["params"]
    notes = smelt.export_megatron(derived).comments
    assert any("loop" in c for c in notes)


def test_what_a_family_cannot_express_is_a_config_error():
    with pytest.raises(smelt.ConfigError) as e:
        smelt.export_hf(EXAMPLES / "deepseek-v3-mla.json", family="mixtral")
    assert 'attention.type = "mla": the Hugging Face mixtral schema cannot express it' in str(e.value)
