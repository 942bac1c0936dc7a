"""A reference PyTorch model for smelt configs (docs/reference-model.md).

``build_model(cfg)`` builds a ``torch.nn.Module`` whose stored parameters and
executed matrix products are the ones smelt counts (docs/counting.md), so the
counts can be checked on a real forward pass. It is a reference, not a fast
model: attention multiplies the full T x T scores and masks afterwards, and
routed experts run in a Python loop over the experts that were hit, each on
its own tokens only.

Weights are random (no checkpoint is loaded): with a generator seeded by
``seed``, every matrix is drawn from N(0, 0.02^2) in ``named_parameters()``
order, biases and sink logits start at 0 and norm weights at 1. On the
``meta`` device nothing is allocated or initialised (for counting only).

A config feature the model does not build raises ``NotImplementedError``
naming the feature; nothing is approximated.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import torch
import torch.nn.functional as F
from torch import nn

import smelt

__all__ = ["build_model", "param_terms", "ReferenceModel", "TERMS"]

# smelt's parameter terms (docs/counting.md, section 5), in its report's order.
TERMS = ("embedding", "lm_head", "attention", "norms", "router", "experts", "shared_experts", "dense_ffn")

ROPE_THETA = 10000.0


def _native(cfg: Any) -> dict:
    if isinstance(cfg, smelt.Config):
        return cfg.to_dict()
    return smelt.read_config(cfg).to_dict()


def _unsupported(cfg: Mapping[str, Any]) -> list[str]:
    """The config's features this model does not build, by their JSON path."""
    att, moe = cfg["attention"], cfg.get("moe")
    out = []
    if att["type"] == "mla":
        out.append('attention.type = "mla" (Multi-head Latent Attention)')
    if cfg.get("mtp_modules", 0):
        out.append(f"mtp_modules = {cfg['mtp_modules']} (multi-token prediction)")
    if moe is not None:
        if moe["router_score"] != "softmax":
            out.append(f'moe.router_score = "{moe["router_score"]}" (only softmax routing)')
    return out


def _norm(cfg: Mapping[str, Any], width: int) -> nn.Module:
    # LayerNorm carries weight and bias: twice RMSNorm's count (counting.md, section 5).
    if cfg["norm"] == "layernorm":
        return nn.LayerNorm(width, eps=1e-5)
    return nn.RMSNorm(width, eps=1e-6)


