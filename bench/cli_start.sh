#!/usr/bin/env bash
# What a short `lrkit` command costs: wall time (milliseconds, median of ROUNDS alternated rounds) and peak
# resident memory of `lrkit --version`, `lrkit schedule SPEC --summary` and `lrkit diagnose` on a small per-rank CSV
# (8 ranks x 200 steps), the commands scripts and notebooks call in loops. With LRKIT_BASELINE=<another build's
# lrkit> that build runs the same commands in the same rounds, and the ratios are this build's over the baseline's.
# Usage: bench/cli_start.sh [ROUNDS]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source bench/medians.sh
rounds=${1:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk -v csv="$dir/ranks.csv" 'BEGIN {
  srand(7); print "step,rank,loss,grad_norm" > csv
  for (s = 0; s < 200; s++) for (r = 0; r < 8; r++) printf "%d,%d,%.6f,%.6f\n", s, r, 2 + 0.1 * rand(), 1 + 0.1 * rand() > csv
}'
commands=("--version" "schedule wsd(peak=3e-4,warmup=2%,decay=20%) --steps 100000 --summary" "diagnose $dir/ranks.csv")
names=(version schedule diagnose)
builds=("$LRKIT")
[ -n "${LRKIT_BASELINE:-}" ] && builds+=("$LRKIT_BASELINE")
declare -A ms=() kb=()
for ((round = 1; round <= rounds; round++)); do
  for c in "${!commands[@]}"; do
    for b in "${!builds[@]}"; do
      start=$(date +%s%N)
      # shellcheck disable=SC2086  # the command's words
      peak=$(/usr/bin/time -f '%M' "${builds[$b]}" ${commands[$c]} 2>&1 >/dev/null | tail -1)
      ms[$b,$c]+="$(( ($(date +%s%N) - start) / 100000 ))e-1 "  # tenths of a millisecond, /usr/bin/time's start included
      kb[$b,$c]=$peak
    done
  done
done
echo "medians of $rounds rounds (wall ms, peak MB):"
for b in "${!builds[@]}"; do
  line="build $b (${builds[$b]}):"
  for c in "${!commands[@]}"; do line+=" ${names[$c]} $(median ${ms[$b,$c]} | awk '{printf "%.1f", $1}') ms $((kb[$b,$c] / 1024)) MB,"; done
  echo "${line%,}"
done
if [ "${#builds[@]}" -eq 2 ]; then
  for c in "${!commands[@]}"; do
    echo "${names[$c]}: this build / baseline $(ratio "$(median ${ms[0,$c]})" "$(median ${ms[1,$c]})" 3), peak memory $(ratio "${kb[0,$c]}" "${kb[1,$c]}")"
  done
fi
