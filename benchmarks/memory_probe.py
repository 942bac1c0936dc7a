"""Measures what the reference model really holds in a training step (docs/memory.md, "Measuring").

For each native config in a JSON list (``benchmarks/data/memory-probe-configs.json``, made by
``benchmarks/memory_probe_configs.py``) and each dtype, on one device (``cuda`` or ``cpu``):

- ``saved``: the unique storages that ``torch.autograd.graph.saved_tensors_hooks`` sees during the forward
  of ``model.loss(tokens)``, in bytes, split by where they were saved (embedding, each layer visit's
  norms, attention, FFN/MoE and residual, final norm, head, loss, MTP); storages that are parameters are
  kept apart (``saved_params``): they are weights, not activations.
- ``params``, ``grads``, ``optimizer``: bytes of the parameters, of their gradients after one backward
  and of ``torch.optim.AdamW``'s state after one step (``step`` included).
- on CUDA, the allocator's view: ``torch.cuda.memory_allocated`` after each phase and
  ``torch.cuda.max_memory_allocated`` within it (forward, backward, optimizer step), for a first step and
  for a second, steady one (gradients set to None between the steps, as ``zero_grad`` does).

Nothing here needs smelt's native core: the configs are already native and shrunk, so the script runs
wherever PyTorch does. The JSON goes to stdout or ``--out``.

Usage: python benchmarks/memory_probe.py [--device cuda] [--dtypes float32,bfloat16] [--seconds 120] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import types
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def _import_reference():
    """smelt.torch's model classes, through the installed package or, without the native core, the sources."""
    try:
        import smelt  # noqa: F401
    except ImportError:
        for name, path in (("smelt", ROOT / "python" / "smelt"), ("smelt.torch", ROOT / "python" / "smelt" / "torch")):
            pkg = types.ModuleType(name)  # the package without its __init__, which loads the native core
            pkg.__path__ = [str(path)]
            sys.modules[name] = pkg
    import importlib

    _model = importlib.import_module("smelt.torch._model")

    return _model


def _label_hooks(model: torch.nn.Module, where: list[str]) -> list:
    """Forward hooks that keep ``where[-1]`` naming the part of the model now running."""
    names: dict[int, str] = {}
    visit = {"n": 0}
    for i, layer in enumerate(model.layers):
        names[id(layer)] = f"layer{i}"
        for sub in ("attn_norm", "attn", "ffn_norm", "ffn"):
            names[id(getattr(layer, sub))] = sub
    names[id(model.embed)] = "embed"
    names[id(model.final_norm)] = "final_norm"
    if model.lm_head is not None:
        names[id(model.lm_head)] = "lm_head"
    if model.mtp is not None:
        for k, m in enumerate(model.mtp):
            names[id(m)] = f"mtp{k}"
    handles = []

    def pre(module, _inputs):
        name = names[id(module)]
        if name.startswith("layer"):
            name = f"visit{visit['n']}"
            visit["n"] += 1
            where.append(name + ".residual")
        elif where and where[-1].startswith("visit"):
            where.append(where[-1].split(".")[0] + "." + name)
        else:
            where.append(name)

    def post(_module, _inputs, _output):
        where.pop()

    for m in model.modules():
        if id(m) in names:
            handles.append(m.register_forward_pre_hook(pre))
            handles.append(m.register_forward_hook(post))
    return handles


