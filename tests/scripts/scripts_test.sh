#!/usr/bin/env bash
# The set-up and check scripts as a newcomer meets them, with the system tools
# they call (dpkg-query, apt-get, id, cmake, git) replaced by stubs on PATH:
#   scripts_test.sh SOURCE_DIR CASE
# CASE: setup_progress | setup_failure | format_without_git
set -uo pipefail
src=$1
case_name=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stubs=$work/stubs
mkdir -p "$stubs"

stub() {  # stub NAME BODY: an executable NAME on $stubs running BODY
  printf '#!/usr/bin/env bash\n%s\n' "$2" >"$stubs/$1"
  chmod +x "$stubs/$1"
}
check() {  # check DESCRIPTION CONDITION...
  local what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $what"
    echo "--- stdout:"
    cat "$work/out"
    echo "--- stderr:"
    cat "$work/err"
    exit 1
  fi
  echo "ok: $what"
}
has() { grep -qF -- "$2" "$work/$1"; }
lacks() { ! grep -qF -- "$2" "$work/$1"; }

# Every package reads as missing; we are root.
stub dpkg-query 'exit 1'
stub id 'echo 0'

case $case_name in
  setup_progress)
    # apt's own progress reaches the terminal (standard error); standard output
    # keeps only the export lines the scripts eval.
    stub apt-get 'echo "Get:1 http://deb.debian.org/debian bookworm/main cmake ($*)"; echo "Setting up cmake"'
    # A virtual environment whose python has every tool: no pip, no network.
    mkdir -p "$work/venv/bin" && printf '#!/usr/bin/env bash\nexit 0\n' >"$work/venv/bin/python"
    chmod +x "$work/venv/bin/python"
    SMELT_VENV=$work/venv PATH=$stubs:$PATH bash "$src/scripts/setup.sh" </dev/null >"$work/out" 2>"$work/err"
    rc=$?
    check "set-up succeeds" test "$rc" -eq 0
    # The quick start's set-up: 12 build packages, 2 Python build tools, no torch.
    check "says what it installs" has err "setup: installing 12 packages: build-essential cmake ninja-build"
    check "installs no test tool" lacks err "catch2"
    check "finds the Python tools in the virtual environment" has err "setup: python: 2 tools present in $work/venv"
    check "needs no torch" has err "setup: python: torch and transformers not needed"
    check "names the virtual environment" has out "export SMELT_VENV='$work/venv'"
    check "shows apt-get's progress" has err "Get:1 http://deb.debian.org/debian bookworm/main cmake"
    check "apt-get installs non-interactively" has err "Setting up cmake"
    check "standard output holds only export lines" test -z "$(grep -v '^export ' "$work/out")"
    # The tests' set-up: 5 more packages (clang-format catch2 libbenchmark-dev clang libclang-rt-14-dev), 5 tools, torch.
    SMELT_VENV=$work/venv PATH=$stubs:$PATH bash "$src/scripts/setup.sh" --tests </dev/null >"$work/out" 2>"$work/err"
    check "the tests' set-up succeeds" test "$?" -eq 0
    check "says what the tests add" has err "setup: installing 17 packages: build-essential"
    check "adds libFuzzer" has err "clang libclang-rt-14-dev"
    check "finds the tests' Python tools" has err "setup: python: 5 tools present in $work/venv"
    check "has torch" has err "setup: python: torch 2.5.1 present"
    SMELT_VENV=$work/venv PATH=$stubs:$PATH bash "$src/scripts/setup.sh" --test </dev/null >"$work/out" 2>"$work/err"
    check "an unknown argument exits 2" test "$?" -eq 2
    check "names the unknown argument" has err "setup: unknown argument '--test' (expected nothing or --tests)"
    ;;
  setup_failure)
    # apt-get fails: the set-up, the quick start, the test script and CI stop
    # there, saying so, and build nothing.
    stub apt-get 'echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2; exit 100'
    stub cmake 'echo "STUB cmake $*"; exit 0'
    PATH=$stubs:$PATH bash "$src/scripts/setup.sh" </dev/null >"$work/out" 2>"$work/err"
    rc=$?
    check "set-up exits non-zero" test "$rc" -ne 0
    check "set-up names the failure" has err "setup: FAILED: apt-get update exited with 100"
    check "apt-get's message is shown" has err "E: Could not get lock"
    for script in scripts/quickstart.sh scripts/test.sh .ci/run; do
      CI=true PATH=$stubs:$PATH bash "$src/$script" </dev/null >"$work/out" 2>"$work/err"
      rc=$?
      check "$script exits non-zero" test "$rc" -ne 0
      check "$script says the set-up failed" has err "set-up failed (scripts/setup.sh, messages above)"
      check "$script builds nothing" lacks out "STUB cmake"
    done
    ;;
  format_without_git)
    # No git (a source tarball): the check still covers CUDA files.
    stub git 'exit 127'
    mkdir -p "$work/tree/scripts" "$work/tree/kernels"
    cp "$src/scripts/check-format.sh" "$work/tree/scripts/"
    cp "$src/.clang-format" "$work/tree/"
    printf '__global__ void k(int*p){p[0]=1;}\n' >"$work/tree/kernels/bad.cu"
    printf 'inline int f() { return 1; }\n' >"$work/tree/kernels/good.cuh"
    PATH=$stubs:$PATH bash "$work/tree/scripts/check-format.sh" >"$work/out" 2>"$work/err"
    rc=$?
    check "a misformatted .cu fails the check" test "$rc" -ne 0
    check "the .cu is named" has err "bad.cu"
    rm "$work/tree/kernels/bad.cu"
    PATH=$stubs:$PATH bash "$work/tree/scripts/check-format.sh" >"$work/out" 2>"$work/err"
    rc=$?
    check "a formatted tree passes" test "$rc" -eq 0
    check "the .cuh is counted" has out "format: 1 files clean"
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
