"""Incremental decoding from smelt.torch's KVCache: a prefill, then one token at a time, gives the logits of one
full forward, and after T tokens the cache holds exactly smelt's KV elements at context T, visit by visit
(docs/counting.md, section 7; docs/reference-model.md, "Decoding"). Skipped where torch is missing."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_support import example, mixed, mla_switches  # noqa: E402


def gpt_oss() -> dict:
    cfg = st.shrink(example("hf/gpt-oss-20b.json"))  # sinks; sliding (W = 8 shrunk) and full layers
    cfg["num_layers"] = 4
    return smelt.read_config(cfg).to_dict()


CASES = {
    "tiny-moe": lambda: st.shrink(example("tiny-moe.json")),  # span 2-3 twice: 6 visits of 4 layers
    "mixed": mixed,  # chunked (C = 4), sliding (W = 5), full
    "gpt-oss-20b": gpt_oss,
    "mla": mla_switches,  # MLA, sinks, sliding (W = 5), chunked (C = 4), full, looped
}
T, PREFILL = 12, 5  # T > W and T > C everywhere


def decode(model, tokens, steps):
    """Logits of a prefill of steps[0] tokens, then of each further step's tokens from the cache."""
    cache, out, at = st.KVCache(), [], 0
    for n in steps:
        out.append(model(tokens[:, at : at + n], cache=cache).logits)
        at += n
    assert at == tokens.shape[1] and cache.length == at
    return torch.cat(out, dim=1), cache


@pytest.mark.parametrize("name", sorted(CASES))
def test_decoding_from_the_cache_gives_the_full_forward_s_logits(name):
    cfg = CASES[name]()
    model = st.build_model(cfg, seed=0).double()
    tokens = torch.randint(0, cfg["vocab_size"], (2, T), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(tokens).logits
        # p = 5, then one token at a time; a step of 3 tokens too (a chunk of a prefill), then ones.
        one, cache = decode(model, tokens, [PREFILL] + [1] * (T - PREFILL))
        mixed_steps, _ = decode(model, tokens, [PREFILL, 3] + [1] * (T - PREFILL - 3))
    assert torch.allclose(one, full, rtol=0, atol=1e-10)
    assert torch.allclose(mixed_steps, full, rtol=0, atol=1e-10)
    # After T tokens each slot holds smelt's elements per token held x tokens held at context T, visit by visit.
    kv = smelt.count(cfg, context=T, every_layer=True).to_dict()
    assert len(cache) == len(model.schedule)
    for slot, (i, _) in zip(cache, model.schedule):
        layer = kv["layers"][i]
        assert sum(x.numel() for x in slot) == 2 * layer["kv_elements_per_token_held"] * layer["kv_tokens_held"]
    assert cache.elements() * kv["kv_cache"]["element_bytes"] == 2 * kv["kv_cache"]["bytes_at_context"]  # batch 2


def test_sliding_and_chunked_slots_are_capped():
    # mixed(): layers chunked (C = 4), sliding (W = 5), full, chunked; span 2-3 twice, so visits
    # 1, 2, 3, 2, 3, 4. After 12 tokens the GQA slots hold 4, 5, 12, 5, 12, 4 tokens of 2 KV heads of 16.
    cfg = mixed()
    model = st.build_model(cfg, seed=0)
    tokens = torch.randint(0, cfg["vocab_size"], (1, T), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        _, cache = decode(model, tokens, [PREFILL] + [1] * (T - PREFILL))
    assert [k.shape[2] for k, _ in cache] == [4, 5, 12, 5, 12, 4]
    assert all(tuple(k.shape) == tuple(v.shape) == (1, 2, k.shape[2], 16) for k, v in cache)
    # 2 * 2 * 16 = 64 elements per token held: 64 * (4 + 5 + 12 + 5 + 12 + 4) = 2,688; smelt: 5,376 bytes.
    assert cache.elements() == 2_688
    assert smelt.count(cfg, context=T).to_dict()["kv_cache"]["bytes_at_context"] == 5_376
    # The sliding slot holds the last W = 5 keys: those of positions 7..11, as a full prefill computes them.
    full_cache = st.KVCache()
    with torch.no_grad():
        model(tokens, cache=full_cache)
    assert torch.allclose(cache.slots[1][0], full_cache.slots[1][0], atol=1e-6)


def test_generate_is_greedy_decoding():
    cfg = st.shrink(example("tiny-moe.json"))
    model = st.build_model(cfg, seed=0).double()
    prompt = torch.randint(0, cfg["vocab_size"], (2, 4), generator=torch.Generator().manual_seed(2))
    out = st.generate(model, prompt, 5)
    # The same tokens as recomputing the full forward for every next token.
    want = prompt
    with torch.no_grad():
        for _ in range(5):
            want = torch.cat([want, model(want).logits[:, -1:].argmax(dim=-1)], dim=1)
    assert out.shape == (2, 9) and torch.equal(out, want)


def test_a_cache_of_another_model_is_refused():
    small = st.build_model(dict(st.shrink(example("tiny-moe.json")), loop=None), seed=0)
    looped = st.build_model(st.shrink(example("tiny-moe.json")), seed=0)
    cache = st.KVCache()
    small(torch.zeros(1, 3, dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match="^KVCache has 4 slots: this model has 6 attention visits$"):
        looped(torch.zeros(1, 1, dtype=torch.long), cache=cache)
