"""The peak of a real training step on the CPU against smelt's total (docs/memory.md, "Measuring").

What is measured: one steady-state training step of the reference model (``python/smelt/torch``) with
``torch.optim.AdamW``. A first step creates the gradients and the optimizer state (a zero gradient for an expert
no token reached, as a gradient buffer holds one for every parameter); then the measured step runs the forward
(``model.loss(tokens)``), the backward and ``opt.step()``. The baseline is what is live before it: weights,
gradients, AdamW's state (moments and the per-tensor ``step``) and the token batch, summed from the tensors
themselves; the peak is the baseline plus the highest running sum of the allocator's byte deltas within the step.

Gradients are kept between steps (``zero_grad(set_to_none=False)``): that is how training at scale holds them
(PyTorch DDP's gradient buckets and Megatron-LM's contiguous gradient buffer are allocated once and live through
the step, ZeRO-2/3 apart), and it is what smelt's ``gradients`` term means: a buffer held at the peak, which comes
early in the backward, when few gradients have been produced. ``set_to_none=True`` (PyTorch's default) is
reported too: its peak lacks the gradients not yet produced at the peak, most of them.

Method: ``torch.profiler.profile(profile_memory=True, record_shapes=True)``. With memory profiling on, PyTorch's
default CPU allocator (c10's ``ProfiledCPUMemoryReporter``) reports every allocation and free of tensor memory
with its pointer and exact requested size (no rounding, no caching on the CPU); the script walks those events
(``kineto_results.experimental_event_tree()``) in time order, finds the peak, replays the events up to it and
names each allocation still live there by the op that made it (the autograd node in the backward, the forward
part via ``record_function`` labels). Allocations live at the peak that the forward saved for backward (their
storages, seen by ``saved_tensors_hooks``) are the activations; the rest are transients.

Noise: none. The events are tensor allocations only (memory kernels take with ``malloc`` outside PyTorch's
allocator, oneDNN scratch pads, Python objects and the profiler's own buffers are not in them), the sizes are the
requested bytes, and a step's sequence of allocations does not depend on timing: two runs give the same peak to
the byte (``--repeat 2``), with one intra-op thread (as here and in the tests) or two.
Frees of memory allocated before the profile are not reported; the step frees none of the baseline with
``set_to_none=False``, and with ``set_to_none=True`` the gradients are dropped before the profile starts. The
peak does not depend on the routing either: the expert terms depend on b s k alone (docs/memory.md).

What it finds (smelt's ``transient`` part, src/memory/transient.cpp; tests/python/test_torch_memory_peak.py):
the peak is in the backward, at the highest of four points, each what the step holds plus the gradients then in
flight less what the backward has freed:
- loss: the first cross-entropy's backward: the gradients of the log-probabilities and of the logits (2 N V e),
  less that loss's targets and weight total;
- attention: the first attention core's backward (the last layer visit's, or the last MTP module's): the
  gradients of the probabilities and of the scores (2 b n_h s (s + sinks) e), of the values and of the residual
  stream, less the loss, the head's input, the final norm, that visit's FFN and norm, the output projection's
  input and the values;
- moe: the last MoE layer's weighted sum of its routed experts (2 N k H e + N k e + N H e, ...);
- ffn: the last layer's first gated FFN (dense or shared expert: 2 N W e + 2 N H e, ...);
plus gradients autograd holds until a parameter's last use adds its own: a tied or MTP head's weight (at
the last three points) and, at the attention point, a looped last layer's weights. What the expectation
leaves out is under 200 bytes: the Python floats autograd keeps as 8-byte tensors (a residual scale,
1/sqrt(d)), the loss and its seed gradient. AdamW's step on the CPU (its single-tensor form) is far below: two
temporaries of one parameter tensor at a time, when the activations are gone.

Usage: python benchmarks/memory_peak.py [--configs tests|probe] [--batch B] [--seq S] [--repeat 2] [--only A,B] [--out F]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import torch
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile, record_function

ROOT = Path(__file__).resolve().parent.parent

_spec = importlib.util.spec_from_file_location("memory_probe", ROOT / "benchmarks" / "memory_probe.py")
_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_probe)

# Ops that only obtain memory for the op above them: an allocation is named by the first op above these.
_PLUMBING = {
    "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::resize_", "aten::new_empty",
    "aten::new_empty_strided", "aten::zeros", "aten::zeros_like", "aten::zero_", "aten::fill_", "aten::to",
    "aten::_to_copy", "aten::copy_", "aten::contiguous", "aten::clone", "aten::new_zeros",
}


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _shapes(node) -> str:
    """The tensor input shapes of an op event, as 'AxB, C'."""
    out = []
    for x in getattr(node.typed[1], "inputs", []) or []:
        sizes = getattr(x, "sizes", None)
        if sizes is not None:
            out.append("x".join(map(str, sizes)) or "scalar")
    return ", ".join(out)


def _name(alloc) -> tuple[str, str]:
    """(where, op) of an allocation event: the autograd node or forward label it ran under, and the first op
    above the allocator's plumbing (with its input shapes)."""
    where = op = ""
    node = alloc.parent
    while node is not None:
        n = node.name
        if n.startswith("autograd::engine::evaluate_function: "):
            where = where or n.split(": ", 1)[1]
        elif n.startswith("@"):  # a forward label (_labels)
            where = where or n[1:]
        elif not op and n not in _PLUMBING and n.startswith("aten::"):
            op = f"{n}({_shapes(node)})"
        node = node.parent
    return where, op


