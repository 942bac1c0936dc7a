#!/usr/bin/env bash
# Wall time of `smelt-match count` on one config, start-up included (target:
# under 20 ms). Prints the median and the spread of N runs.
# Usage: benchmarks/cli_wall.sh [BINARY] [CONFIG] [N]
set -euo pipefail
bin=${1:-build/release/cli/smelt-match}
config=${2:-examples/hf/mixtral-8x7b.json}
n=${3:-51}
times=()
for _ in $(seq "$n"); do
  start=$(date +%s%N)
  "$bin" count "$config" >/dev/null
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | sed -n "$(( (n + 1) / 2 ))p")
low=$(echo "$sorted" | head -1)
high=$(echo "$sorted" | tail -1)
echo "smelt-match count $config: median ${median} us over $n runs (min ${low} us, max ${high} us)"
