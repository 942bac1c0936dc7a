"""Pieces every module of the reference model shares: the norm and rotary embedding."""

from __future__ import annotations

from typing import Any, Mapping

import torch
from torch import nn

ROPE_THETA = 10000.0


def norm(cfg: Mapping[str, Any], width: int) -> nn.Module:
    # LayerNorm carries weight and bias: twice RMSNorm's count (counting.md, section 5).
    if cfg["norm"] == "layernorm":
        return nn.LayerNorm(width, eps=1e-5)
    return nn.RMSNorm(width, eps=1e-6)


def rope(x: torch.Tensor, start: int = 0) -> torch.Tensor:
    """Rotary embedding (Su et al. 2021) over the whole head, rotate-half form; x is (B, heads, T, d) at the
    absolute positions start, ..., start + T - 1 (a decode step continues after the cached tokens)."""
    t, d = x.shape[-2], x.shape[-1]
    half = d // 2
    if half == 0:
        return x
    # transformers' inv_freq bit for bit (1 / theta^(2j/d) in float32); the angles in float64 for a float64
    # model, so it is float64 throughout (docs/reference-model.md, "Against Hugging Face transformers").
    inv = 1.0 / ROPE_THETA ** (torch.arange(half, dtype=torch.float32, device=x.device) / half)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    pos = torch.arange(start, start + t, dtype=work, device=x.device)
    ang = pos[:, None] * inv.to(work)[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)
