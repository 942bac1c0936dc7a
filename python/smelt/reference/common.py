"""Pieces every module of the reference model shares: the norm and rotary embedding."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .model_config import ModelConfig

ROPE_THETA = 10000.0


class RMSNorm(nn.RMSNorm):
    """``nn.RMSNorm`` that normalises a float16/bfloat16 input in float32, as transformers' RMSNorms do: in half
    precision the backward's 1/rms^3 overflows float16 (the embedding's rms is 0.02 at this init), giving NaN
    gradients. float32 and float64 inputs take ``nn.RMSNorm`` itself, bit for bit."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype not in (torch.float16, torch.bfloat16):
            return super().forward(x)
        y = F.rms_norm(x.float(), self.normalized_shape, None, self.eps).to(x.dtype)
        return y * self.weight if self.weight is not None else y


def norm(cfg: ModelConfig, width: int) -> nn.Module:
    # LayerNorm carries weight and bias: twice RMSNorm's count (counting.md, section 5).
    if cfg.norm == "layernorm":
        return nn.LayerNorm(width, eps=1e-5)
    return RMSNorm(width, eps=1e-6)


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
