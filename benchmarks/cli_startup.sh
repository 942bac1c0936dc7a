#!/usr/bin/env bash
# Start-up cost of a command that needs no CUDA: wall time and peak resident
# memory (GNU time's %M) of `smelt-match count CONFIG`, the median of N runs,
# for each binary given (e.g. a build with CUDA, one configured with
# -DSMELT_WITH_CUDA=OFF, and an older build that still linked the CUDA
# libraries). docs/bench.md quotes its output.
# Usage: benchmarks/cli_startup.sh [-n N] [-c CONFIG] BINARY...
set -euo pipefail
n=11
config=examples/tiny-moe.json
while getopts "n:c:" opt; do
  case $opt in
    n) n=$OPTARG ;;
    c) config=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- build/dev/cli/smelt-match
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time, Debian package 'time')" >&2; exit 2; }
median() { sort -n | sed -n "$(((n + 1) / 2))p"; }
printf '%-44s %10s %12s  %s\n' binary "wall ms" "max RSS KB" "CUDA libraries loaded"
for bin in "$@"; do
  walls=() rss=()
  for _ in $(seq "$n"); do
    start=$(date +%s%N)
    /usr/bin/time -f "%M" -o /tmp/cli_startup.$$ "$bin" count "$config" >/dev/null
    end=$(date +%s%N)
    walls+=("$(((end - start) / 1000))")
    rss+=("$(cat /tmp/cli_startup.$$)")
  done
  rm -f /tmp/cli_startup.$$
  wall_us=$(printf '%s\n' "${walls[@]}" | median)
  # Which CUDA libraries the dynamic loader opened for the command.
  loaded=$(LD_DEBUG=libs "$bin" count "$config" 2>&1 >/dev/null | grep -o 'calling init: [^ ]*' |
    grep -oE 'lib(cudart|cublas|cublasLt|cupti)[^/ ]*' | sort -u | tr '\n' ' ' || true)
  printf '%-44s %10.1f %12s  %s\n' "$bin" "$(echo "$wall_us / 1000" | bc -l)" "$(printf '%s\n' "${rss[@]}" | median)" \
    "${loaded:-none}"
done
