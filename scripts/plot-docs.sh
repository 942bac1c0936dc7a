#!/usr/bin/env bash
# Regenerates the pictures of docs/plots.md (docs/img/plot-*.png) from the examples: runs smelt-match for each
# report, then `python -m smelt plot` on it. SMELT_MATCH names the CLI (default: build/dev/cli/smelt-match);
# the Python running this must import the smelt package (installed, or python/ on PYTHONPATH) and matplotlib.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cli=$(realpath "${SMELT_MATCH:-build/dev/cli/smelt-match}")
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$cli" derive "$root/examples/smelt-baseline-54b.json" --top 3 --context 4096,32768 --json >derive.json
"$cli" derive "$root/examples/smelt-baseline-54b.json" --out smelt-54b.json >/dev/null 2>&1
"$cli" count smelt-54b.json --json >count.json
"$cli" sweep "$root/examples/smelt-baseline-12l.json" --json >sweep.json
"$cli" fit "$root/examples/runs-dense-looped.csv" --group-by arch --bootstrap 200 --out laws.json >/dev/null 2>&1
"$cli" frontier --law laws.json --budget 1e20,1e21,1e22 --json >frontier.json
for kind in mismatch layers sweep frontier; do
  case $kind in
    mismatch) report=derive.json ;;
    layers) report=count.json ;;
    *) report=$kind.json ;;
  esac
  "$python" -m smelt plot "$kind" "$report" --out "$root/docs/img/plot-$kind.png"
done
