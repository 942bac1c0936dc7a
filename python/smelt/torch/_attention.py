"""GQA / MHA / MQA attention with an explicit head_dim, and the masks (docs/reference-model.md)."""

from __future__ import annotations

import math
from typing import Any, Mapping

import torch
from torch import nn

from ._common import norm, rope


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
            self.q_norm, self.k_norm = norm(cfg, self.d), norm(cfg, self.d)
        elif self.qk_norm == "full":  # OLMoE: over all query heads, over all key heads
            self.q_norm, self.k_norm = norm(cfg, q), norm(cfg, kv)
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
        q, k = rope(q), rope(k)
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
