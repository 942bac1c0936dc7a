"""The training losses of SmeltForCausalLM: next-token, MTP depths, Ouro's exit entropy, MoE load balancing."""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .mtp import EXIT_ENTROPY_WEIGHT, exit_entropy, mtp_logits
from .reference_model import ReferenceOutput

IGNORE = -100  # transformers' ignore_index for labels


def _ce(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    work = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    return F.cross_entropy(work.reshape(-1, work.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)


def causal_loss(
    model: nn.Module, out: ReferenceOutput, labels: torch.Tensor, input_ids: torch.Tensor, mtp_weight: float
) -> torch.Tensor:
    """Mean cross-entropy of logits[:, i] against labels[:, i + 1] (transformers' shift), then the MTP depths
    (DeepSeek-V3's L_main + lambda / D sum_k L_MTP^k) on the first T - D - 1 positions, where depth k's logits at i
    predict labels[:, i + k + 1]; minus Ouro's exit-entropy term when the model has exit gates (smelt.torch).
    ``out`` is the model's forward of ``input_ids``."""
    if labels.shape != input_ids.shape:
        raise ValueError(f"labels: shape {tuple(labels.shape)}, input_ids {tuple(input_ids.shape)}: must match")
    loss = _ce(out.logits[:, :-1], labels[:, 1:])
    if out.exit_logits:
        loss = loss - EXIT_ENTROPY_WEIGHT * exit_entropy(list(out.exit_logits))
    if model.mtp is not None:
        hidden = out.hidden
        d = len(model.mtp)
        t = input_ids.shape[1] - d - 1
        if t < 1:
            raise ValueError(f"input_ids: {input_ids.shape[1]} positions: the MTP losses need at least D + 2 = {d + 2}")
        depths = mtp_logits(model, hidden[:, :t], input_ids)
        mtp = sum(_ce(lg, labels[:, k + 1 : k + 1 + t]) for k, lg in enumerate(depths, start=1))
        loss = loss + mtp_weight / d * mtp
    return loss


def load_balancing_loss(router_logits: Sequence[torch.Tensor], num_experts: int, top_k: int) -> torch.Tensor:
    """Switch Transformer's auxiliary loss (Fedus et al. 2021, eq. 4) as Mixtral's transformers model computes it
    over every router call at once (each looped visit its own): E x sum over slots j and experts e of
    f_{j,e} x P_e, with f_{j,e} the fraction of tokens whose j-th choice is e and P_e the mean softmax probability
    of e. Choices are the top-k of the softmax (for a sigmoid router too: a balance signal, not its routing)."""
    logits = torch.cat([x.reshape(-1, num_experts) for x in router_logits], dim=0)
    probs = torch.softmax(logits.float() if logits.dtype != torch.float64 else logits, dim=-1)
    _, chosen = torch.topk(probs, top_k, dim=-1)
    mask = F.one_hot(chosen, num_experts).to(probs.dtype)  # (N, k, E)
    return num_experts * (mask.mean(dim=0) * probs.mean(dim=0)[None, :]).sum()
