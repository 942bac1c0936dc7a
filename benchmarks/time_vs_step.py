#!/usr/bin/env python3
"""smelt-match's time model against smelt-match's own measured training steps on this CPU (docs/time.md,
"The measured step"). Measured, never asserted.

1. Calibrate the CPU backend: `smelt-match bench calibrate --out FILE` (GEMM rates over a grid of shapes,
   streaming bandwidth, call overhead; one core, OpenBLAS), or take FILE from --calibration.
2. For each held-out config (benchmarks/time_configs.py: 11 Baseline / looped-twin pairs, dense and MoE): measure
   `smelt-match bench step CONFIG --tokens B*S --context S --hardware FILE --json` (forward, cross-entropy,
   backward and AdamW at the config's widths, float32, the median of REPEATS steps after a warm-up), which
   prints the time model's prediction for the same step beside it.
3. Print a Markdown table: each config's measured and predicted forward, training step and decode step per token
   (decode: one new token for each sequence against a cache of the sequence's tokens), the errors, each pair's
   measured and predicted looped/Baseline training-time ratio; then the median absolute errors.

Usage: python3 benchmarks/time_vs_step.py [--smelt-match build/release/cli/smelt-match] [--calibration FILE]
         [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from time_configs import ROOT, pairs  # noqa: E402


def run_json(cmd: list[str]) -> dict:
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def step(binary: str, cfg: dict, b: int, s: int, calibration: str, repeats: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cfg, f)
    try:
        return run_json([binary, "bench", "step", f.name, "--tokens", str(b * s), "--context", str(s),
                         "--hardware", calibration, "--repetitions", str(repeats), "--json"])["results"][0]
    finally:
        os.unlink(f.name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smelt-match", default=os.path.join(ROOT, "build", "release", "cli", "smelt-match"))
    ap.add_argument("--calibration", help="a bench calibrate file (default: calibrate now into build/)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    calibration = args.calibration
    if not calibration:
        calibration = os.path.join(ROOT, "build", "cpu-calibration.json")
        subprocess.run([args.smelt_match, "bench", "calibrate", "--out", calibration], check=True)
    with open(calibration, encoding="utf-8") as f:
        cal = json.load(f)

    rows = []
    for cfg, b, s in pairs():
        r = step(args.smelt_match, cfg, b, s, calibration, args.repeats)
        rows.append((cfg["name"], b, s, r))
        print(f"  {cfg['name']}: measured {r['measured']['training_seconds_per_token'] * 1e6:.1f} us/token, "
              f"predicted {r['predicted']['training_seconds_per_token'] * 1e6:.1f}", file=sys.stderr)

    print(f"Calibration: {cal['device']}; {len(cal['gemm']['flops_per_second'])} GEMM shapes, bandwidth "
          f"{cal['memory_bandwidth'] / 1e9:.1f} GB/s, op overhead {cal['op_overhead'] * 1e6:.2f} us. Steps: "
          f"{rows[0][3]['blas']}, median of {args.repeats}.\n")
    print("| config | batch x seq | forward measured | predicted | error | training measured | predicted | error "
          "| looped / Baseline measured | predicted | ratio error | decode measured | predicted | error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    fwd_errors, errors, ratio_errors, decode_errors = [], [], [], []
    for i, (name, b, s, r) in enumerate(rows):
        m, p = r["measured"], r["predicted"]
        fe = p["forward_seconds_per_token"] / m["forward_seconds_per_token"] - 1
        te = p["training_seconds_per_token"] / m["training_seconds_per_token"] - 1
        de = p["decode_seconds_per_token"] / m["decode_seconds_per_token"] - 1
        fwd_errors.append(abs(fe))
        errors.append(abs(te))
        decode_errors.append(abs(de))
        ratio = "| | | |"
        if i % 2 == 1:
            base = rows[i - 1][3]
            rm = m["training_seconds_per_token"] / base["measured"]["training_seconds_per_token"]
            rp = p["training_seconds_per_token"] / base["predicted"]["training_seconds_per_token"]
            ratio_errors.append(abs(rp / rm - 1))
            ratio = f"| {rm:.3f} | {rp:.3f} | {(rp / rm - 1) * 100:+.1f}% |"
        print(f"| {name} | {b} x {s} | {m['forward_seconds_per_token'] * 1e6:.1f} us | "
              f"{p['forward_seconds_per_token'] * 1e6:.1f} us | {fe * 100:+.1f}% | "
              f"{m['training_seconds_per_token'] * 1e6:.1f} us | {p['training_seconds_per_token'] * 1e6:.1f} us | "
              f"{te * 100:+.1f}% {ratio} {m['decode_seconds_per_token'] * 1e6:.1f} us | "
              f"{p['decode_seconds_per_token'] * 1e6:.1f} us | {de * 100:+.1f}% |")
    within = sum(1 for e in ratio_errors if e <= 0.10)
    print(f"\nTraining step: median absolute error {statistics.median(errors) * 100:.1f}% over {len(rows)} configs "
          f"(forward alone {statistics.median(fwd_errors) * 100:.1f}%, decode "
          f"{statistics.median(decode_errors) * 100:.1f}%); looped/Baseline ratio within 10% on "
          f"{within} of {len(ratio_errors)} pairs (median {statistics.median(ratio_errors) * 100:.1f}%, "
          f"worst {max(ratio_errors) * 100:.1f}%).")


if __name__ == "__main__":
    main()
