"""smelt's transformers model class: any config smelt counts as a transformers causal LM (docs/training.md).

``register()`` makes ``AutoConfig`` and ``AutoModelForCausalLM`` know ``model_type "smelt"``; ``save(config, dir)``
writes the config.json that ``smelt-match export --to hf --family smelt`` writes; ``SmeltForCausalLM`` is
smelt.torch's reference model as a ``PreTrainedModel`` with ``generate()``, ``labels``, gradient checkpointing,
eager and sdpa attention, and ``from_family`` to start from a released checkpoint. Needs torch and transformers.
"""

from __future__ import annotations

import os
from typing import Any

import smelt

from ._cache import SmeltCache
from ._config import SmeltConfig
from ._model import SmeltForCausalLM, SmeltPreTrainedModel

__all__ = ["SmeltCache", "SmeltConfig", "SmeltForCausalLM", "SmeltPreTrainedModel", "register", "save"]


def register() -> None:
    """Register SmeltConfig and SmeltForCausalLM with transformers' Auto classes (safe to call again)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    AutoConfig.register("smelt", SmeltConfig, exist_ok=True)
    AutoModelForCausalLM.register(SmeltConfig, SmeltForCausalLM, exist_ok=True)


def save(config: Any, directory: str | os.PathLike) -> str:
    """Write ``directory``/config.json for ``config`` (any config smelt reads) and return its path: the bytes of
    ``smelt-match export CONFIG --to hf --family smelt``. Nothing is written when the config is refused."""
    text = smelt.export_hf(config, family="smelt")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(os.fspath(directory), "config.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
