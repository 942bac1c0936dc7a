#!/usr/bin/env bash
# Installs what smelt needs from Debian's packages, skipping what is present.
# Safe to run again; uses sudo when not root. Progress goes to standard error;
# standard output holds only the `export` lines the caller should eval, so
#   env_lines=$(bash scripts/setup.sh) && eval "$env_lines"
# stops on a failed set-up instead of building without it.
set -euo pipefail

say() { echo "setup: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

packages=(build-essential cmake ninja-build clang-format libcli11-dev nlohmann-json3-dev libeigen3-dev libfmt-dev
          catch2 libbenchmark-dev liblbfgspp-dev libopenblas-serial-dev python3-dev python3-venv python3-pip)
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
py_tools=("nanobind>=2.0" "scikit-build-core>=0.10" pytest matplotlib pandas)
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "python3 is $(python3 --version 2>&1): need 3.11 or later"
if ! "$venv/bin/python" -c '' 2>/dev/null; then
  say "python: creating the virtual environment $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || fail "python3 -m venv $venv exited with $? (Debian: apt-get install python3-venv)"
fi
if ! "$venv/bin/python" -c 'import nanobind, scikit_build_core, pytest, matplotlib, pandas' 2>/dev/null; then
  say "python: pip install ${py_tools[*]} (PyPI)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${py_tools[@]}" >&2 ||
    fail "pip install ${py_tools[*]} exited with $?"
else
  say "python: ${#py_tools[@]} tools present in $venv"
fi
echo "export SMELT_VENV='$venv'"
