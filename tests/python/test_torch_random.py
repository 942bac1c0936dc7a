"""Randomised agreement: seeded random valid native configs, every term of smelt's count against the reference
model's (docs/reference-model.md, "Measured agreement"). The examples and the hand-made variants agree term by
term; this draws the combinations nobody wrote down. Every draw must pass smelt.read_config (a refused draw is a
generator bug), every switch value must be drawn at least once over the seeds (so the test cannot silently stop
covering one), and every row of smelt.torch.measure must be exact. Skipped where torch is missing."""

from __future__ import annotations

import os
import random
from collections import defaultdict

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402

# 100 seeds in the suite; SMELT_RANDOM_SEEDS=N draws N of them for a longer search (every 5th also decodes).
SEEDS = range(int(os.environ.get("SMELT_RANDOM_SEEDS", "100")))
DECODE_SEEDS = SEEDS[::5]  # 20 of the 100 also decode from the cache


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _attention(r: random.Random, t: int, layers: int, seen: dict) -> dict:
    kind = r.choice(["gqa", "mla"])
    heads = r.randint(1, 6)
    if kind == "gqa":
        kv = r.choice(_divisors(heads))
        a = {"type": "gqa", "num_heads": heads, "num_kv_heads": kv, "head_dim": r.choice([1, 2, 3, r.randint(4, 17)])}
        a["qk_norm"] = r.choice(["none", "per_head", "full"])
        a["qkv_bias"] = r.random() < 0.5
        seen["gqa form"].add("mha" if kv == heads else "mqa" if kv == 1 else "gqa")
        seen["head_dim parity"].add(a["head_dim"] % 2)
        seen["head_dim <= 3"].add(a["head_dim"] <= 3)
    else:  # MLA: no q/k/v biases, no q/k norms (docs/config.md, section 1.2)
        nope, rope = r.choice([(0, r.randint(1, 5)), (r.randint(1, 5), 0), (r.randint(1, 5), r.randint(1, 5))])
        a = {
            "type": "mla",
            "num_heads": heads,
            "q_lora_rank": r.choice([0, r.randint(1, 12)]),
            "kv_lora_rank": r.randint(1, 12),
            "qk_nope_head_dim": nope,
            "qk_rope_head_dim": rope,
            "v_head_dim": r.randint(1, 6),
        }
        seen["q_lora_rank > 0"].add(a["q_lora_rank"] > 0)
        seen["mla nope/rope"].add("no nope" if nope == 0 else "no rope" if rope == 0 else "both")
        seen["qk_rope parity"].add(rope % 2)
    a["out_bias"] = r.random() < 0.5
    a["sinks"] = r.random() < 0.5
    pattern = [r.choice(["full", "sliding", "chunked"]) for _ in range(r.randint(1, layers))]
    a["pattern"] = pattern
    # Windows and chunks below and above T (and equal to it, now and then).
    a["window"] = r.randint(1, t + 3) if "sliding" in pattern else 0
    a["chunk"] = r.randint(1, t + 3) if "chunked" in pattern else 0
    for k in ("type", "qkv_bias", "out_bias", "qk_norm", "sinks"):
        if k in a:
            seen[f"attention.{k}"].add(a[k])
    seen["pattern length"].add("1" if len(pattern) == 1 else "all layers" if len(pattern) == layers else "between")
    for k in set(pattern):
        seen["layer kind"].add(k)
    if a["window"]:
        seen["window vs T"].add("<" if a["window"] < t else ">=")
    if a["chunk"]:
        seen["chunk vs T"].add("<" if a["chunk"] < t else ">=")
    return a


