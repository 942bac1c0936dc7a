#!/usr/bin/env bash
# Set up, build a Release smelt-match and count an example: a Hugging Face
# config (Mixtral-8x7B) beside a SMELT Baseline and its looped configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/setup.sh | grep '^export ' || true)"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target smelt-match
./build/release/cli/smelt-match count examples/smelt-baseline-12l.json examples/smelt-looped-12l.json
echo
./build/release/cli/smelt-match count examples/hf/mixtral-8x7b.json
