"""smelt.read_config and smelt.count against the CLI's `count --json`, and the report's typed access."""

from __future__ import annotations

import json
import subprocess

import pytest

import smelt
from conftest import EXAMPLES, ROOT, cli_json, cli_path, same_bytes

CONFIGS = sorted(
    str(p.relative_to(ROOT))
    for p in [*EXAMPLES.glob("*.json"), *EXAMPLES.glob("hf/*.json"), *EXAMPLES.glob("paper/*.json")]
)


def test_every_example_config_is_counted() -> None:
    # 8 top-level examples, 12 Hugging Face configs, 32 paper Baselines.
    assert len(CONFIGS) >= 50


@pytest.mark.parametrize("path", CONFIGS)
def test_count_equals_the_cli_json_byte_for_byte(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the CLI names an unnamed config by the path as given
    same_bytes(smelt.count(path).to_dict(), cli_json("count", "--json", path))


@pytest.mark.parametrize(
    "convention, context", [("megatron", 8192), ("torchtitan", None), ("flop-counter", 4096), ("smelt", 32768)]
)
def test_conventions_and_contexts_equal_the_cli(convention: str, context: int | None) -> None:
    path = str(EXAMPLES / "hf" / "mixtral-8x7b.json")
    args = ["count", "--json", "--convention", convention, path]
    if context is not None:
        args += ["--context", str(context)]
    same_bytes(smelt.count(path, context=context, convention=convention).to_dict(), cli_json(*args))


def test_elementwise_equals_the_cli() -> None:
    path = str(EXAMPLES / "tiny-moe.json")
    same_bytes(smelt.count(path, elementwise=True).to_dict(), cli_json("count", "--json", "--elementwise", path))


def test_typed_access_reads_the_documented_numbers() -> None:
    # docs/json-schema.md's example: tiny-moe (V 1000, H 64, 4 layers, layers 2-3 looped twice).
    r = smelt.count(EXAMPLES / "tiny-moe.json")
    assert r.model == "tiny-moe"
    assert r.params.total == 369728
    assert r.params.embedding == 64000  # V x H = 1000 x 64
    assert r.params.non_embedding == 369728 - 2 * 64000
    assert r.flops.forward == 520960.0
    assert r.flops.training == 3 * 520960.0
    assert r.flops.terms.lm_head == 128000.0  # 2 x H x V = 2 x 64 x 1000
    assert r.kv.bytes_per_token == 768.0
    assert r.layers_executed == 6  # 4 layers, 2 of them twice
    # Layer 1 dense (first_dense 1), layers 2-3 MoE looped twice, layer 4 MoE once: three runs.
    assert [(run.first, run.last, run.step, run.count, run.visits) for run in r.layer_runs] == [
        (1, 1, 1, 1, 1),
        (2, 3, 1, 2, 2),
        (4, 4, 1, 1, 1),
    ]
    assert r.layer_runs[1].flops_per_visit.total == 63616.0
    assert list(r.layer_runs[1].layer_numbers) == [2, 3]
    assert r["kv_cache"]["bytes_at_context"] == 6144  # 768 B x 8 tokens


def test_every_layer_adds_one_entry_per_layer() -> None:
    r = smelt.count(EXAMPLES / "tiny-moe.json", every_layer=True)
    assert [(x.layer, x.kind, x.visits) for x in r.layers] == [
        (1, "dense", 1),
        (2, "moe", 2),
        (3, "moe", 2),
        (4, "moe", 1),
    ]
    assert r.layers[1].flops_per_visit.total == 63616.0
    # A run's entry is each of its layers' entry, "layer" replaced by first, last, step and count.
    run = {k: v for k, v in r.layer_runs[1].to_dict().items() if k not in ("first", "last", "step", "count")}
    assert run == {k: v for k, v in r.layers[2].to_dict().items() if k != "layer"}
    rule = r"^CountReport has no field 'layers': smelt.count\(..., every_layer=True\) writes one per layer"
    with pytest.raises(AttributeError, match=rule):
        smelt.count(EXAMPLES / "tiny-moe.json").layers


def test_every_layer_equals_the_cli_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    path = "examples/hf/llama4-maverick.json"
    args = ("count", "--json", "--every-layer", path)
    done = subprocess.run([str(cli_path()), *args], capture_output=True, cwd=ROOT)
    assert smelt.count(path, every_layer=True).to_json().encode() == done.stdout


def test_a_looped_span_and_its_neighbours_are_three_runs() -> None:
    # smelt-looped-12l: 12 MoE layers (moe.layers first_dense 0, every 1), pattern [full], layers 4-9 looped
    # twice. Before the loop 1-3 and after it 10-12 cost the same but are not consecutive; 4-9 have 2 visits.
    r = smelt.count(EXAMPLES / "smelt-looped-12l.json")
    runs = [(run.first, run.last, run.step, run.visits) for run in r.layer_runs]
    assert runs == [(1, 3, 1, 1), (4, 9, 1, 2), (10, 12, 1, 1)]
    assert sum(run.count * run.visits for run in r.layer_runs) == r.layers_executed == 18


def test_65536_alternating_layers_are_two_runs_in_3_kb() -> None:
    # moe.layers {first_dense 0, every 2, phase 0}: 1-based layers 1, 3, ..., 65535 are MoE, 2, ..., 65536 dense.
    r = smelt.count(ROOT / "tests" / "data" / "qwen-65536-layers.json")
    assert [(run.first, run.last, run.step, run.count, run.kind) for run in r.layer_runs] == [
        (1, 65535, 2, 32768, "moe"),
        (2, 65536, 2, 32768, "dense"),
    ]
    assert len(r.to_json()) == 3439  # 3,057 before the sparsity block; 51,599,860 bytes with one object per layer


def test_a_dict_counts_as_its_file_does() -> None:
    text = (EXAMPLES / "hf" / "qwen3-30b-a3b.json").read_text()
    from_dict = smelt.count(smelt.read_config(json.loads(text), source="qwen3"))
    from_file = smelt.count(EXAMPLES / "hf" / "qwen3-30b-a3b.json")
    assert from_dict.params.to_dict() == from_file.params.to_dict()
    assert from_dict.flops.forward == from_file.flops.forward


def test_config_round_trips_through_native_json() -> None:
    c = smelt.read_config(EXAMPLES / "hf" / "deepseek-v3.json")
    assert smelt.read_config(json.loads(c.to_json())).to_json() == c.to_json()
    assert c.attention.type == "mla"
