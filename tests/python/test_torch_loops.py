"""Loop forms beyond the SMELT recipe in the reference model (smelt.torch) against smelt's counts, term by
term: several spans with their own counts (a block-repeat config). Parameters per term, FlopCounterMode's
forward and training FLOPs, one KV slot per attention visit, and decoding from the cache equal to a full
forward. Skipped where torch is missing."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_support import check_forward_flops, check_training_flops, example  # noqa: E402


def two_spans() -> dict:
    """tiny-moe grown to 6 layers, with layers 1-2 run twice (scale 1/2) and 4-6 three times (scale 1/3)."""
    cfg = st.shrink(example("tiny-moe.json"))
    cfg["num_layers"] = 6
    cfg.pop("loop", None)
    cfg["loops"] = [{"span": "1-2", "count": 2}, {"span": "4-6", "count": 3}]
    return smelt.read_config(cfg).to_dict()


CASES = {"two-spans": two_spans}


@pytest.mark.parametrize("name", sorted(CASES))
def test_params_equal_smelt_terms(name):
    cfg = CASES[name]()
    model = st.build_model(cfg, device="meta")
    assert st.param_terms(model) == smelt.count(cfg).to_dict()["params"]["terms"]


def test_two_spans_schedule_by_hand():
    model = st.build_model(two_spans(), device="meta")
    # layers 1 2 1 2 (x1/2), 3, 4 5 6 4 5 6 4 5 6 (x1/3): 4 + 1 + 9 = 14 visits
    assert [i + 1 for i, _ in model.schedule] == [1, 2, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6]
    assert [s for _, s in model.schedule][:5] == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert smelt.count(two_spans()).to_dict()["layers_executed"] == 14


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_training_flops_equal_smelt(name):
    check_forward_flops(CASES[name]())
    check_training_flops(CASES[name]())


@pytest.mark.parametrize("name", sorted(CASES))
def test_decoding_from_the_per_visit_cache_equals_a_full_forward(name):
    cfg, t = CASES[name](), 12
    model = st.build_model(cfg, seed=0).double()
    tokens = torch.randint(0, cfg["vocab_size"], (2, t), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(tokens)
        cache = st.KVCache()
        steps = [model(tokens[:, :5], cache=cache)] + [model(tokens[:, i : i + 1], cache=cache) for i in range(5, t)]
    assert torch.allclose(torch.cat(steps, dim=1), full, rtol=0, atol=1e-10)
    kv = smelt.count(cfg, context=t).to_dict()["kv_cache"]
    assert len(cache) == len(model.schedule)
    assert cache.elements() * kv["element_bytes"] == 2 * kv["bytes_at_context"]  # batch 2
