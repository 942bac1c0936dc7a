#!/usr/bin/env bash
# Set up and run every check CI runs: formatting; the test suite (unit, CLI,
# examples, the installed-package consumers) in the Release tree that
# `pip install .` builds (build/python: the library, smelt-match and the Python
# extension compiled once, with the CUDA targets wherever nvcc exists: no GPU
# needed, GPU tests skip themselves); the Python tests against that same
# installed package and its smelt-match; the suite again under AddressSanitizer
# + UndefinedBehaviorSanitizer (Debug, with assertions), the Python tests against
# that tree's extension under the same sanitizers; short fuzz runs.
#
# Every phase runs, whatever an earlier one gave (a phase that needs a failed
# build is reported as not run), and the last line names the phases that failed
# (exit 1) or says all passed (exit 0). Each phase prints its wall time and the
# CPU time of its commands (docs/development.md lists them).
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
failed=()
not_run=()

# CPU seconds (user + sys) of every finished child so far, from bash's `times`, into cpu_now. `times` runs in
# this shell (a pipeline or $(...) would run it in a subshell, which counts only its own children).
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
cpu_now=0
read_cpu() {
  times >"$times_file"
  cpu_now=$(awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); total += p[1] * 60 + p[2] }
    printf "%d", total }' "$times_file")
}
phase_name=""
phase_start=$SECONDS
phase_cpu=0
end_phase() {
  [ -n "$phase_name" ] || return 0
  read_cpu
  echo "   ($phase_name: $((SECONDS - phase_start)) s wall, $((cpu_now - phase_cpu)) s CPU)"
}
phase() {
  end_phase
  phase_name=$1
  phase_start=$SECONDS
  read_cpu
  phase_cpu=$cpu_now
  echo "== $1${2:+ ($2)}"
}
# run NAME COMMAND...: the command as a phase; a non-zero exit is recorded, and the script goes on.
run() {
  local name=$1
  shift
  "$@" || {
    echo "test: phase '$name' failed (exit $?)" >&2
    failed+=("$name")
    return 1
  }
}

phase "set-up" "scripts/setup.sh --tests"
env_lines=$(bash scripts/setup.sh --tests) || {
  echo "test: set-up failed (scripts/setup.sh, messages above): no phase run" >&2
  echo "test: FAILED: set-up"
  exit 1
}
eval "$env_lines"
jobs=$(nproc)
py="$SMELT_VENV/bin/python"

phase "format"
run format bash scripts/check-format.sh

# The wheel's own build tree, with tests, examples, benchmarks and (where the
# toolkit is) CUDA switched on: the package installed into build/venv is the one
# the C++ tests below ran on.
phase "build" "pip install . with the tests, Release, build/python"
build_release() {
  # --config-settings, not -C: Debian 12's pip (23.0) has only the long form.
  local defines=()
  for option in SMELT_BUILD_TESTS SMELT_BUILD_EXAMPLES SMELT_BUILD_BENCH SMELT_WITH_CUDA; do
    defines+=("--config-settings=cmake.define.$option=ON")
  done
  CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$py" -m pip install -q --disable-pip-version-check --no-build-isolation \
    "${defines[@]}" . && cmake --build build/python -j"$jobs"
}
release_built=1
run build build_release || release_built=0

if [ "$release_built" = 1 ]; then
  phase "tests" "ctest, build/python"
  run tests ctest --test-dir build/python -j"$jobs" --output-on-failure

  # The Python tests against the CLI that the wheel installed.
  phase "python tests" "pytest, the installed package and its smelt-match"
  run "python tests" env SMELT_MATCH="$SMELT_VENV/bin/smelt-match" "$py" -m pytest -q -p no:cacheprovider tests/python

  # The Python entry points that read text (read_config, the plots' report and law
  # readers), a seeded mutation run over tests/fuzz/corpus/ (tests/fuzz/python_fuzz.py).
  phase "python fuzz" "${SMELT_PY_FUZZ_RUNS:-20000} inputs"
  run "python fuzz" "$py" tests/fuzz/python_fuzz.py --engine random --runs "${SMELT_PY_FUZZ_RUNS:-20000}"
else
  not_run+=("tests" "python tests" "python fuzz")
fi

phase "asan build" "AddressSanitizer + UndefinedBehaviorSanitizer, Debug, build/asan"
asan_built=1
build_asan() {
  cmake --preset asan -DSMELT_PYTHON=ON -DPython_EXECUTABLE="$py" >/dev/null && cmake --build --preset asan -j"$jobs"
}
run "asan build" build_asan || asan_built=0
if [ "$asan_built" = 1 ]; then
  phase "asan tests" "ctest, build/asan"
  run "asan tests" ctest --preset asan -j"$jobs"

  # The extension of the same sanitized tree, under the interpreter with libasan
  # preloaded: the Python tests that need no torch (scripts/python-asan.sh), against
  # the Release smelt-match the wheel installed (the sanitized one had its ctest above).
  phase "python asan tests" "build/asan"
  cli=()
  [ "$release_built" = 1 ] && cli=(--cli "$SMELT_VENV/bin/smelt-match")
  run "python asan tests" bash scripts/python-asan.sh --build build/asan "${cli[@]}"
else
  not_run+=("asan tests" "python asan tests")
fi

# Short libFuzzer runs of every reader and the solver options (tests/fuzz/): a
# fixed number of inputs each under ASan + UBSan; skipped where clang's
# libFuzzer is missing. SMELT_FUZZ_RUNS=0 skips it.
phase "fuzz" "short runs"
if [ "${SMELT_FUZZ_RUNS:-20000}" -gt 0 ]; then
  run fuzz bash scripts/fuzz.sh
else
  echo "fuzz: skipped (SMELT_FUZZ_RUNS=0)"
fi
end_phase

read_cpu
summary="$((SECONDS - start)) s wall, $((cpu_now / 60)) CPU-minutes"
if [ ${#failed[@]} -eq 0 ] && [ ${#not_run[@]} -eq 0 ]; then
  echo "test: all checks passed in $summary"
  exit 0
fi
line="test: FAILED: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')"
[ ${#not_run[@]} -gt 0 ] && line+="; not run: $(IFS=,; echo "${not_run[*]}" | sed 's/,/, /g')"
echo "$line ($summary)"
exit 1
