#!/usr/bin/env bash
# Prints, for every Baseline under examples/paper/, the predicted time of the config `smelt-match derive` matches to
# it (compare.sh's search: H and E multiples of 8, head_dim of 4, the expert width searched) over the Baseline's:
# a training step and a decode step on one H200 (docs/time.md; uncalibrated: the data sheet and smelt's default
# efficiencies), micro-batch 1 x the config's context (what derive matches FLOPs at), 8 micro-batches, decode batch 64 at that
# context, one GPU.
# Usage: examples/paper/time_ratios.sh [SMELT_MATCH] (default: on PATH). Markdown on standard output; docs/paper.md
# holds a copy.
set -euo pipefail
smelt=${1:-smelt-match}
command -v jq >/dev/null || { echo "time_ratios.sh: needs jq (apt-get install jq)" >&2; exit 2; }
dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
layout=(--hardware h200 --microbatches 8 --decode-batch 64 --json)

echo "| Baseline | FLOPs ratio (with the head) | training step ratio | decode step ratio | Baseline MFU | SMELT MFU |"
echo "|---|---|---|---|---|---|"
for scale in 100m 200m 600m 1p6b; do
  for base in "$dir/paper-$scale-"e*.json; do
    name=$(basename "$base" .json)
    # Exit code 3 (outside the 1% tolerance) still writes the best config.
    "$smelt" derive "$base" --align-hidden 8 --align-experts 8 --align-head-dim 4 --ffn searched --top 1 \
      --out "$work/$name.json" >/dev/null 2>&1 || [ $? -eq 3 ]
    summary='{training_seconds_per_token, decode_seconds_per_token, model_flops_utilization,
              training: {flops: .training.flops, tokens: .training.tokens}}'
    b=$("$smelt" time "$base" "${layout[@]}" | jq -c "$summary")
    s=$("$smelt" time "$work/$name.json" "${layout[@]}" | jq -c "$summary")
    jq -nr --arg name "$name" --argjson b "$b" --argjson s "$s" '
      def r3: (. * 1000 | round) / 1000;
      def pct: "\((. * 1000 | round) / 10)%";
      (($s.training.flops / $s.training.tokens) / ($b.training.flops / $b.training.tokens)) as $f |
      "| \($name) | \($f | r3) | \(($s.training_seconds_per_token / $b.training_seconds_per_token) | r3) | \(($s.decode_seconds_per_token / $b.decode_seconds_per_token) | r3) | \($b.model_flops_utilization | pct) | \($s.model_flops_utilization | pct) |"'
  done
done
