#!/usr/bin/env bash
# How long `lrkit schedule SPEC --compare` takes on a TensorBoard log, against the same rows as a CSV: a Trainer-like
# run of STEPS steps that logged train/loss, train/grad_norm, train/learning_rate and train/epoch at every step (one
# event each, as add_scalar writes them), and the CSV of those four columns. Each is compared ROUNDS times, alternated;
# medians of seconds and of peak memory (MB), and the ratio of the event file's to the CSV's.
# Writing the event file needs a Python with google.protobuf and crcmod (Debian: python3-protobuf, python3-crcmod).
# Usage: bench/tfevents_read.sh [STEPS] [ROUNDS]   (default 250000 3: 1,000,000 events, about 60 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source scripts/find_python.sh
source bench/medians.sh
steps=${1:-250000}
rounds=${2:-3}
python=$(python_with google.protobuf crcmod)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/run"
"$python" - "$steps" "$dir/run/events.out.tfevents.1764201600.bench.1.0" "$dir/run.csv" <<'EOF'
import math
import sys

sys.path.insert(0, "tests/golden")
from make_tfevents import EventFile, hf_cosine_rate  # noqa: E402

steps, events_path, csv_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
f = EventFile(1764201600.0)
with open(csv_path, "w") as csv:
    csv.write("step,loss,grad_norm,learning_rate,epoch\n")
    for step in range(steps):
        row = (3.0 / (1.0 + step / 50.0), 0.5 + 2.0 / math.sqrt(step + 1),
               hf_cosine_rate(step, 5e-4, steps // 100, steps), step / 1000.0)
        for tag, x in zip(("train/loss", "train/grad_norm", "train/learning_rate", "train/epoch"), row):
            f.scalar(step, tag, x)
        csv.write("%d,%r,%r,%r,%r\n" % ((step,) + row))
with open(events_path, "wb") as out:
    out.write(f.bytes())
EOF
spec="cosine(peak=5e-4, warmup=$((steps / 100)))"
measure() {  # measure FILE COLUMN: "seconds megabytes"; the verdict must be "follows" (exit 0)
  /usr/bin/time -f "%e %M" -o "$dir/time" "$LRKIT" schedule "$spec" --steps "$steps" --compare "$1" \
      --column "$2" >"$dir/out"
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$dir/time"
}
declare -A seconds=() megabytes=()
for ((round = 1; round <= rounds; round++)); do
  for form in events csv; do
    if [ $form = events ]; then result=$(measure "$dir/run" train/learning_rate)
    else result=$(measure "$dir/run.csv" learning_rate); fi
    read -r t m <<<"$result"
    seconds[$form]+="$t "
    megabytes[$form]+="$m "
    echo "round $round: $form $t s, $m MB"
  done
done
events_mb=$(($(stat -c %s "$dir/run/events.out.tfevents.1764201600.bench.1.0") / 1000000))
echo "$steps steps x 4 tags: event file $events_mb MB, CSV $(($(stat -c %s "$dir/run.csv") / 1000000)) MB;" \
     "medians of $rounds rounds:"
for form in events csv; do
  echo "$form: $(median ${seconds[$form]}) s, $(median ${megabytes[$form]}) MB"
done
echo "event file / CSV: time $(ratio "$(median ${seconds[events]})" "$(median ${seconds[csv]})")," \
     "memory $(ratio "$(median ${megabytes[events]})" "$(median ${megabytes[csv]})")"
