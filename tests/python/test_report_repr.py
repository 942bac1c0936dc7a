"""Typed reports print as what they are: ``Type(field=value, ...)`` in the writer's key order, a nested object as
``Type(...)``, a long list by its first entries and its length, a long string cut as the CLI's tables cut names."""

from __future__ import annotations

import json
import pathlib

import smelt
from conftest import EXAMPLES

TINY = json.loads((EXAMPLES / "tiny-moe.json").read_text())


def test_a_count_report_prints_its_fields_and_its_parts_by_type() -> None:
    r = smelt.count(EXAMPLES / "tiny-moe.json")
    assert repr(r) == (
        "CountReport(schema_version=2, kind='count', model='tiny-moe', convention='smelt', context_length=8, "
        "layers_stored=4, layers_executed=6, loop=Loop(...), params=Params(...), flops_per_token=Flops(...), "
        "kv_cache=KvCache(...), sparsity=Sparsity(...), layer_runs=[LayerRun(...), LayerRun(...), LayerRun(...)])"
    )
    # Layer 1 dense, 2-3 MoE looped twice, 4 MoE once: three runs.
    assert repr(r.layer_runs[1]).startswith(
        "LayerRun(first=2, last=3, step=1, count=2, kind='moe', attention='full', visits=2, params=ParamTerms(...), "
    )
    # 6 visits x 2 (K, V) x 2 KV heads x 16 head_dim x 2 bytes = 768 per token; x 8 tokens = 6144.
    assert repr(r.kv) == "KvCache(bytes_per_token=768.0, elements_per_token=384.0, bytes_at_context=6144, element_bytes=2)"
    assert repr(r.loop) == "Loop(span='2-3', count=2, residual_scale=0.5)"
    assert repr(r.params) == (
        "Params(total=369728, embedding=64000, lm_head=64000, non_embedding=241728, active=259136, "
        "active_non_embedding=131136, mtp=0, terms=ParamTerms(...))"
    )
    assert repr(smelt.read_config(EXAMPLES / "tiny-moe.json").loop) == repr(r.loop)


def test_derived_knobs_print_as_knobs() -> None:
    # tiny-moe is looped already (layers 2-3 twice), and derive's default recipe loops the same span. The answer
    # keeps H 64 and the 8 experts and trades 4 heads x 16 for 2 x 32: the same Q width (64), and KV elements per
    # token 2 x 1 x 32 = 2 x 2 x 16 = 64, so every budget matches exactly (768 bytes = 6 visits x 64 x 2 bytes).
    r = smelt.derive(EXAMPLES / "tiny-moe.json", tolerance_pct=50.0)
    assert repr(r.best.knobs) == (
        "Knobs(hidden_size=64, num_experts=8, num_heads=2, num_kv_heads=1, head_dim=32, expert_width=32, "
        "shared_width=32, dense_width=128)"
    )
    # head_dim 16 is below min_head_dim 32, so 2/1/32 is the only split of those widths in the space.
    assert repr(r.best).startswith(
        "Candidate(name='tiny-moe-smelt', knobs=Knobs(...), equivalent_head_splits=1, head_splits=[HeadSplit(...)], "
        "budgets=Budgets(...), "
    )
    assert repr(r.best.head_splits[0]) == "HeadSplit(num_heads=2, num_kv_heads=1, head_dim=32)"
    assert repr(r.best.budgets.kv_bytes_per_token).startswith("Budget(baseline=768.0, candidate=")


def test_a_long_name_is_cut_and_a_long_list_shows_its_length(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps(dict(TINY, name="n" * 100, num_layers=8)))
    r = smelt.count(path, every_layer=True)
    # 64 bytes of the name, "...", and its length (src/util/excerpt.cpp's name_excerpt).
    assert f"model='{'n' * 64}... (100 bytes)'" in repr(r)
    assert repr(r).endswith("layers=[Layer(...), Layer(...), Layer(...), Layer(...), Layer(...), ... 8 entries])")
    assert r.model == "n" * 100  # the value itself is whole
