#!/usr/bin/env bash
# Step time of `lrkit train --nproc 2` with the diagnostics off, with the scalar
# metrics (dispersion, cos_to_mean, the scalar pairwise form), with the exact mean
# pairwise cosine (one extra all-reduce of normalized gradients) and with the
# count-sketch estimate; alternated ROUNDS times, medians, overhead against "off".
# Usage: bench/diagnostics_overhead.sh [ROUNDS] [STEPS]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
steps=${2:-200}
declare -A knobs=(
  [off]="--diagnostics.enabled=false"
  [scalar]="--diagnostics.pairwise=off --diagnostics.matrix_every=0"
  [exact]="--diagnostics.pairwise=exact --diagnostics.matrix_every=0"
  [sketch]="--diagnostics.pairwise=sketch --diagnostics.matrix_every=0"
)
order=(off scalar exact sketch)
# Per-step times come from each run's log (/train/wall_s); the median step is
# robust to the other tenants of a shared machine, unlike a run's total rate.
declare -A times
for ((i = 0; i < rounds; i++)); do
  for setting in "${order[@]}"; do
    # shellcheck disable=SC2086
    build/train/lrkit train --config configs/quickstart.cfg --nproc 2 --train.steps="$steps" --eval.every=0 \
      --train.log_every="$steps" ${knobs[$setting]} --out "out/bench_diagnostics/$setting" > /dev/null
    times[$setting]+="$(/usr/bin/python3 -c "import h5py, numpy as np, sys
w = h5py.File(sys.argv[1], 'r')['/train/wall_s'][:]
print(f'{np.median(np.diff(w[10:])) * 1e3:.3f}')" "out/bench_diagnostics/$setting/log.h5") "
  done
  echo "round $((i + 1)) median ms/step:$(for s in "${order[@]}"; do printf ' %s %s' "$s" "$(awk '{print $NF}' <<<"${times[$s]}")"; done)"
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
off=$(median "${times[off]}")
for setting in "${order[@]}"; do
  m=$(median "${times[$setting]}")
  echo "$setting: $m ms/step (median of round medians), overhead vs off $(awk -v o="$off" -v m="$m" 'BEGIN {printf "%+.1f %%", (m / o - 1) * 100}')"
done
