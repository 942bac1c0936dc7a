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

from . import _code
from ._cache import SmeltCache
from ._config import SmeltConfig
from ._family import from_family
from ._model import SmeltForCausalLM, SmeltPreTrainedModel

# Beside the class, not in it: it reads a family's config with smelt's core, which the checkpoint's own copy of the
# modeling code (save(..., with_code=True)) does without.
SmeltForCausalLM.from_family = classmethod(from_family)  # type: ignore[attr-defined]

__all__ = ["SmeltCache", "SmeltConfig", "SmeltForCausalLM", "SmeltPreTrainedModel", "register", "save"]


def register() -> None:
    """Register SmeltConfig and SmeltForCausalLM with transformers' Auto classes (safe to call again)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    AutoConfig.register("smelt", SmeltConfig, exist_ok=True)
    AutoModelForCausalLM.register(SmeltConfig, SmeltForCausalLM, exist_ok=True)


def save(config: Any, directory: str | os.PathLike, with_code: bool = False) -> str:
    """Write ``directory``/config.json for ``config`` (any config smelt reads) and return its path: the bytes of
    ``smelt-match export CONFIG --to hf --family smelt``. ``with_code``: also the modeling files and an ``auto_map``
    in config.json, so that ``from_pretrained(directory, trust_remote_code=True)`` builds the model without smelt
    installed (torch and transformers only). Nothing is written when the config is refused."""
    text = smelt.export_hf(config, family="smelt")
    code = _code.files() if with_code else {}
    if with_code:
        text = _code.with_auto_map(text)
    os.makedirs(directory, exist_ok=True)
    for name, body in [*code.items(), ("config.json", text)]:
        path = os.path.join(os.fspath(directory), name)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(path + ".tmp", path)
    return os.path.join(os.fspath(directory), "config.json")
