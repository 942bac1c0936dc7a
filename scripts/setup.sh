#!/usr/bin/env bash
# Installs what smelt needs from Debian's packages and PyPI, skipping what is
# present. Safe to run again; uses sudo when not root. Progress goes to standard
# error; standard output holds only the `export` lines the caller should eval, so
#   env_lines=$(bash scripts/setup.sh [--tests]) && eval "$env_lines"
# stops on a failed set-up instead of building without it.
#   (no argument)  what the build, the CLI and `pip install .` need (the quick start)
#   --tests        also what the tests need: clang-format, Catch2, Google Benchmark,
#                  clang's libFuzzer, pytest, matplotlib, pandas, and (unless
#                  SMELT_TORCH=0) torch, transformers and accelerate, pinned
set -euo pipefail
tests=0
case "${1:-}" in
  "") ;;
  --tests) tests=1 ;;
  *)
    echo "setup: unknown argument '$1' (expected nothing or --tests)" >&2
    exit 2
    ;;
esac

say() { echo "setup: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

packages=(build-essential cmake ninja-build libcli11-dev nlohmann-json3-dev libeigen3-dev libfmt-dev liblbfgspp-dev
          libopenblas-serial-dev python3-dev python3-venv python3-pip)
[ "$tests" = 1 ] && packages+=(clang-format catch2 libbenchmark-dev clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and sudo not found; as root run: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  # apt's own lines (Get:, Unpacking, Setting up) go to standard error, so a
  # minute of downloads is visible; no standard input, so nothing waits on a prompt.
  apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o Dpkg::Use-Pty=0)
  say "installing ${#missing[@]} packages: ${missing[*]}"
  say "apt-get update"
  "${apt[@]}" update </dev/null >&2 || fail "apt-get update exited with $?"
  say "apt-get install (about a minute on a fresh system)"
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null >&2 ||
    fail "apt-get install exited with $? (packages: ${missing[*]})"
  say "installed ${missing[*]}"
else
  say "all ${#packages[@]} packages present"
fi

# The CUDA toolkit is optional; where it lives in /usr/local/cuda, let CMake find nvcc.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  say "CUDA toolkit found in /usr/local/cuda"
  echo "export PATH=/usr/local/cuda/bin:\$PATH"
fi

# The Python package (pip install .): its build and test tools from PyPI, in a
# virtual environment under the ignored build/ ($SMELT_VENV elsewhere), made by
# whichever python3 is on PATH (3.11 or later).
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${SMELT_VENV:-$root/build/venv}
py_tools=("nanobind>=2.0" "scikit-build-core>=0.10")
py_modules=nanobind,scikit_build_core
if [ "$tests" = 1 ]; then
  py_tools+=(pytest matplotlib pandas)
  py_modules+=,pytest,matplotlib,pandas
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "python3 is $(python3 --version 2>&1): need 3.11 or later"
if ! "$venv/bin/python" -c '' 2>/dev/null; then
  say "python: creating the virtual environment $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || fail "python3 -m venv $venv exited with $? (Debian: apt-get install python3-venv)"
fi
# pip_install WHAT ARGUMENTS...: pip install into the venv, its messages kept in build/setup-pip.log (a failed
# try of an index that is not reachable prints nothing alarming); on failure the last lines, and what to do
# behind a proxy that re-signs TLS (pip then fails to verify PyPI's certificate).
pip_log="$root/build/setup-pip.log"
mkdir -p "$root/build"
pip_install() {
  local what=$1
  shift
  if "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" >>"$pip_log" 2>&1; then
    return 0
  fi
  if grep -q "CERTIFICATE_VERIFY_FAILED\|SSLError\|certificate verify failed" "$pip_log"; then
    say "pip could not verify the TLS certificate of the package index ($what): behind a proxy that re-signs"
    say "TLS, give pip its CA certificate: export PIP_CERT=/path/to/proxy-ca.pem (or: pip config set global.cert"
    say "/path/to/proxy-ca.pem), then run this again"
  fi
  return 1
}
pip_tail() { tail -n 15 "$pip_log" | sed 's/^/  pip: /' >&2; }
if ! "$venv/bin/python" -c "import $py_modules" 2>/dev/null; then
  say "python: pip install ${py_tools[*]} (PyPI)"
  pip_install "the build tools" "${py_tools[@]}" || { pip_tail; fail "pip install ${py_tools[*]} failed (log: $pip_log)"; }
else
  say "python: ${#py_tools[@]} tools present in $venv"
fi
# The reference PyTorch model (smelt.torch; its tests skip without torch), for
# the tests only (`pip install .[torch]` is a user's way to it): torch pinned,
# CPU-only from PyTorch's CPU index (about 200 MB). Where that index cannot be
# reached, the same version from PyPI, whose Linux wheel brings the CUDA
# libraries (about 5 GB installed, a minute or two). SMELT_TORCH=0 skips it.
torch_version=2.5.1
if [ "$tests" = 0 ]; then
  say "python: torch and transformers not needed (the tests' set-up, --tests, installs them)"
elif [ "${SMELT_TORCH:-1}" = 0 ]; then
  say "python: torch skipped (SMELT_TORCH=0); the smelt.torch tests will skip"
elif "$venv/bin/python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$torch_version')" 2>/dev/null; then
  say "python: torch $torch_version present"
else
  say "python: pip install torch==$torch_version (the CPU-only wheel from PyTorch's index, if it answers)"
  if ! pip_install torch --retries 0 --timeout 30 "torch==$torch_version" --index-url https://download.pytorch.org/whl/cpu; then
    say "python: PyTorch's CPU-only index is not reachable from here (expected where only PyPI is); installing"
    say "python: torch==$torch_version from PyPI instead, whose wheel brings the CUDA libraries (about 5 GB, a few minutes)"
    pip_install torch "torch==$torch_version" || {
      pip_tail
      fail "pip install torch==$torch_version failed (needs about 5 GB free under $venv; SMELT_TORCH=0 skips torch and the smelt.torch tests; log: $pip_log)"
    }
  fi
fi
# pin NAME VERSION [PIP ARGUMENTS...]: pip install NAME==VERSION (with the arguments) into the venv unless that
# version imports already; with torch and skipped with it (SMELT_TORCH=0), for the tests only.
pin() {
  local name=$1 version=$2
  shift 2
  [ "$tests" = 1 ] && [ "${SMELT_TORCH:-1}" != 0 ] || return 0
  if "$venv/bin/python" -c "import sys, $name; sys.exit($name.__version__ != '$version')" 2>/dev/null; then
    say "python: $name $version present"
  else
    say "python: pip install $name==$version (PyPI)"
    pip_install "$name" "$name==$version" "$@" ||
      { pip_tail; fail "pip install $name==$version failed (SMELT_TORCH=0 skips it with torch; log: $pip_log)"; }
  fi
}
# transformers, pinned, beside torch: the oracle of tests/python/test_torch_hf.py, which skips without it
# (about 170 MB installed with its dependencies; 5.18.0 is the newest release that runs on torch 2.5.1:
# later ones need torch 2.6).
pin transformers 5.18.0
# accelerate, pinned, beside transformers: what transformers' Trainer runs on (smelt.hf's training tests and
# examples/train/). 1.12.0 accepts torch 2.5.1 (later releases need torch 2.6 and would replace it); installed
# with torch named, so pip never swaps torch for a newer one.
pin accelerate 1.12.0 "torch==$torch_version"
# megatron-core, pinned, for the tests that check exported Megatron-LM arguments
# against its TransformerConfig and GPTModel (tests/python/test_export_megatron_core.py,
# skipped without it; a 2 MB wheel). 0.14.0 is the newest whose requirements accept
# torch 2.5.1; --no-deps since it asks for numpy<2, and these tests run with numpy 2.
megatron_version=0.14.0
if [ "$tests" = 1 ] && [ "${SMELT_TORCH:-1}" != 0 ]; then
  if "$venv/bin/python" -m pip show megatron-core 2>/dev/null | grep -q "^Version: $megatron_version"; then
    say "python: megatron-core $megatron_version present"
  else
    say "python: pip install --no-deps megatron-core==$megatron_version (PyPI)"
    pip_install megatron-core --no-deps "megatron-core==$megatron_version" ||
      { pip_tail; fail "pip install megatron-core==$megatron_version failed (SMELT_TORCH=0 skips it with torch; log: $pip_log)"; }
  fi
fi
echo "export SMELT_VENV='$venv'"
