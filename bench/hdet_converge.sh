#!/usr/bin/env bash
# Cost of HDET's converge step (parameter averaging by all-reduce every
# T_sync = 100 steps) next to plain data parallelism: `lrkit train --nproc 2`
# plain, HDET shared mode (gradient all-reduce every step plus the average)
# and HDET local mode (only the average); alternated ROUNDS times.
# Usage: bench/hdet_converge.sh [ROUNDS] [STEPS] [--section.key=value ...]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
python=$(python_with h5py numpy)
source scripts/lrkit_binary.sh
rounds=${1:-3}
steps=${2:-400}
shift $(($# < 2 ? $# : 2))
hdet="--hdet.enabled=true --hdet.sync_every=100 --hdet.alpha=0.1111"
declare -A knobs=(
  [plain]=""
  [shared]="$hdet --hdet.mode=shared"
  [local]="$hdet --hdet.mode=local"
)
order=(plain shared local)
rm -rf out/bench_hdet
for ((i = 0; i < rounds; i++)); do
  for ((j = 0; j < ${#order[@]}; j++)); do
    setting=${order[$(((i + j) % ${#order[@]}))]}
    # shellcheck disable=SC2086
    "$LRKIT" train --config configs/quickstart.cfg --nproc 2 --train.steps="$steps" --eval.every=0 \
      --train.log_every="$steps" --diagnostics.matrix_every=0 ${knobs[$setting]} "$@" \
      --out "out/bench_hdet/$setting/round$i" > /dev/null
  done
  echo "round $((i + 1)) done" >&2
done
"$python" bench/step_times.py out/bench_hdet "${order[@]}" --sync-every 100
