"""Shared cases of the smelt.torch tests: example paths, a derived looped config, the mixed-switch config,
and FlopCounterMode's counts mapped onto smelt's FLOP terms."""

from __future__ import annotations

import math
import os

import torch
from torch.utils.flop_counter import FlopCounterMode

import smelt
import smelt.torch as st
from smelt.torch._measure import flop_terms

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", name)


def derived_looped() -> dict:
    """A looped config the solver derives from the shrunk 12-layer Baseline (span 4-9, twice)."""
    base = st.shrink(example("smelt-baseline-12l.json"))
    cfg = smelt.derive(base, span="middle-half", loops=2).best_config.to_dict()
    assert cfg["loop"] == {"span": "4-9", "count": 2, "residual_scale": 0.5}
    return cfg


def measured_flop_terms(model, t: int) -> tuple[dict, int]:
    """FlopCounterMode on one forward of t tokens, per smelt term, per token (smelt.torch's own mapping of the
    module tree onto the terms, docs/reference-model.md "check-model"); nothing is left unmapped."""
    tokens = torch.randint(0, model.config.vocab_size, (1, t), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        model(tokens)
    per = {k: sum(v.values()) for k, v in fc.get_flop_counts().items()}
    terms, _ = flop_terms(model, per)
    assert terms.pop("other") == 0
    assert all(n % t == 0 for n in terms.values())
    return {k: n // t for k, n in terms.items()}, per["Global"]


def fewer_layers(cfg: dict, periods: int = 2) -> dict:
    """``cfg`` (native, shrunk) cut to its leading dense layers and ``periods`` periods of its layer pattern (the
    least common multiple of its MoE layers' ``every`` and its attention pattern's length), where that is fewer:
    every kind of layer it has, each beside every neighbour it has, at a fraction of the cost (DeepSeek-V3: 3 dense
    + 2 MoE layers of its 61; the reference model builds each expert of each layer, so 61 layers of 256 took
    seconds a test). A config with a loop is returned as it is: its spans name layers."""
    if cfg.get("loop"):
        return cfg
    moe = cfg.get("moe") or {}
    layers = moe.get("layers", {"first_dense": 0, "every": 1})
    period = math.lcm(layers["every"], len(cfg["attention"]["pattern"]))
    keep = layers["first_dense"] + periods * period
    if keep >= cfg["num_layers"]:
        return cfg
    return smelt.read_config(dict(cfg, num_layers=keep)).to_dict()


def mixed() -> dict:
    """tiny-moe with every other switch the slice builds: chunked, sliding and full layers, q/k norms over
    all heads, LayerNorm, plain FFNs with biases, a tied head, one shared expert with its gate."""
    cfg = st.shrink(example("tiny-moe.json"))
    cfg["attention"].update(pattern=["chunked", "sliding", "full"], window=5, chunk=4, qk_norm="full", out_bias=True)
    cfg.update(norm="layernorm", tie_embeddings=True)
    cfg["ffn"].update(type="plain", bias=True)
    cfg["moe"]["shared_gate"] = True
    return smelt.read_config(cfg).to_dict()


def v3_mla(layers: int = 61, **attention) -> dict:
    """examples/deepseek-v3-mla.json shrunk (f = 64: H = 112, r_q = 24, r_kv = 8, d_nope = 2, d_rope = 1, d_v = 2,
    128 heads, 256 experts of 32), with softmax routing and no MTP module (features apart from MLA); the
    first ``layers`` layers (3 dense, then MoE)."""
    cfg = st.shrink(example("deepseek-v3-mla.json"))
    cfg["moe"]["router_score"] = "softmax"
    cfg["mtp_modules"] = 0
    cfg["num_layers"] = layers
    cfg["attention"].update(attention)
    return smelt.read_config(cfg).to_dict()


def mla_switches() -> dict:
    """Shrunk DeepSeek-V3 with every switch smelt's validator allows with MLA: no query latent, an output bias,
    sinks, sliding / chunked / full layers, LayerNorm (which doubles the latent norm), a loop, 4 layers (3 dense,
    1 MoE), and 16 experts top-2 instead of 256 top-8 (FlopCounterMode's per-module hooks make experts slow)."""
    cfg = v3_mla(4, q_lora_rank=0, out_bias=True, sinks=True, pattern=["sliding", "chunked", "full"], window=5, chunk=4)
    cfg.update(norm="layernorm", loop={"span": "2-3", "count": 2, "residual_scale": 0.5})
    cfg["moe"].update(num_experts=16, top_k=2)
    return smelt.read_config(cfg).to_dict()


def sigmoid_routed(bias: bool = True, mtp: int = 0) -> dict:
    """tiny-moe with sigmoid routing: DeepSeek-V3's correction bias with ``bias``, Llama 4's form without;
    ``mtp`` multi-token-prediction modules."""
    cfg = st.shrink(example("tiny-moe.json"))
    cfg["moe"].update(router_score="sigmoid", router_bias=bias)
    cfg["mtp_modules"] = mtp
    return smelt.read_config(cfg).to_dict()


def deepseek_gqa(num_layers: int = 61) -> dict:
    """DeepSeek-V3 shrunk (H = 112, 256 experts of 32, top-8, one shared, 3 dense layers, sigmoid routing with
    the correction bias, one MTP module) with its MLA replaced by multi-head attention, 8 heads of 14."""
    cfg = st.shrink(example("hf/deepseek-v3.json"))
    a = cfg["attention"]
    cfg["attention"] = {"type": "gqa", "num_heads": 8, "num_kv_heads": 8, "head_dim": 14}
    cfg["attention"].update(qkv_bias=False, out_bias=False)
    cfg["attention"].update({k: a[k] for k in ("qk_norm", "sinks", "pattern", "window", "chunk")})
    cfg["num_layers"] = num_layers
    return smelt.read_config(cfg).to_dict()


def check_forward_flops(cfg: dict, t: int = 16) -> tuple[torch.nn.Module, dict]:
    """FlopCounterMode on a forward of t tokens equals smelt's flop-counter convention term by term, and the
    attention core converts to smelt's own causal terms by the pairs each visit's mask lets through.

    FlopCounterMode multiplies the full T x T scores on every visit, 2*w*T per token (w = 2q for GQA, n_h*(d_nope
    + d_rope + d_v) for MLA: Q K^T and softmax V); smelt charges the causal average A = P/T attended keys
    (counting.md, 3.1), so smelt = measured * P / T^2 visit by visit. Returns the model and the measured terms.
    """
    model = st.build_model(cfg, seed=0)
    got, total = measured_flop_terms(model, t)
    fc = smelt.count(cfg, context=t, convention="flop-counter").to_dict()["flops_per_token"]
    own = smelt.count(cfg, context=t).to_dict()["flops_per_token"]["terms"]
    assert total == fc["forward_per_sequence"]
    ft = fc["terms"]
    assert got["attention_core"] == ft["attention_scores"] + ft["attention_values"]
    for term in ("attention_qkv", "attention_out", "router", "experts", "shared_experts", "dense_ffn", "lm_head"):
        assert got[term] == ft[term] == own[term], term
    a = cfg["attention"]
    if a["type"] == "mla":
        w = a["num_heads"] * (a["qk_nope_head_dim"] + a["qk_rope_head_dim"] + a["v_head_dim"])
    else:
        w = 2 * a["num_heads"] * a["head_dim"]
    per_visit = got["attention_core"] / len(model.schedule)
    assert per_visit == 2 * w * t
    kinds = [a["pattern"][i % len(a["pattern"])] for i, _ in model.schedule]
    pairs = [int(st.attention_mask(kind, t, a["window"], a["chunk"]).sum()) for kind in kinds]
    causal = sum(per_visit * p / (t * t) for p in pairs)
    assert math.isclose(causal, own["attention_scores"] + own["attention_values"], rel_tol=1e-12)
    return model, got


def check_training_flops(cfg: dict, t: int = 16) -> torch.nn.Module:
    """FlopCounterMode on a forward + backward of t tokens is 3 x smelt's flop-counter forward: each product's
    backward multiplies two matrices of its size (input and weight gradients, counting.md section 2), the looped
    layers once per visit in both directions, exit gates (Ouro) on every pass. Returns the model, its gradients filled."""
    model = st.build_model(cfg, seed=0)
    tokens = torch.randint(0, cfg["vocab_size"], (1, t), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        o = model(tokens)
        # An exit gate's logits (Ouro) feed the training loss through the exit distribution: backward through them.
        (o.logits.sum() + sum(g.sum() for g in o.exit_logits)).backward()
    fwd = smelt.count(cfg, context=t, convention="flop-counter").to_dict()["flops_per_token"]["forward_per_sequence"]
    assert fc.get_total_flops() == 3 * fwd
    return model


def run_check(capsys, *argv: str) -> tuple[int, str, str]:
    """`python -m smelt check-model ARGV...` in-process: (exit code, standard output, standard error)."""
    from smelt.__main__ import main

    code = main(["check-model", *argv])
    out, err = capsys.readouterr()
    return code, out, err