def _saved(model: torch.nn.Module, tokens: torch.Tensor):
    """The loss, and the unique saved storages by part (bytes), parameter storages apart."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, tuple[str, int]] = {}
    where: list[str] = []
    handles = _label_hooks(model, where)

    def pack(t: torch.Tensor):
        s = t.untyped_storage()
        key = s.data_ptr()
        if key not in seen:
            seen[key] = (where[-1] if where else "loss", s.nbytes())
        return t

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = model.loss(tokens)
    finally:
        for h in handles:
            h.remove()
    by_part: dict[str, int] = {}
    param_bytes = 0
    for key, (part, n) in seen.items():
        if key in params:
            param_bytes += n
        else:
            by_part[part] = by_part.get(part, 0) + n
    return loss, by_part, param_bytes


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def probe(cfg: dict, dtype: torch.dtype, device: torch.device, batch: int, seq: int) -> dict:
    model_mod = _import_reference()
    cuda = device.type == "cuda"
    mem = (lambda: torch.cuda.memory_allocated(device)) if cuda else (lambda: 0)
    peak = (lambda: torch.cuda.max_memory_allocated(device)) if cuda else (lambda: 0)
    reset = (lambda: torch.cuda.reset_peak_memory_stats(device)) if cuda else (lambda: None)
    if cuda:
        torch.cuda.empty_cache()
    base = mem()
    with device:
        model = model_mod.ReferenceModel(cfg)
    model_mod._init(model, 0)
    model.to(dtype)
    d = cfg.get("mtp_modules", 0)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, cfg["vocab_size"], (batch, seq + d + 1), generator=g).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    out: dict = {
        "name": cfg.get("_name", ""),
        "dtype": str(dtype).removeprefix("torch."),
        "device": device.type,
        "batch": batch,
        "seq": seq,
        "tokens_bytes": tokens.numel() * tokens.element_size(),
        "params": _bytes(model.parameters()),
        "trainable": _bytes(p for p in model.parameters() if p.requires_grad),
        "allocated": {"model_and_tokens": mem() - base},
        "peak": {},
        "steps": [],
    }
    for step in range(2):
        row: dict = {}
        opt.zero_grad(set_to_none=True)
        row["start"] = mem() - base
        reset()
        loss, by_part, param_saved = _saved(model, tokens)
        row["after_forward"], row["peak_forward"] = mem() - base, peak() - base
        reset()
        loss.backward()
        del loss
        row["after_backward"], row["peak_backward"] = mem() - base, peak() - base
        grads = _bytes(p.grad for p in model.parameters() if p.grad is not None)
        reset()
        opt.step()
        row["after_step"], row["peak_step"] = mem() - base, peak() - base
        state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
        row["grads"], row["optimizer"] = grads, _bytes(state)
        row["optimizer_tensors"] = len(state)
        row["saved"], row["saved_params"] = by_part, param_saved
        row["saved_total"] = sum(by_part.values())
        out["steps"].append(row)
    if cuda and hasattr(torch._C, "_cuda_clearCublasWorkspaces"):  # the GEMM library's workspace, if it is ours
        held = mem()
        torch._C._cuda_clearCublasWorkspaces()
        out["cublas_workspace"] = held - mem()
    del model, opt, tokens
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default=str(ROOT / "benchmarks" / "data" / "memory-probe-configs.json"))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--seconds", type=float, default=120.0, help="stop starting new runs after this long")
    ap.add_argument("--only", default="", help="comma-separated config names (default: all)")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    runs = json.load(open(a.configs, encoding="utf-8"))
    only = set(filter(None, a.only.split(",")))
    device = torch.device(a.device)
    results, t0 = [], time.monotonic()
    for run in runs:
        if only and run["name"] not in only:
            continue
        for dt in a.dtypes.split(","):
            if time.monotonic() - t0 > a.seconds:
                print(f"skip {run['name']} {dt}: time is up", file=sys.stderr)
                continue
            cfg = dict(run["config"], _name=run["name"])
            t = time.monotonic()
            try:
                r = probe(cfg, getattr(torch, dt), device, run["batch"], run["seq"])
            except torch.OutOfMemoryError as e:
                r = {"name": run["name"], "dtype": dt, "error": f"out of memory: {e}"}
            r["seconds"] = round(time.monotonic() - t, 2)
            results.append(r)
            s = r.get("steps", [{}])[-1]
            print(f"{run['name']:28s} {dt:9s} {r['seconds']:6.1f} s  saved {s.get('saved_total', 0) / 2**20:9.1f} MiB"
                  f"  peak bwd {s.get('peak_backward', 0) / 2**20:9.1f} MiB", file=sys.stderr, flush=True)
    meta = {"torch": torch.__version__, "device": device.type}
    if device.type == "cuda":
        meta["gpu"] = torch.cuda.get_device_name(device)
    text = json.dumps({"meta": meta, "results": results}, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
