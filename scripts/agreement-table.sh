#!/usr/bin/env bash
# Prints the agreement tables of docs/reference-model.md ("Measured agreement"): every example config,
# shrunk by smelt.torch.shrink, measured on the reference model by `python -m smelt check-model --markdown`
# (parameters, forward and training FLOPs at T = 16, or less where the context is shorter, and the KV cache).
# A config the model does not build yet is listed under the tables with its feature. Exit code: 0 when every
# measured term equals smelt's, 3 when one does not (its cell is bold, with smelt's value beside it).
# Needs the set-up's venv with torch and this package installed (pip install .); PYTHON overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-build/venv/bin/python}
exec "$python" -m smelt check-model --shrink --markdown examples/*.json examples/hf/*.json