def _path(alloc) -> str:
    """The ops above an allocation, innermost first (for naming what the rules above leave unnamed)."""
    out, node = [], alloc.parent
    while node is not None and node.name not in ("forward", "backward", "step"):
        out.append(node.name)
        node = node.parent
    return " < ".join(out[:4])


def _labels(model: torch.nn.Module) -> list:
    """record_function ranges named after the forward's parts (layer visits, final norm, head, MTP modules)."""
    parts = [(m, f"layer{i}") for i, m in enumerate(model.layers)] + [(model.final_norm, "final_norm")]
    if model.lm_head is not None:
        parts.append((model.lm_head, "lm_head"))
    for k, m in enumerate(model.mtp or []):
        parts.append((m, f"mtp{k + 1}"))
    stack: list = []
    handles = []

    def pre(name):
        def hook(_m, _inp):
            rf = record_function("@" + name)
            rf.__enter__()
            stack.append(rf)

        return hook

    def post(_m, _inp, _out):
        stack.pop().__exit__(None, None, None)

    for m, name in parts:
        handles += [m.register_forward_pre_hook(pre(name)), m.register_forward_hook(post)]
    return handles


def _allocations(prof) -> list[tuple[str, object]]:
    """(phase, allocation event) for every CPU allocation and free of the profile, in time order."""
    out = []
    for root in prof.profiler.kineto_results.experimental_event_tree():
        phase = root.name if root.name in ("forward", "backward", "step") else ""
        stack = [root]
        while stack:
            n = stack.pop()
            if n.tag == _EventType.Allocation:
                if n.typed[1].device.type == "cpu":
                    out.append((phase, n))
            else:
                stack.extend(n.children)
    out.sort(key=lambda pe: (pe[1].start_time_ns, pe[1].typed[1].id))
    return out


def measure(cfg: dict, batch: int, seq: int, dtype: torch.dtype = torch.float32, set_to_none: bool = False,
            seed: int = 1) -> dict:
    """The peak of one steady training step (bytes) and what is live at it; see the module's docstring."""
    _model = _probe._import_reference()
    model = _model.ReferenceModel(cfg)
    _model._init(model, 0)
    model.to(dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    d = cfg.get("mtp_modules", 0)
    tokens = torch.randint(0, cfg["vocab_size"], (batch, seq + d + 1), generator=torch.Generator().manual_seed(seed))
    # A warm-up step creates the gradients and AdamW's state. A parameter no token reached (an expert) gets a zero
    # gradient, as a gradient buffer holds one for every parameter (DDP's buckets, Megatron-LM's contiguous
    # buffer), so AdamW keeps state for it too: smelt counts every expert as reached.
    model.loss(tokens).backward()
    for p in model.parameters():
        if p.requires_grad and p.grad is None:
            p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=set_to_none)
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
    base = {"weights": _nbytes(model.parameters()), "gradients": _nbytes(grads), "optimizer": _nbytes(state),
            "tokens": _nbytes([tokens])}
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: set[int] = set()

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params:
            saved.add(ptr)
        return t

    handles = _labels(model)
    # oneDNN's reduced-precision matmul takes a workspace whose size follows the CPU's instruction set (on an AVX-512
    # Xeon without bf16 instructions, another output's worth at the LM head: 131 KB over smelt's peak for tiny-moe in
    # bfloat16, 148 B without it); the step is measured without it, so the peak is the step's tensors on any CPU.
    try:
        with torch.backends.mkldnn.flags(enabled=False), \
                profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
            with record_function("forward"), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                loss = model.loss(tokens)
            with record_function("backward"):
                loss.backward()
                del loss
            with record_function("step"):
                opt.step()
    finally:
        for h in handles:
            h.remove()
    events = _allocations(prof)
    run, top, at, phase_peak = 0, 0, -1, {}
    for i, (phase, e) in enumerate(events):
        run += e.typed[1].alloc_size
        if run > phase_peak.get(phase, -1):
            phase_peak[phase] = run
        if run > top:
            top, at = run, i
    # Replay up to the peak: what is live there, by allocation.
    live: dict[int, int] = {}
    for i in range(at + 1):
        f = events[i][1].typed[1]
        if f.alloc_size > 0:
            live[f.ptr] = i
        else:
            live.pop(f.ptr, None)
    held_saved = 0
    saved_by: dict[str, int] = {}
    transients: dict[tuple[str, str, str], list[int]] = {}
    paths: dict[tuple[str, str, str], str] = {}
    for ptr, i in live.items():
        phase, e = events[i]
        size = e.typed[1].alloc_size
        if phase == "forward" and ptr in saved:
            held_saved += size
            where = _name(e)[0]
            saved_by[where] = saved_by.get(where, 0) + size
            continue
        key = (phase,) + _name(e)
        transients.setdefault(key, []).append(size)
        paths.setdefault(key, _path(e))
    baseline = sum(base.values())
    return {
        "batch": batch, "seq": seq, "dtype": str(dtype).removeprefix("torch."), "set_to_none": set_to_none,
        "baseline": base, "baseline_total": baseline,
        "peak": baseline + top, "peak_phase": events[at][0] if at >= 0 else "",
        "peak_by_phase": {k: baseline + v for k, v in phase_peak.items()},
        "end": baseline + run,
        "saved_live_at_peak": held_saved,
        "saved_live_by_where_allocated": saved_by,
        "transients": sorted(({"phase": k[0], "where": k[1], "op": k[2], "bytes": sum(v), "count": len(v),
                               "path": paths[k]} for k, v in transients.items()), key=lambda r: -r["bytes"]),
        "allocations": len(events),
    }


