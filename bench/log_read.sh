#!/usr/bin/env bash
# How long `lrkit schedule SPEC --compare` takes on each form of log it reads, against the same rows as a plain CSV:
# a Trainer-like run of STEPS steps that logged loss, grad_norm, learning_rate and epoch at every step, written
#   - as a CSV of those columns (csv, the baseline);
#   - as Lightning's CSVLogger writes it (lightning: the rate's rows and the loss rows apart, the other cells empty);
#   - as a Hugging Face Trainer's trainer_state.json (trainer_state: json.dumps(indent=2, sort_keys=True) of its
#     state, an evaluation every 1000 steps in its log_history);
#   - as JSON lines (jsonl: an object per step);
#   - as an MLflow run (mlflow: MLflow's file store, a "timestamp value step" line per step in metrics/learning_rate);
#   - as an MLflow store (mlflow_db: mlflow.db, MLflow's SQLite store, a row per step and metric in its metrics table,
#     the four metrics of the run's steps among them, with MLflow's schema, tests/golden/mlflow/schema.sql);
#   - as TensorBoard event files (events: an event per tag and step, as add_scalar writes them) and as a Weights &
#     Biases run log (wandb: a history row per step at train/global_step, as Hugging Face's WandbCallback logs them),
#     where a Python with google.protobuf and crcmod can write them (Debian: python3-protobuf, python3-crcmod); left
#     out otherwise.
# Each is compared ROUNDS times, alternated; medians of seconds and of peak memory (MB), and each form's ratio to the
# CSV's.
# Usage: bench/log_read.sh [STEPS] [ROUNDS]   (default 250000 3: 1,000,000 events, a trainer_state.json of 50 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source scripts/find_python.sh
source bench/medians.sh
steps=${1:-250000}
rounds=${2:-3}
python=$(python_with json)
events_python=$(python_with google.protobuf crcmod 2>/dev/null) || events_python=""
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$python" - "$steps" "$dir" <<'PYEOF'
import json
import math
import os
import sqlite3
import sys

steps, out = int(sys.argv[1]), sys.argv[2]


def hf_cosine_rate(step, peak, warmup, total):  # make_tfevents.py's, which imports protobuf
    if step < warmup:
        return peak * step / max(1, warmup)
    return peak * max(0.0, 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup))))


history = []
os.makedirs(out + "/mlruns/0/run/metrics")
with open(out + "/mlruns/0/run/meta.yaml", "w") as meta:
    meta.write("run_id: run\n")
