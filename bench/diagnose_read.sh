#!/usr/bin/env bash
# How long `lrkit diagnose` takes on a large per-rank log from another trainer: the same RANKS x STEPS rows as
# JSON lines (as Python's json module and a DispersionHook write them) and as CSV, each read ROUNDS times,
# alternated, medians in seconds. With LRKIT_BASELINE=<another build's lrkit> that build reads the same files in
# the same rounds, side by side, and the ratios are this build's time over the baseline's.
# LAYOUT wide writes a row per step with a field per rank (loss_0, grad_norm_0, cos_to_mean_0, loss_1, ...), as pandas
# and trackers export them. Where a Python with google.protobuf and crcmod can write them (Debian: python3-protobuf,
# python3-crcmod; tests/golden/make_wandb.py frames them), the same rows are also read as Weights & Biases runs: one
# run per rank (long), or one run with a field per rank (wide), a history row per step; and as TensorBoard runs: a
# writer per rank (long), or one writer with a tag per rank (wide), an event per value.
# Usage: bench/diagnose_read.sh [STEPS] [RANKS] [ROUNDS] [LAYOUT]   (default 100000 8 3 long: 800,000 rows, about 100
# MB of JSON)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source scripts/find_python.sh
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
forms=(jsonl csv)
declare -A inputs=([jsonl]="$dir/ranks.jsonl" [csv]="$dir/ranks.csv")
wandb_python=$(python_with google.protobuf crcmod 2>/dev/null) || wandb_python=""
if [ -n "$wandb_python" ]; then
  # The same rows as W&B runs, and as TensorBoard runs: a writer per rank (long) or one writer with a tag per rank
  # (wide), an event per value as add_scalar writes it (its simple_value a float32), framed as make_tfevents.py frames
  # them.
  "$wandb_python" - "$dir/ranks.csv" "$dir/wandb_runs" "$dir/tensorboard_runs" "$layout" <<'PYEOF'
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "golden"))
from make_tfevents import record  # noqa: E402
from make_wandb import RunLog  # noqa: E402


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def row(step, items):  # a Record holding a HistoryRecord: its items as the CSV gives their text, and _step
    items = items + [("_step", str(step))]
    body = b"".join(field(1, field(1, k.encode()) + field(16, v.encode())) for k, v in items)
    return field(2, body + field(2, b"\x08" + varint(step)))


def event(step, tag, text):  # Event{wall_time, step, summary{value{tag, simple_value}}}
    value = field(1, tag.encode()) + b"\x15" + struct.pack("<f", float(text))
    return record(b"\x09" + struct.pack("<d", 1.7e9 + step) + b"\x10" + varint(step) + field(5, field(1, value)))


table, out, tensorboard, layout = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
with open(table) as f:
    header = f.readline().strip().split(",")
    lines = [line.strip().split(",") for line in f]
events = {}  # each TensorBoard writer's directory: its events' bytes
if layout == "long":
    runs = {}
    for cells in lines:
        step, rank = int(cells[0]), int(cells[1])
        if rank not in runs:
            runs[rank] = RunLog(0.0)
            config = field(1, field(1, b"rank") + field(16, str(rank).encode()))
            runs[rank]._frame(field(17, field(1, b"r%d" % rank) + field(4, config)))
        runs[rank]._frame(row(step, list(zip(header[2:], cells[2:]))))
        events.setdefault(os.path.join(tensorboard, "rank_%d" % rank), []).extend(
            event(step, tag, text) for tag, text in zip(header[2:], cells[2:]))
    for rank, log in runs.items():
        run = os.path.join(out, "wandb", "run-20261201_%06d-r%d" % (rank, rank))
        os.makedirs(run)
        with open(os.path.join(run, "run-r%d.wandb" % rank), "wb") as f:
            f.write(log.data)
else:
    log = RunLog(0.0)
    for cells in lines:
        log._frame(row(int(cells[0]), list(zip(header[1:], cells[1:]))))
        events.setdefault(tensorboard, []).extend(
            event(int(cells[0]), tag, text) for tag, text in zip(header[1:], cells[1:]))
    os.makedirs(out)
    with open(os.path.join(out, "run-w.wandb"), "wb") as f:
        f.write(log.data)
for directory, records in events.items():
    os.makedirs(directory)
    with open(os.path.join(directory, "events.out.tfevents.1700000000.bench.1.0"), "wb") as f:
        f.write(b"".join(records))
PYEOF
  forms+=(wandb)
  inputs[wandb]="$dir/wandb_runs"
  forms+=(tensorboard)
  inputs[tensorboard]="$dir/tensorboard_runs"
else
  echo "W&B and TensorBoard runs left out: no python3 here imports google.protobuf and crcmod (Debian:" \
       "python3-protobuf python3-crcmod)"
fi
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
  for format in "${forms[@]}"; do
    for b in "${!builds[@]}"; do
      # A baseline from before lrkit read W&B or TensorBoard runs reads the other forms alone.
      if [[ $format == wandb || $format == tensorboard ]] && [ "$b" -gt 0 ] &&
         ! "${builds[$b]}" diagnose "${inputs[$format]}" >/dev/null 2>&1; then
        continue
      fi
      t=$(seconds "${builds[$b]}" "${inputs[$format]}")
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
  if [ -n "$wandb_python" ] && [ -n "${times[$b,wandb]:-}" ]; then
    w=$(median ${times[$b,wandb]})
    echo "build $b (${builds[$b]}): W&B runs $w s, W&B / CSV $(ratio "$w" "$c")"
  fi
  if [ -n "$wandb_python" ] && [ -n "${times[$b,tensorboard]:-}" ]; then
    e=$(median ${times[$b,tensorboard]})
    echo "build $b (${builds[$b]}): TensorBoard runs $e s, TensorBoard / CSV $(ratio "$e" "$c")"
  fi
done
if [ "${#builds[@]}" -eq 2 ]; then
  for format in jsonl csv; do
    echo "$format: this build / baseline $(ratio "$(median ${times[0,$format]})" "$(median ${times[1,$format]})")"
  done
fi