def smelt_report(cfg: dict, batch: int, seq: int, dtype: torch.dtype = torch.float32) -> dict:
    import smelt

    word = {torch.float32: "fp32", torch.bfloat16: "bf16"}[dtype]
    return smelt.memory(cfg, micro_batch=batch, seq=seq, param_dtype=word).to_dict()["worst_rank"]


def _test_module():
    """tests/python/test_torch_memory_peak.py: its cases and their shapes."""
    spec = importlib.util.spec_from_file_location("peak_cases", ROOT / "tests" / "python" / "test_torch_memory_peak.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def configs(which: str, tests, batch: int | None, seq: int | None) -> list[tuple[str, dict, int, int]]:
    """(name, config, micro-batch, sequence): the test's cases at their shapes, or the probe's configs; an
    explicit --batch or --seq wins."""
    if which == "probe":
        runs = json.load(open(ROOT / "benchmarks" / "data" / "memory-probe-configs.json", encoding="utf-8"))
        out = [(r["name"], r["config"], r["batch"], r["seq"]) for r in runs if "@" not in r["name"]]
    else:
        out = [(n, c, *tests.SHAPES.get(n, (tests.BATCH, tests.SEQ))) for n, c in tests.CASES]
    return [(n, c, batch or b, seq or s) for n, c, b, s in out]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="tests",
                    help="'tests' (the test's shrunk cases) or 'probe' (the probe's: several GB for the larger ones)")
    ap.add_argument("--batch", type=int, default=None, help="micro-batch (default: each case's)")
    ap.add_argument("--seq", type=int, default=None, help="sequence length (default: each case's)")
    ap.add_argument("--repeat", type=int, default=1, help="measure each config this many times (noise)")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    torch.set_num_threads(1)
    only = set(filter(None, a.only.split(",")))
    results = []
    print(f"{'config':32s} {'held':>12s} {'smelt total':>12s} {'peak':>12s} {'peak/held':>10s} "
          f"{'peak/total':>10s} {'none/total':>10s}  phase", file=sys.stderr)
    tests = _test_module()
    for name, cfg, batch, seq in configs(a.configs, tests, a.batch, a.seq):
        if only and name not in only:
            continue
        t0 = time.monotonic()
        runs = [measure(cfg, batch, seq) for _ in range(a.repeat)]
        none = measure(cfg, batch, seq, set_to_none=True)
        r = runs[0]
        row = {"name": name, "batch": batch, "seq": seq, "kept": r, "set_to_none": none,
               "repeat_peaks": [x["peak"] for x in runs]}
        if len(set(row["repeat_peaks"])) > 1:
            print(f"{name}: the peak did not repeat: {row['repeat_peaks']}", file=sys.stderr)
        rep = smelt_report(cfg, batch, seq)
        total = rep["total"]
        held = total - rep["transient"]["total"]  # without the backward's transient
        row.update(smelt_total=total, smelt_held=held, transient_terms=rep["transient"]["terms"],
                   smelt_parts={k: rep[k]["total"] for k in ("weights", "gradients", "optimizer", "activations")})
        row["step_temporaries"] = r["peak_by_phase"].get("step", 0) - r["baseline_total"]
        print(f"{name + f'@{batch}x{seq}':32s} {held:12d} {total:12d} {r['peak']:12d} {r['peak'] / held:10.4f} "
              f"{r['peak'] / total:10.4f} {none['peak'] / total:10.4f}  {r['peak_phase']} "
              f"{time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
        results.append(row)
    text = json.dumps({"meta": {"torch": torch.__version__}, "results": results}, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
