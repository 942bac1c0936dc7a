"""Per-visit LoRA of a looped span (relaxed recursive transformers): each pass of each layer adds its own
low-rank product B A to a projection, the shared weight left as it is."""

from __future__ import annotations

import torch
from torch import nn

from .model_config import Loop


class LoraLinear(nn.Module):
    """``base(x) + adapters[p](x)``: ``base`` the shared projection, one ``Linear(in, r) -> Linear(r, out)`` pair
    per pass of the span, ``p`` the pass the visit runs (an argument, ``reference_model.Visit.lora_pass``)."""

    def __init__(self, base: nn.Linear, rank: int, passes: int) -> None:
        super().__init__()
        self.base = base
        self.adapters = nn.ModuleList(
            nn.Sequential(nn.Linear(base.in_features, rank, bias=False), nn.Linear(rank, base.out_features, bias=False))
            for _ in range(passes)
        )

    @property
    def weight(self) -> torch.Tensor:  # the shared projection's, for code that reads it
        return self.base.weight

    @property
    def bias(self) -> torch.Tensor | None:
        return self.base.bias

    def forward(self, x: torch.Tensor, lora_pass: int = 0) -> torch.Tensor:
        return self.base(x) + self.adapters[lora_pass](x)


def project(m: nn.Module, x: torch.Tensor, lora_pass: int) -> torch.Tensor:
    """A projection of x: a per-visit LoRA one adapted for the visit's pass, any other as it is."""
    return m(x, lora_pass) if isinstance(m, LoraLinear) else m(x)


def attach(model: nn.Module, spans: tuple[Loop, ...]) -> dict[int, list[LoraLinear]]:
    """Wraps the target projections of every layer of each span with ``lora_rank``; 0-based layer -> wrappers."""
    out: dict[int, list[LoraLinear]] = {}
    for span in spans:
        rank = span.lora_rank
        if not rank or span.count < 1:
            continue
        for i in range(span.lo, span.hi + 1):
            layer = model.layers[i]
            for target in span.lora_targets:
                owner = layer.attn if target in ("q", "k", "v", "o") else layer.ffn
                name = f"{target}_proj"
                wrapped = LoraLinear(getattr(owner, name), rank, span.count)
                setattr(owner, name, wrapped)
                out.setdefault(i, []).append(wrapped)
    return out