def _moe(r: random.Random, layers: int, seen: dict) -> dict:
    e = r.randint(1, 6)
    shared = r.randint(0, 2)
    m = {
        "num_experts": e,
        "top_k": r.randint(1, e),
        "expert_width": r.randint(1, 12),
        "num_shared_experts": shared,
        "shared_width": r.randint(1, 12) if shared else 0,
        "shared_gate": bool(shared) and r.random() < 0.5,
        "router_bias": r.random() < 0.5,
        "router_score": r.choice(["softmax", "sigmoid"]),
    }
    form = r.choice(["default", "rule", "list"])
    if form == "rule":
        every = r.randint(1, layers)
        m["layers"] = {"first_dense": r.randint(0, layers - 1), "every": every, "phase": r.randint(0, every - 1)}
        # A rule may select no layer (valid: every layer is dense then); half of those become layer 0 MoE, so
        # the MoE switches stay exercised.
        if not any(i >= m["layers"]["first_dense"] and i % every == m["layers"]["phase"] for i in range(layers)):
            if r.random() < 0.5:
                m["layers"]["first_dense"] = m["layers"]["phase"] = 0
            else:
                form = "rule selecting none"
    elif form == "list":
        m["layers"] = sorted(r.sample(range(1, layers + 1), r.randint(1, layers)))
    seen["moe.layers form"].add(form)
    if form == "rule selecting none":  # its MoE switches take no effect: not counted as covered
        return m
    seen["top_k"].add("1" if m["top_k"] == 1 else "E" if m["top_k"] == e else "between")
    seen["num_shared_experts"].add(shared)
    if shared:
        seen["moe.shared_gate"].add(m["shared_gate"])
    for k in ("router_bias", "router_score"):
        seen[f"moe.{k}"].add(m[k])
    return m


def draw(seed: int, seen: dict | None = None) -> tuple[dict, int]:
    """A tiny valid native config and the T to measure it at; ``seen`` collects the switch values drawn."""
    seen = defaultdict(set) if seen is None else seen
    r = random.Random(seed)
    t = r.randint(5, 13)
    layers = r.randint(1, 5)
    cfg = {
        "schema_version": 1,
        "name": f"random-{seed}",
        "vocab_size": r.randint(16, 200),
        "tie_embeddings": r.random() < 0.5,
        "num_layers": layers,
        "hidden_size": r.randint(8, 48),
        "norm": r.choice(["rmsnorm", "layernorm"]),
        "context_length": t + r.randint(0, 20),
        "kv_cache_bytes": r.choice([1, 2, 4]),
        "attention": _attention(r, t, layers, seen),
        "ffn": {"type": r.choice(["gated", "plain"]), "bias": r.random() < 0.5, "dense_width": r.randint(1, 16)},
        "mtp_modules": r.randint(0, 2),
    }
    if r.random() < 0.75:
        cfg["moe"] = _moe(r, layers, seen)
    if r.random() < 0.6:
        first = r.randint(1, layers)
        last = r.randint(first, layers)
        # A one-layer span is written "N" or "N-N".
        span = f"{first}" if first == last and r.random() < 0.5 else f"{first}-{last}"
        loop = {"span": span, "count": r.randint(1, 3)}
        if r.random() < 0.5:
            loop["residual_scale"] = r.choice([0.5, 1.0, 0.3, 2.0])
        cfg["loop"] = loop
        seen["loop.count"].add(loop["count"])
        seen["loop.residual_scale given"].add("residual_scale" in loop)
        where = "whole" if (first, last) == (1, layers) else "start" if first == 1 else "end" if last == layers else ""
        seen["loop span"].add(where or "middle")
        seen["loop span form"].add("N" if "-" not in span else "N-N" if first == last else "N-M")
    seen["loop"].add("loop" in cfg)
    seen["moe"].add("moe" in cfg)
    seen["mtp_modules"].add(cfg["mtp_modules"])
    seen["num_layers"].add(layers)
    for k in ("tie_embeddings", "norm"):
        seen[k].add(cfg[k])
    for k in ("type", "bias"):
        seen[f"ffn.{k}"].add(cfg["ffn"][k])
    return smelt.read_config(cfg).to_dict(), t


