#!/usr/bin/env bash
# Step time of `lrkit train --nproc 2` with the diagnostics off, with the scalar
# metrics (dispersion, cos_to_mean, the scalar pairwise form), with the exact mean
# pairwise cosine (one extra all-reduce of normalized gradients) and with the
# count-sketch estimate; alternated ROUNDS times, medians, overhead against "off".
# Usage: bench/diagnostics_overhead.sh [ROUNDS] [STEPS] [--section.key=value ...]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
python=$(python_with h5py numpy)
source scripts/lrkit_binary.sh
rounds=${1:-3}
steps=${2:-200}
shift $(($# < 2 ? $# : 2))
declare -A knobs=(
  [off]="--diagnostics.enabled=false"
  [scalar]="--diagnostics.pairwise=off --diagnostics.matrix_every=0"
  [exact]="--diagnostics.pairwise=exact --diagnostics.matrix_every=0"
  [sketch]="--diagnostics.pairwise=sketch --diagnostics.matrix_every=0"
)
order=(off scalar exact sketch)
# Per-step times come from each run's log; bench/step_times.py summarizes them.
# The order of the settings rotates from round to round.
rm -rf out/bench_diagnostics
for ((i = 0; i < rounds; i++)); do
  for ((j = 0; j < ${#order[@]}; j++)); do
    setting=${order[$(((i + j) % ${#order[@]}))]}
    # shellcheck disable=SC2086
    "$LRKIT" train --config configs/quickstart.cfg --nproc 2 --train.steps="$steps" --eval.every=0 \
      --train.log_every="$steps" ${knobs[$setting]} "$@" --out "out/bench_diagnostics/$setting/round$i" > /dev/null
  done
  echo "round $((i + 1)) done" >&2
done
"$python" bench/step_times.py out/bench_diagnostics "${order[@]}"
