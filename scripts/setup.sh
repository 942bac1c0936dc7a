#!/usr/bin/env bash
# Installs what smelt needs from Debian's packages, skipping what is present.
# Safe to run again; uses sudo when not root.
set -euo pipefail

packages=(build-essential cmake ninja-build clang-format libcli11-dev nlohmann-json3-dev libeigen3-dev libfmt-dev
          catch2 libbenchmark-dev liblbfgspp-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is optional; where it lives in /usr/local/cuda, let CMake find nvcc.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "export PATH=/usr/local/cuda/bin:\$PATH"
fi
