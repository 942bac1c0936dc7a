#!/usr/bin/env bash
# Set up and run every check CI runs: formatting; the test suite (unit, CLI,
# examples, the installed-package consumers) in the Release tree that
# `pip install .` builds (build/python: the library, smelt-match and the Python
# extension compiled once, with the CUDA targets wherever nvcc exists: no GPU
# needed, GPU tests skip themselves); the Python tests against that same
# installed package and its smelt-match; the suite again under AddressSanitizer
# + UndefinedBehaviorSanitizer (Debug, with assertions), the Python tests against
# that tree's extension under the same sanitizers; short fuzz runs.
# Each phase prints its wall time (docs/development.md lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase_start=$SECONDS
phase() {
  [ "$phase_start" -lt "$SECONDS" ] && echo "   ($((SECONDS - phase_start)) s)"
  phase_start=$SECONDS
  echo "== $*"
}
phase "set-up (scripts/setup.sh --tests)"
env_lines=$(bash scripts/setup.sh --tests) || {
  echo "test: set-up failed (scripts/setup.sh, messages above)" >&2
  exit 1
}
eval "$env_lines"
jobs=$(nproc)
py="$SMELT_VENV/bin/python"

phase "format"
bash scripts/check-format.sh

# The wheel's own build tree, with tests, examples, benchmarks and (where the
# toolkit is) CUDA switched on (warnings as errors in the asan build: GCC 12 at -O3 warns falsely in std::string): the package installed
# into build/venv is the one the C++ tests below ran on.
phase "build: pip install . with the tests (Release, build/python)"
# --config-settings, not -C: Debian 12's pip (23.0) has only the long form.
defines=()
for option in SMELT_BUILD_TESTS SMELT_BUILD_EXAMPLES SMELT_BUILD_BENCH SMELT_WITH_CUDA; do
  defines+=("--config-settings=cmake.define.$option=ON")
done
CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$py" -m pip install -q --disable-pip-version-check --no-build-isolation \
  "${defines[@]}" .
cmake --build build/python -j"$jobs"

phase "tests (ctest, build/python)"
ctest --test-dir build/python -j"$jobs" --output-on-failure

# The Python tests against the CLI that the wheel installed (a fit's last bits
# follow the build type: tests/python/conftest.py).
phase "python tests (pytest, the installed package and its smelt-match)"
SMELT_MATCH="$SMELT_VENV/bin/smelt-match" "$py" -m pytest -q tests/python

# The Python entry points that read text (read_config, the plots' report and law
# readers), a seeded mutation run over tests/fuzz/corpus/ (tests/fuzz/python_fuzz.py).
phase "python fuzz (20000 inputs)"
"$py" tests/fuzz/python_fuzz.py --engine random --runs "${SMELT_PY_FUZZ_RUNS:-20000}"

phase "asan + ubsan build and tests"
cmake --preset asan -DSMELT_PYTHON=ON -DPython_EXECUTABLE="$py" >/dev/null
cmake --build --preset asan -j"$jobs"
ctest --preset asan -j"$jobs"

# The extension of the same sanitized tree, under the interpreter with libasan
# preloaded: the Python tests that need no torch (scripts/python-asan.sh).
phase "python tests under asan + ubsan (build/asan)"
bash scripts/python-asan.sh --build build/asan

# Short libFuzzer runs of every reader and the solver options (tests/fuzz/): a
# fixed number of inputs each under ASan + UBSan; skipped where clang's
# libFuzzer is missing. SMELT_FUZZ_RUNS=0 skips it.
phase "fuzz (short runs)"
if [ "${SMELT_FUZZ_RUNS:-20000}" -gt 0 ]; then
  bash scripts/fuzz.sh
else
  echo "fuzz: skipped (SMELT_FUZZ_RUNS=0)"
fi
phase "done"
echo "test: all checks passed in $((SECONDS - start)) s"
