#!/usr/bin/env bash
# Step time of `lrkit train --nproc 2` with the diagnostics off, with the scalar
# metrics (dispersion, cos_to_mean, the scalar pairwise form), with the exact mean
# pairwise cosine (one extra all-reduce of normalized gradients) and with the
# count-sketch estimate; alternated ROUNDS times, medians, overhead against "off".
# Usage: bench/diagnostics_overhead.sh [ROUNDS] [STEPS] [--section.key=value ...]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
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
# Per-step times come from each run's log (/train/wall_s). Other tenants of a
# shared machine only ever add time, so the summary is the 20th percentile of
# all step times of a setting pooled over rounds (and the median beside it);
# the order of the settings rotates from round to round.
rm -rf out/bench_diagnostics
for ((i = 0; i < rounds; i++)); do
  for ((j = 0; j < ${#order[@]}; j++)); do
    setting=${order[$(((i + j) % ${#order[@]}))]}
    # shellcheck disable=SC2086
    build/train/lrkit train --config configs/quickstart.cfg --nproc 2 --train.steps="$steps" --eval.every=0 \
      --train.log_every="$steps" ${knobs[$setting]} "$@" --out "out/bench_diagnostics/$setting/round$i" > /dev/null
  done
  echo "round $((i + 1)) done" >&2
done
/usr/bin/python3 - "${order[@]}" <<'PY'
import glob, sys
import h5py, numpy as np
stats = {}
for setting in sys.argv[1:]:
    steps = np.concatenate([np.diff(h5py.File(f, "r")["/train/wall_s"][10:])
                            for f in sorted(glob.glob(f"out/bench_diagnostics/{setting}/round*/log.h5"))])
    stats[setting] = (np.percentile(steps, 20) * 1e3, np.median(steps) * 1e3, len(steps))
base = stats["off"][0]
for setting, (p20, med, n) in stats.items():
    print(f"{setting:>7}: p20 {p20:7.3f} ms/step, median {med:7.3f} ms/step over {n} steps; overhead vs off (p20) {(p20 / base - 1) * 100:+.1f} %")
PY
