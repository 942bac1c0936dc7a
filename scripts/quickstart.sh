#!/usr/bin/env bash
# Set up, build a Release smelt-match and run the main job on an example:
# derive the compute-matched looped config of a 54B-class MoE Baseline, count
# both side by side, then count a real Hugging Face config (Mixtral-8x7B).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/setup.sh | grep '^export ' || true)"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target smelt-match
./build/release/cli/smelt-match derive examples/smelt-baseline-54b.json --out build/release/smelt-looped-54b.json
echo
./build/release/cli/smelt-match count examples/smelt-baseline-54b.json build/release/smelt-looped-54b.json
echo
./build/release/cli/smelt-match count examples/hf/mixtral-8x7b.json
