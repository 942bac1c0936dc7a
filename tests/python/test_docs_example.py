"""docs/python.md's worked example, number by number: a SMELT config derived from Qwen3-30B-A3B."""

from __future__ import annotations

import pytest

import smelt
from conftest import EXAMPLES

QWEN3 = EXAMPLES / "hf" / "qwen3-30b-a3b.json"


def test_the_baseline_s_budgets() -> None:
    base = smelt.count(QWEN3)
    assert base.params.non_embedding == 29909792768
    assert base.kv.bytes_per_token == 48 * 2 * 4 * 128 * 2  # layers x (K, V) x KV heads x head_dim x bf16 bytes


def test_the_middle_half_misses_on_kv_and_the_full_span_relaxation_reaches_it() -> None:
    r = smelt.derive(QWEN3)
    assert r.recipe.span == "13-36" and r.within_tolerance is False
    assert r.best.budgets.kv_bytes_per_token.candidate == 72 * 2 * 2 * 168 * 2  # 72 visits, 2 KV heads, head_dim 168
    assert r.best.max_abs_mismatch_pct == 1.5625  # 96768 / 98304 - 1 = -1.5625%
    assert r.why[0].startswith("kv_bytes_per_token: -1.56% misses the 1% tolerance (the largest mismatch)")
    first = r.relaxations[0]
    assert (first.changes[0].field, first.changes[0].value) == ("LoopRecipe::span", "full")
    assert first.within_tolerance is True and first.max_abs_mismatch_pct == pytest.approx(0.2005506, abs=1e-7)


def test_the_full_span_config() -> None:
    r = smelt.derive(QWEN3, span="full")
    assert r.within_tolerance is True
    assert r.best.knobs.to_dict() == {
        "hidden_size": 1536, "num_experts": 232, "num_heads": 64, "num_kv_heads": 8, "head_dim": 32,
        "expert_width": 576, "shared_width": 0, "dense_width": 4608,
    }
    b = r.best.budgets
    assert b.kv_bytes_per_token.candidate == 96 * 2 * 8 * 32 * 2 == 98304  # an exact KV match
    assert (b.flops_per_token.candidate, b.flops_per_token.baseline) == (21610758144.0, 21567504384.0)
    assert (b.params_non_embedding.candidate, b.params_non_embedding.baseline) == (29914255872, 29909792768)
    looped = r.best_config
    assert looped.name == "qwen3_moe-smelt"
    assert smelt.count(looped).layers_executed == 96
    assert smelt.read_config(looped.to_dict()).to_json() == looped.to_json()


def test_the_frontier_gain_at_1e21() -> None:
    f = smelt.frontier(smelt.fit(EXAMPLES / "runs-dense-looped.csv", group_by="arch"), budgets=[1e20, 1e21, 1e22])
    laws = f.budgets[1].laws
    assert [l.name for l in laws] == ["dense", "looped"] and laws[0].gain is None
    assert laws[1].gain == pytest.approx(0.3196, abs=1e-4)
    assert [round(l.tpp, 1) for l in laws] == [21.7, 33.4]  # D* / N*, no interval without --bootstrap
    assert laws[0].tpp == pytest.approx(laws[0].tokens / laws[0].size, rel=1e-12) and laws[0].tpp_interval is None


def test_the_export_and_the_plot_of_the_full_span_config() -> None:
    r = smelt.derive(QWEN3, span="full")
    args = smelt.export_megatron(r.best_config)
    a = dict(args.arguments)
    # H 1536 over 64 heads would default Megatron-LM's --kv-channels to 24; the config's head_dim is 32.
    assert (a["--hidden-size"], a["--num-attention-heads"], a["--kv-channels"]) == ("1536", "64", "32")
    assert a["--moe-ffn-hidden-size"] == "576" and a["--ffn-hidden-size"] == "4608"
    assert args.comments[1].startswith("Megatron-LM has no shared-weight layer loop")
    assert "Run layers 1-48 (1-based) 2 times" in args.comments[1]
    assert args.argv()[:4] == ["--num-layers", "48", "--hidden-size", "1536"]
    back = smelt.read_config(__import__("json").loads(smelt.export_hf(r.best_config, family="qwen3_moe")))
    assert smelt.count(back).to_dict() == smelt.count(r.best_config).to_dict()
    plot = pytest.importorskip("smelt.plot")
    fig = plot.plot_mismatch(r.to_dict())
    assert fig.axes  # the bars' values are checked against the report in test_plot.py
