#!/usr/bin/env bash
# Set up and run every check CI runs: formatting, the test suite (with the CLI,
# examples and the installed-package consumer), the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the CUDA targets compiled
# wherever nvcc exists (no GPU needed; GPU tests skip themselves).
set -euo pipefail
cd "$(dirname "$0")/.."
env_lines=$(bash scripts/setup.sh) || {
  echo "test: set-up failed (scripts/setup.sh, messages above)" >&2
  exit 1
}
eval "$env_lines"
jobs=$(nproc)

echo "== format"
bash scripts/check-format.sh

echo "== dev build and tests"
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$jobs"
ctest --preset dev -j"$jobs"

# The Python package, built as `pip install .` builds it (build/python), and
# its tests against the CLI built from the same tree (a fit's last bits follow
# the build type: tests/python/conftest.py).
echo "== python"
"$SMELT_VENV/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation .
cmake --build build/python -j"$jobs" --target smelt-match
SMELT_MATCH="$PWD/build/python/cli/smelt-match" "$SMELT_VENV/bin/python" -m pytest -q tests/python

echo "== asan + ubsan build and tests"
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$jobs"
ctest --preset asan -j"$jobs"

# Short libFuzzer runs of every reader and the solver options (tests/fuzz/): a
# fixed number of inputs each under ASan + UBSan; skipped where clang's
# libFuzzer is missing. SMELT_FUZZ_RUNS=0 skips it.
echo "== fuzz (short runs)"
if [ "${SMELT_FUZZ_RUNS:-20000}" -gt 0 ]; then
  bash scripts/fuzz.sh
else
  echo "fuzz: skipped (SMELT_FUZZ_RUNS=0)"
fi
