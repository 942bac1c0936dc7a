#!/usr/bin/env bash
# Fails when a tracked C++ or CUDA file differs from .clang-format's layout.
set -euo pipefail
cd "$(dirname "$0")/.."
# Without git (a source tarball), the same four kinds of file, outside build trees.
files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' 2>/dev/null ||
  find . \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -not -path './build/*' \
    -not -path './.git/*' | sort)
[ -z "$files" ] && exit 0
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files
echo "format: $(echo "$files" | wc -w) files clean"
