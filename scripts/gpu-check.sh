#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (made for an H200): build (unless a build is
# given), run the GPU correctness tests and the hardware-counter calibration,
# then benchmark a Baseline MoE and its SMELT config at realistic size (32k
# tokens, H 2048, 128 experts top-8, expert FFN 768), writing every JSON to
# OUT and printing a short table last. Takes a few minutes.
# Usage: scripts/gpu-check.sh OUT [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUT [BUILD_DIR]}
build=${2:-build/gpu}
mkdir -p "$out"
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*"; }

if ! "$build/cli/smelt-match" --version >/dev/null 2>&1; then
  log "building $build"
  cmake --preset gpu -B "$build" >"$out/build.log" 2>&1 && cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1 \
    || { tail -30 "$out/build.log"; exit 1; }
fi
m="$build/cli/smelt-match"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.csv"

log "GPU tests (kernel correctness against the CPU reference, counters)"
status=0
for t in kernels_gpu_test kernels_bench_gpu_test cupti_counters_gpu_test; do
  [ -x "$build/tests/$t" ] || continue
  timeout 60 "$build/tests/$t" >"$out/$t.log" 2>&1
  rc=$?
  echo "$t: exit $rc"; tail -15 "$out/$t.log"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
done

base=examples/bench-moe-2048.json
smelt=examples/bench-moe-2048-smelt.json
bench() {  # NAME ARGS...
  local name=$1; shift
  log "bench $name"
  timeout 100 "$m" bench "$base" --vs "$smelt" --backend cuda --tokens 32768 --context 4096 --json "$@" \
    >"$out/bench-$name.json" 2>"$out/bench-$name.err"
  local rc=$?
  [ $rc -ne 0 ] && { echo "bench $name: exit $rc"; tail -5 "$out/bench-$name.err"; status=1; }
}
bench moe --moe-only
bench block
# Balanced routing too, while the 6-minute budget allows.
if [ $(($(date +%s) - t0)) -lt 240 ]; then bench moe-balanced --moe-only --balanced; fi

log "summary"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = []
for name in ("moe", "block", "moe-balanced"):
    path = os.path.join(out, f"bench-{name}.json")
    try:
        results = json.load(open(path))["results"]
    except Exception as e:
        print(f"{name}: no result ({e})"); continue
    for r in results:
        f, g = r["flops"], r["gemm_flops"]
        cnt = "n/a" if g["counter"] is None else f'{g["counter_vs_analytic_pct"]:+.2f}%'
        rows.append((name, r["model"], f'{r["seconds"]*1e3:.2f}', f'{r["tflops"]:.0f}', f'{r["expert_gemm_tflops"]:.0f}',
                     f'{r["pct_of_dense"]:.0f}%', f'{r["dense_tflops"]:.0f}', f'{g["accounted_vs_analytic_pct"]:+.3f}%', cnt,
                     f'{r["load_imbalance"]:.2f}', f'{r["max_rel_error"]:.1e}', r["expert_gemm_path"]))
head = ("run", "model", "ms", "TFLOP/s", "expert TF/s", "of dense", "dense TF/s", "GEMM acc-ana", "GEMM cnt-ana",
        "imbalance", "rel err", "expert path")
w = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
for row in [head] + rows:
    print("  ".join(str(v).rjust(w[i]) for i, v in enumerate(row)))
PY
log "done (exit $status)"
exit $status
