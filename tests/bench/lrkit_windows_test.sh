#!/usr/bin/env bash
# bench/lrkit_windows.sh, which the CPU and GPU benches use to time lrkit as
# bench/pytorch_loop.py times itself: the window it picks (the loop's sorted
# times at index n // 2, so for an even count the slower middle one), the
# warm-up window left out, a clear refusal without windows, and the progress
# lines of a real run still parsed (the benches break if their format drifts).
# usage: lrkit_windows_test.sh LRKIT SOURCE_DIR SCRATCH
set -euo pipefail
lrkit=$1
source_dir=$2
scratch=$3
source "$source_dir/bench/lrkit_windows.sh"
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "FAIL: $*"; exit 1; }

[ "$(lrkit_window_args 200)" = "--train.steps=210 --train.log_every=10" ] || fail "lrkit_window_args 200: $(lrkit_window_args 200)"
# Windows after the warm-up: 300, 200, 400, 100 tok/s. Times sorted: 1/400, 1/300, 1/200, 1/100; index 4 // 2
# is 1/200, so 200 tok/s (the loop's ms_per_step), not 300 (the other middle one).
printf '%s\n' "step     10/50  loss 5.0  lr 1e-03         9 tok/s  ETA 0:00:01" \
  "step     20/50  loss 4.0  lr 1e-03       300 tok/s  ETA 0:00:01" "eval   step 20  heldout loss 4.1" \
  "step     30/50  loss 3.0  lr 1e-03       200 tok/s  ETA 0:00:01" "step     40/50  loss 2.0  lr 1e-03       400 tok/s  ETA 0:00:01" \
  "step     50/50  loss 1.0  lr 1e-03       100 tok/s  ETA 0:00:00" > "$scratch/even.txt"
[ "$(lrkit_window_rate "$scratch/even.txt")" = 200 ] || fail "even count: $(lrkit_window_rate "$scratch/even.txt"), not 200"
head -n 4 "$scratch/even.txt" > "$scratch/odd.txt"  # windows 300, 200: then 1/300, 1/200 -> index 1: 200
[ "$(lrkit_window_rate "$scratch/odd.txt")" = 200 ] || fail "two windows: $(lrkit_window_rate "$scratch/odd.txt"), not 200"
head -n 1 "$scratch/even.txt" > "$scratch/warmup_only.txt"
out=$(lrkit_window_rate "$scratch/warmup_only.txt" 2>&1) && fail "a run with only its warm-up window gave '$out'"
echo "$out" | grep -q "no progress windows after the first in $scratch/warmup_only.txt" || fail "unclear refusal: $out"

for i in $(seq 1 300); do echo "In the beginning God created the heaven and the earth. $i"; done > "$scratch/corpus.txt"
# shellcheck disable=SC2046  # lrkit_window_args prints two words
"$lrkit" train --model.layers=1 --model.heads=2 --model.width=16 --model.context=16 --train.batch=4 --train.threads=1 \
  --data.path="$scratch/corpus.txt" --eval.every=0 --eval.batches=1 $(lrkit_window_args 20) --out "$scratch/run" \
  > "$scratch/progress.txt" 2>&1 || { cat "$scratch/progress.txt"; fail "lrkit train"; }
[ "$(grep -c '^step ' "$scratch/progress.txt")" = 3 ] || fail "30 steps should print 3 progress lines: $(cat "$scratch/progress.txt")"
rate=$(lrkit_window_rate "$scratch/progress.txt") || fail "no rate from a real run"
[[ "$rate" =~ ^[1-9][0-9]*$ ]] || fail "rate '$rate' from a real run is not a positive whole number of tokens/s"
echo "lrkit_windows: ok ($rate tok/s in the median window of a tiny run)"
