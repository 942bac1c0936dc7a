#!/usr/bin/env bash
# Fails when a tracked C++ or CUDA file differs from .clang-format's layout.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' 2>/dev/null || find . -name '*.[ch]pp' -not -path './build/*')
[ -z "$files" ] && exit 0
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files
echo "format: $(echo "$files" | wc -w) files clean"
