#!/usr/bin/env bash
# The false alarm rate of `lrkit diagnose` on healthy runs: trains the
# quickstart setting with 2 and 4 workers and the ladder setting (4 workers,
# dropout, exact pairwise cosines) over several seeds, nothing perturbed, then
# counts the runs whose verdict is not "consistent". With LRKIT_BASELINE=<another
# build's lrkit> the same logs are also diagnosed by that build, side by side.
# Logs are kept under out/diagnose_calibration and reused when present
# (FRESH=1 retrains).
# Usage: bench/diagnose_false_alarms.sh [SEEDS] [STEPS]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
seeds=${1:-4}
steps=${2:-400}
root=out/diagnose_calibration
settings=("quickstart 2" "quickstart 4" "ladder 4")
verdict() { "$1" diagnose "$2" | sed -n 's/^verdict: //p'; }
alarms=0 baseline_alarms=0 runs=0
for setting in "${settings[@]}"; do
  read -r config workers <<<"$setting"
  for ((seed = 1; seed <= seeds; seed++)); do
    dir="$root/${config}_w${workers}_s${seed}"
    if [ -n "${FRESH:-}" ] || [ ! -f "$dir/log.h5" ]; then
      "$LRKIT" train --config "configs/$config.cfg" --nproc "$workers" --train.seed="$seed" --train.steps="$steps" \
        --train.log_every="$steps" --eval.every=0 --overwrite --out "$dir" >/dev/null
    fi
    runs=$((runs + 1))
    v=$(verdict "$LRKIT" "$dir/log.h5")
    [[ "$v" == consistent* ]] || alarms=$((alarms + 1))
    line="$config, $workers workers, seed $seed: $v"
    if [ -n "${LRKIT_BASELINE:-}" ]; then
      b=$(verdict "$LRKIT_BASELINE" "$dir/log.h5")
      [[ "$b" == consistent* ]] || baseline_alarms=$((baseline_alarms + 1))
      line+="  |  baseline: $b"
    fi
    echo "$line"
  done
done
echo "healthy runs not called consistent: $alarms of $runs"
[ -z "${LRKIT_BASELINE:-}" ] || echo "baseline: $baseline_alarms of $runs"
