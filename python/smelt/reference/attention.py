"""GQA / MHA / MQA attention with an explicit head_dim, and the masks (docs/reference-model.md)."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from .common import norm, rope
from .lora import project
from .model_config import ModelConfig


def position_mask(kind: str, q_pos: torch.Tensor, k_pos: torch.Tensor, window: int, chunk: int) -> torch.Tensor:
    """Boolean (queries, keys) mask by absolute positions, True where the query may attend the key."""
    i, j = q_pos[:, None], k_pos[None, :]
    ok = j <= i
    if kind == "sliding":  # min(p, W) keys, itself included
        ok = ok & (j > i - window)
    elif kind == "chunked":  # its own chunk, up to itself
        ok = ok & (i // chunk == j // chunk)
    return ok


def attention_mask(kind: str, t: int, window: int, chunk: int, device=None) -> torch.Tensor:
    """Boolean (T, T) mask, True where query i may attend key j (counting.md, section 3.1)."""
    pos = torch.arange(t, device=device)
    return position_mask(kind, pos, pos, window, chunk)


def held(kind: str, t: int, window: int, chunk: int) -> int:
    """Tokens a cache slot keeps after t tokens: smelt's count (counting.md, section 7)."""
    return {"full": t, "sliding": min(t, window), "chunked": min(t, chunk)}[kind]


def attend(m: nn.Module, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start: int) -> torch.Tensor:
    """softmax(q k^T * m.scale, masked) v for queries at start.. and the last keys up to start + t.

    q, k, v are (B, n_h, ., .); the full scores are multiplied, then masked by absolute positions, so a decode
    step and a prefill mask the same (query, key) pairs. With ``m.sdpa`` set (smelt.hf's ``attn_implementation``
    "sdpa") the same mask and scale go to ``F.scaled_dot_product_attention``; sinks (gpt-oss) keep this form.
    """
    b, t, n = q.shape[0], q.shape[2], k.shape[2]
    q_pos = torch.arange(start, start + t, device=q.device)
    k_pos = torch.arange(start + t - n, start + t, device=q.device)
    mask = position_mask(m.kind, q_pos, k_pos, m.window, m.chunk)
    if getattr(m, "sdpa", False) and m.sinks is None:  # the same masked softmax, in torch's fused kernel
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=m.scale)
    scores = torch.matmul(q, k.transpose(-1, -2)) * m.scale
    scores = scores.masked_fill(~mask, float("-inf"))
    if m.sinks is not None:  # gpt-oss: a learned logit per head joins the softmax, then is dropped
        sink = m.sinks.view(1, m.n_h, 1, 1).expand(b, m.n_h, t, 1).to(scores.dtype)
        probs = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :n]
    else:
        probs = torch.softmax(scores, dim=-1)
    return torch.matmul(probs, v)


def core(m: nn.Module, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start: int) -> torch.Tensor:
    """``attend``, under ``torch.utils.checkpoint`` when ``m.checkpoint_core`` (selective recompute) and training.

    The reentrant form saves q, k and v with ``ctx.save_for_backward``, where ``saved_tensors_hooks`` see them
    (the non-reentrant form keeps them out of the hooks' sight), and recomputes the scores, the mask and the
    softmax in the backward; the mask is made inside from positions, so it is never a kept input.
    """
    if m.checkpoint_core and torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return checkpoint(attend, m, q, k, v, start, use_reentrant=True)
    return attend(m, q, k, v, start)


class Attention(nn.Module):
    """GQA/MHA/MQA with explicit head_dim: H*(q + 2kv) + q*H weights, + biases, q/k norms, sinks."""

    def __init__(self, cfg: ModelConfig, kind: str) -> None:
        super().__init__()
        a, h = cfg.attention, cfg.hidden_size
        self.n_h, self.n_kv, self.d = a.num_heads, a.num_kv_heads, a.head_dim
        self.kind, self.window, self.chunk = kind, a.window, a.chunk
        q, kv = self.n_h * self.d, self.n_kv * self.d
        qk_bias = a.qkv_bias or a.qk_bias  # Huginn's qk_bias: q and k only
        self.q_proj = nn.Linear(h, q, bias=qk_bias)
        self.k_proj = nn.Linear(h, kv, bias=qk_bias)
        self.v_proj = nn.Linear(h, kv, bias=a.qkv_bias)
        self.o_proj = nn.Linear(q, h, bias=a.out_bias)
        self.qk_norm = a.qk_norm
        if self.qk_norm == "per_head":  # Qwen3: one norm of head_dim each, shared by the heads
            self.q_norm, self.k_norm = norm(cfg, self.d), norm(cfg, self.d)
        elif self.qk_norm == "full":  # OLMoE: over all query heads, over all key heads
            self.q_norm, self.k_norm = norm(cfg, q), norm(cfg, kv)
        self.sinks = nn.Parameter(torch.empty(self.n_h)) if a.sinks else None
        self.scale = 1.0 / math.sqrt(self.d)
        self.checkpoint_core = False  # selective recompute (``core``), set by ReferenceModel

    def forward(
        self, x: torch.Tensor, cache: Any = None, visit: int = 0, reads_only: bool = False, keeps_recent: bool = False,
        lora_pass: int = 0,
    ) -> torch.Tensor:
        """Attention of x's t tokens; with a ``KVCache``, they follow its ``length`` cached tokens in slot ``visit``.
        Under kv_policy 'shared' (``reference_model.Visit``): ``reads_only``, a later pass, attends with what the
        first pass of its layer attended with in this call; ``keeps_recent``, that first pass, keeps it for them.
        ``lora_pass``: the pass a per-visit LoRA adapts for."""
        b, t, _ = x.shape
        start = cache.length if cache is not None else 0
        q, k, v = (project(m, x, lora_pass) for m in (self.q_proj, self.k_proj, self.v_proj))
        if self.qk_norm == "full":
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(b, t, self.n_h, self.d).transpose(1, 2)
        k = k.view(b, t, self.n_kv, self.d).transpose(1, 2)
        v = v.view(b, t, self.n_kv, self.d).transpose(1, 2)
        if self.qk_norm == "per_head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = rope(q, start), rope(k, start)  # at the absolute positions
        past = cache.get(visit) if cache is not None else None
        if reads_only:  # kv_policy 'shared': the keys and values the first pass attended with in this call
            k, v = cache.recent[visit]
        elif past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        if keeps_recent:  # the first pass of a shared layer: what its later passes read in this call
            cache.recent[visit] = (k, v)
        if cache is not None and not reads_only:  # what a decoder keeps: all tokens, or the last window / chunk
            keep = held(self.kind, start + t, self.window, self.chunk)
            cache.put(visit, (k[:, :, k.shape[2] - keep :], v[:, :, v.shape[2] - keep :]))
        rep = self.n_h // self.n_kv  # each KV head serves n_h / n_kv query heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        out = core(self, q, k, v, start).transpose(1, 2).reshape(b, t, self.n_h * self.d)
        return project(self.o_proj, out, lora_pass)
