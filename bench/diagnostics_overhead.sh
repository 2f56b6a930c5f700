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
declare -A rates
for ((i = 0; i < rounds; i++)); do
  for setting in "${order[@]}"; do
    # shellcheck disable=SC2086
    line=$(build/train/lrkit train --config configs/quickstart.cfg --nproc 2 --train.steps="$steps" --eval.every=0 \
             --train.log_every="$steps" ${knobs[$setting]} --out out/bench_diagnostics | grep '^done:')
    rates[$setting]+="$(sed -E 's/.* ([0-9]+) tok\/s.*/\1/' <<<"$line") "
  done
  echo "round $((i + 1)):$(for s in "${order[@]}"; do printf ' %s %s' "$s" "$(awk '{print $NF}' <<<"${rates[$s]}")"; done) tok/s"
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
off=$(median "${rates[off]}")
for setting in "${order[@]}"; do
  m=$(median "${rates[$setting]}")
  echo "$setting: median $m tok/s, step-time overhead vs off $(awk -v o="$off" -v m="$m" 'BEGIN {printf "%+.1f %%", (o / m - 1) * 100}')"
done
