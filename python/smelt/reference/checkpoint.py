"""The tensors a checkpoint folder holds, read from its safetensors headers without loading a weight, so that
``SmeltForCausalLM.from_pretrained`` compares them with the config before it builds the model: a 1 KB config.json
edited to a huge width must be refused, not allocated (docs/training.md). Python's standard library alone: a
checkpoint's own copy of the code (``save(..., with_code=True)``) runs it too.

The header is safetensors' own: 8 bytes, little-endian, giving the length of a JSON object that maps each tensor's
name to its ``dtype``, ``shape`` and ``data_offsets`` (https://huggingface.co/docs/safetensors, "Format").
"""

from __future__ import annotations

import json
import os
import struct

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
MAX_HEADER = 100 * 1000 * 1000  # safetensors' own limit on a header
FLOATS = ("F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "F8_E4M3FNUZ", "F8_E5M2FNUZ")


def header(path: str) -> dict[str, tuple[str, tuple[int, ...]]]:
    """name -> (dtype, shape) of every tensor in the safetensors file ``path``; ValueError naming the file when
    its header is not one."""
    with open(path, "rb") as f:
        head = f.read(8)
        size = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
        if not 2 <= size <= MAX_HEADER:
            raise ValueError(f"{path}: not a safetensors file (a header of {size} bytes)")
        text = f.read(size)
    try:
        entries = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"{path}: not a safetensors file (its header is not JSON: {e})") from None
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: not a safetensors file (its header is not a JSON object)")
    out = {}
    for name, entry in entries.items():
        if name == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        if not isinstance(dtype, str) or not isinstance(shape, list) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise ValueError(f"{path}: not a safetensors file (tensor {name!r}: no dtype and shape)")
        out[name] = (dtype, tuple(shape))
    return out


def tensors(folder: str) -> dict[str, tuple[str, tuple[int, ...]]] | None:
    """name -> (dtype, shape) of the checkpoint in ``folder`` (model.safetensors, or the shards its index names);
    None when the folder holds neither (transformers then reads what it finds, and is checked after)."""
    single = os.path.join(folder, SINGLE)
    if os.path.isfile(single):
        return header(single)
    index = os.path.join(folder, INDEX)
    if not os.path.isfile(index):
        return None
    with open(index, encoding="utf-8") as f:
        try:
            weight_map = json.load(f).get("weight_map")
        except (ValueError, AttributeError, RecursionError):
            weight_map = None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise ValueError(f"{index}: no weight_map of tensor names to files")
    out = {}
    for shard in sorted(set(weight_map.values())):
        path = os.path.join(folder, shard)
        if os.path.dirname(os.path.normpath(path)) != os.path.normpath(folder):
            raise ValueError(f"{index}: shard {shard!r}: not a file of this folder")
        out.update(header(path))
    return out
