#!/usr/bin/env bash
# Set up, build smelt once (Release, as `pip install .` builds it: the library,
# the command line smelt-match and the Python extension from one build tree,
# build/python) and run the main job on an example: derive the compute-matched
# looped config of a 54B-class MoE Baseline, count both side by side, count a
# real Hugging Face config (Mixtral-8x7B), and the same derive from Python.
# smelt-match and the package smelt go into the set-up's virtual environment
# build/venv; smelt-match, the library and its CMake package are also installed
# under $SMELT_PREFIX (default ~/.local). No torch: `pip install .[torch]` or
# the tests' set-up (scripts/test.sh) brings it.
set -euo pipefail
cd "$(dirname "$0")/.."
env_lines=$(bash scripts/setup.sh) || {
  echo "quickstart: set-up failed (scripts/setup.sh, messages above): nothing built" >&2
  exit 1
}
eval "$env_lines"
prefix="${SMELT_PREFIX:-$HOME/.local}"
venv_bin="$SMELT_VENV/bin"

echo "== build: pip install . (the library, smelt-match and the Python package, Release, build/python)"
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv_bin/python" -m pip install -q --disable-pip-version-check \
  --no-build-isolation .
bin="$venv_bin/smelt-match"
out=build/python/smelt-looped-54b.json
echo
echo "== derive: the looped config matched to examples/smelt-baseline-54b.json"
"$bin" derive examples/smelt-baseline-54b.json --out "$out"
echo
echo "== count: the Baseline and the derived looped config side by side"
"$bin" count examples/smelt-baseline-54b.json "$out"
echo
echo "== count: a Hugging Face config.json (Mixtral-8x7B)"
"$bin" count examples/hf/mixtral-8x7b.json
echo
echo "== python: the same derive from the package smelt"
check='import smelt; r = smelt.derive("examples/smelt-baseline-54b.json"); k = r.best.knobs; print(f"smelt.derive: H {k.hidden_size}, {k.num_experts} experts, max |mismatch| {r.best.max_abs_mismatch_pct:.3f}%")'
"$venv_bin/python" -c "$check"
echo
# The library, its headers and CMake package and smelt-match (not the Python component).
cmake --install build/python --prefix "$prefix" --component Unspecified >/dev/null
echo "smelt-match is installed as $venv_bin/smelt-match and $prefix/bin/smelt-match"
echo "check the Python package with: $venv_bin/python -c 'import smelt; print(smelt.count(\"examples/tiny-moe.json\").flops.forward)'"
case ":$PATH:" in
  *":$prefix/bin:"*) echo "$prefix/bin is on your PATH: try smelt-match --help" ;;
  *) echo "$prefix/bin is not on your PATH; add it with: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
