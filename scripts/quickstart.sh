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
echo "   about 3 CPU-minutes (2 min on 2 idle cores, 8 on a loaded machine); progress below, the whole log in"
echo "   build/pip-install.log"
# pip is verbose only as a whole: its log goes to a file, and the build's progress lines ([N/M] of the compiler
# steps) to the terminal, one line each, cut to the terminal's width.
log=build/pip-install.log
{
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv_bin/python" -m pip install -v --disable-pip-version-check \
    --no-build-isolation . 2>&1 && echo "pip exited with 0" || echo "pip exited with $?"
} | tee "$log" | { grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\] ' | cut -c1-100 || true; }
if ! grep -qx "pip exited with 0" "$log"; then
  tail -n 30 "$log" >&2
  echo "quickstart: the build failed (the last lines above; the whole log: $log)" >&2
  exit 1
fi
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
echo
echo "next: README.md's Use section (every command from the repository's root), docs/cli.md for each command;"
echo "      every test: bash scripts/test.sh (about 40 CPU-minutes; docs/development.md)"
