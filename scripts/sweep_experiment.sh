#!/usr/bin/env bash
# The budgeted-sweep experiments of the README (ALGORITHMS.md sections 1-4):
#   (a) configs/sweep_schedules.cfg: cosine, linear, WSD (1-sqrt), UBA (phi 0.5, 1, 2, 5)
#       and a schedule refined from the linear run's gradient norms, at three budgets;
#   (b) configs/sweep_wsds.cfg: WSD with decay branches vs WSD-S vs cyclic cosine.
# Resumable: an interrupted run picks up where it stopped. Tables go to out/sweep_*.txt.
# Usage: scripts/sweep_experiment.sh [--jobs N]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
lrkit=$LRKIT
mkdir -p out
# `refined` reads the linear runs' logs, so everything else runs first.
grep -v '^refined' configs/sweep_schedules.cfg > out/sweep_schedules_first.cfg
"$lrkit" sweep --config out/sweep_schedules_first.cfg "$@"
"$lrkit" sweep --config configs/sweep_schedules.cfg "$@" | tee out/sweep_schedules.txt
"$lrkit" sweep --config configs/sweep_wsds.cfg "$@" | tee out/sweep_wsds.txt
