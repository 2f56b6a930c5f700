# Sourced by the benches that time `lrkit train` beside bench/pytorch_loop.py, so that both sides are
# measured one way: over windows of 10 steps after the first 10, the window pytorch_loop.py's
# ms_per_step takes (sorted times, index n // 2). A whole-run average would charge lrkit its first
# steps and every stall of a shared machine, which the loop's median leaves out.
#
# A run made with $(lrkit_window_args TIMED_STEPS) (10 steps more, a progress line every 10) prints
# the windows; lrkit_window_rate PROGRESS_FILE gives that window's tokens/s (the first line, the
# warm-up window, left out).
lrkit_window_args() { echo "--train.steps=$(($1 + 10)) --train.log_every=10"; }
lrkit_window_rate() {
  local rates
  rates=$(grep -E '^step ' "$1" | tail -n +2 | sed -E 's/.* ([0-9]+) tok\/s.*/\1/')
  [ -n "$rates" ] || { echo "lrkit_window_rate: no progress windows after the first in $1" >&2; return 1; }
  # The slowest of the faster half: the time at index n // 2 of the sorted times.
  echo "$rates" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'
}
