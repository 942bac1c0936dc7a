"""``save(..., with_code=True)``: the modeling code beside config.json, for ``trust_remote_code`` without smelt.

The files are smelt.hf's and smelt.torch's own modules (torch and transformers only: none imports smelt's core
outside a guarded ``try``), flattened into one folder with their relative imports renamed, and config.json's
``auto_map`` names the two classes transformers loads from them.
"""

from __future__ import annotations

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH = os.path.join(os.path.dirname(HERE), "torch")

# smelt.torch's modules become smelt_torch_<name>.py; smelt.hf's are named here
TORCH_MODULES = (
    "_args", "_attention", "_cache", "_common", "_hf_weights", "_lora", "_mla", "_moe", "_mtp", "_reference",
    "_routing",
)
HF_MODULES = {"_config": "configuration_smelt", "_model": "modeling_smelt", "_cache": "smelt_hf_cache",
              "_loss": "smelt_hf_loss", "_native": "smelt_hf_native", "_checkpoint": "smelt_hf_checkpoint"}
AUTO_MAP = {"AutoConfig": "configuration_smelt.SmeltConfig", "AutoModelForCausalLM": "modeling_smelt.SmeltForCausalLM"}


def _renamed(text: str, package: str) -> str:
    def torch_module(m: re.Match) -> str:
        return f"from .smelt_torch{m.group(1)} import"

    text = re.sub(r"^from \.\.torch\.(_\w+) import", torch_module, text, flags=re.M)
    if package == "torch":
        return re.sub(r"^from \.(_\w+) import", torch_module, text, flags=re.M)
    return re.sub(r"^from \.(_\w+) import", lambda m: f"from .{HF_MODULES[m.group(1)]} import", text, flags=re.M)


def files() -> dict[str, str]:
    """File name -> text of every module the two classes need."""
    out = {}
    for name in TORCH_MODULES:
        with open(os.path.join(TORCH, name + ".py"), encoding="utf-8") as f:
            out[f"smelt_torch{name}.py"] = _renamed(f.read(), "torch")
    for name, target in HF_MODULES.items():
        with open(os.path.join(HERE, name + ".py"), encoding="utf-8") as f:
            out[f"{target}.py"] = _renamed(f.read(), "hf")
    return out


def with_auto_map(config_json: str) -> str:
    """config.json's text with ``auto_map`` after ``model_type`` (every other byte as smelt-match writes it)."""
    line = '  "model_type": "smelt",\n'
    if line not in config_json:
        raise ValueError("config.json: no top-level model_type \"smelt\" line to place auto_map after")
    entries = ",\n".join(f'    "{k}": "{v}"' for k, v in AUTO_MAP.items())
    return config_json.replace(line, line + '  "auto_map": {\n' + entries + "\n  },\n", 1)
