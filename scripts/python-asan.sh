#!/usr/bin/env bash
# The Python extension smelt._core built with AddressSanitizer and UndefinedBehaviorSanitizer (its own build
# tree, build/python-asan, with the smelt-match of the same build for the tests that compare with the CLI),
# and the Python tests that need no torch run against it. The interpreter is not sanitized, so libasan is
# preloaded and leak detection is off (CPython keeps its objects until exit); any report aborts the test run.
#   scripts/python-asan.sh [--build DIR] [--cli PATH] [pytest arguments]    PYTHON=build/venv/bin/python
# --build DIR uses a sanitized tree configured already with -DSMELT_PYTHON=ON (scripts/test.sh passes
# build/asan, whose library it has compiled for the C++ tests), instead of configuring build/python-asan.
# --cli PATH: the smelt-match the tests run and compare with, instead of the sanitized tree's (scripts/test.sh
# passes the Release one: the sanitized CLI has had its own tests in that tree's ctest, and a Debug CLI under
# ASan costs a third of this run's CPU; the extension stays sanitized, and its answers must equal the Release CLI's).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-build/venv/bin/python}
build=build/python-asan
if [ "${1:-}" = --build ]; then
  [ $# -ge 2 ] || { echo "python-asan: --build needs a build folder" >&2; exit 2; }
  build=$2
  shift 2
  for want in SMELT_PYTHON:BOOL=ON SMELT_SANITIZE:BOOL=ON; do
    grep -qx "$want" "$build/CMakeCache.txt" 2>/dev/null ||
      { echo "python-asan: $build is not configured with -D${want%%:*}=ON" >&2; exit 2; }
  done
else
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMELT_PYTHON=ON -DSMELT_SANITIZE=ON \
    -DSMELT_BUILD_TESTS=OFF -DSMELT_BUILD_EXAMPLES=OFF -DSMELT_BUILD_BENCH=OFF -DSMELT_WITH_CUDA=OFF \
    -DSMELT_WERROR=OFF -DPython_EXECUTABLE="$python" "${launcher[@]}" >/dev/null
fi
cli=
if [ "${1:-}" = --cli ]; then
  [ $# -ge 2 ] && [ -x "$2" ] || { echo "python-asan: --cli needs an executable smelt-match" >&2; exit 2; }
  cli=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  shift 2
fi
cmake --build "$build" --target _core smelt-match -j"${SMELT_JOBS:-2}"

# The package as pip would install it, with the sanitized extension, ahead of any installed copy.
pkg=$build/pkg
rm -rf "$pkg"
mkdir -p "$pkg"
cp -r python/smelt "$pkg/smelt"
cp "$build"/python/_core*.so "$pkg/smelt/"

compiler=$(grep -m1 '^CMAKE_CXX_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)
libasan=$("$compiler" -print-file-name=libasan.so)
[ -f "$libasan" ] || { echo "python-asan: libasan.so not found ($compiler -print-file-name)" >&2; exit 2; }
# libstdc++ beside it: the interpreter does not link it, and ASan's __cxa_throw interceptor must find the real
# one when a C++ extension (ours, or matplotlib's) first throws.
libstdcxx=$("$compiler" -print-file-name=libstdc++.so.6)
preload="$libasan $libstdcxx"

export PYTHONPATH=$PWD/$pkg${PYTHONPATH:+:$PYTHONPATH}
export SMELT_MATCH=${cli:-$PWD/$build/cli/smelt-match}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
LD_PRELOAD=$preload "$python" -c 'import smelt, smelt._core as c; assert c.__file__.startswith("'"$PWD/$pkg"'"), c.__file__'
LD_PRELOAD=$preload "$python" -m pytest -q -p no:cacheprovider tests/python --ignore-glob='*torch*' "$@"