def _rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary embedding (Su et al. 2021) over the whole head, rotate-half form; x is (B, heads, T, d)."""
    t, d = x.shape[-2], x.shape[-1]
    half = d // 2
    if half == 0:
        return x
    inv = ROPE_THETA ** (-torch.arange(half, dtype=torch.float32, device=x.device) / half)
    ang = torch.arange(t, dtype=torch.float32, device=x.device)[:, None] * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)


def attention_mask(kind: str, t: int, window: int, chunk: int, device=None) -> torch.Tensor:
    """Boolean (T, T) mask, True where query i may attend key j (counting.md, section 3.1)."""
    i = torch.arange(t, device=device)[:, None]
    j = torch.arange(t, device=device)[None, :]
    ok = j <= i
    if kind == "sliding":  # min(p, W) keys, itself included
        ok = ok & (j > i - window)
    elif kind == "chunked":  # its own chunk, up to itself
        ok = ok & (i // chunk == j // chunk)
    return ok


class Attention(nn.Module):
    """GQA/MHA/MQA with explicit head_dim: H*(q + 2kv) + q*H weights, + biases, q/k norms, sinks."""

    def __init__(self, cfg: Mapping[str, Any], kind: str) -> None:
        super().__init__()
        a, h = cfg["attention"], cfg["hidden_size"]
        self.n_h, self.n_kv, self.d = a["num_heads"], a["num_kv_heads"], a["head_dim"]
        self.kind, self.window, self.chunk = kind, a["window"], a["chunk"]
        q, kv = self.n_h * self.d, self.n_kv * self.d
        self.q_proj = nn.Linear(h, q, bias=a["qkv_bias"])
        self.k_proj = nn.Linear(h, kv, bias=a["qkv_bias"])
        self.v_proj = nn.Linear(h, kv, bias=a["qkv_bias"])
        self.o_proj = nn.Linear(q, h, bias=a["out_bias"])
        self.qk_norm = a["qk_norm"]
        if self.qk_norm == "per_head":  # Qwen3: one norm of head_dim each, shared by the heads
            self.q_norm, self.k_norm = _norm(cfg, self.d), _norm(cfg, self.d)
        elif self.qk_norm == "full":  # OLMoE: over all query heads, over all key heads
            self.q_norm, self.k_norm = _norm(cfg, q), _norm(cfg, kv)
        self.sinks = nn.Parameter(torch.empty(self.n_h)) if a["sinks"] else None

    def forward(self, x: torch.Tensor, cache: list | None = None) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.qk_norm == "full":
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(b, t, self.n_h, self.d).transpose(1, 2)
        k = k.view(b, t, self.n_kv, self.d).transpose(1, 2)
        v = v.view(b, t, self.n_kv, self.d).transpose(1, 2)
        if self.qk_norm == "per_head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = _rope(q), _rope(k)
        if cache is not None:  # what a decoder keeps: all T, or the last window / one chunk's capacity
            keep = {"full": t, "sliding": min(t, self.window), "chunked": min(t, self.chunk)}[self.kind]
            cache.append((k[:, :, t - keep :], v[:, :, t - keep :]))
        rep = self.n_h // self.n_kv  # each KV head serves n_h / n_kv query heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
        mask = attention_mask(self.kind, t, self.window, self.chunk, x.device)
        scores = scores.masked_fill(~mask, float("-inf"))
        if self.sinks is not None:  # gpt-oss: a learned logit per head joins the softmax, then is dropped
            sink = self.sinks.view(1, self.n_h, 1, 1).expand(b, self.n_h, t, 1).to(scores.dtype)
            probs = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :t]
        else:
            probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, self.n_h * self.d)
        return self.o_proj(out)


class FFN(nn.Module):
    """One FFN of width f: gated (SwiGLU, 3 matrices) or plain (2, GELU); biases 2f + h or f + h."""

    def __init__(self, cfg: Mapping[str, Any], width: int) -> None:
        super().__init__()
        h, fc = cfg["hidden_size"], cfg["ffn"]
        self.gated = fc["type"] == "gated"
        bias = fc["bias"]
        if self.gated:
            self.gate_proj = nn.Linear(h, width, bias=bias)
        self.up_proj = nn.Linear(h, width, bias=bias)
        self.down_proj = nn.Linear(width, h, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.gelu(self.up_proj(x)))


class MoE(nn.Module):
    """Router H -> E (softmax, top-k), E routed experts run on their own tokens, S shared experts."""

    def __init__(self, cfg: Mapping[str, Any], renormalize: bool) -> None:
        super().__init__()
        m, h = cfg["moe"], cfg["hidden_size"]
        self.top_k, self.renormalize = m["top_k"], renormalize
        # router_bias: one bias per expert on the logits (gpt-oss), so it moves the choice and the weights.
        self.router = nn.Linear(h, m["num_experts"], bias=m["router_bias"])
        self.experts = nn.ModuleList(FFN(cfg, m["expert_width"]) for _ in range(m["num_experts"]))
        self.shared = nn.ModuleList(FFN(cfg, m["shared_width"]) for _ in range(m["num_shared_experts"]))
        # Qwen2-MoE: sigmoid(Linear(H, 1)) scales the shared experts' output.
        self.shared_gate = nn.Linear(h, 1, bias=False) if m["shared_gate"] else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        probs = torch.softmax(self.router(x), dim=-1)
        weight, chosen = torch.topk(probs, self.top_k, dim=-1)
        if self.renormalize:
            weight = weight / weight.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e in torch.unique(chosen).tolist():  # only the experts that were hit, on their tokens
            tok, slot = torch.nonzero(chosen == e, as_tuple=True)
            y = self.experts[e](x[tok]) * weight[tok, slot, None].to(x.dtype)
            out = out.index_add(0, tok, y)
        if len(self.shared):
            s = sum(f(x) for f in self.shared)
            if self.shared_gate is not None:
                s = torch.sigmoid(self.shared_gate(x)) * s
            out = out + s
        return out.reshape(shape)


class Block(nn.Module):
    """Pre-norm layer: x + s*attn(norm(x)), then x + s*ffn(norm(x)); s is 1 outside the loop."""

    def __init__(self, cfg: Mapping[str, Any], kind: str, is_moe: bool, renormalize: bool) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        self.attn_norm, self.attn = _norm(cfg, h), Attention(cfg, kind)
        self.ffn_norm = _norm(cfg, h)
        self.ffn = MoE(cfg, renormalize) if is_moe else FFN(cfg, cfg["ffn"]["dense_width"])

    def forward(self, x: torch.Tensor, scale: float = 1.0, cache: list | None = None) -> torch.Tensor:
        x = x + scale * self.attn(self.attn_norm(x), cache)
        return x + scale * self.ffn(self.ffn_norm(x))


def _moe_layers(cfg: Mapping[str, Any]) -> set[int]:
    """0-based MoE layers (docs/config.md, section 1.4)."""
    moe = cfg.get("moe")
    if moe is None:
        return set()
    sel = moe["layers"]
    if isinstance(sel, list):
        return {i - 1 for i in sel}
    f, n, p = sel.get("first_dense", 0), sel.get("every", 1), sel.get("phase", 0)
    return {i for i in range(cfg["num_layers"]) if i >= f and i % n == p}


class ReferenceModel(nn.Module):
    """Embedding, the layers (the looped span executed ``count`` times), final norm, LM head."""

    def __init__(self, cfg: Mapping[str, Any], renormalize: bool = True) -> None:
        super().__init__()
        bad = _unsupported(cfg)
        if bad:
            raise NotImplementedError("smelt.torch cannot build yet: " + "; ".join(bad))
        self.config = dict(cfg)
        v, h, n = cfg["vocab_size"], cfg["hidden_size"], cfg["num_layers"]
        pattern, moe = cfg["attention"]["pattern"], _moe_layers(cfg)
        self.embed = nn.Embedding(v, h)
        self.layers = nn.ModuleList(Block(cfg, pattern[i % len(pattern)], i in moe, renormalize) for i in range(n))
        self.final_norm = _norm(cfg, h)
        self.lm_head = None if cfg["tie_embeddings"] else nn.Linear(h, v, bias=False)
        self.schedule = self._schedule(cfg)

    @staticmethod
    def _schedule(cfg: Mapping[str, Any]) -> list[tuple[int, float]]:
        """(0-based layer, residual scale) per executed visit (docs/config.md, section 1.5)."""
        n, loop = cfg["num_layers"], cfg.get("loop")
        if not loop or loop.get("count", 1) <= 1:
            return [(i, 1.0) for i in range(n)]
        first, _, last = loop["span"].partition("-")
        lo, hi = int(first) - 1, int(last or first) - 1
        s = float(loop.get("residual_scale", 1.0 / loop["count"]))
        span = [(i, s) for i in range(lo, hi + 1)]
        return [(i, 1.0) for i in range(lo)] + span * loop["count"] + [(i, 1.0) for i in range(hi + 1, n)]

    def forward(self, tokens: torch.Tensor, cache: list | None = None) -> torch.Tensor:
        """Logits for every position; a ``cache`` list receives one (K, V) per attention visit.

        The cache holds the keys (after RoPE) and values of the KV heads that a decoder would keep after these
        tokens; this slice fills it on a prefill and does not yet decode incrementally from it.
        """
        x = self.embed(tokens)
        for i, scale in self.schedule:  # a looped layer is the same module on every visit
            x = self.layers[i](x, scale, cache)
        x = self.final_norm(x)
        if self.lm_head is None:
            return F.linear(x, self.embed.weight)
        return self.lm_head(x)


def _init(model: nn.Module, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    norms = {id(p) for m in model.modules() if isinstance(m, (nn.RMSNorm, nn.LayerNorm)) for p in m.parameters()}
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if id(p) in norms:
                p.fill_(0.0 if leaf == "bias" else 1.0)
            elif leaf in ("bias", "sinks"):
                p.zero_()
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


def build_model(cfg: Any, seed: int = 0, device: Any = None, renormalize: bool = True) -> ReferenceModel:
    """The reference model of ``cfg`` (a path, dict or ``smelt.Config``, native or Hugging Face).

    ``renormalize``: top-k routing weights divided by their sum (Mixtral's
    softmax over the chosen logits); the native config has no field for it and
    no count depends on it.
    """
    native = _native(cfg)
    dev = torch.device(device) if device is not None else torch.device("cpu")
    with dev:
        model = ReferenceModel(native, renormalize)
    if dev.type != "meta":
        _init(model, seed)
    return model


def _term(name: str) -> str:
    if name.startswith("embed."):
        return "embedding"
    if name.startswith("lm_head."):
        return "lm_head"
    if name.startswith("final_norm.") or ".attn_norm." in name or ".ffn_norm." in name:
        return "norms"
    if ".attn." in name:
        return "attention"
    if ".ffn.router." in name:
        return "router"
    if ".ffn.experts." in name:
        return "experts"
    if ".ffn.shared" in name:
        return "shared_experts"
    return "dense_ffn"


def param_terms(model: nn.Module) -> dict[str, int]:
    """Stored parameters per smelt term; a tied head and a looped layer appear once."""
    out = dict.fromkeys(TERMS, 0)
    for name, p in model.named_parameters():
        out[_term(name)] += p.numel()
    return out


def shrink(cfg: Any, max_hidden: int = 128, max_vocab: int = 1024) -> dict:
    """A tiny copy of ``cfg`` (native dict) for tests (docs/reference-model.md, "Shrinking").

    f is the smallest power of two with hidden_size / f <= max_hidden; every
    width (hidden, head_dim, MLA ranks and head sizes, expert, shared and dense
    widths) is divided by f (rounded down, at least 1), the vocabulary too
    (at most max_vocab). Counts of heads, KV heads, experts, top_k, shared
    experts, layers, the attention pattern, the MoE layers and the loop are
    kept, so every ratio between them is unchanged. The context becomes at
    most 32 tokens, a window or chunk at most 8.
    """
    c = _native(cfg)
    f = 1
    while c["hidden_size"] // f > max_hidden:
        f *= 2

    def div(w: int) -> int:
        return max(1, w // f) if w else 0

    c["hidden_size"] = div(c["hidden_size"])
    c["vocab_size"] = min(max_vocab, div(c["vocab_size"]))
    c["context_length"] = min(c["context_length"], 32)
    a = c["attention"]
    for key in ("head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        if key in a:
            a[key] = div(a[key])
    a["window"], a["chunk"] = min(a["window"], 8), min(a["chunk"], 8)
    c["ffn"]["dense_width"] = div(c["ffn"]["dense_width"])
    if c.get("moe"):
        c["moe"]["expert_width"] = div(c["moe"]["expert_width"])
        c["moe"]["shared_width"] = div(c["moe"]["shared_width"])
    return smelt.read_config(c).to_dict()
