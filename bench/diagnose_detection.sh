#!/usr/bin/env bash
# How often `lrkit diagnose` finds a lasting jump in the ranks' loss spread, on synthetic per-rank logs (see
# diagnose_detection.py): 2, 4 and 8 ranks, the spread 1 (nothing: any finding is false), 1.5, 1.8, 2 and 3 times as
# wide from 60 % of the steps on. With LRKIT_BASELINE=<another build's lrkit>, the same logs are also diagnosed by
# that build, side by side.
# Usage: bench/diagnose_detection.sh [SEEDS] [STEPS]   (needs a build and a python3 with numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source scripts/find_python.sh
python=$(python_with numpy)
out=out/diagnose_detection
mkdir -p "$out"
"$python" bench/diagnose_detection.py "$out" "${2:-400}" "${1:-10}" 2,4,8 1,1.5,1.8,2,3 "$LRKIT" ${LRKIT_BASELINE:+"$LRKIT_BASELINE"}
