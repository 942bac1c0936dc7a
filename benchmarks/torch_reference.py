#!/usr/bin/env python3
"""Speed of the reference PyTorch model (smelt.torch): measured, never asserted (docs/reference-model.md, "Speed").

For each config of a pair (a Baseline and the SMELT config smelt.derive matches to it, both shrunk), the median
over REPEATS of the wall time of one forward pass and of one training step (forward, cross-entropy, backward,
AdamW) on a batch of 8 x 16 tokens, after one warm-up of each; then the derived config's medians over the
Baseline's.

  --pair train    the training pair of tests/python/test_torch_train.py (4 layers, 32 -> 48 experts; default)
  --pair readme   examples/smelt-baseline-54b.json and its derived config (30 layers, 336 -> 488 experts)

Usage: build/venv/bin/python benchmarks/torch_reference.py [--pair train|readme] [--repeats 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_pair import README_BASELINE, batch, loss_of, pair  # noqa: E402


def readme_pair() -> dict[str, dict]:
    # Each shrunk by its own rule (f = 32 for H 2304, f = 16 for H 1920), as the docs example shrinks it.
    return {"baseline": st.shrink(README_BASELINE), "derived": st.shrink(smelt.derive(README_BASELINE).best_config)}


def median_s(fn, repeats: int) -> float:
    fn()  # warm-up: first-call allocations and dispatch caches
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(cfg: dict, repeats: int) -> tuple[float, float]:
    model = st.build_model(cfg, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    x, y = batch(torch.Generator().manual_seed(0))

    def forward() -> None:
        with torch.no_grad():
            model(x)

    def step() -> None:
        loss = loss_of(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return median_s(forward, repeats), median_s(step, repeats)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", choices=("train", "readme"), default="train")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    args = ap.parse_args()
    if args.repeats < 1 or args.threads < 1:
        ap.error("--repeats and --threads must be at least 1")
    torch.set_num_threads(args.threads)
    cfgs = pair() if args.pair == "train" else readme_pair()
    rows = {name: measure(cfg, args.repeats) for name, cfg in cfgs.items()}
    print(f"pair {args.pair}, batch 8 x 16 tokens, {args.threads} thread(s), median of {args.repeats}")
    print(f"{'config':<10} {'H':>4} {'experts':>7} {'visits':>6} {'forward ms':>11} {'train step ms':>14}")
    for name, cfg in cfgs.items():
        visits = smelt.count(cfg).to_dict()["layers_executed"]
        fwd, step = rows[name]
        h, e = cfg["hidden_size"], cfg["moe"]["num_experts"]
        print(f"{name:<10} {h:>4} {e:>7} {visits:>6} {fwd * 1e3:>11.1f} {step * 1e3:>14.1f}")
    (bf, bs), (df, ds) = rows["baseline"], rows["derived"]
    print(f"derived / baseline: forward {df / bf:.2f}x, train step {ds / bs:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
