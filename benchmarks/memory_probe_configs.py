"""Writes benchmarks/data/memory-probe-configs.json: the configs benchmarks/memory_probe.py measures.

Every example (native and Hugging Face) and the 54B pair's derived config, shrunk by ``smelt.torch.shrink``
to a hidden size of at most 512 and a vocabulary of at most 8192 (every ratio the counts depend on kept), as
native dicts, with the micro-batch and sequence length each is measured at. Needs the smelt package.

Usage: python benchmarks/memory_probe_configs.py [OUT]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import smelt
from smelt.torch import shrink

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

RUNS = [
    ("tiny-moe", EXAMPLES / "tiny-moe.json"),
    ("smelt-baseline-12l", EXAMPLES / "smelt-baseline-12l.json"),
    ("smelt-looped-12l", EXAMPLES / "smelt-looped-12l.json"),
    ("smelt-baseline-54b", EXAMPLES / "smelt-baseline-54b.json"),
    ("smelt-derived-54b", None),
    ("deepseek-v3-mla", EXAMPLES / "deepseek-v3-mla.json"),
    ("mixtral-8x7b", EXAMPLES / "mixtral-8x7b.json"),
    ("hf-olmoe-1b-7b", EXAMPLES / "hf" / "olmoe-1b-7b-0924.json"),
    ("hf-qwen3-30b-a3b", EXAMPLES / "hf" / "qwen3-30b-a3b.json"),
    ("hf-gpt-oss-20b", EXAMPLES / "hf" / "gpt-oss-20b.json"),
    ("hf-llama4-scout", EXAMPLES / "hf" / "llama4-scout.json"),
    ("hf-deepseek-v2-lite", EXAMPLES / "hf" / "deepseek-v2-lite.json"),
    ("hf-qwen1.5-moe-a2.7b", EXAMPLES / "hf" / "qwen1.5-moe-a2.7b.json"),
    ("hf-dbrx", EXAMPLES / "hf" / "dbrx.json"),
    ("hf-llama-3.1-8b", EXAMPLES / "hf" / "llama-3.1-8b.json"),
]

LONG = {"tiny-moe", "smelt-baseline-12l", "smelt-looped-12l", "smelt-baseline-54b", "smelt-derived-54b", "mixtral-8x7b"}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "benchmarks" / "data" / "memory-probe-configs.json"
    runs = []
    for name, path in RUNS:
        if path is None:  # the derived config of the 54B Baseline, default recipe and space
            cfg = smelt.read_config(smelt.derive(str(EXAMPLES / "smelt-baseline-54b.json")).best.config).to_dict()
        else:
            cfg = smelt.read_config(str(path)).to_dict()
        small = shrink(cfg, max_hidden=512, max_vocab=8192)
        runs.append({"name": name, "batch": 2, "seq": 256, "config": small})
    # Longer sequences, where the activations outweigh the weights.
    for run in [r for r in runs if r["name"] in LONG]:
        runs.append(dict(run, name=run["name"] + "@4x1024", batch=4, seq=1024))
    out.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    print(f"{len(runs)} configs -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
