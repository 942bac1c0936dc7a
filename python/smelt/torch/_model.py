"""``build_model``: the reference model of any config smelt reads, routing as its config says."""

from __future__ import annotations

from typing import Any

import torch

import smelt

from ..reference.args import MAX_SEED, check_int
from ..reference.reference_model import RECOMPUTE, Block, ReferenceModel, _check_recompute, _init  # noqa: F401


def native(cfg: Any) -> dict:
    if isinstance(cfg, smelt.Config):
        return cfg.to_dict()
    return smelt.read_config(cfg).to_dict()


def build_model(
    cfg: Any,
    seed: int = 0,
    device: Any = None,
    *,
    recompute: str = "none",
    recompute_layers: int = 0,
) -> ReferenceModel:
    """The reference model of ``cfg`` (a path, dict or ``smelt.Config``, native or Hugging Face).

    Its routers route as the config's ``moe`` block says (``router_form``, ``renormalize``, ``clamped_swiglu``;
    docs/config.md, section 1.4), which smelt's Hugging Face readers set from each family's config: Mixtral's
    renormalised softmax, Qwen-MoE's and OLMoE's ``norm_topk_prob``, DeepSeek's correction bias, Llama 4's
    sigmoid on the expert's input, gpt-oss's clamped SwiGLU.
    ``recompute``, ``recompute_layers``: activation recompute in training (``ReferenceModel``).
    """
    check_int("build_model", "seed", seed, 0, MAX_SEED)
    _check_recompute("build_model", recompute, recompute_layers)
    c = native(cfg)
    dev = torch.device(device) if device is not None else torch.device("cpu")
    with dev:
        model = ReferenceModel(c, recompute=recompute, recompute_layers=recompute_layers)
    if dev.type != "meta":
        _init(model, seed)
    return model
