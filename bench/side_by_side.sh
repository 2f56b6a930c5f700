# shellcheck shell=bash
# Rounds of one measurement per log with this build's lrkit and, where `baseline` is set, another build's, alternated,
# and their medians side by side; sourced, from the repository root, by the benches that compare two builds on logs
# of ROWS rows: `bench/NAME.sh [ROWS] [ROUNDS] [BASELINE]`.
# side_by_side_arguments "$@": sets rows (default 1000000), rounds (3), baseline (none) and dir, a scratch folder
# removed at exit; LRKIT is this build's lrkit (scripts/lrkit_binary.sh).
# side_by_side_rounds ROUNDS MEASURE LOG...: runs `MEASURE BINARY LOG`, which prints "seconds megabytes result", ROUNDS
# times for each log with each binary ($LRKIT, then $baseline); fills seconds, megabytes and results, keyed
# current.LOG and baseline.LOG, and prints each run.
# side_by_side_medians LOG...: a line per log: this build's median seconds and megabytes and its result, and with a
# baseline, the baseline's and the ratios of this build's to them.
source scripts/lrkit_binary.sh
source bench/medians.sh

side_by_side_arguments() {
  # shellcheck disable=SC2034  # rows is the caller's
  rows=${1:-1000000}
  rounds=${2:-3}
  baseline=${3:-}
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
}

side_by_side_rounds() {
  local rounds=$1 measure=$2 round log binary path t m result
  shift 2
  declare -gA seconds=() megabytes=() results=()
  local binaries=(current)
  [ -n "${baseline:-}" ] && binaries+=(baseline)
  for ((round = 1; round <= rounds; round++)); do
    for log in "$@"; do
      for binary in "${binaries[@]}"; do
        path=$LRKIT
        [ "$binary" = baseline ] && path=$baseline
        read -r t m result <<<"$("$measure" "$path" "$log")"
        seconds[$binary.$log]+="$t "
        megabytes[$binary.$log]+="$m "
        results[$binary.$log]=$result
        echo "round $round: $log, $binary: $t s, $m MB, $result"
      done
    done
  done
}

side_by_side_medians() {
  local log line now_s now_m
  for log in "$@"; do
    now_s=$(median ${seconds[current.$log]})
    now_m=$(median ${megabytes[current.$log]})
    line="$log: $now_s s, $now_m MB (${results[current.$log]})"
    if [ -n "${baseline:-}" ]; then
      line+="; baseline $(median ${seconds[baseline.$log]}) s, $(median ${megabytes[baseline.$log]}) MB"
      line+=" (${results[baseline.$log]}); time $(ratio "$now_s" "$(median ${seconds[baseline.$log]})")"
      line+=", memory $(ratio "$now_m" "$(median ${megabytes[baseline.$log]})")"
    fi
    echo "$line"
  done
}
