"""Multi-head Latent Attention (DeepSeek-V2 paper, section 2.1; names as in HF's ``DeepseekV3Attention``)."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from .attention import core, held
from .common import norm, rope
from .model_config import ModelConfig


class MLA(nn.Module):
    """Queries H -> r_q -> n_h*(d_nope + d_rope) (or H -> n_h*(d_nope + d_rope) without q_lora_rank); keys and
    values H -> r_kv + d_rope, the latent normed and lifted to n_h*(d_nope + d_v); output n_h*d_v -> H.

    The d_rope key is one per token, shared by every head; RoPE turns only the d_rope parts. A cache slot holds
    the normed latent and the rotated rope key (r_kv + d_rope per token), never the lifted K and V: every
    forward lifts the held latents again through ``kv_b_proj`` (smelt's training form, counting.md 3.2).
    """

    def __init__(self, cfg: ModelConfig, kind: str) -> None:
        super().__init__()
        a, h = cfg.attention, cfg.hidden_size
        self.n_h, self.r_q, self.r_kv = a.num_heads, a.q_lora_rank, a.kv_lora_rank
        self.d_nope, self.d_rope, self.d_v = a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim
        self.kind, self.window, self.chunk = kind, a.window, a.chunk
        qk = self.n_h * (self.d_nope + self.d_rope)
        if self.r_q > 0:
            self.q_a_proj = nn.Linear(h, self.r_q, bias=False)
            self.q_a_layernorm = norm(cfg, self.r_q)
            self.q_b_proj = nn.Linear(self.r_q, qk, bias=False)
        else:  # DeepSeek-V2-Lite: q_lora_rank null
            self.q_proj = nn.Linear(h, qk, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(h, self.r_kv + self.d_rope, bias=False)
        self.kv_a_layernorm = norm(cfg, self.r_kv)
        self.kv_b_proj = nn.Linear(self.r_kv, self.n_h * (self.d_nope + self.d_v), bias=False)
        self.o_proj = nn.Linear(self.n_h * self.d_v, h, bias=a.out_bias)
        self.sinks = nn.Parameter(torch.empty(self.n_h)) if a.sinks else None
        self.scale = 1.0 / math.sqrt(self.d_nope + self.d_rope)
        self.checkpoint_core = False  # selective recompute (attention.py's ``core``), set by ReferenceModel

    def forward(
        self, x: torch.Tensor, cache: Any = None, visit: int = 0, reads_only: bool = False, keeps_recent: bool = False,
        lora_pass: int = 0,
    ) -> torch.Tensor:
        """As ``Attention.forward``; neither kv_policy 'shared' nor a per-visit LoRA is built with MLA (refused by
        ReferenceModel and smelt's rules)."""
        b, t, _ = x.shape
        start = cache.length if cache is not None else 0
        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x))) if self.r_q > 0 else self.q_proj(x)
        q = q.view(b, t, self.n_h, self.d_nope + self.d_rope).transpose(1, 2)
        q_nope, q_rope = q.split([self.d_nope, self.d_rope], dim=-1)
        latent, k_rope = self.kv_a_proj_with_mqa(x).split([self.r_kv, self.d_rope], dim=-1)
        latent = self.kv_a_layernorm(latent)  # (B, t, r_kv)
        k_rope = rope(k_rope.view(b, 1, t, self.d_rope), start)  # (B, 1, t, d_rope), one for all heads
        q = torch.cat([q_nope, rope(q_rope, start)], dim=-1)
        past = cache.get(visit) if cache is not None else None
        if past is not None:
            latent, k_rope = torch.cat([past[0], latent], dim=1), torch.cat([past[1], k_rope], dim=2)
        if cache is not None:
            keep = held(self.kind, start + t, self.window, self.chunk)
            cache.put(visit, (latent[:, latent.shape[1] - keep :], k_rope[:, :, k_rope.shape[2] - keep :]))
        n = latent.shape[1]  # keys: the held ones, then this call's
        kv = self.kv_b_proj(latent).view(b, n, self.n_h, self.d_nope + self.d_v).transpose(1, 2)
        k_nope, v = kv.split([self.d_nope, self.d_v], dim=-1)
        k = torch.cat([k_nope, k_rope.expand(b, self.n_h, n, self.d_rope)], dim=-1)
        out = core(self, q, k, v, start)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.n_h * self.d_v))