with open(out + "/run.csv", "w") as csv, open(out + "/lightning.csv", "w") as lightning, \
        open(out + "/log.jsonl", "w") as lines, open(out + "/mlruns/0/run/metrics/learning_rate", "w") as mlflow:
    csv.write("step,loss,grad_norm,learning_rate,epoch\n")
    lightning.write("epoch,lr-AdamW,step,train_loss,grad_norm\n")
    for step in range(steps):
        row = {"epoch": step / 1000.0, "grad_norm": 0.5 + 2.0 / math.sqrt(step + 1),
               "learning_rate": hf_cosine_rate(step, 5e-4, steps // 100, steps), "loss": 3.0 / (1.0 + step / 50.0),
               "step": step}
        csv.write("%d,%r,%r,%r,%r\n" % (step, row["loss"], row["grad_norm"], row["learning_rate"], row["epoch"]))
        lightning.write(",%r,%d,,\n%r,,%d,%r,%r\n" % (row["learning_rate"], step, row["epoch"], step, row["loss"],
                                                      row["grad_norm"]))
        lines.write(json.dumps(row) + "\n")
        mlflow.write("%s %s %s\n" % (1764201600000 + step, row["learning_rate"], step))
        history.append(row)
        if step % 1000 == 999:
            history.append({"epoch": row["epoch"], "eval_loss": row["loss"], "eval_runtime": 1.5, "step": step})
with sqlite3.connect(out + "/mlflow.db") as db:
    db.executescript(open("tests/golden/mlflow/schema.sql").read())
    db.execute("INSERT INTO experiments VALUES (0, 'Default', '', 'active', 0, 0)")
    db.execute("INSERT INTO runs (run_uuid, name, status, start_time, lifecycle_stage, experiment_id) "
               "VALUES ('run', 'bench', 'FINISHED', 1764201600000, 'active', 0)")
    db.executemany("INSERT INTO metrics VALUES (?, ?, ?, 'run', ?, 0)",
                   ((key, row[key], 1764201600000 + row["step"], row["step"]) for row in history if "loss" in row
                    for key in ("loss", "grad_norm", "learning_rate", "epoch")))
db.close()
state = {"best_metric": None, "epoch": steps / 1000.0, "global_step": steps, "log_history": history,
         "logging_steps": 1, "max_steps": steps, "train_batch_size": 8}
with open(out + "/trainer_state.json", "w") as f:
    f.write(json.dumps(state, indent=2, sort_keys=True) + "\n")
PYEOF
forms=(csv lightning trainer_state jsonl mlflow mlflow_db)
declare -A files=([csv]=run.csv [lightning]=lightning.csv [trainer_state]=trainer_state.json [jsonl]=log.jsonl
                  [mlflow]=mlruns/0/run/metrics/learning_rate [mlflow_db]=mlflow.db
                  [events]=run/events.out.tfevents.1764201600.bench.1.0
                  [wandb]=wandb/run-20261127_000000-bench/run-bench.wandb)
declare -A columns=([csv]=learning_rate [lightning]=lr-AdamW [trainer_state]=train/learning_rate
                    [jsonl]=learning_rate [mlflow]=train/learning_rate [mlflow_db]=train/learning_rate
                    [events]=train/learning_rate
                    [wandb]=train/learning_rate)
if [ -n "$events_python" ]; then
  mkdir -p "$dir/run" "$(dirname "$dir/${files[wandb]}")"
  "$events_python" - "$steps" "$dir/${files[events]}" "$dir/${files[wandb]}" <<'PYEOF'
import math
import sys

sys.path.insert(0, "tests/golden")
from make_tfevents import EventFile, hf_cosine_rate  # noqa: E402
from make_wandb import RunLog  # noqa: E402

steps, events_path, wandb_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
f = EventFile(1764201600.0)
run = RunLog(1764201600.0)
run.begin("bench", "lrkit-bench", {"max_steps": steps})
run.define_metric(name="train/global_step")
run.define_metric(glob="*", step_metric="train/global_step", step_sync=True)
tags = ("train/loss", "train/grad_norm", "train/learning_rate", "train/epoch")
for step in range(steps):
    row = (3.0 / (1.0 + step / 50.0), 0.5 + 2.0 / math.sqrt(step + 1),
           hf_cosine_rate(step, 5e-4, steps // 100, steps), step / 1000.0)
    for tag, x in zip(tags, row):
        f.scalar(step, tag, x)
    run.log(dict(zip(tags, row), **{"train/global_step": step}))
with open(events_path, "wb") as out:
    out.write(f.bytes())
with open(wandb_path, "wb") as out:
    out.write(bytes(run.data))
PYEOF
  forms+=(events wandb)
else
  echo "events and wandb left out: no python3 here imports google.protobuf and crcmod (Debian: python3-protobuf" \
       "python3-crcmod)"
fi
spec="cosine(peak=5e-4, warmup=$((steps / 100)))"
measure() {  # measure FORM: "seconds megabytes"; the verdict must be "follows" (exit 0)
  /usr/bin/time -f "%e %M" -o "$dir/time" "$LRKIT" schedule "$spec" --steps "$steps" --compare "$dir/${files[$1]}" \
      --column "${columns[$1]}" >"$dir/out"
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$dir/time"
}
declare -A seconds=() megabytes=()
for ((round = 1; round <= rounds; round++)); do
  for form in "${forms[@]}"; do
    read -r t m <<<"$(measure "$form")"
    seconds[$form]+="$t "
    megabytes[$form]+="$m "
    echo "round $round: $form $t s, $m MB"
  done
done
echo "$steps steps, medians of $rounds rounds:"
for form in "${forms[@]}"; do
  echo "$form ($(($(stat -c %s "$dir/${files[$form]}") / 1000000)) MB): $(median ${seconds[$form]}) s," \
       "$(median ${megabytes[$form]}) MB; to the CSV: time $(ratio "$(median ${seconds[$form]})" \
       "$(median ${seconds[csv]})"), memory $(ratio "$(median ${megabytes[$form]})" "$(median ${megabytes[csv]})")"
done
