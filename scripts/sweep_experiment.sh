#!/usr/bin/env bash
# The budgeted-sweep experiments of the README (ALGORITHMS.md sections 1-4):
#   a  configs/sweep_schedules.cfg: cosine, linear, WSD (1-sqrt), UBA (phi 0.5, 1, 2, 5)
#      and a schedule refined from the linear run's gradient norms, at three budgets;
#   b  configs/sweep_wsds.cfg: WSD with decay branches vs WSD-S vs cyclic cosine;
#   c  configs/sweep_tuned_peaks.cfg: (a)'s cosine, linear, WSD and refined, each at its best
#      of seven peaks, two seeds, budgets 400 and 1000 (about half an hour on 2 cores; only when named).
# Resumable: an interrupted run picks up where it stopped. Tables go to out/sweep_*.txt.
# Usage: scripts/sweep_experiment.sh [a] [b] [c] [--jobs N]   (default: a b; needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
experiments=()
options=()
for arg in "$@"; do
  case "$arg" in
    a) experiments+=(schedules) ;;
    b) experiments+=(wsds) ;;
    c) experiments+=(tuned_peaks) ;;
    *) options+=("$arg") ;;
  esac
done
[ ${#experiments[@]} -gt 0 ] || experiments=(schedules wsds)
mkdir -p out
for name in "${experiments[@]}"; do
  "$LRKIT" sweep --config "configs/sweep_$name.cfg" ${options[@]+"${options[@]}"} | tee "out/sweep_$name.txt"
done
