#!/usr/bin/env bash
# `lrkit schedule --fit`: which logs it fits, and how long it takes. First the golden cases (tests/golden/schedules.tsv:
# PyTorch's schedulers and transcriptions of Hugging Face's, timm's and Megatron-LM's), each written as a log of every
# step and fitted with its run length: how many fit, in how many seconds in all. Then logs of ROWS rows, each fitted
# ROUNDS times, alternated, medians of seconds and peak memory (MB): a cosine (the second family tried), a
# CosineAnnealingWarmRestarts (a family read from the log's climbs), a WSD held at its floor after its decay (tried
# late, with its floor read from the log) and a log of no family tried (`infinite`: every candidate tried at both
# lengths). With BASELINE (another build's lrkit), each runs with both binaries in turn and the ratios of this build's
# to the baseline's are printed.
# Usage: bench/fit_logs.sh [ROWS] [ROUNDS] [BASELINE]   (default 1000000 3)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/side_by_side.sh
side_by_side_arguments "$@"
fit() {  # fit LRKIT LOG [--steps N]: "seconds megabytes spec" (spec "none" where nothing fits)
  local binary=$1 log=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$dir/time" "$binary" schedule --fit "$log" "$@" --format json >"$dir/out" || true
  local t kb spec=none
  read -r t kb < <(tail -n 1 "$dir/time")  # after "Command exited with non-zero status 1"
  grep -q '"fits": true' "$dir/out" && spec=$(grep -o '"spec": "[^"]*"' "$dir/out" | cut -d'"' -f4 | tr -d ' ')
  echo "$t $((kb / 1024)) $spec"
}

mkdir "$dir/golden"
awk -F'\t' -v out="$dir/golden" '!/^#/ && NF {
  file = out "/" $1 ".csv"; print "step,lr" > file; n = split($NF, v, " ")
  for (i = 1; i <= n; i++) print (i - 1) "," v[i] > file
  close(file); print $1, $3 > (out "/lengths")
}' tests/golden/schedules.tsv
cases=$(wc -l <"$dir/golden/lengths")
for binary in "$LRKIT" ${baseline:+"$baseline"}; do
  fitted=0 total_seconds=0
  while read -r name length; do
    read -r t _ spec <<<"$(fit "$binary" "$dir/golden/$name.csv" --steps "$length")"
    [ "$spec" != none ] && fitted=$((fitted + 1))
    total_seconds=$(awk -v a="$total_seconds" -v b="$t" 'BEGIN {print a + b}')
    echo "$binary: $name: $spec ($t s)"
  done <"$dir/golden/lengths"
  echo "golden cases, $binary: $fitted of $cases fit, $total_seconds s in all"
done

table() {  # table SPEC FILE: the spec's rates over ROWS steps, as step,lr rows
  "$LRKIT" schedule "$1" --steps "$rows" --out "$2" >/dev/null
}
warmup=$((rows / 1000))
table "cosine(peak=3e-4, warmup=$warmup)" "$dir/cosine.csv"
table "restarts(peak=0.1, period=$((rows / 20)), mult=2, floor=0.1%)" "$dir/restarts.csv"
table "wsd(peak=3e-4, floor=10%, decay=$((rows / 5)), shape=linear, total=$((rows * 9 / 10)), warmup=$warmup)" \
      "$dir/wsd_held.csv"
table "infinite(peak=3e-4, const=1.5e-4, warmup=$warmup)" "$dir/none.csv"
logs=(cosine restarts wsd_held none)
fit_log() { fit "$1" "$dir/$2.csv"; }
side_by_side_rounds "$rounds" fit_log "${logs[@]}"
echo "$rows rows each; medians of $rounds rounds:"
side_by_side_medians "${logs[@]}"
