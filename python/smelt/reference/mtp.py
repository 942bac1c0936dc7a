"""Multi-token prediction (DeepSeek-V3 technical report, section 2.2; counting.md, section 3.5).

Module k (1..D) takes the previous depth's hidden state h^(k-1) (h^0: the main model's last hidden state, the
final norm's input) and the embedding of the token k positions ahead, and predicts the token k + 1 ahead:

    h'_i^k = M_k [norm(h_i^(k-1)); norm(Emb(t_(i+k)))],   h^k = TRM_k(h'^k),   logits_i^k = Head(norm(h_i^k))

with M_k a Linear(2H, H) without bias, TRM_k one layer shaped like the main model's last layer (MoE when that
one is) with full attention, and the embedding and the head the main model's own. Every depth runs on the same
T positions as the main model, so a sequence of T + D + 1 tokens trains all of them (see ``training_loss``);
that is the shape smelt counts, every module on every one of the T tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .common import norm
from .model_config import ModelConfig


class MTPModule(nn.Module):
    """One depth: 2 input norms, the projection M (2H -> H), one layer, a final norm; 2H*H + 3H + the layer."""

    def __init__(self, cfg: ModelConfig, layer: nn.Module) -> None:
        super().__init__()
        h = cfg.hidden_size
        self.hidden_norm, self.embed_norm = norm(cfg, h), norm(cfg, h)
        self.proj = nn.Linear(2 * h, h, bias=False)
        self.layer = layer
        self.final_norm = norm(cfg, h)

    def forward(self, hidden: torch.Tensor, ahead: torch.Tensor) -> torch.Tensor:
        """h^k from h^(k-1) and Emb(t_(i+k)), both (B, T, H); the final norm is ``final_norm``'s, after it."""
        x = self.proj(torch.cat([self.hidden_norm(hidden), self.embed_norm(ahead)], dim=-1))
        return self.layer(x)


def _head(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    if model.lm_head is None:  # tied: the embedding's weight, as the main model's head
        return F.linear(x, model.embed.weight)
    return model.lm_head(x)


def trunk(model: nn.Module, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The main model's logits and its last hidden state h^0 (the input of its final norm), from one forward."""
    out = model(tokens)
    return out.logits, out.hidden


def mtp_logits(model: nn.Module, hidden: torch.Tensor, tokens: torch.Tensor) -> list[torch.Tensor]:
    """Logits of depths 1..D, each (B, T, V); ``hidden`` is h^0 (B, T, H), ``tokens`` (B, >= T + D).

    Depth k reads the embeddings of tokens[:, k : k + T] and its logits at i predict tokens[:, i + k + 1].
    """
    t = hidden.shape[1]
    if tokens.shape[1] < t + len(model.mtp):
        raise ValueError(f"tokens has {tokens.shape[1]} positions: the MTP modules need T + D = {t + len(model.mtp)}")
    out = []
    for k, module in enumerate(model.mtp, start=1):
        hidden = module(hidden, model.embed(tokens[:, k : k + t]))
        out.append(_head(model, module.final_norm(hidden)))
    return out


# Ouro's training objective rewards a spread exit distribution (its entropy regulariser); the weight is the
# reference model's choice, and no count depends on it.
EXIT_ENTROPY_WEIGHT = 0.05


def exit_entropy(gates: list[torch.Tensor]) -> torch.Tensor:
    """Mean entropy of Ouro's exit distribution from the gates' logits, one (B, T, 1) tensor per step:
    lambda_t = sigmoid(gate_t), p_t = lambda_t * prod_{j<t} (1 - lambda_j), the last step the remainder."""
    lam = torch.sigmoid(torch.cat(gates, dim=-1))  # (B, T, steps)
    survive = torch.cumprod(1 - lam, dim=-1)
    before = torch.cat([torch.ones_like(survive[..., :1]), survive[..., :-1]], dim=-1)
    p = torch.cat([(lam * before)[..., :-1], before[..., -1:]], dim=-1)
    return -(p * torch.log(p.clamp_min(1e-30))).sum(-1).mean()


def training_loss(model: nn.Module, tokens: torch.Tensor, mtp_weight: float) -> torch.Tensor:
    """Next-token cross-entropy on tokens[:, :T] (T = len - D - 1), + mtp_weight / D x the depths' losses.

    DeepSeek-V3's L = L_main + (lambda / D) * sum_k L_MTP^k, lambda 0.3 early in its training (section 2.2).
    Without MTP modules it is the plain next-token loss on tokens[:, :-1]. With exit gates (Ouro) it subtracts
    EXIT_ENTROPY_WEIGHT x the exit distribution's entropy, so the gates train; Ouro's expected loss over the
    steps, which runs the LM head after every step, is not built (docs/counting.md, section 8.1).
    """
    d = len(model.mtp) if model.mtp is not None else 0
    t = tokens.shape[1] - d - 1
    if t < 1:
        raise ValueError(f"tokens has {tokens.shape[1]} positions: training needs at least D + 2 = {d + 2}")
    out = model(tokens[:, :t])
    logits, hidden = out.logits, out.hidden
    v = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, v), tokens[:, 1 : t + 1].reshape(-1))
    if out.exit_logits:
        loss = loss - EXIT_ENTROPY_WEIGHT * exit_entropy(list(out.exit_logits))
    if d:
        depths = mtp_logits(model, hidden, tokens)
        targets = [tokens[:, k + 1 : k + 1 + t] for k in range(1, d + 1)]
        mtp = sum(F.cross_entropy(lg.reshape(-1, v), y.reshape(-1)) for lg, y in zip(depths, targets))
        loss = loss + mtp_weight / d * mtp
    return loss
