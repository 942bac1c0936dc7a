#!/usr/bin/env bash
# The CPU backend's rate on a medium MoE block against the dense GEMM rate
# measured in the same run (docs/bench.md#results): N separate runs of
# `smelt-match bench --backend cpu`, each itself the median of its repetitions;
# prints the median over the N runs of the layer's GFLOP/s, the dense GFLOP/s
# and their ratio, and the median of the ratio taken run by run.
# Usage: benchmarks/cpu_gemm_rate.sh [BINARY] [CONFIG] [N] [TOKENS]
set -euo pipefail
bin=${1:-build/release/cli/smelt-match}
config=${2:-bench/data/cpu-moe-256.json}
n=${3:-5}
tokens=${4:-512}
command -v python3 >/dev/null || { echo "cpu_gemm_rate.sh: needs python3 to read the JSON reports" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for _ in $(seq "$n"); do
  "$bin" bench "$config" --backend cpu --tokens "$tokens" --context "$tokens" --json >>"$tmp"
done
python3 - "$tmp" <<'PY'
import json, statistics, sys
text = open(sys.argv[1]).read()
decoder, at, rows = json.JSONDecoder(), 0, []
while at < len(text):
    while at < len(text) and text[at].isspace():
        at += 1
    if at == len(text):
        break
    report, at = decoder.raw_decode(text, at)
    rows.append(report["results"][0])
def med(key):
    return statistics.median(r[key] for r in rows)
r0 = rows[0]
print(f"{r0['model']} on {r0['device']} ({r0['expert_gemm_path']}), {r0['tokens']} tokens, {len(rows)} runs:")
print(f"  layer {1e3 * med('tflops'):.1f} GFLOP/s, dense {1e3 * med('dense_tflops'):.1f} GFLOP/s, "
      f"{med('pct_of_dense'):.1f}% of dense (median per run), {1e3 * med('seconds'):.1f} ms per run")
PY
