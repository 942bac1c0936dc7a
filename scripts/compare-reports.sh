#!/usr/bin/env bash
# Compares two builds of smelt-match report by report: count, memory and time (JSON), derive (JSON) and the
# Hugging Face export to every family, of every config under examples/ (native, Hugging Face, loops), and lists
# the reports that differ (exit 1) or says that every one is byte-identical (exit 0). For a change that must not
# move a number: build the old revision's smelt-match beside the new one and run
#   bash scripts/compare-reports.sh OLD/smelt-match NEW/smelt-match [OUT]
# OUT (default: a new temporary folder) keeps both sets of reports, old/ and new/, to diff.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: bash scripts/compare-reports.sh OLD_SMELT_MATCH NEW_SMELT_MATCH [OUT]" >&2
  exit 2
fi
old=$1 new=$2
for bin in "$old" "$new"; do
  [ -x "$bin" ] || { echo "compare-reports: $bin: not an executable" >&2; exit 2; }
done
out=${3:-$(mktemp -d)}
families=(dbrx deepseek_v2 deepseek_v3 gpt_oss llama4_text mixtral olmoe qwen2_moe qwen3_moe smelt)

reports() {  # BIN DIR: every report of every example, each with its exit status
  local bin=$1 dir=$2 f n
  mkdir -p "$dir"
  for f in examples/*.json examples/hf/*.json examples/loops/*.json; do
    n=$(echo "$f" | tr '/' '_')
    for what in count memory time; do
      { "$bin" "$what" "$f" --json 2>&1 || true; } >"$dir/$n.$what"
    done
    { "$bin" derive "$f" --json 2>&1 || true; } >"$dir/$n.derive"
    for fam in "${families[@]}"; do
      { "$bin" export "$f" --to hf --family "$fam" 2>&1 || true; } >"$dir/$n.export.$fam"
    done
  done
}

reports "$old" "$out/old"
reports "$new" "$out/new"
total=$(find "$out/old" -type f | wc -l)
if diff -rq "$out/old" "$out/new" >"$out/differ.txt"; then
  echo "compare-reports: all $total reports byte-identical ($out)"
  exit 0
fi
echo "compare-reports: $(wc -l <"$out/differ.txt") of $total reports differ ($out/old and $out/new):"
sed -e "s|^Files $out/old/||" -e 's| and .* differ$||' "$out/differ.txt"
exit 1
