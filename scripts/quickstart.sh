#!/usr/bin/env bash
# Set up, build a Release smelt-match and run the main job on an example:
# derive the compute-matched looped config of a 54B-class MoE Baseline, count
# both side by side, then count a real Hugging Face config (Mixtral-8x7B).
# Installs smelt-match (with the library and its CMake package) under
# $SMELT_PREFIX, by default ~/.local, so that ~/.local/bin/smelt-match runs it,
# and the Python package smelt into the set-up's virtual environment build/venv.
set -euo pipefail
cd "$(dirname "$0")/.."
env_lines=$(bash scripts/setup.sh) || {
  echo "quickstart: set-up failed (scripts/setup.sh, messages above): nothing built" >&2
  exit 1
}
eval "$env_lines"
prefix="${SMELT_PREFIX:-$HOME/.local}"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target smelt-match
bin=./build/release/cli/smelt-match
echo
echo "== derive: the looped config matched to examples/smelt-baseline-54b.json"
$bin derive examples/smelt-baseline-54b.json --out build/release/smelt-looped-54b.json
echo
echo "== count: the Baseline and the derived looped config side by side"
$bin count examples/smelt-baseline-54b.json build/release/smelt-looped-54b.json
echo
echo "== count: a Hugging Face config.json (Mixtral-8x7B)"
$bin count examples/hf/mixtral-8x7b.json
echo
echo "== python: the package smelt into build/venv (pip install .), and the same derive from Python"
"$SMELT_VENV/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation .
"$SMELT_VENV/bin/python" -c 'import smelt
r = smelt.derive("examples/smelt-baseline-54b.json")
k = r.best.knobs
print(f"smelt.derive: H {k.hidden_size}, {k.num_experts} experts, max |mismatch| {r.best.max_abs_mismatch_pct:.3f}%")'
echo
cmake --install build/release --prefix "$prefix" >/dev/null
case ":$PATH:" in
  *":$prefix/bin:"*) echo "smelt-match is installed as $prefix/bin/smelt-match (on your PATH: try smelt-match --help)" ;;
  *)
    echo "$prefix/bin is not on your PATH; add it with: export PATH=\"$prefix/bin:\$PATH\""
    echo "smelt-match is installed as $prefix/bin/smelt-match"
    ;;
esac