# Every value of every switch the generator draws; the seeds must hit each at least once.
COVERAGE = {
    "attention.type": {"gqa", "mla"},
    "gqa form": {"mha", "gqa", "mqa"},
    "head_dim parity": {0, 1},
    "head_dim <= 3": {True, False},
    "q_lora_rank > 0": {True, False},
    "mla nope/rope": {"no nope", "no rope", "both"},
    "qk_rope parity": {0, 1},
    "attention.qkv_bias": {True, False},
    "attention.out_bias": {True, False},
    "attention.qk_norm": {"none", "per_head", "full"},
    "attention.sinks": {True, False},
    "pattern length": {"1", "between", "all layers"},
    "layer kind": {"full", "sliding", "chunked"},
    "window vs T": {"<", ">="},
    "chunk vs T": {"<", ">="},
    "norm": {"rmsnorm", "layernorm"},
    "tie_embeddings": {True, False},
    "ffn.type": {"gated", "plain"},
    "ffn.bias": {True, False},
    "moe": {True, False},
    "top_k": {"1", "between", "E"},
    "num_shared_experts": {0, 1, 2},
    "moe.shared_gate": {True, False},
    "moe.router_bias": {True, False},
    "moe.router_score": {"softmax", "sigmoid"},
    "moe.layers form": {"default", "rule", "list", "rule selecting none"},
    "loop": {True, False},
    "loop.count": {1, 2, 3},
    "loop.residual_scale given": {True, False},
    "loop span": {"whole", "start", "middle", "end"},
    "loop span form": {"N", "N-N", "N-M"},
    "mtp_modules": {0, 1, 2},
    "num_layers": {1, 2, 3, 4, 5},
}


def test_the_seeds_cover_every_switch_value():
    seen: dict = defaultdict(set)
    for seed in SEEDS:
        draw(seed, seen)  # each one valid: read_config raises otherwise
    missing = {k: sorted(map(str, v - seen[k])) for k, v in COVERAGE.items() if v - seen[k]}
    assert missing == {}
    assert set(seen) == set(COVERAGE)  # a switch drawn but not listed would go unchecked


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_config_agrees_term_by_term(seed):
    cfg, t = draw(seed)
    rows = st.measure(cfg, context=t, seed=seed).rows
    assert [r for r in rows if not r.exact] == []
    # 9 params, 12 forward, 2 training, 2 kv rows; with MTP params.mtp and forward.mtp, and no flop-counter
    # training row (test_torch_check.py).
    assert len(rows) == (26 if cfg["mtp_modules"] else 25)


@pytest.mark.parametrize("seed", DECODE_SEEDS)
def test_a_random_config_decodes_as_its_full_forward(seed):
    cfg, t = draw(seed)
    model = st.build_model(cfg, seed=seed).double()
    tokens = torch.randint(0, cfg["vocab_size"], (2, t), generator=torch.Generator().manual_seed(seed))
    prefill = 1 + seed % (t - 1)
    cache, out, at = st.KVCache(), [], 0
    with torch.no_grad():
        full = model(tokens).logits
        for n in [prefill] + [1] * (t - prefill):
            out.append(model(tokens[:, at : at + n], cache=cache).logits)
            at += n
    assert torch.allclose(torch.cat(out, dim=1), full, rtol=0, atol=1e-10)
    # After T tokens each slot (one per visit) holds smelt's elements per token held x tokens held.
    kv = smelt.count(cfg, context=t, every_layer=True).to_dict()
    assert len(cache) == len(model.schedule) == kv["layers_executed"]
    for slot, (i, _) in zip(cache, model.schedule):
        layer = kv["layers"][i]
        assert sum(x.numel() for x in slot) == 2 * layer["kv_elements_per_token_held"] * layer["kv_tokens_held"]
    assert cache.elements() * kv["kv_cache"]["element_bytes"] == 2 * kv["kv_cache"]["bytes_at_context"]  # batch 2


# The MoE draws without a loop, of at least 2 layers, as Baselines: smelt.derive's looped config of each (span
# middle-half, twice; alignments 1, since the widths are tiny) must agree term by term as well.
def _baseline(seed: int) -> bool:
    cfg = draw(seed)[0]
    return "moe" in cfg and "loop" not in cfg and cfg["num_layers"] > 1


DERIVE_SEEDS = [s for s in range(30) if _baseline(s)]  # 10 of them


@pytest.mark.parametrize("seed", DERIVE_SEEDS)
def test_the_looped_config_derived_from_a_random_baseline_agrees(seed):
    base, t = draw(seed)
    aligns = dict(align_hidden=1, align_experts=1, align_head_dim=1, align_ffn=1, min_head_dim=1)
    cfg = smelt.derive(base, span="middle-half", loops=2, tolerance_pct=100, **aligns).best_config.to_dict()
    assert cfg["loop"]["count"] == 2 and cfg["loop"]["residual_scale"] == 0.5
    rows = st.measure(cfg, context=t, seed=seed).rows
    assert [r for r in rows if not r.exact] == []
