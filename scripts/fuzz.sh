#!/usr/bin/env bash
# Short libFuzzer runs of every harness in tests/fuzz/ under AddressSanitizer and
# UndefinedBehaviorSanitizer: a fixed number of executions each, starting from
# tests/fuzz/corpus/<harness>/ (new inputs go to build/fuzz/corpus/, never into
# the repository). A crash leaves its input as build/fuzz/crash-<harness>-*;
# keep it in tests/fuzz/corpus/<harness>/ once fixed, where the ordinary build
# replays it as a test. Skips (exit 0) where clang or libFuzzer is missing.
#   scripts/fuzz.sh [harness...]   SMELT_FUZZ_RUNS=20000 (per harness)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${SMELT_FUZZ_RUNS:-20000}
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(native_config hf_config executorch_params runs laws solver_options hardware)
cxx=${SMELT_FUZZ_CXX:-clang++}

if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: skipped ($cxx not found)"
  exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$probe/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; then
  echo "fuzz: skipped ($cxx has no libFuzzer)"
  exit 0
fi

build=build/fuzz
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 with line tables only: a fifth less compile time than RelWithDebInfo's -O2 -g (the build is most of this
# script's CPU time; 20,000 runs take seconds), stack traces still with file and line. Unity builds, as GCC's
# default: 222 s of CPU instead of 314 s for the harnesses' modules.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DSMELT_UNITY=ON -DSMELT_FUZZ=ON -DSMELT_SANITIZE=ON -DSMELT_WITH_CUDA=OFF -DSMELT_BUILD_BENCH=OFF -DSMELT_BUILD_EXAMPLES=OFF \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${harnesses[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for harness in "${harnesses[@]}"; do
  corpus="$build/corpus/$harness"
  mkdir -p "$corpus"
  echo "fuzz: $harness, $runs runs"
  # -rss_limit_mb: a reader that takes more than 2 GiB for an input of at most
  # 4 KiB has a memory bug; -timeout: so has one that takes 10 s.
  log="$build/fuzz-$harness.log"
  dict=tests/fuzz/json.dict
  [ "$harness" = solver_options ] && dict=tests/fuzz/solver_options.dict
  rc=0
  "$build/tests/fuzz/fuzz_$harness" -runs="$runs" -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -dict="$dict" -artifact_prefix="$build/crash-$harness-" "$corpus" "tests/fuzz/corpus/$harness" \
    >"$log" 2>&1 || rc=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    grep -E -A40 "^==[0-9]+==|runtime error|deadly signal" "$log" | head -80 || true
    echo "fuzz: $harness found a crash (exit $rc; the input is $build/crash-$harness-*, the log $log)"
    exit 1
  fi
done
echo "fuzz: every harness ran $runs inputs clean"
