"""The reference model: blocks, the loop schedule and initialisation (docs/reference-model.md).

torch alone: no import of smelt's core, so these modules also run as a Hugging Face checkpoint's own code
(smelt.hf.save(..., with_code=True), docs/training.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from .args import check_int
from .attention import Attention
from .common import norm
from .kv_cache import KVCache
from .lora import attach as attach_lora
from .mla import MLA
from .model_config import Loop, ModelConfig
from .moe import FFN, MoE
from .mtp import MTPModule, training_loss


class Visit(NamedTuple):
    """What one layer visit needs beside its input, passed in as an argument: its cache slot; under kv_policy
    'shared' whether it only reads the slot its span's first pass keeps (a later pass) or keeps what it attends with
    for those passes (the first pass of a shared layer); and which pass of its layer it is, for a per-visit LoRA.
    A recomputed visit (``torch.utils.checkpoint``) gets the same arguments again."""

    slot: int = 0
    reads_only: bool = False
    keeps_recent: bool = False
    lora_pass: int = 0  # the pass of its layer this visit is (0-based): what a per-visit LoRA adapts for


@dataclass
class ReferenceOutput:
    """One forward of ``ReferenceModel``: ``logits`` (B, t, V); ``hidden`` (B, t, H), the last hidden state, the
    final norm's input (h^0 of the MTP modules); ``router_logits``, each MoE visit's router logits (N, E) in the
    executed order when asked for (``output_router_logits``), else empty; ``exit_logits``, each exit gate's logit
    per pass (B, t, 1) (Ouro), in order."""

    logits: torch.Tensor
    hidden: torch.Tensor
    router_logits: tuple[torch.Tensor, ...] = ()
    exit_logits: tuple[torch.Tensor, ...] = ()


class Block(nn.Module):
    """One layer; s is 1 outside a looped span. By ``norm_placement`` (docs/config.md): ``pre``,
    x + s*f(norm(x)); ``sandwich`` (Ouro), x + s*post(f(norm(x))); ``sandwich_residual`` (Huginn),
    post(x + s*f(norm(x))); for f the attention, then the FFN."""

    def __init__(self, cfg: ModelConfig, kind: str, is_moe: bool) -> None:
        super().__init__()
        h = cfg.hidden_size
        attention = MLA if cfg.attention.type == "mla" else Attention
        self.attn_norm, self.attn = norm(cfg, h), attention(cfg, kind)
        self.ffn_norm = norm(cfg, h)
        self.ffn = MoE(cfg) if is_moe else FFN(cfg, cfg.ffn.dense_width)
        self.placement = cfg.norm_placement
        if self.placement != "pre":
            self.attn_post_norm, self.ffn_post_norm = norm(cfg, h), norm(cfg, h)

    def forward(
        self, x: torch.Tensor, scale: float = 1.0, cache: KVCache | None = None, visit: Visit = Visit(),
        recompute: bool = False, routed: list | None = None,
    ) -> torch.Tensor:
        """``recompute``: under ``torch.utils.checkpoint`` when training (full recompute of this visit). ``routed``:
        a list the MoE router appends its logits to.

        The reentrant form saves x alone, with ``ctx.save_for_backward`` (where ``saved_tensors_hooks`` see
        it); RoPE's tables and the masks are made inside from positions, so they are recomputed, never kept.
        """
        if recompute and cache is None and torch.is_grad_enabled() and x.requires_grad:
            return checkpoint(self._layer, x, scale, None, visit, routed, use_reentrant=True)
        return self._layer(x, scale, cache, visit, routed)

    def _layer(
        self, x: torch.Tensor, scale: float, cache: KVCache | None, visit: Visit, routed: list | None
    ) -> torch.Tensor:
        a = self.attn(self.attn_norm(x), cache, *visit)
        extra = routed if isinstance(self.ffn, MoE) else visit.lora_pass

        def ffn(h: torch.Tensor) -> torch.Tensor:
            return self.ffn(h, extra)

        if self.placement == "pre":
            x = x + scale * a
            return x + scale * ffn(self.ffn_norm(x))
        if self.placement == "sandwich":
            x = x + scale * self.attn_post_norm(a)
            return x + scale * self.ffn_post_norm(ffn(self.ffn_norm(x)))
        x = self.attn_post_norm(x + scale * a)
        return self.ffn_post_norm(x + scale * ffn(self.ffn_norm(x)))


RECOMPUTE = ("none", "selective", "full")


def _check_recompute(function: str, recompute: Any, recompute_layers: Any) -> None:
    """smelt's MemoryLayout rules for the two recompute fields (docs/memory.md, "The layout")."""
    if recompute not in RECOMPUTE:
        raise ValueError(f"{function}(): recompute = {recompute!r}: must be 'none', 'selective' or 'full'")
    check_int(function, "recompute_layers", recompute_layers, 0)
    if recompute_layers and recompute != "full":
        raise ValueError(f"{function}(): recompute_layers = {recompute_layers}: only with recompute = 'full'")


