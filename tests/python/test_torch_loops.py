"""Loop forms beyond the SMELT recipe in the reference model (smelt.torch) against smelt's counts, term by
term: several spans with their own counts (a block-repeat config), Ouro's whole-stack loop (sandwich norms,
a final norm and an exit gate every step), Nanbeige's (pre-norm layers, the final norm every loop, no gate)
and Huginn's recurrent block (an adapter every pass, truncated backprop). Parameters per term,
FlopCounterMode's forward and training FLOPs, one KV slot per attention visit, and decoding from the cache
equal to a full forward. Skipped where torch is missing."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from torch_support import check_forward_flops, check_training_flops, example  # noqa: E402


def two_spans() -> dict:
    """tiny-moe grown to 6 layers, with layers 1-2 run twice (scale 1/2) and 4-6 three times (scale 1/3)."""
    cfg = st.shrink(example("tiny-moe.json"))
    cfg["num_layers"] = 6
    cfg.pop("loop", None)
    cfg["loops"] = [{"span": "1-2", "count": 2}, {"span": "4-6", "count": 3}]
    return smelt.read_config(cfg).to_dict()


def ouro() -> dict:
    """examples/hf/ouro-1.4b.json shrunk, 3 layers: the whole stack run 4 times, sandwich norms, the final
    norm and the exit gate after every step."""
    cfg = st.shrink(example("hf/ouro-1.4b.json"))
    cfg["num_layers"] = 3
    cfg["loop"]["span"] = "1-3"
    return smelt.read_config(cfg).to_dict()


def nanbeige() -> dict:
    """examples/hf/nanbeige4.2-3b.json shrunk, 3 layers: pre-norm Llama layers (q wider than the hidden size),
    the whole stack run twice, the final norm after the first loop fed to the second, no gate."""
    cfg = st.shrink(example("hf/nanbeige4.2-3b.json"))
    cfg["num_layers"] = 3
    cfg["loop"]["span"] = "1-3"
    return smelt.read_config(cfg).to_dict()


def huginn(count: int = 3, backprop: int = 0) -> dict:
    """examples/hf/huginn-0125.json shrunk: prelude 2, the recurrent block of 4 run ``count`` times with the
    adapter before every pass, coda 2, sandwich norms on the residual sums, q/k biases; ``backprop`` passes
    with gradients (0: all)."""
    cfg = st.shrink(example("hf/huginn-0125.json"))
    cfg["loop"].update(count=count, backprop_passes=backprop)
    return smelt.read_config(cfg).to_dict()


def lora() -> dict:
    """examples/loops/relaxed-recursive-lora.json shrunk: layers 4-9 of 12 run twice, each pass of each
    layer with its own rank-16 LoRA on q and v (the shrunk widths keep the rank below every side)."""
    cfg = st.shrink(example("loops/relaxed-recursive-lora.json"))
    cfg["loop"]["lora_targets"] = ["q", "v", "o", "gate", "up", "down"]
    cfg["loop"]["lora_rank"] = 4
    return smelt.read_config(cfg).to_dict()


CASES = {"two-spans": two_spans, "ouro": ouro, "nanbeige": nanbeige, "huginn": huginn, "lora": lora}


def test_lora_by_hand():
    cfg = lora()
    model = st.build_model(cfg, device="meta")
    h, d = cfg["hidden_size"], cfg["ffn"]["dense_width"]
    q, kv = (cfg["attention"][k] * cfg["attention"]["head_dim"] for k in ("num_heads", "num_kv_heads"))
    # rank 4 x (in + out) for q, v, o, gate, up, down; 6 layers; 2 passes, each its own
    sides = (h + q) + (h + kv) + (q + h) + 2 * (h + d) + (d + h)
    assert st.param_terms(model)["loop_extras"] == 4 * sides * 6 * 2
    # layers 1-3, 4-9 (pass 0), 4-9 again (pass 1), 10-12
    assert model.visit_pass == [0] * 9 + [1] * 6 + [0] * 3
    layer = model.layers[3]
    assert len(layer.attn.q_proj.adapters) == 2 and not hasattr(model.layers[2].attn.q_proj, "adapters")


def test_lora_visits_recompute_with_their_own_pass():
    # The pass a visit adapts is an argument of the visit (reference_model.Visit), so a recomputed visit (full
    # recompute, torch.utils.checkpoint) runs its own pass's adapters again: the same loss, the same gradients.
    cfg = lora()
    tokens = torch.randint(0, cfg["vocab_size"], (2, 9), generator=torch.Generator().manual_seed(1))
    runs = []
    for mode in ("none", "full"):
        model = st.build_model(cfg, seed=0, recompute=mode)  # every adapter drawn at random: each pass's differs
        loss = model.loss(tokens)
        loss.backward()
        runs.append((loss.detach(), {n: p.grad for n, p in model.named_parameters() if p.grad is not None}))
    (loss0, grads0), (loss1, grads1) = runs
    torch.testing.assert_close(loss1, loss0, rtol=0, atol=0)
    assert grads1.keys() == grads0.keys() and any(".adapters.1." in n for n in grads0)
    for n, g in grads0.items():
        torch.testing.assert_close(grads1[n], g, rtol=1e-5, atol=1e-5 * g.abs().max().item())


def test_huginn_structure_by_hand():
    cfg = huginn()
    assert cfg["norm_placement"] == "sandwich_residual" and cfg["attention"]["qk_bias"]
    model = st.build_model(cfg, device="meta")
    h, q = cfg["hidden_size"], cfg["attention"]["num_heads"] * cfg["attention"]["head_dim"]
    terms = st.param_terms(model)
    assert terms["loop_extras"] == 2 * h * h  # the adapter, Linear(2H, H) without bias
    assert model.layers[0].attn.q_proj.bias.numel() == q and model.layers[0].attn.v_proj.bias is None
    # prelude 1 2, the block 3-6 three times, coda 7 8: passes start at visits 2, 6, 10; ln_f after visit 13
    assert [i + 1 for i, _ in model.schedule] == [1, 2] + [3, 4, 5, 6] * 3 + [7, 8]
    assert sorted(model.pass_starts) == [2, 6, 10] and model.norm_after == {13}


def test_huginn_truncated_backprop_skips_the_early_passes_backward():
    # FlopCounterMode on forward + backward with 1 of 3 passes trained: 3 x forward - 2 x 2 passes, one pass
    # being the forward of count 3 minus that of count 2 (the same model but one pass: the adapter included).
    t = 16
    fwd = {r: smelt.count(huginn(r), context=t, convention="flop-counter").to_dict()["flops_per_token"] for r in (2, 3)}
    one_pass = fwd[3]["forward_per_sequence"] - fwd[2]["forward_per_sequence"]
    cfg = huginn(3, backprop=1)
    model = st.build_model(cfg, seed=0)
    tokens = torch.randint(0, cfg["vocab_size"], (1, t), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        model(tokens).logits.sum().backward()
    assert fc.get_total_flops() == 3 * fwd[3]["forward_per_sequence"] - 2 * 2 * one_pass
    # smelt's own count says the same on its causal convention: 3 x forward - 2 x 2 passes
    own = {r: smelt.count(huginn(r, backprop=1 if r == 3 else 0), context=t).to_dict()["flops_per_token"] for r in (2, 3)}
    assert own[3]["training"] == 3 * own[3]["forward"] - 2 * 2 * (own[3]["forward"] - own[2]["forward"])
    # the prelude still learns through the trained pass's adapter; the untrained passes' layers only through it
    assert model.layers[0].attn.q_proj.weight.grad is not None and model.injections[0].weight.grad is not None


def test_ouro_structure_by_hand():
    cfg = ouro()
    assert cfg["norm_placement"] == "sandwich"
    assert cfg["loop"] == {"span": "1-3", "count": 4, "residual_scale": 1.0, "norm_each_pass": True, "exit_gate": True}
    model = st.build_model(cfg, seed=0)
    h = cfg["hidden_size"]
    terms = st.param_terms(model)
    assert terms["loop_extras"] == h + 1  # one Linear(H, 1) with its bias
    assert terms["norms"] == 3 * 4 * h + h  # four norms a layer, the final norm
    # the final norm after steps 1-3 (fed on) and after the last; a gate logit per step
    assert sorted(model.pass_ends) == [2, 5, 8, 11]
    assert [model.pass_ends[v][0] for v in (2, 5, 8, 11)] == [True, True, True, False]
    tokens = torch.randint(0, cfg["vocab_size"], (2, 7), generator=torch.Generator().manual_seed(0))
    assert [tuple(g.shape) for g in model(tokens).exit_logits] == [(2, 7, 1)] * 4


def test_nanbeige_structure_by_hand():
    cfg = nanbeige()
    assert "norm_placement" not in cfg  # pre-norm, the default the canonical form leaves out
    assert cfg["loop"]["count"] == 2 and cfg["loop"]["residual_scale"] == 1.0 and cfg["loop"]["norm_each_pass"]
    assert not cfg["loop"].get("exit_gate", False)
    model = st.build_model(cfg, seed=0)
    h = cfg["hidden_size"]
    terms = st.param_terms(model)
    assert terms["loop_extras"] == 0  # the per-loop norm is the final norm itself
    assert terms["norms"] == 3 * 2 * h + h  # two norms a layer, the final norm
    # layers 1 2 3 twice; the final norm after the first loop (fed on) and after the last; no gate
    assert [i + 1 for i, _ in model.schedule] == [1, 2, 3, 1, 2, 3]
    assert model.pass_ends == {2: (True, None), 5: (False, None)}


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


def decode_equals_full_forward(cfg: dict, model, t: int = 12) -> tuple[torch.Tensor, torch.Tensor, st.KVCache]:
    """Two sequences of t tokens: a prefill of 5, then one token at a time from the cache, equal to one full
    forward to 1e-10; the cache then holds smelt's KV bytes at context t. Returns the tokens, logits and cache."""
    tokens = torch.randint(0, cfg["vocab_size"], (2, t), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(tokens).logits
        cache = st.KVCache()
        steps = [model(tokens[:, :5], cache=cache).logits]
        steps += [model(tokens[:, i : i + 1], cache=cache).logits for i in range(5, t)]
    assert torch.allclose(torch.cat(steps, dim=1), full, rtol=0, atol=1e-10)
    kv = smelt.count(cfg, context=t).to_dict()["kv_cache"]
    assert cache.elements() * kv["element_bytes"] == 2 * kv["bytes_at_context"]  # batch 2
    return tokens, full, cache


@pytest.mark.parametrize("name", sorted(CASES))
def test_decoding_from_the_per_visit_cache_equals_a_full_forward(name):
    cfg = CASES[name]()
    model = st.build_model(cfg, seed=0).double()
    _, _, cache = decode_equals_full_forward(cfg, model)
    assert len(cache) == len(model.schedule)


def shared_kv() -> dict:
    """The two-span config with recursive KV sharing on its second span (layers 4-6, three passes): the later
    passes attend to the keys and values the first pass cached; sliding and full layers alternate."""
    cfg = two_spans()
    cfg["attention"].update(pattern=["sliding", "full"], window=3)
    cfg["loops"][1]["kv_policy"] = "shared"
    return smelt.read_config(cfg).to_dict()


def test_shared_kv_caches_the_first_pass_and_still_runs_every_projection():
    cfg = shared_kv()
    model = st.build_model(cfg, seed=0).double()
    # 14 visits, 6 of them the later passes of layers 4-6, reading the first pass's slots: 8 slots
    assert len(model.reads_only) == 6 and max(model.slot_of) + 1 == 8
    tokens, full, cache = decode_equals_full_forward(cfg, model)
    assert len(cache) == 8
    # FLOPs: every pass still runs its q, k and v projections and attends over the shared keys (counting.md 8.1)
    check_forward_flops(cfg)
    # the policy changes the outputs: the later passes' keys are the first pass's, not their own
    per_visit = dict(cfg, loops=[cfg["loops"][0], dict(cfg["loops"][1], kv_policy="per_visit")])
    with torch.no_grad():
        other = st.build_model(per_visit, seed=0).double()(tokens).logits
    assert not torch.allclose(other, full)
