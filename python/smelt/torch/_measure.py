"""``measure``: smelt's counts beside what the reference model stores and executes, term by term.

Parameters are ``param_terms`` of the built model; FLOPs are FlopCounterMode's per-module counts of one
forward (and forward + backward) of T tokens, placed on smelt's terms by the module tree
(docs/reference-model.md, "check-model"); the KV cache is the prefill cache's elements. FLOPs are compared
per sequence, where every count is an integer, and reported per token, smelt's unit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import smelt

from ..reference.args import MAX_CONTEXT, MAX_SEED, check_int
from ..reference.attention import attention_mask
from ._model import build_model, native
from ._terms import TERMS, param_terms

PARTS = ("params", "forward", "training", "kv")
# The forward terms FlopCounterMode's module tree gives; attention_core is Q K^T and softmax . V together.
FLOP_TERMS = (
    "attention_qkv", "attention_out", "attention_core", "router", "experts", "shared_experts", "dense_ffn",
    "loop_extras",
)


@dataclass(frozen=True)
class Row:
    """One term: smelt's count and the measured one (elements, FLOPs per token, or bytes at context T)."""

    part: str
    term: str
    smelt: int | float
    measured: int | float
    exact: bool


@dataclass
class Measurement:
    model: str
    context: int
    seed: int
    layers_stored: int
    layers_executed: int
    rows: list[Row] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return all(r.exact for r in self.rows)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["agree"] = self.agree
        return d


def _per_token(seq: Fraction, t: int) -> int | float:
    v = seq / t
    return int(v) if v.denominator == 1 else float(v)


def _flop_row(part: str, term: str, smelt_per_token: float, measured_seq: Fraction, t: int) -> Row:
    # smelt's per-sequence FLOPs are integers (2*w*P for the attention terms, P the exact pairs), held as a
    # per-token double: times T they are within rounding of that integer, and compared as integers.
    s = smelt_per_token * t
    exact = abs(s - round(s)) <= 1e-6 * max(1.0, abs(s)) and Fraction(round(s)) == measured_seq
    return Row(part, term, smelt_per_token, _per_token(measured_seq, t), exact)


def _called(counts: Mapping[str, int], key: str, module: nn.Module) -> int:
    """FLOPs of a module and what it calls; a container that is never called (a ModuleList) sums its children."""
    if key in counts:
        return counts[key]
    return sum(_called(counts, f"{key}.{name}", child) for name, child in module.named_children())


def flop_terms(model: nn.Module, counts: Mapping[str, int]) -> tuple[dict[str, int], list[int]]:
    """FlopCounterMode's per-module counts (``get_flop_counts()`` summed per module) on smelt's terms.

    ``attn.o_proj`` is attention_out; every other ``nn.Linear`` under ``attn`` (GQA's q/k/v_proj, MLA's
    down and up projections) is attention_qkv; what the attention module multiplies itself is the core (per
    layer, for the mask conversion); the MoE's router, experts, shared experts with their gate; a dense
    layer's FFN; the LM head. ``other`` holds what no term claims (0 when the mapping is complete). Per
    sequence, all visits of a looped layer together; the MTP modules run outside this forward (``measure``).
    """
    root = type(model).__name__
    terms = dict.fromkeys(FLOP_TERMS + ("lm_head", "other"), 0)
    cores = []
    for i, layer in enumerate(model.layers):
        base = f"{root}.layers.{i}"
        attn, ffn = layer.attn, layer.ffn
        linear = 0
        for sub, mod in attn.named_modules():
            if isinstance(mod, nn.Linear):
                n = counts.get(f"{base}.attn.{sub}", 0)
                if ".adapters." in sub:  # a per-visit LoRA (_lora.py)
                    terms["loop_extras"] += n
                else:
                    terms["attention_out" if sub.startswith("o_proj") else "attention_qkv"] += n
                linear += n
        cores.append(counts.get(f"{base}.attn", 0) - linear)
        total_ffn = counts.get(f"{base}.ffn", 0)
        if hasattr(ffn, "router"):
            parts = {
                "router": counts.get(f"{base}.ffn.router", 0),
                "experts": _called(counts, f"{base}.ffn.experts", ffn.experts),
                "shared_experts": _called(counts, f"{base}.ffn.shared", ffn.shared)
                + counts.get(f"{base}.ffn.shared_gate", 0),
            }
            for k, n in parts.items():
                terms[k] += n
            terms["other"] += total_ffn - sum(parts.values())
        else:
            lora = sum(
                counts.get(f"{base}.ffn.{sub}", 0)
                for sub, mod in ffn.named_modules()
                if isinstance(mod, nn.Linear) and ".adapters." in sub
            )
            terms["loop_extras"] += lora
            terms["dense_ffn"] += total_ffn - lora
        terms["other"] += counts.get(base, 0) - counts.get(f"{base}.attn", 0) - total_ffn
    terms["attention_core"] = sum(cores)
    layers = sum(counts.get(f"{root}.layers.{i}", 0) for i in range(len(model.layers)))
    # every pass's exit gate (Ouro) and adapter (Huginn), outside the layers; their LoRA is counted above
    outside = _called(counts, f"{root}.exit_gates", model.exit_gates) + _called(
        counts, f"{root}.injections", model.injections
    )
    terms["loop_extras"] += outside
    rest = counts.get("Global", 0) - layers - outside
    if getattr(model, "lm_head", None) is not None:
        terms["lm_head"] = counts.get(f"{root}.lm_head", 0)
        terms["other"] += rest - terms["lm_head"]
    else:  # a tied head is F.linear on the embedding's weight, in the model's own forward
        terms["lm_head"] = rest
    return terms, cores


