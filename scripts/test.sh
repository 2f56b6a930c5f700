#!/usr/bin/env bash
# README command (2): install the system packages; configure a build without
# LibTorch (LRKIT_WITH_TORCH=OFF, as on a machine that has none) and build,
# test and install the torch-free libraries and `lrkit` (schedule, diagnose,
# refine) there; then build everything and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "test.sh: the torch-free libraries and lrkit commands without LibTorch (build-torch-free/)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-torch-free "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DLRKIT_WITH_TORCH=OFF -DLRKIT_BUILD_BENCH=OFF
cmake --build build-torch-free --parallel "$(nproc)"
(cd build-torch-free && ctest --output-on-failure --parallel "$(nproc)" --timeout 600)
echo "test.sh: everything (build/)"
bash scripts/build.sh
cd build
ctest --output-on-failure --parallel "$(nproc)" --timeout 600
