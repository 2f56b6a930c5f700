#!/usr/bin/env bash
# How long `lrkit schedule SPEC --steps ROWS --compare LOG` takes on logs of ROWS rows, one per verdict: a log that
# follows SPEC (no mistake looked for), one of another schedule (every mistake tried, none explains it), one of a
# scheduler given 1.5 times the run's length (other_length), one whose length rose from ROWS to 2 ROWS at 60 % of the
# run (length_changed), and one whose warmup was twice the spec's (other_setting). The logs are tables that
# `lrkit schedule --out` writes, cut and joined. Each is compared ROUNDS times, alternated; medians of seconds and of
# peak memory (MB). With BASELINE (another build's lrkit), each comparison runs with both binaries in turn, and the
# ratio of this build's to the baseline's is printed. (`--fit`: bench/fit_logs.sh.)
# Usage: bench/compare_mistakes.sh [ROWS] [ROUNDS] [BASELINE]   (default 1000000 3)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/side_by_side.sh
side_by_side_arguments "$@"
spec="cosine(peak=3e-4, warmup=$((rows / 1000)))"
table() {  # table SPEC STEPS FILE: the spec's rates over STEPS steps, as step,lr rows (the end value's row too)
  "$LRKIT" schedule "$1" --steps "$2" --out "$3" >/dev/null
}
table "$spec" "$rows" "$dir/follows.csv"
table "linear(peak=3e-4, warmup=$((rows / 1000)))" "$rows" "$dir/other.csv"
table "$spec" $((rows * 3 / 2)) "$dir/longer_all.csv"
head -n $((rows + 1)) "$dir/longer_all.csv" >"$dir/longer.csv"
table "$spec" $((rows * 2)) "$dir/extended.csv"
table "cosine(peak=3e-4, warmup=$((rows / 500)))" "$rows" "$dir/warmup.csv"
change=$((rows * 6 / 10))
awk -F, -v change="$change" -v rows="$rows" 'NR == FNR { if (FNR == 1 || $1 < change) print; next }
  FNR > 1 && $1 >= change && $1 < rows' "$dir/follows.csv" "$dir/extended.csv" >"$dir/changed.csv"
logs=(follows other longer changed warmup)
measure() {  # measure BINARY LOG: "seconds megabytes" and the verdict's mistake
  /usr/bin/time -f "%e %M" -o "$dir/time" "$1" schedule "$spec" --steps "$rows" --compare "$dir/$2.csv" \
      --format json >"$dir/out" || true
  read -r t kb < <(tail -n 1 "$dir/time")  # after "Command exited with non-zero status 1"
  echo "$t $((kb / 1024)) mistake $(grep -o '"mistake": "[a-z_]*"' "$dir/out" | cut -d'"' -f4)"
}
side_by_side_rounds "$rounds" measure "${logs[@]}"
echo "$rows rows each, against $spec; medians of $rounds rounds:"
side_by_side_medians "${logs[@]}"