class ReferenceModel(nn.Module):
    """Embedding, the layers (the looped span executed ``count`` times), final norm, LM head.

    ``recompute`` trades the activations a training forward keeps for a second forward in the backward, as
    ``smelt.memory``'s field of that name counts (docs/memory.md, "Recompute"), with the reentrant
    ``torch.utils.checkpoint``: ``"selective"`` recomputes every layer visit's attention core (the scores, the
    mask, the softmax and its product with V; ``_attention.core``), ``"full"`` whole layer visits, the first
    ``recompute_layers`` in the executed order (loop passes included; all when 0). The MTP modules' layers are
    not the model's visits and are never recomputed (smelt counts them whole). Results are unchanged.
    """

    def __init__(
        self, cfg: Mapping[str, Any] | ModelConfig, *, recompute: str = "none", recompute_layers: int = 0
    ) -> None:
        super().__init__()
        _check_recompute("ReferenceModel", recompute, recompute_layers)
        self.recompute, self.recompute_layers = recompute, recompute_layers
        self.config = cfg = ModelConfig.from_native(cfg)  # typed once; every module reads this
        v, h, n = cfg.vocab_size, cfg.hidden_size, cfg.num_layers
        self.embed = nn.Embedding(v, h)
        self.layers = nn.ModuleList(Block(cfg, cfg.attention.kind(i), cfg.is_moe_layer(i)) for i in range(n))
        for layer in self.layers:
            layer.attn.checkpoint_core = recompute == "selective"
        self.final_norm = norm(cfg, h)
        self.lm_head = None if cfg.tie_embeddings else nn.Linear(h, v, bias=False)
        self.schedule = self._schedule(cfg)
        # Per-pass extras of the spans (Ouro): visit index -> (norm after it, exit gate index or None).
        spans = cfg.loops
        for span in spans:
            if span.kv_policy == "active":
                raise NotImplementedError(
                    "kv_policy = 'active': not built in the reference model (its tokens at each depth are a "
                    "router's choice); smelt counts it (docs/counting.md, section 8.1)"
                )
        gated = [s for s in spans if s.exit_gate]
        self.exit_gates = nn.ModuleList(nn.Linear(h, 1) for _ in gated)
        self.pass_ends = self._pass_ends(spans, gated)
        # Huginn: an adapter Linear(2H, H) before every pass, the final norm after the last, the first passes
        # without gradients (truncated backprop): visit index -> (adapter index, the pass's number, the span).
        injected = [s for s in spans if s.injection == "linear"]
        self.injections = nn.ModuleList(nn.Linear(2 * h, h, bias=s.injection_bias) for s in injected)
        self.pass_starts = self._pass_starts(spans, injected)
        self.norm_after = {self._last_visit(s) for s in spans if s.norm_after and s.count > 1}
        # Relaxed recursive: per-visit LoRA on the spans' projections; the pass of each visit of its layer.
        self.lora = attach_lora(self, spans)
        self.slot_of, self.reads_only = self._kv_slots(spans)
        self.shared_slots = {self.slot_of[v] for v in self.reads_only}
        if self.reads_only and recompute != "none":
            raise ValueError(
                f"ReferenceModel(): recompute = {recompute!r}: not built with kv_policy 'shared' (a later pass "
                "reads the first pass's slot, set before it runs)"
            )
        seen: dict[int, int] = {}
        self.visit_pass: list[int] = []
        for i, _ in self.schedule:
            seen[i] = seen.get(i, -1) + 1
            self.visit_pass.append(seen[i])
        # Multi-token prediction (mtp.py): each module's layer shaped like the last one, full attention.
        d = cfg.mtp_modules
        last = (cfg, "full", cfg.is_moe_layer(n - 1))
        self.mtp = nn.ModuleList(MTPModule(cfg, Block(*last)) for _ in range(d)) if d else None

    @staticmethod
    def _schedule(cfg: ModelConfig) -> list[tuple[int, float]]:
        """(0-based layer, residual scale) per executed visit (docs/config.md, section 1.5): the layers in order,
        each looped span run ``count`` times over."""
        out: list[tuple[int, float]] = []
        nxt = 0
        for loop in cfg.loops:
            if loop.count <= 1:
                continue
            lo, hi, s = loop.lo, loop.hi, float(loop.residual_scale)
            out += [(i, 1.0) for i in range(nxt, lo)] + [(i, s) for i in range(lo, hi + 1)] * loop.count
            nxt = hi + 1
        return out + [(i, 1.0) for i in range(nxt, cfg.num_layers)]

    def _kv_slots(self, spans: tuple[Loop, ...]) -> tuple[list[int], set[int]]:
        """The cache slot of each visit, and the visits that only read one: with kv_policy 'shared' a span's later
        passes attend to the keys and values its first pass cached (recursive KV sharing); otherwise a slot
        per visit."""
        shared = [s for s in spans if s.kv_policy == "shared" and s.count > 1]
        if shared and self.config.attention.type == "mla":
            raise NotImplementedError("kv_policy = 'shared' with MLA: not built in the reference model")
        slot_of: list[int] = []
        reads: set[int] = set()
        first: dict[int, int] = {}  # layer -> the slot its latest caching visit wrote
        slots = 0
        for v, (i, _) in enumerate(self.schedule):
            if i in first and any(s.lo <= i <= s.hi for s in shared):
                slot_of.append(first[i])  # a later pass: the first pass's slot, read only
                reads.add(v)
            else:
                first[i] = slots
                slot_of.append(slots)
                slots += 1
        return slot_of, reads

    def _last_visit(self, span: Loop) -> int:
        return max(v for v, (i, _) in enumerate(self.schedule) if i == span.hi)

    def _pass_starts(self, spans: tuple[Loop, ...], injected: list[Loop]) -> dict[int, tuple[int | None, int, Loop]]:
        """Visit index starting a pass of a span with an adapter or truncated backprop -> (its adapter's index,
        the pass's 0-based number, the span)."""
        out: dict[int, tuple[int | None, int, Loop]] = {}
        for span in spans:
            adapter = next((a for a, s in enumerate(injected) if s is span), None)
            if span.count <= 1 or (adapter is None and not span.backprop_passes):
                continue
            starts = [v for v, (i, _) in enumerate(self.schedule) if i == span.lo]
            for n, v in enumerate(starts):
                out[v] = (adapter, n, span)
        return out

    def _pass_ends(self, spans: tuple[Loop, ...], gated: list[Loop]) -> dict[int, tuple[bool, int | None]]:
        """Visit index ending a pass of a span with extras -> (the final norm after it, its gate's index)."""
        out: dict[int, tuple[bool, int | None]] = {}
        for span in spans:
            gate = next((g for g, s in enumerate(gated) if s is span), None)
            if not span.norm_each_pass and gate is None:
                continue
            ends = [v for v, (i, _) in enumerate(self.schedule) if i == span.hi]
            for v in ends:
                out[v] = (span.norm_each_pass and v != len(self.schedule) - 1, gate)
        return out

    def forward(
        self, tokens: torch.Tensor, cache: KVCache | list | None = None, output_router_logits: bool = False
    ) -> ReferenceOutput:
        """The outputs (``ReferenceOutput``: logits, last hidden state, router and exit logits) for every position
        of the (B, t) tokens.

        With a ``KVCache`` the tokens follow the ``cache.length`` tokens it has seen (RoPE and the masks at
        their absolute positions) and the cache is updated: a prefill, then one decode step per call. An empty
        list receives the slots of a fresh cache after these tokens (the prefill-only form).
        ``output_router_logits``: every MoE visit's router logits too (smelt.hf's load-balancing loss reads them).
        """
        grad = torch.is_grad_enabled()
        try:
            return self._forward(tokens, cache, grad, [] if output_router_logits else None)
        finally:
            torch.set_grad_enabled(grad)  # truncated backprop turns it off for the first passes

    def _forward(
        self, tokens: torch.Tensor, cache: KVCache | list | None, grad: bool, routed: list | None
    ) -> ReferenceOutput:
        kv = KVCache() if isinstance(cache, list) else cache
        slots = max(self.slot_of, default=-1) + 1
        if kv is not None and len(kv) not in (0, slots):
            what = "attention visits" if not self.reads_only else "slots (a later pass of a shared span reads its first's)"
            raise ValueError(f"KVCache has {len(kv)} slots: this model has {slots} {what}")
        if kv is None and self.reads_only:  # a later pass reads what its first pass keeps: a cache for this call
            kv = KVCache()
        x = self.embed(tokens)
        full = self.recompute == "full"
        exits: list[torch.Tensor] = []
        last = len(self.schedule) - 1
        prelude = x  # a span's input on its first pass (Huginn's adapter reads it on every pass)
        for v, (i, scale) in enumerate(self.schedule):  # a looped layer is the same module on every visit
            if v in self.pass_starts:
                x, prelude = self._start_pass(v, x, prelude if self.pass_starts[v][1] else x, grad)
            again = full and (self.recompute_layers == 0 or v < self.recompute_layers)
            visit = Visit(self.slot_of[v], v in self.reads_only, self.slot_of[v] in self.shared_slots, self.visit_pass[v])
            x = self.layers[i](x, scale, kv, visit, recompute=again, routed=routed)
            if v in self.norm_after:  # Huginn's ln_f on the recurrence's output, fed to the coda
                x = self.final_norm(x)
            normed, gate = self.pass_ends.get(v, (False, None))
            x = self.final_norm(x) if normed else x  # Ouro: the final norm after every step, fed on
            if gate is not None and v != last:
                exits.append(self.exit_gates[gate](x))
        if kv is not None:
            kv.length += tokens.shape[1]
        if isinstance(cache, list):
            cache.extend(kv.slots)
        hidden, x = x, self.final_norm(x)
        _, gate = self.pass_ends.get(last, (False, None))
        if gate is not None:  # the last step's gate reads the model's normed output
            exits.append(self.exit_gates[gate](x))
        logits = F.linear(x, self.embed.weight) if self.lm_head is None else self.lm_head(x)
        return ReferenceOutput(logits, hidden, tuple(routed or ()), tuple(exits))

    def _start_pass(
        self, v: int, x: torch.Tensor, prelude: torch.Tensor, grad: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A pass of a span begins: Huginn's adapter on [state, the span's input of the first pass] (the state
        starts at zero here; Huginn draws it at random), and, with truncated backprop, gradients only through
        the last ``backprop_passes`` passes (the earlier ones run as under ``torch.no_grad``)."""
        adapter, n, span = self.pass_starts[v]
        keep = span.backprop_passes
        if keep:
            torch.set_grad_enabled(grad and n >= span.count - keep)
            if n == span.count - keep:
                x = x.detach()
        if adapter is not None:
            state = torch.zeros_like(x) if n == 0 else x
            x = self.injections[adapter](torch.cat([state, prelude], dim=-1))
        return x, prelude

    def loss(self, tokens: torch.Tensor, mtp_weight: float = 0.3) -> torch.Tensor:
        """Next-token loss on tokens[:, :T] plus the MTP modules' (T = length - mtp_modules - 1; mtp.py)."""
        return training_loss(self, tokens, mtp_weight)


def _init(model: nn.Module, seed: int, assign: Any = None) -> None:
    """Seeded weights (smelt.torch's docstring); ``assign(p, value)`` writes one (smelt.hf passes transformers'
    ``init.copy_``, which leaves a loaded tensor alone). Every matrix draws from the generator whether or not it
    is written, so a seed gives the same weights to the tensors that are."""
    g = torch.Generator().manual_seed(seed)
    norms = {id(p) for m in model.modules() if isinstance(m, (nn.RMSNorm, nn.LayerNorm)) for p in m.parameters()}
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if id(p) in norms:
                value = torch.full(p.shape, 0.0 if leaf == "bias" else 1.0)
            elif leaf.endswith("bias") or leaf == "sinks":  # DeepSeek-V3's correction bias starts at 0 too
                value = torch.zeros(p.shape)
            else:
                # float32 draws whatever the default dtype: a seed gives one model, widened or not
                value = torch.randn(p.shape, generator=g, dtype=torch.float32) * 0.02
            if assign is None:
                p.copy_(value)
            else:
                assign(p, value.to(p.dtype))

