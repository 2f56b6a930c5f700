#!/usr/bin/env bash
# How long `lrkit diagnose` takes on a large per-rank log from another trainer: the same RANKS x STEPS rows as
# JSON lines (as Python's json module and a DispersionHook write them) and as CSV, each read ROUNDS times,
# alternated, medians in seconds. With LRKIT_BASELINE=<another build's lrkit> that build reads the same files in
# the same rounds, side by side, and the ratios are this build's time over the baseline's.
# LAYOUT wide writes a row per step with a field per rank (loss_0, grad_norm_0, cos_to_mean_0, loss_1, ...), as pandas
# and trackers export them.
# Usage: bench/diagnose_read.sh [STEPS] [RANKS] [ROUNDS] [LAYOUT]   (default 100000 8 3 long: 800,000 rows, about 100
# MB of JSON)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source bench/medians.sh
steps=${1:-100000}
ranks=${2:-8}
rounds=${3:-3}
layout=${4:-long}
case $layout in long | wide) ;; *) echo "LAYOUT is long or wide, not '$layout'" >&2; exit 2 ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Deterministic values with 16-17 significant digits, as a float's repr gives them.
awk -v steps="$steps" -v ranks="$ranks" -v wide="$([ "$layout" = wide ] && echo 1 || echo 0)" \
    -v jsonl="$dir/ranks.jsonl" -v csv="$dir/ranks.csv" 'BEGIN {
  srand(7)
  if (!wide) print "step,rank,loss,grad_norm,cos_to_mean" > csv
  else {
    printf "step" > csv
    for (r = 0; r < ranks; r++) printf ",loss_%d,grad_norm_%d,cos_to_mean_%d", r, r, r > csv
    print "" > csv
  }
  for (s = 0; s < steps; s++) {
    if (wide) { printf "{\"step\": %d", s > jsonl; printf "%d", s > csv }
    for (r = 0; r < ranks; r++) {
      loss = sprintf("%.16g", 2 + 0.1 * rand()); norm = sprintf("%.16g", 1 + 0.1 * rand())
      cosine = sprintf("%.16g", 0.9 + 0.01 * rand())
      if (wide) {
        printf ", \"loss_%d\": %s, \"grad_norm_%d\": %s, \"cos_to_mean_%d\": %s", r, loss, r, norm, r, cosine > jsonl
        printf ",%s,%s,%s", loss, norm, cosine > csv
      } else {
        printf "{\"step\": %d, \"rank\": %d, \"loss\": %s, \"grad_norm\": %s, \"cos_to_mean\": %s}\n", s, r, loss, norm, cosine > jsonl
        printf "%d,%d,%s,%s,%s\n", s, r, loss, norm, cosine > csv
      }
    }
    if (wide) { print "}" > jsonl; print "" > csv }
  }
}'
builds=("$LRKIT")
[ -n "${LRKIT_BASELINE:-}" ] && builds+=("$LRKIT_BASELINE")
seconds() {  # seconds BINARY FILE
  local start end
  start=$(date +%s.%N)
  "$1" diagnose "$2" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}'
}
declare -A times=()
for ((round = 1; round <= rounds; round++)); do
  for format in jsonl csv; do
    for b in "${!builds[@]}"; do
      t=$(seconds "${builds[$b]}" "$dir/ranks.$format")
      times[$b,$format]+="$t "
      echo "round $round: $format, build $b (${builds[$b]}): $t s"
    done
  done
done
echo "$((steps * ranks)) rows ($ranks ranks x $steps steps, $layout layout), medians of $rounds rounds:"
for b in "${!builds[@]}"; do
  j=$(median ${times[$b,jsonl]})
  c=$(median ${times[$b,csv]})
  echo "build $b (${builds[$b]}): JSON lines $j s, CSV $c s, JSON lines / CSV $(ratio "$j" "$c")"
done
if [ "${#builds[@]}" -eq 2 ]; then
  for format in jsonl csv; do
    echo "$format: this build / baseline $(ratio "$(median ${times[0,$format]})" "$(median ${times[1,$format]})")"
  done
fi
