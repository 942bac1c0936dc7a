#!/usr/bin/env python3
"""smelt-match time against the reference PyTorch model's measured training steps on this CPU (docs/time.md,
"Predicted against measured"). Measured, never asserted.

1. Calibrate a CPU spec (schema smelt-hardware/1): the fp32 GEMM rate over a grid of shapes, fitted as
   peak x m/(m+h) x n/(n+h) x k/(k+h) (peak and h by least squares on the log rate); the attention core's rate
   (batched Q K^T and P V products at the configs' shapes) over that peak; a streaming op's bandwidth
   (x + y on 64 MiB tensors); then eager PyTorch's fixed cost per op, fitted on four tiny calibration configs
   (their measured step less the prediction without it, over the ops the prediction counts).
2. Predict and measure a held-out set of Baseline and looped-twin pairs (dense and MoE, several widths and
   sequence lengths): the median of REPEATS training steps (forward, cross-entropy, backward, AdamW) after a
   warm-up, against `smelt-match time --json`'s training_seconds_per_token x tokens (fp32 throughout, one
   device, one micro-batch).
3. Print a Markdown table: each config's predicted and measured step, the error, each pair's predicted and
   measured looped/Baseline ratio, the median absolute error.

With --gemm table (the default), the GEMM grid itself is the device's rate (a calibration file, JSON kind
"calibration", read at each GEMM's shape linearly in log2 between the grid's points, docs/time.md "Calibration");
with --gemm fit, the fitted peak and half size; the rest of the calibration is the same.

Usage: build/venv/bin/python benchmarks/time_vs_reference.py [--smelt-match build/release/cli/smelt-match]
         [--repeats 3] [--threads 2] [--spec-out build/cpu-hardware.json] [--gemm table|fit]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(__file__), "..")

import smelt.torch as st  # noqa: E402  (the installed package: scripts/setup.sh builds it into build/venv)
from torch_reference import median_s as median_time  # noqa: E402  (a warm-up, then the median of the repeats)
from time_configs import config, pairs  # noqa: E402  (the held-out Baseline / looped-twin pairs)


# ---- 1. calibration ---------------------------------------------------------------------------------------


def gemm_rates() -> list[tuple[int, int, int, float]]:
    """FLOP/s of (m x k) by (k x n) products over a grid of the sizes training steps use, each the mean time of
    the three layouts a Linear's forward, input gradient and weight gradient multiply in."""
    rates = []
    for m in GRID_M:
        for n in GRID_NK:
            for k in GRID_NK:
                a, b = torch.randn(m, k), torch.randn(k, n)
                bt, at = b.t().contiguous(), a.t().contiguous()
                reps = max(1, int(2e8 / (2 * m * n * k)))

                def run() -> None:
                    for _ in range(reps):
                        torch.mm(a, b)
                        torch.mm(a, bt.t())
                        torch.mm(at.t(), b)

                rates.append((m, n, k, 3 * 2 * m * n * k * reps / median_time(run, 3)))
    return rates


def fit_gemm(rates: list[tuple[int, int, int, float]]) -> tuple[float, float]:
    """(peak, h) minimising the squared log error of peak x prod x/(x+h) over the grid."""
    best = (math.inf, 0.0, 0.0)
    for h in [2.0**e for e in [x / 4 for x in range(0, 45)]]:
        logs = [math.log(r) - sum(math.log(x / (x + h)) for x in (m, n, k)) for m, n, k, r in rates]
        log_peak = statistics.mean(logs)
        err = sum((v - log_peak) ** 2 for v in logs)
        if err < best[0]:
            best = (err, math.exp(log_peak), h)
    return best[1], best[2]


def bandwidth() -> float:
    x, y = torch.randn(16 << 20), torch.randn(16 << 20)
    out = torch.empty_like(x)
    return 3 * x.numel() * 4 / median_time(lambda: torch.add(x, y, out=out), 5)


