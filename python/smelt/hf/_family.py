"""``SmeltForCausalLM.from_family``: a released checkpoint of a family smelt reads, as a SmeltForCausalLM."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

import torch

import smelt

from ..torch._hf_weights import load_hf_state_dict
from ..reference.configuration_smelt import SmeltConfig


def from_family(cls: type, source: Any, state_dict: Mapping[str, torch.Tensor] | None = None, **config: Any) -> Any:
    """A released model of a family smelt reads (``model_type`` llama, mixtral, qwen3_moe, deepseek_v3, ...) as a
    SmeltForCausalLM with its weights, in their dtype: ``source`` is the family's config (dict, config.json
    path, or the checkpoint's directory), ``state_dict`` its transformers weights (default: the directory's
    checkpoint, read by transformers' own class). The mapping is smelt.torch's (``_hf_weights.py``): every
    tensor placed once or a ValueError naming it. ``config``: SmeltConfig fields (init_seed, ...)."""
    hf, folder = _hf_config(source)
    if state_dict is None:
        if folder is None:
            raise ValueError("state_dict: missing: give the weights, or the checkpoint's directory")
        state_dict = _family_weights(folder)
    native = smelt.read_config(hf).to_dict()  # the family's routing choices are its config's fields
    model = cls(SmeltConfig(smelt=native, **config))
    dtype = next((t.dtype for t in state_dict.values() if t.is_floating_point()), None)
    if dtype is not None:
        model = model.to(dtype)  # the checkpoint's precision, not rounded through the default dtype
    load_hf_state_dict(model.model, state_dict, hf)
    return model


def _hf_config(source: Any) -> tuple[dict, str | None]:
    if isinstance(source, Mapping):
        return dict(source), None
    if hasattr(source, "to_dict"):  # a transformers config object
        return source.to_dict(), None
    path = os.fspath(source)
    folder = path if os.path.isdir(path) else None
    with open(os.path.join(path, "config.json") if folder else path, encoding="utf-8") as f:
        return json.load(f), folder


def _family_weights(folder: str) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors as transformers' own class holds them: it reads the files and converts their
    on-disk layout (per-expert tensors, Mixtral's w1/w2/w3) to its in-memory one, which _hf_weights.py maps."""
    from transformers import AutoModelForCausalLM

    family = AutoModelForCausalLM.from_pretrained(folder, dtype="auto")
    return dict(family.state_dict())
