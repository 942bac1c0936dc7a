"""The training pair of the smelt.torch tests and benchmarks/torch_reference.py: a Baseline and the SMELT config
``smelt.derive`` matches to it, both shrunk to tiny sizes (docs/reference-model.md, "Training").

The Baseline is the README's examples/smelt-baseline-54b.json cut to 4 layers and 32 routed experts (top-8
kept): at full size the solver's default recipe (the middle half, layers 2-3, twice, residual scale 1/2) matches
it within its 1% tolerance, where the 30-layer, 336-expert original gives a 488-expert config whose 100 CPU
training steps take minutes. Both are shrunk with the same factor f = 32 (``max_hidden=72``), so the derived
model stays the narrower one, as at full size.
"""

from __future__ import annotations

import json
import os

import torch
import torch.nn.functional as F

import smelt
import smelt.torch as st

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
README_BASELINE = os.path.join(ROOT, "examples", "smelt-baseline-54b.json")
MAX_HIDDEN = 72  # 2304 / 32 = 72 and 1920 / 32 = 60: one shrink factor for both
TASK_VOCAB = 64  # the synthetic task's tokens: the next token is this one + 1 mod 64


def baseline_full() -> dict:
    with open(README_BASELINE, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["name"] = "smelt-baseline-54b-4l-32e"
    cfg["num_layers"] = 4
    cfg["moe"]["num_experts"] = 32
    return smelt.read_config(cfg).to_dict()


def derived_full() -> smelt.MatchResult:
    return smelt.derive(baseline_full())


def pair() -> dict[str, dict]:
    """{"baseline": ..., "derived": ...}, both shrunk by f = 32."""
    return {
        "baseline": st.shrink(baseline_full(), max_hidden=MAX_HIDDEN),
        "derived": st.shrink(derived_full().best_config, max_hidden=MAX_HIDDEN),
    }


def batch(g: torch.Generator, batch_size: int = 8, tokens: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randint(0, TASK_VOCAB, (batch_size, tokens), generator=g)
    return x, (x + 1) % TASK_VOCAB


def loss_of(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    logits = model(x).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def train(cfg: dict, steps: int = 100, seed: int = 0) -> list[float]:
    """AdamW (lr 3e-3) on batches of 8 x 16 tokens; the loss of every step."""
    model = st.build_model(cfg, seed=seed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        loss = loss_of(model, *batch(g))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
