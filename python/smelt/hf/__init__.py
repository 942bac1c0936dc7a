"""smelt's transformers model class: any config smelt counts as a transformers causal LM (docs/training.md).

``register()`` makes ``AutoConfig`` and ``AutoModelForCausalLM`` know ``model_type "smelt"``; ``save(config, dir)``
writes the config.json that ``smelt-match export --to hf --family smelt`` writes; ``SmeltForCausalLM`` is
smelt.torch's reference model as a ``PreTrainedModel`` with ``generate()``, ``labels``, gradient checkpointing,
eager and sdpa attention, and ``from_family`` to start from a released checkpoint. Needs torch and transformers.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from typing import Any

import smelt

from ..reference import configuration_smelt, modeling_smelt
from ..reference.configuration_smelt import SmeltConfig
from ..reference.modeling_smelt import SmeltForCausalLM, SmeltPreTrainedModel
from ..reference.smelt_cache import SmeltCache
from ._family import from_family

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
    installed (torch and transformers only). Nothing is written when the config is refused.

    Every file is written first into a new folder of a unique name, created exclusively inside ``directory``, and
    only then renamed onto its place, config.json last: a failure while writing leaves ``directory`` as it was,
    and no file already there (a ``config.json.tmp``, a link) is written through. A link named like one of the
    files is replaced by the file, its target untouched; a directory named like one is refused."""
    text = smelt.export_hf(config, family="smelt")
    code = _code_files() if with_code else {}
    if with_code:
        text = _with_auto_map(text)
    folder = os.fspath(directory)
    files = [*code.items(), ("config.json", text)]  # config.json, which names the code, replaced last
    for name, _ in files:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    os.makedirs(folder, exist_ok=True)
    staging = tempfile.mkdtemp(dir=folder, prefix=".smelt-save-")
    try:
        for name, body in files:  # mode 0666 less the umask, as open() makes any file
            with open(os.path.join(staging, name), "x", encoding="utf-8") as f:
                f.write(body)
        for name, _ in files:
            os.replace(os.path.join(staging, name), os.path.join(folder, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return os.path.join(folder, "config.json")


# config.json's auto_map with with_code: the two classes transformers loads from the files beside it.
AUTO_MAP = {"AutoConfig": "configuration_smelt.SmeltConfig", "AutoModelForCausalLM": "modeling_smelt.SmeltForCausalLM"}


def _code_files() -> dict[str, str]:
    """File name -> text of the two files transformers loads and every module they import relatively: the set
    transformers' own code-shipping (``custom_object_save``) copies, found by its own rule."""
    from transformers.dynamic_module_utils import get_relative_import_files

    out = {}
    for module in (configuration_smelt, modeling_smelt):
        for path in [module.__file__, *get_relative_import_files(module.__file__)]:
            with open(path, encoding="utf-8") as f:
                out[os.path.basename(path)] = f.read()
    return dict(sorted(out.items()))


def _with_auto_map(config_json: str) -> str:
    """config.json's text with ``auto_map`` after ``model_type`` (every other byte as smelt-match writes it)."""
    line = '  "model_type": "smelt",\n'
    if line not in config_json:
        raise ValueError("config.json: no top-level model_type \"smelt\" line to place auto_map after")
    entries = ",\n".join(f'    "{k}": "{v}"' for k, v in AUTO_MAP.items())
    return config_json.replace(line, line + '  "auto_map": {\n' + entries + "\n  },\n", 1)