def attention_rate(peak: float, h: float) -> float:
    """The batched score and value products of a 256-token causal core over what the GEMM fit predicts for them."""
    b, heads, s, d = 2, 8, 256, 64
    q, k, v = torch.randn(b, heads, s, d), torch.randn(b, heads, s, d), torch.randn(b, heads, s, d)
    mask = torch.full((s, s), float("-inf")).triu(1)

    def core() -> None:
        p = torch.softmax(q @ k.transpose(-1, -2) / 8 + mask, dim=-1)
        p @ v

    t = median_time(core, 5)
    # Over the FLOPs smelt counts (the causal pairs, s (s + 1) / 2 a head): eager PyTorch computes the full square.
    flops = 2 * (2 * b * heads * (s * (s + 1) // 2) * d)
    return flops / t / peak


def spec(peak: float, h: float, bw: float, attention: float, overhead: float) -> dict:
    return {
        "schema": "smelt-hardware/1",
        "name": "cpu",
        "description": f"this machine's CPU, {torch.get_num_threads()} threads, PyTorch {torch.__version__} eager",
        "backend": "cpu",
        "peak_flops_bf16": peak,
        "peak_flops_fp16": peak,
        "peak_flops_fp32": peak,
        "memory_bandwidth": bw,
        "memory_bytes": 1 << 34,
        "link_bandwidth": bw,
        "link_latency": 1e-6,
        "network_bandwidth": bw,
        "network_latency": 1e-6,
        "devices_per_node": 1,
        "op_overhead": overhead,
        "gemm_efficiency": 1.0,
        "gemm_half_size": h,
        "attention_efficiency": min(1.0, attention),
        "memory_efficiency": 1.0,
        "calibrated": True,
        "sources": ["benchmarks/time_vs_reference.py: measured on this machine"],
    }


GRID_M, GRID_NK = [32, 128, 512, 1024], [64, 256, 512, 1024, 2048]


def device_file(path: str, table: list[tuple[int, int, int, float]] | None, peak: float, h: float, bw: float,
                attention: float, overhead: float) -> None:
    """The spec (--gemm fit), or a calibration holding the GEMM grid and the spec (--gemm table)."""
    s = spec(peak, h, bw, attention, overhead)
    if table is not None:
        s = {"schema_version": 1, "kind": "calibration", "backend": "cpu", "device": s["description"],
             "dtype": "fp32", "threads": torch.get_num_threads(), "memory_bandwidth": bw, "op_overhead": overhead,
             "gemm": {"m": GRID_M, "n": GRID_NK, "k": GRID_NK, "flops_per_second": [r for _, _, _, r in table]},
             "hardware": s}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(s, f, indent=2)


# ---- 2. configs -------------------------------------------------------------------------------------------


# Calibration configs, none of them held out below: tiny ones, where eager PyTorch's fixed cost per op binds, and
# mid-sized ones, where its elementwise traffic (fp32 norms, activations, softmax and their backward, more passes
# than the ops' bytes count) adds to the GEMMs.
CALIBRATION = [(config("cal-a", 64, 2, 0, False, 256), 1, 16), (config("cal-b", 64, 2, 4, False, 256), 1, 16),
               (config("cal-c", 128, 2, 4, True, 256), 1, 32), (config("cal-d", 128, 4, 0, True, 256), 2, 16),
               (config("cal-e", 256, 4, 0, False, 1024), 2, 256), (config("cal-f", 256, 4, 4, True, 1024), 2, 256),
               (config("cal-g", 640, 2, 4, False, 1024), 1, 384)]

# ---- 3. predicted and measured ------------------------------------------------------------------------------


def measure(cfg: dict, b: int, s: int, repeats: int) -> float:
    model = st.build_model(cfg, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg["vocab_size"], (b, s), generator=g)
    y = torch.randint(0, cfg["vocab_size"], (b, s), generator=g)

    def step() -> None:
        logits = model(x).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    return median_time(step, repeats)


def predict(binary: str, cfg: dict, b: int, s: int, spec_file: str) -> tuple[float, int]:
    """(predicted step seconds, ops in the step)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cfg, f)
    try:
        out = subprocess.run(
            [binary, "time", f.name, "--hardware", spec_file, "--micro-batch", str(b), "--seq", str(s),
             "--param-dtype", "fp32", "--grad-dtype", "fp32", "--optimizer-dtype", "fp32",
             "--activation-dtype", "fp32", "--json"],
            check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    r = json.loads(out)
    ops = sum(op["times"] for op in r["training"]["ops"])
    return r["training"]["seconds"], ops


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smelt-match", default=os.path.join(ROOT, "build", "release", "cli", "smelt-match"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--spec-out", default=os.path.join(ROOT, "build", "cpu-hardware.json"))
    ap.add_argument("--gemm", choices=["fit", "table"], default="table",
                    help="GEMM rates: the fitted saturation (fit) or the measured grid as a calibration table")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    rates = gemm_rates()
    peak, h = fit_gemm(rates)
    table = rates if args.gemm == "table" else None
    bw = bandwidth()
    att = attention_rate(peak, h)
    print(f"calibration: GEMM peak {peak / 1e9:.1f} GFLOP/s, half size {h:.1f}; bandwidth {bw / 1e9:.1f} GB/s; "
          f"attention core {att:.2f} of peak", file=sys.stderr)
    # The two fixed-cost terms of eager PyTorch, fitted together on the calibration configs: the cost of an op
    # and the fraction of the bandwidth its elementwise traffic reaches (a grid, the least median |log error|).
    measured_cal = [measure(cfg, b, s, args.repeats) for cfg, b, s in CALIBRATION]
    best = (math.inf, 0.0, 1.0)
    for overhead in [x * 1e-6 for x in range(0, 201, 10)]:
        for efficiency in [x / 20 for x in range(1, 21)]:
            device_file(args.spec_out, table, peak, h, bw * efficiency, att, overhead)
            errs = [abs(math.log(predict(args.smelt_match, cfg, b, s, args.spec_out)[0] / m))
                    for (cfg, b, s), m in zip(CALIBRATION, measured_cal)]
            if statistics.median(errs) < best[0]:
                best = (statistics.median(errs), overhead, efficiency)
    _, overhead, efficiency = best
    bw *= efficiency
    print(f"eager op overhead {overhead * 1e6:.0f} us, elementwise bandwidth {bw / 1e9:.1f} GB/s "
          f"({efficiency:.2f} of the streaming rate)", file=sys.stderr)
    device_file(args.spec_out, table, peak, h, bw, att, overhead)

    rows = []
    for cfg, b, s in pairs():
        measured = measure(cfg, b, s, args.repeats)
        predicted, _ = predict(args.smelt_match, cfg, b, s, args.spec_out)
        rows.append((cfg["name"], b, s, predicted, measured))
        print(f"  {cfg['name']}: predicted {predicted:.4f} s, measured {measured:.4f} s", file=sys.stderr)

    gemm = (f"GEMM table of {len(rates)} measured shapes (best {max(r for *_, r in rates) / 1e9:.1f} GFLOP/s)"
            if table else f"GEMM peak {peak / 1e9:.1f} GFLOP/s, half size {h:.1f}")
    print(f"CPU spec: {gemm}, bandwidth {bw / 1e9:.1f} GB/s, "
          f"attention {att:.2f}, op overhead {overhead * 1e6:.0f} us (fitted with the bandwidth on "
          f"{len(CALIBRATION)} calibration configs); {args.threads} threads, "
          f"PyTorch {torch.__version__}\n")
    print("| config | batch x seq | predicted step | measured step | error | looped / Baseline predicted | measured |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    errors, ratio_errors = [], []
    for i, (name, b, s, p, m) in enumerate(rows):
        err = (p - m) / m
        errors.append(abs(err))
        ratio = ""
        if i % 2 == 1:
            rp, rm = p / rows[i - 1][3], m / rows[i - 1][4]
            ratio_errors.append(abs(rp / rm - 1))
            ratio = f"| {rp:.3f} | {rm:.3f}"
        else:
            ratio = "| | "
        print(f"| {name} | {b} x {s} | {p * 1e3:.1f} ms | {m * 1e3:.1f} ms | {err * 100:+.1f}% {ratio} |")
    print(f"\nmedian absolute error {statistics.median(errors) * 100:.1f}% over {len(rows)} configs; "
          f"looped/Baseline ratio within {max(ratio_errors) * 100:.1f}% on every pair "
          f"(median {statistics.median(ratio_errors) * 100:.1f}%)")


if __name__ == "__main__":
    main()
