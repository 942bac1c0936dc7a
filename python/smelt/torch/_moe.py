"""Dense FFNs and the MoE layer: router, routed experts on their own tokens, shared experts."""

from __future__ import annotations

from typing import Any, Mapping

import torch
import torch.nn.functional as F
from torch import nn


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
        out = self._dispatch(x, weight, chosen)
        if len(self.shared):
            s = sum(f(x) for f in self.shared)
            if self.shared_gate is not None:
                s = torch.sigmoid(self.shared_gate(x)) * s
            out = out + s
        return out.reshape(shape)

    def _dispatch(self, x: torch.Tensor, weight: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """Each expert that was hit runs once on its own routed tokens; their weighted outputs summed per token.

        The (token, slot) pairs are sorted by expert once (stable, so each expert sees its tokens in order), and
        every expert reads its contiguous slice: the same products as selecting each expert's tokens on its own,
        without a mask, a nonzero and an index_add per expert.
        """
        flat = chosen.reshape(-1)
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=len(self.experts)).tolist()
        tok = order // chosen.shape[-1]  # the token of each sorted (token, slot) pair
        parts = x[tok].split(counts)
        ys = [self.experts[e](part) for e, part in enumerate(parts) if counts[e]]
        if not ys:
            return torch.zeros_like(x)
        y = torch.cat(ys) * weight.reshape(-1)[order, None].to(x.dtype)
        return torch.zeros_like(x).index_add(0, tok, y)
