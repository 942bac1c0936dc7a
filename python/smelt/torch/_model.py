"""``build_model``: the reference model of any config smelt reads, with its family's routing choices."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

import torch

import smelt

from ._args import MAX_SEED, check_int
from ._hf_weights import hf_renormalize
from ._reference import RECOMPUTE, Block, ReferenceModel, _check_recompute, _init, set_routing  # noqa: F401


def native(cfg: Any) -> dict:
    if isinstance(cfg, smelt.Config):
        return cfg.to_dict()
    return smelt.read_config(cfg).to_dict()


def routing_of(cfg: Any, renormalize: bool | None = None, sigmoid_form: str | None = None) -> dict:
    """The routing choices ``build_model`` makes for ``cfg`` (see there), as a dict: renormalize, sigmoid_form,
    deepseek (a DeepSeek router bias is the correction bias)."""
    hf = _hf_dict(cfg)
    deepseek = hf is not None and str(hf.get("model_type", "")).startswith("deepseek")
    if renormalize is None:
        renormalize = hf_renormalize(hf) if hf is not None else True
    if sigmoid_form is None:
        sigmoid_form = "deepseek" if deepseek else "llama4"
    return {"renormalize": bool(renormalize), "sigmoid_form": sigmoid_form, "deepseek": deepseek}


def _hf_dict(cfg: Any) -> dict | None:
    """The Hugging Face config ``cfg`` is (a path or a dict naming a ``model_type``), None for a native one."""
    if smelt._family_named_by(cfg) in ("", "smelt"):  # smelt.hf's config.json holds a native config
        return None
    if isinstance(cfg, Mapping):
        return dict(cfg)
    with open(os.fspath(cfg), encoding="utf-8") as f:
        return json.load(f)


def build_model(
    cfg: Any,
    seed: int = 0,
    device: Any = None,
    renormalize: bool | None = None,
    sigmoid_form: str | None = None,
    *,
    recompute: str = "none",
    recompute_layers: int = 0,
) -> ReferenceModel:
    """The reference model of ``cfg`` (a path, dict or ``smelt.Config``, native or Hugging Face).

    Two routing choices the native config has no field for, and no count depends on:
    ``renormalize``: top-k routing weights divided by their sum (Mixtral's softmax over the chosen logits;
    DeepSeek-V3's ``norm_topk_prob`` with sigmoid routing; Llama 4's sigmoid form is never renormalised).
    None: as the Hugging Face config's own router does (``hf_renormalize``), True for a native config.
    ``sigmoid_form``: sigmoid routing without the correction bias weighs the expert's input (``"llama4"``) or its
    output (``"deepseek"``, DeepseekV3TopkRouter without the bias). None: ``"deepseek"`` for a DeepSeek Hugging
    Face config, ``"llama4"`` otherwise. With the correction bias the form is always DeepSeek's, and a DeepSeek
    config's ``router_bias`` is that bias (the choice alone) under softmax scores too.
    ``recompute``, ``recompute_layers``: activation recompute in training (``ReferenceModel``).
    """
    check_int("build_model", "seed", seed, 0, MAX_SEED)
    _check_recompute("build_model", recompute, recompute_layers)
    if sigmoid_form not in (None, "llama4", "deepseek"):
        raise ValueError(f"sigmoid_form = {sigmoid_form!r}: must be 'llama4' or 'deepseek'")
    c = native(cfg)
    routing = routing_of(cfg, renormalize, sigmoid_form)
    renormalize, sigmoid_form, deepseek = routing["renormalize"], routing["sigmoid_form"], routing["deepseek"]
    dev = torch.device(device) if device is not None else torch.device("cpu")
    with dev:
        model = ReferenceModel(c, renormalize, recompute=recompute, recompute_layers=recompute_layers)
    set_routing(model, sigmoid_form, deepseek)
    if dev.type != "meta":
        _init(model, seed)
    return model
