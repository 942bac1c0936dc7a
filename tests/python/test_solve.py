"""smelt.derive and smelt.sweep against the CLI's JSON, and the solver's knobs as keywords."""

from __future__ import annotations

import pytest

import smelt
from conftest import EXAMPLES, cli_json, same_bytes

BASE54 = str(EXAMPLES / "smelt-baseline-54b.json")
BASE12 = str(EXAMPLES / "smelt-baseline-12l.json")


def test_derive_equals_the_cli_json_byte_for_byte() -> None:
    # Within the tolerance: `why` and `relaxations` are empty, the only
    # strings where the CLI writes its flags and the library its field names.
    r = smelt.derive(BASE54)
    assert r.within_tolerance is True
    same_bytes(r.to_dict(), cli_json("derive", "--json", BASE54))


def test_derive_keywords_are_the_cli_options() -> None:
    py = smelt.derive(BASE54, span="10-21", loops=3, kv_heads=4, top=3, tolerance_pct=2.0, align_hidden=128)
    cli = cli_json(
        "derive", "--json", BASE54, "--span", "10-21", "--loops", "3", "--kv-heads", "4", "--top", "3",
        "--tolerance", "2", "--align-hidden", "128", ok_codes=(0, 3),
    )
    assert py.within_tolerance is True  # so the reports hold no flag or field names: equal bytes
    same_bytes(py.to_dict(), cli)
    assert py.recipe.span == "10-21" and py.recipe.loops == 3 and py.recipe.tolerance_pct == 2.0
    assert py.best.knobs.num_kv_heads == 4 and py.best.knobs.hidden_size % 128 == 0
    assert len(py.alternatives) == 2  # top 3: the best and two alternatives


def test_derive_lists_distinct_candidates_with_their_head_splits() -> None:
    # smelt-baseline-12l's answer, 12/3/56: widths 672 and 168 split with any head_dim d dividing gcd(672, 168) = 168,
    # a multiple of 8 in [32, 256]: d = 56 (12/3) or 168 (4/1). No alternative shares H, E and both widths with
    # another candidate: before, the second candidate was 4/1/168 of the same H and E.
    r = smelt.derive(BASE12, relaxations=False)
    assert r.best.equivalent_head_splits == 2
    assert [(h.num_heads, h.num_kv_heads, h.head_dim) for h in r.best.head_splits] == [(12, 3, 56), (4, 1, 168)]
    assert type(r.best.head_splits[0]).__name__ == "HeadSplit"
    keys = [
        (k.hidden_size, k.num_experts, k.expert_width, k.num_heads * k.head_dim, k.num_kv_heads * k.head_dim)
        for k in (c.knobs for c in [r.best, *r.alternatives])
    ]
    assert len(set(keys)) == len(keys) == 5
    assert [c.equivalent_head_splits for c in r.alternatives] == [len(c.head_splits) for c in r.alternatives]
    same_bytes(r.to_dict(), cli_json("derive", "--json", BASE12, "--no-relaxations", ok_codes=(3,)))


def test_ranges_pairs_and_search_knobs_reach_the_solver() -> None:
    r = smelt.derive(
        BASE12, hidden=(512, 768), experts=(8, 64), head_dim=(32, 128), heads=(4, 16), kv_heads=(1, 4),
        align_experts=4, align_head_dim=16, min_head_dim=32, max_head_dim=128, free_heads=True,
        attention_ratio=(0.5, 2.0), ffn="searched", expert_width=(64, 4096), align_ffn=32, match=["flops", "params"],
        contexts=[1024, 2048], relaxations=False, residual_scale=0.5, depth=12, flops_with_head=True,
    )
    k = r.best.knobs
    assert 512 <= k.hidden_size <= 768 and 8 <= k.num_experts <= 64 and k.num_experts % 4 == 0
    assert 32 <= k.head_dim <= 128 and k.head_dim % 16 == 0 and 1 <= k.num_kv_heads <= 4
    assert k.expert_width % 32 == 0
    assert r.recipe.match == ["flops", "params"] and r.recipe.contexts == [1024, 2048]
    assert r.recipe.ffn == "searched" and r.recipe.flops_with_head is True
    assert r.recipe.residual_scale == 0.5 and r.relaxations == []


def test_outside_the_tolerance_is_returned_with_relaxations_in_library_words() -> None:
    r = smelt.derive(EXAMPLES / "hf" / "qwen3-30b-a3b.json")
    assert r.within_tolerance is False  # the CLI exits 3 here; the library returns
    assert r.why[0].startswith("kv_bytes_per_token: -1.56% misses the 1% tolerance")
    fields = [c.field for x in r.relaxations for c in x.changes]
    assert fields and all("::" in f for f in fields)  # SearchSpace::..., never --flags
    assert r.best_config.to_dict() == r.best.config.to_dict()
    assert smelt.count(r.best_config).layers_executed == r.best.layers_executed


def test_sweep_equals_the_cli_json_byte_for_byte() -> None:
    py = smelt.sweep(BASE12, spans=[0, 0.5], loops=[2, 3], depths=[1.5])
    cli = cli_json("sweep", "--json", BASE12, "--spans", "0,0.5", "--loops", "2,3", "--depths", "1.5")
    same_bytes(py.to_dict(), cli)
    assert [row.kind for row in py.rows] == ["baseline", "loop", "loop", "depth"]


def test_a_bad_value_names_the_library_field_value_and_rule() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.derive(BASE12, align_hidden=0)
    assert str(e.value) == "SearchSpace::align_hidden = 0: must be positive"
    assert e.value.violations == [("SearchSpace::align_hidden", "0", "must be positive")]


def test_every_bad_keyword_is_listed_at_once() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.derive(BASE12, tolerance=2, hidden="wide", loops=1.5, ffn=3)
    assert str(e.value).splitlines() == [
        "LoopRecipe::loops = 1.5: must be an integer",
        'SearchSpace::hidden = "wide": must be an integer or a pair (lo, hi) of integers',
        'SearchSpace::ffn = 3: must be "proportional", "fixed" or "searched"',
        "derive() got an unknown keyword argument 'tolerance' (did you mean 'tolerance_pct'?)",
    ]


def test_a_bad_span_word_is_the_parser_s_message() -> None:
    with pytest.raises(smelt.ConfigError, match=r"^LoopRecipe::span = \"middle\""):
        smelt.derive(BASE12, span="middle")


def test_span_keep_keeps_a_looped_baselines_own_loop():
    # Ouro-1.4B's whole stack run 4 times, its per-step norm and exit gate: kept whole, the Baseline its own answer.
    r = smelt.derive(f"{EXAMPLES}/hf/ouro-1.4b.json", span="keep")
    assert r.best_config.to_dict()["loop"] == {
        "span": "1-24", "count": 4, "residual_scale": 1.0, "norm_each_pass": True, "exit_gate": True,
    }
    assert r.to_dict()["best"]["max_abs_mismatch_pct"] == 0.0
    with pytest.raises(smelt.ConfigError, match=r'LoopRecipe::depth = 12: must stay the Baseline\'s 24'):
        smelt.derive(f"{EXAMPLES}/hf/ouro-1.4b.json", span="keep", depth=12)
