"""A smoke training run of a derived SMELT config and its Baseline on the reference model (smelt.torch).

The pair (tests/python/torch_pair.py): the README's Baseline cut to 4 layers and 32 experts, and the config
smelt.derive matches to it (layers 2-3 twice, residual scale 1/2), both shrunk by f = 32. Each trains 100 steps
on "the next token is this one + 1 mod 64" and its loss falls; the looped layers' gradients are the sum of
their visits' gradients; the residual scale multiplies each looped sublayer's update, forward and backward.
docs/reference-model.md, "Training". Skipped where torch is missing.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_pair import batch, derived_full, loss_of, pair, train  # noqa: E402


@pytest.fixture(scope="module")
def cfgs():
    return pair()


def test_the_pair_is_the_solver_s_match(cfgs):
    r = derived_full()
    assert r.within_tolerance and r.recipe.span == "2-3"
    assert r.best.knobs.to_dict() == {
        "hidden_size": 1920, "num_experts": 48, "num_heads": 24, "num_kv_heads": 6, "head_dim": 64,
        "expert_width": 640, "shared_width": 0, "dense_width": 0,
    }
    b = r.best.budgets
    # KV: 4 layers * 2 * 6 * 96 * 2 bytes = 9,216 = 6 visits * 2 * 6 * 64 * 2, exact.
    assert b.kv_bytes_per_token.baseline == b.kv_bytes_per_token.candidate == 9216
    assert (b.params_non_embedding.baseline, b.params_non_embedding.candidate) == (732_877_056, 737_665_920)
    assert r.best.max_abs_mismatch_pct == pytest.approx(0.6534, abs=1e-4)  # the parameters, +0.65%
    base, der = cfgs["baseline"], cfgs["derived"]
    # f = 32 for both: H 2304 -> 72, 1920 -> 60; head_dim 96 -> 3, 64 -> 2; expert width 768 -> 24, 640 -> 20.
    shape = lambda c: (c["hidden_size"], c["attention"]["head_dim"], c["moe"]["expert_width"], c["moe"]["num_experts"])
    assert shape(base) == (72, 3, 24, 32) and shape(der) == (60, 2, 20, 48)
    assert "loop" not in base and der["loop"] == {"span": "2-3", "count": 2, "residual_scale": 0.5}
    # The shrunk pair still matches on KV (4 * 2 * 6 * 3 = 6 * 2 * 6 * 2 = 144 elements per token).
    kv = [smelt.count(c).to_dict()["kv_cache"]["bytes_per_token"] for c in (base, der)]
    assert kv == [288, 288]


@pytest.mark.parametrize("name", ["baseline", "derived"])
def test_100_steps_lower_the_loss(cfgs, name):
    # Measured (mean of the first 5 steps -> mean of the last 5): baseline 6.72 -> 0.026, derived 6.59 -> 0.034;
    # ln(1024) = 6.93 at random. Thresholds with a wide margin on both sides.
    model = st.build_model(cfgs[name], seed=0)
    assert len(model.schedule) == {"baseline": 4, "derived": 6}[name]
    losses = train(cfgs[name])
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert first > 6.0, losses[:5]
    assert last < 0.5, losses[-5:]


def unrolled(model):
    """A copy with one independent layer object per visit, same weights: the loop without weight sharing."""
    out = copy.deepcopy(model)
    out.layers = torch.nn.ModuleList(copy.deepcopy(model.layers[i]) for i, _ in model.schedule)
    out.schedule = [(j, s) for j, (_, s) in enumerate(model.schedule)]
    return out


def test_a_looped_layer_s_gradient_is_the_sum_of_its_visits(cfgs):
    model = st.build_model(cfgs["derived"], seed=0)
    flat = unrolled(model)
    x, y = batch(torch.Generator().manual_seed(1))
    assert torch.equal(model(x).logits, flat(x).logits)  # the same function
    loss_of(model, x, y).backward()
    loss_of(flat, x, y).backward()
    both = 0
    for i in sorted({i for i, _ in model.schedule}):
        visits = [j for j, (k, _) in enumerate(model.schedule) if k == i]
        assert len(visits) == (2 if i in (1, 2) else 1)  # 0-based layers 1 and 2: span "2-3", twice
        for name, p in model.layers[i].named_parameters():
            if p.grad is None:  # an expert no token was routed to, on any visit
                assert all(flat.layers[j].get_parameter(name).grad is None for j in visits)
                continue
            grads = [flat.layers[j].get_parameter(name).grad for j in visits]
            per_visit = [g for g in grads if g is not None]  # an expert may be hit on one visit only
            total = sum(per_visit)
            assert torch.allclose(p.grad, total, rtol=1e-5, atol=1e-9), (i, name)
            if len(visits) == 2 and name == "attn.q_proj.weight":
                # Both visits contribute: the shared gradient is neither visit's alone.
                assert len(per_visit) == 2
                assert not torch.allclose(p.grad, per_visit[0]) and not torch.allclose(p.grad, per_visit[1])
                both += 1
    assert both == 2  # layers 2 and 3 (1-based)


def record(rec: dict, key: str, t):
    """Keep a tensor of one visit and, once backward reaches it, its gradient."""
    rec[key] = t
    t.register_hook(lambda g: rec.__setitem__("g_" + key, g))


def test_the_residual_scale_scales_each_looped_update_forward_and_backward(cfgs):
    model = st.build_model(cfgs["derived"], seed=0)
    visits: list[dict] = []  # per executed visit: its input, scale, sublayer outputs, output, their gradients
    hooks = []
    for block in model.layers:  # Block.forward(x, scale, cache), called positionally by the model
        hooks += [
            block.register_forward_pre_hook(lambda _, a: visits.append({"x": a[0], "scale": a[1]})),
            block.attn.register_forward_hook(lambda _, a, out: record(visits[-1], "attn", out)),
            block.ffn_norm.register_forward_pre_hook(lambda _, a: record(visits[-1], "mid", a[0])),
            block.ffn.register_forward_hook(lambda _, a, out: record(visits[-1], "ffn", out)),
            block.register_forward_hook(lambda _, a, out: record(visits[-1], "out", out)),
        ]
    x, y = batch(torch.Generator().manual_seed(2))
    loss_of(model, x, y).backward()
    for h in hooks:
        h.remove()
    assert [v["scale"] for v in visits] == [1.0, 0.5, 0.5, 0.5, 0.5, 1.0]
    for v in visits:
        s = v["scale"]
        # Forward: mid = x + s * attn(norm(x)), out = mid + s * ffn(norm(mid)).
        assert torch.allclose(v["mid"], v["x"] + s * v["attn"], rtol=0, atol=1e-6)
        assert torch.allclose(v["out"], v["mid"] + s * v["ffn"], rtol=0, atol=1e-6)
        # Backward: each sublayer's output receives s times the residual stream's gradient, exactly
        # (multiplying by 1/2 or 1 is exact in floating point).
        assert torch.equal(v["g_ffn"], s * v["g_out"])
        assert torch.equal(v["g_attn"], s * v["g_mid"])
    # The scale is the config's: at 1.0 the same weights compute another function.
    other = copy.deepcopy(cfgs["derived"])
    other["loop"]["residual_scale"] = 1.0
    unscaled = st.build_model(other, seed=0)
    assert [s for _, s in unscaled.schedule] == [1.0] * 6
    assert not torch.allclose(unscaled(x).logits, model(x).logits)
