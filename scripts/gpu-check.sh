#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (made for an H200): build (unless a build is
# given), run the GPU correctness tests, benchmark a Baseline MoE and its SMELT
# config at realistic size (32k tokens, H 2048, 128 experts top-8, expert FFN
# 768), measure the reference model's training memory (benchmarks/memory_probe.py),
# train a shrunk Baseline and its looped twin in bf16 (examples/train/),
# read the hardware counters, and, while time is left, run the kernels
# under compute-sanitizer. Every JSON and log goes to OUT; a short table is
# printed last.
#
# Steps run in order of importance, each under a timeout cut to what is left of
# a time budget (SMELT_GPU_CHECK_SECONDS, default 330 s, so that the whole
# script fits in 6 minutes); a step that does not fit is skipped and named.
# Exit status: 0 all ran and passed, 1 a step failed, 3 none failed but some
# were skipped.
# Usage: scripts/gpu-check.sh OUT [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUT [BUILD_DIR]}
build=${2:-build/gpu}
budget=${SMELT_GPU_CHECK_SECONDS:-330}
mkdir -p "$out"
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*"; }
status=0
skipped=()

# run_step NAME CAP COMMAND...: runs COMMAND with its output in OUT/NAME.log,
# under min(CAP, time left); prints its exit code and the log's tail.
run_step() {
  local name=$1 cap=$2
  shift 2
  local left=$((budget - ($(date +%s) - t0)))
  if [ "$left" -lt 20 ]; then
    log "skip $name: the time budget is spent"
    skipped+=("$name")
    return 0
  fi
  [ "$cap" -gt "$left" ] && cap=$left
  log "$name (at most $cap s)"
  timeout "$cap" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc$([ $rc -eq 124 ] && echo ' (timed out)')"
  tail -12 "$out/$name.log"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
  return 0
}

# bench's CUDA backend is a module beside the build's lib directory, which
# smelt-match loads on demand (docs/bench.md): a build without it is rebuilt.
cuda_module() { find "$build" -name libsmelt_cuda_backend.so -print -quit 2>/dev/null; }
if ! "$build/cli/smelt-match" --version >/dev/null 2>&1 || [ -z "$(cuda_module)" ]; then
  log "building $build"
  cmake --preset gpu -B "$build" >"$out/build.log" 2>&1 && cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1 \
    || { tail -30 "$out/build.log"; exit 1; }
fi
m="$build/cli/smelt-match"
log "CUDA backend module: $(cuda_module)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.csv" \
  || echo "nvidia-smi: not available"

# Correctness first: the fill smoke test, then the routing kernels against the
# host and four small plans against the CPU reference.
run_step kernels_gpu_test 30 "$build/tests/kernels_gpu_test"
run_step kernels_bench_gpu_test 90 "$build/tests/kernels_bench_gpu_test"

# The benchmarks. `bench NAME ARGS...` writes OUT/bench-NAME.json.
base=examples/bench-moe-2048.json
smelt=examples/bench-moe-2048-smelt.json
bench() {
  local name=$1
  shift
  run_step "bench-$name" 150 bash -c '"$@" >"$0"' "$out/bench-$name.json" \
    "$m" bench "$base" --vs "$smelt" --backend cuda --tokens 32768 --context 4096 --json "$@"
}
bench moe --moe-only
bench block
# What the reference PyTorch model really holds in a training step on the GPU, per config and dtype
# (docs/memory.md, "Measuring"): compared with smelt's memory report off the device.
py=$(command -v python3 || true)
if [ -n "$py" ] && "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  run_step memory-probe 150 "$py" benchmarks/memory_probe.py --device cuda --seconds 110 --out "$out/memory-probe.json"
else
  log "no PyTorch with CUDA: no memory probe"
  skipped+=("memory-probe")
fi
# A shrunk Baseline and its derived looped twin trained 20 steps in bf16 (examples/train/train_pair.py,
# docs/training.md): each one's step time, then FSDP's fully_shard (which needs CUDA) in one process.
# Needs the Python package (pip install .) beside torch with CUDA, transformers and accelerate.
if [ -n "$py" ] && "$py" -c 'import torch, smelt.hf; assert torch.cuda.is_available()' 2>/dev/null; then
  run_step train-pair 90 "$py" examples/train/train_pair.py --steps 20 --dtype bfloat16 --engine torch \
    --out "$out/train"
  run_step train-fsdp 60 "$py" -m torch.distributed.run --nproc-per-node 1 examples/train/train_pair.py \
    --steps 20 --dtype bfloat16 --parallel fsdp --out "$out/train-fsdp"
else
  log "no smelt package with CUDA torch and transformers: no training step"
  skipped+=("train-pair" "train-fsdp")
fi
run_step cupti_counters_gpu_test 60 "$build/tests/cupti_counters_gpu_test"
bench moe-balanced --moe-only --balanced

# Out-of-bounds accesses and races in the benchmark's own kernels, where the
# tool is there and the device lets it run.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -n "$sanitizer" ]; then
  run_step memcheck 90 "$sanitizer" --tool memcheck --error-exitcode 9 "$build/tests/kernels_bench_gpu_test" --sanitize
  run_step racecheck 90 "$sanitizer" --tool racecheck --error-exitcode 9 "$build/tests/kernels_bench_gpu_test" --sanitize
else
  log "compute-sanitizer not found: no memcheck or racecheck"
  skipped+=("memcheck" "racecheck")
fi

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
for run in ("train", "train-fsdp"):
    for model in ("baseline", "looped"):
        try:
            log = json.load(open(os.path.join(out, run, model, "log.json")))
        except Exception as e:
            print(f"{run} {model}: no log ({e})"); continue
        s = log["steps"]
        print(f"{run} {model}: median step {log['median_step_seconds'] * 1e3:.1f} ms, loss {s[0]['loss']:.3f} -> "
              f"{s[-1]['loss']:.3f}, {log['params']} parameters, {log['dtype']} on {log['device']}")
PY
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped for time or tools: ${skipped[*]}"
  [ $status -eq 0 ] && status=3
fi
log "done (exit $status)"
exit $status