def causal_core(cfg: Mapping[str, Any], cores: list[int], t: int) -> Fraction:
    """The measured full-T x T core on smelt's causal convention: per layer x P / T^2, P its mask's pairs."""
    a = cfg["attention"]
    pattern = a["pattern"]
    out = Fraction(0)
    for i, core in enumerate(cores):
        pairs = int(attention_mask(pattern[i % len(pattern)], t, a["window"], a["chunk"]).sum())
        out += Fraction(core * pairs, t * t)
    return out


def cache_slots(model: nn.Module, tokens: torch.Tensor) -> list[tuple[torch.Tensor, ...]]:
    """The prefill cache's slots, one per attention visit, each the tensors it holds (K and V; MLA's latent
    and rope key). The one place that knows the cache's form (today a list ``model(tokens, cache=[])``
    appends to)."""
    cache: list = []
    with torch.no_grad():
        model(tokens, cache=cache)
    return [tuple(slot) for slot in cache]


def _snapshot(fc: FlopCounterMode) -> dict[str, dict[str, int]]:
    """FlopCounterMode's counts so far, per module and per operator."""
    return {k: {str(op): int(n) for op, n in v.items()} for k, v in fc.get_flop_counts().items()}


def _totals(snap: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    return {k: sum(v.values()) for k, v in snap.items()}


def _core_ops(ops: Mapping[str, int]) -> int:
    return sum(n for op, n in ops.items() if op not in ("aten.mm", "aten.addmm"))


def _cores_by_op(model: nn.Module, snap: Mapping[str, Mapping[str, int]]) -> tuple[list[int], int]:
    """The attention core of each layer, and of the MTP modules' layers together: an attention module's
    products other than a Linear's (mm, addmm).

    In a backward, torch 2.5.1's module tracker also places a Linear's products on its sibling Linears
    (k_proj gets q_proj's), so the training conversion cannot subtract the projections by module; an
    attention module's own total is right, and its batched products (bmm) are the core's alone.
    """
    root = type(model).__name__
    keys = [f"{root}.layers.{i}.attn" for i in range(len(model.layers))]
    main = [_core_ops(snap.get(k, {})) for k in keys]
    # Every other attention module that ran is an MTP module's layer (full attention: counting.md, 3.5).
    extra = sum(_core_ops(v) for k, v in snap.items() if k.endswith(".attn") and k not in set(keys))
    return main, extra


def _run(model: nn.Module, tokens: torch.Tensor, t: int, training: bool) -> dict[str, dict]:
    """FlopCounterMode snapshots: the forward of the first t tokens, then the MTP modules (fed the tokens
    after them), then forward + backward of the sum of every logit, exit gates' included."""
    depth = len(model.mtp) if getattr(model, "mtp", None) is not None else 0
    with FlopCounterMode(display=False) as fc:
        if depth:
            from ..reference.mtp import mtp_logits, trunk  # multi-token prediction runs outside the model's forward

            logits, hidden = trunk(model, tokens[:, :t])
            snaps = {"forward": _snapshot(fc)}
            out = [logits, *mtp_logits(model, hidden, tokens)]
        else:
            o = model(tokens[:, :t])
            out = [o.logits, *o.exit_logits]  # exit gates (Ouro) train with the model
            snaps = {"forward": _snapshot(fc)}
        snaps["mtp"] = _snapshot(fc)
        if training:
            sum(x.sum() for x in out).backward()
    snaps["training"] = _snapshot(fc)
    return snaps


def measure(cfg: Any, context: int = 16, seed: int = 0, parts: tuple[str, ...] = PARTS) -> Measurement:
    """smelt's counts of ``cfg`` beside the reference model's, per term (docs/reference-model.md, "check-model").

    ``parts``: any of "params" (sum(p.numel()) per term), "forward" (FlopCounterMode on a forward of
    ``context`` tokens), "training" (forward + backward), "kv" (the prefill cache). Params alone build the
    model on the meta device. Raises NotImplementedError naming a feature the model does not build.
    """
    check_int("measure", "context", context, 1, MAX_CONTEXT)
    check_int("measure", "seed", seed, 0, MAX_SEED)
    c = native(cfg)
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise ValueError(f"parts = {bad}: each must be one of {', '.join(PARTS)}")
    t = context
    own = smelt.count(c, context=t).to_dict()
    # cfg, not c: a Hugging Face config keeps its family's routing choices (build_model's renormalize, sigmoid_form)
    model = build_model(cfg, seed=seed, device="meta" if set(parts) == {"params"} else None)
    out = Measurement(own["model"], t, seed, own["layers_stored"], own["layers_executed"])
    rows = out.rows
    mtp = c.get("mtp_modules", 0) > 0
    if "params" in parts:
        got, want = param_terms(model), own["params"]
        for k in TERMS:
            if k == "loop_extras" and want["terms"][k] == got[k] == 0:
                continue  # a row only for a model whose spans store extras (exit gates)
            rows.append(Row("params", k, want["terms"][k], got[k], want["terms"][k] == got[k]))
        total = sum(got[k] for k in TERMS)
        rows.append(Row("params", "total", want["total"], total, want["total"] == total))
        if mtp:  # the MTP modules' own parameters, outside the total (counting.md, section 6)
            n = sum(p.numel() for name, p in model.named_parameters() if name.startswith("mtp."))
            rows.append(Row("params", "mtp", want["mtp"], n, want["mtp"] == n))
    if not ({"forward", "training", "kv"} & set(parts)):
        return out
    d = c.get("mtp_modules", 0)
    tokens = torch.randint(0, c["vocab_size"], (1, t + d), generator=torch.Generator().manual_seed(seed))
    if {"forward", "training"} & set(parts):
        snaps = _run(model, tokens, t, "training" in parts)
        fwd = _totals(snaps["forward"])
        ft = own["flops_per_token"]["terms"]
        fcv = smelt.count(c, context=t, convention="flop-counter").to_dict()["flops_per_token"]
        full = Fraction(t * (t + 1), 2 * t * t)  # an MTP layer's attention is full: P / T^2
        # The MTP modules: what ran after the forward, its attention core converted as the layers' are.
        mtp_raw = _totals(snaps["mtp"])["Global"] - fwd["Global"]
        mtp_core = _cores_by_op(model, snaps["mtp"])[1] - _cores_by_op(model, snaps["forward"])[1]
        mtp_flops = mtp_raw - mtp_core + mtp_core * full
    if "forward" in parts:
        terms, cores = flop_terms(model, fwd)
        core = causal_core(c, cores, t)
        fct = fcv["terms"]
        rows += [_flop_row("forward", k, ft[k], Fraction(terms[k]), t) for k in ("attention_qkv", "attention_out")]
        flop_core = fct["attention_scores"] + fct["attention_values"]
        measured_core = Fraction(terms["attention_core"])
        rows.append(_flop_row("forward", "attention_core (flop-counter)", flop_core, measured_core, t))
        own_core = ft["attention_scores"] + ft["attention_values"]
        rows.append(_flop_row("forward", "attention_scores + values", own_core, core, t))
        for k in ("router", "experts", "shared_experts", "dense_ffn", "lm_head"):
            rows.append(_flop_row("forward", k, ft[k], Fraction(terms[k]), t))
        if ft["loop_extras"] or terms["loop_extras"]:
            rows.append(_flop_row("forward", "loop_extras", ft["loop_extras"], Fraction(terms["loop_extras"]), t))
        if d:
            rows.append(_flop_row("forward", "mtp", ft["mtp"], mtp_flops, t))
        rows.append(_flop_row("forward", "other (unmapped)", 0.0, Fraction(terms["other"]), t))
        rows.append(_flop_row("forward", "total (flop-counter)", fcv["forward"], Fraction(fwd["Global"]), t))
        fwd_causal = fwd["Global"] - terms["attention_core"] + core
        rows.append(_flop_row("forward", "total", own["flops_per_token"]["forward"], fwd_causal, t))
    if "training" in parts:
        train = _totals(snaps["training"])["Global"]
        spans = [c["loop"]] if c.get("loop") else c.get("loops") or []
        truncated = any(s.get("backprop_passes", 0) for s in spans)
        # smelt's flop-counter convention has no MTP (counting.md, 13.4), nor truncated backprop: the row below
        # checks those on smelt's own convention
        if not d and not truncated:
            three = 3 * fcv["forward"]
            rows.append(_flop_row("training", "total (flop-counter, 3 x forward)", three, Fraction(train), t))
        main, extra = _cores_by_op(model, snaps["training"])
        causal = train - sum(main) - extra + causal_core(c, main, t) + extra * full
        rows.append(_flop_row("training", "total", own["flops_per_token"]["training"], causal, t))
    if "kv" in parts:
        slots = cache_slots(model, tokens[:, :t])
        kv = own["kv_cache"]
        rows.append(Row("kv", "slots", own["layers_executed"], len(slots), own["layers_executed"] == len(slots)))
        held = sum(x.numel() for slot in slots for x in slot) * kv["element_bytes"]
        rows.append(Row("kv", "bytes_at_context", kv["bytes_at_context"], held, kv["bytes_at_context"] == held))
    return out
