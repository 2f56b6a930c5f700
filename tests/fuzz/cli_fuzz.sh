#!/usr/bin/env bash
# Fuzzes the `lrkit` command line: random token soup and mutations of valid
# schedule specs through `lrkit schedule`, and byte-mutated or truncated run
# logs, checkpoints, configs and tables through the commands that read them.
# Every run must end with exit 0, 1 or 2 within its time limit: a signal
# (exit >= 128) or a hang (timeout) fails, and the input is printed.
# Reproducible: the mutations come from bash's RANDOM seeded with SEED.
#
# usage: cli_fuzz.sh LRKIT SCRATCH [SPECS] [FILES] [SEED]
# (the suite runs a few hundred inputs; the closing-note run used 3000 specs and 100 files of each kind)
set -uo pipefail
lrkit=$1
scratch=$2
specs=${3:-400}
files=${4:-10}
RANDOM=${5:-7}
limit=20  # seconds per command
rm -rf "$scratch" && mkdir -p "$scratch"
failures=0 runs=0
declare -A exits=()

attempt() {  # attempt WHAT COMMAND...: runs it and judges its exit status
  local what=$1
  shift
  timeout -s KILL "$limit" "$@" >/dev/null 2>"$scratch/stderr"
  local status=$?
  runs=$((runs + 1))
  exits[$status]=$((${exits[$status]:-0} + 1))
  if ((status != 0 && status != 1 && status != 2)); then
    failures=$((failures + 1))
    echo "FAIL (exit $status$( ((status == 137)) && echo ', killed after '$limit' s: a hang')): $what"
    echo "  command: $*"
    head -c 600 "$scratch/stderr" | sed 's/^/  stderr: /'
  fi
}

fragments=(cosine wsd wsds uba join warmup floor scale onecycle restarts step multistep exponential invsqrt infinite
           triangular triangular2 exp_range up down mode rewarm constant linear polynomial table refined
           "(" ")" "[" "]" "," "=" '"' "%" " " peak floor warmup
           decay shape phi budgets total at gamma every milestones period mult 1-sqrt inverse exp 0 1 -1 1e-3 1e308
           1e-320 50% 100% 250% 0.5 1e15 99999999999 nan inf true "\\" length min by norms file /dev/zero
           "$scratch/table.csv" "$scratch/log.h5" cyclic "[]" rewarm const cooldown anneal cycles 1.75 warmup_shape
           prefix false "$scratch/events.tfevents" v/1 v/22)
valid=("wsd(peak=3e-4, warmup=2%, decay=20%, shape=1-sqrt, floor=0)"
       "join(linear(0, 1e-3, 200), cosine(1e-3, 1e-5), at=[200])"
       "wsds(peak=1e-3, budgets=[100, 200, 400], decay=10%)"
       "uba(peak=1e-3, phi=1.5, warmup=20)"
       "onecycle(peak=0.1, three_phase=true)"
       "scale(floor(restarts(1, period=7, mult=2), min=0.1), by=2)"
       "restarts(peak=1, cycles=3, warmup=5, peak_decay=0.5)"
       "cosine(peak=1, floor=10%, cycles=1.75, warmup=3, warmup_shape=1-sqrt)"
       "warmup(restarts(1, period=7, peak_decay=0.5), length=3, init=0.01, prefix=false)"
       "table(file=$scratch/table.csv)"
       "refined(norms=$scratch/log.h5, peak=1e-3)"
       "table(file=$scratch/events.tfevents, column=v/22)"
       "cyclic(peak=1e-3, budgets=[100, 200], rewarm=10)"
       "multistep(peak=1, milestones=[10, 20], gamma=0.5)"
       "infinite(peak=1e-3, const=50%, cooldown=10%, anneal=10%)")
chars='()[],=%"0123456789.-e abcdefghijklmnopqrstuvwxyz_/'

mutate_text() {  # mutate_text TEXT: 1-4 random character edits
  local s=$1 n=$((1 + RANDOM % 4)) i pos c
  for ((i = 0; i < n; i++)); do
    pos=$((RANDOM % (${#s} + 1)))
    c=${chars:$((RANDOM % ${#chars})):1}
    case $((RANDOM % 3)) in
      0) s="${s:0:pos}$c${s:pos}" ;;
      1) s="${s:0:pos}${s:pos+1}" ;;
      2) s="${s:0:pos}$c${s:pos+1}" ;;
    esac
  done
  printf '%s' "$s"
}

mutate_file() {  # mutate_file SOURCE DEST: overwrite 1-8 random bytes, or truncate
  local size n i
  cp "$1" "$2"
  size=$(stat -c %s "$2")
  if ((RANDOM % 4 == 0)); then
    truncate -s $(((RANDOM * 32768 + RANDOM) % (size + 1))) "$2"
    return
  fi
  n=$((1 + RANDOM % 8))
  for ((i = 0; i < n; i++)); do
    printf "\\x$(printf %02x $((RANDOM % 256)))" |
      dd of="$2" bs=1 seek=$(((RANDOM * 32768 + RANDOM) % size)) conv=notrunc status=none
  done
}

# Seeds: a table, a TensorBoard event file (tensorboard_logger's bytes for v/1 = 1.5 at step 1, v/22 = 16 at 2), a
# tiny run (log, checkpoint, config).
printf 'step,lr\n0,0\n10,1e-3\n100,1e-4\n' >"$scratch/table.csv"
printf '%b' '\x18\x00\x00\x00\x00\x00\x00\x00\xa3\x7f\x4b\x22\x09\x00\x00\x00\x00\x00\x08\x70\x40\x1a\x0d\x62\x72\x61' \
  '\x69\x6e\x2e\x45\x76\x65\x6e\x74\x3a\x32\xbc\x98\x21\x2b\x19\x00\x00\x00\x00\x00\x00\x00\x8b\xf1\x08\x28' \
  '\x09\x00\x00\x00\x00\x00\x08\x70\x40\x10\x01\x2a\x0c\x0a\x0a\x0a\x03\x76\x2f\x31\x15\x00\x00\xc0\x3f\x2c\xec' \
  '\xc0\x87\x1a\x00\x00\x00\x00\x00\x00\x00\x12\x9b\xd8\x2d\x09\x00\x00\x00\x00\x00\x08\x70\x40\x10\x02\x2a\x0d' \
  '\x0a\x0b\x0a\x04\x76\x2f\x32\x32\x15\x00\x00\x80\x41\x8f\xa3\xb6\x88' >"$scratch/events.tfevents"
# A Hugging Face Trainer's trainer_state.json (its training logs, an evaluation, max_steps) and a JSON-lines log.
printf '{\n  "global_step": 20,\n  "log_history": [\n    {\n      "epoch": 0.5,\n      "grad_norm": NaN,\n      "learning_rate": 5e-05,\n      "loss": 2.5,\n      "step": 10\n    },\n    {\n      "eval_loss": 2.25,\n      "step": 10\n    },\n    {\n      "learning_rate": 2.5e-05,\n      "step": 20\n    }\n  ],\n  "max_steps": 40\n}\n' \
  >"$scratch/trainer_state.json"
printf '{"step": 0, "lr": 0.001, "loss": 3.0}\n{"step": 5, "eval_loss": 2.9}\n{"global_step": 10, "lr": 0.0005}\n' \
  >"$scratch/log.jsonl"
# An MLflow run's metric (a file store's lines: timestamp, value, step).
mkdir -p "$scratch/mlruns/0/run/metrics"
printf 'run_id: run\n' >"$scratch/mlruns/0/run/meta.yaml"
printf '1764201600000 5e-05 10\n1764201601000 4e-05 20\n1764201602000 nan 30\n' >"$scratch/mlflow_metric"
# An MLflow store (mlflow.db, MLflow's schema): one run's lr with a NaN, where a Python with sqlite3 can write it.
source "$(dirname "$0")/../../scripts/find_python.sh"
sqlite_python=$(python_with sqlite3 2>/dev/null) || sqlite_python=""
if [ -n "$sqlite_python" ]; then
  "$sqlite_python" - "$(dirname "$0")/../golden/mlflow/schema.sql" "$scratch/mlflow.db" <<'EOF'
import sqlite3, sys
with sqlite3.connect(sys.argv[2]) as db:
    db.executescript(open(sys.argv[1]).read())
    db.execute("INSERT INTO experiments VALUES (0, 'Default', '', 'active', 0, 0)")
    db.execute("INSERT INTO runs (run_uuid, name, start_time, lifecycle_stage, experiment_id) "
               "VALUES ('run', 'fuzz', 0, 'active', 0)")
    db.executemany("INSERT INTO metrics VALUES ('lr', ?, ?, 'run', ?, ?)",
                   [(0.0 if s == 30 else 5e-05 / (1 + s), 1764201600000 + s, s, int(s == 30))
                    for s in range(0, 400, 10)])
db.close()
EOF
else
  echo "no MLflow store fuzzed: no python3 here imports sqlite3"
fi
# A Weights & Biases run log (make_wandb.py's plain loop: lr and loss at every step, a NaN loss, a null lr).
cp "$(dirname "$0")/../golden/wandb/loop/run-lrkpy003.wandb" "$scratch/run.wandb"
# The per-rank W&B runs of a DDP loop (make_wandb.py's ddp_runs()), one of them mutated per round for diagnose.
cp -r "$(dirname "$0")/../golden/wandb/ddp" "$scratch/ddp"
ddp_run=$(find "$scratch/ddp" -name 'run-lrkdp002.wandb')
cp "$ddp_run" "$scratch/ddp_rank2.wandb"
# The same loop's TensorBoard runs (make_tfevents.py's ddp_runs()): a writer per rank, and rank 0's add_scalars runs;
# one rank's event file mutated per round for diagnose.
cp -r "$(dirname "$0")/../golden/tfevents/ddp" "$scratch/tb_ddp"
cp -r "$(dirname "$0")/../golden/tfevents/ddp_gathered" "$scratch/tb_gathered"
tb_rank=$(find "$scratch/tb_ddp/rank_2" -name 'events.out.tfevents.*')
tb_gathered=$(find "$scratch/tb_gathered/grad_norm_1" -name 'events.out.tfevents.*')
cp "$tb_rank" "$scratch/tb_rank2.tfevents"
cp "$tb_gathered" "$scratch/tb_grad_norm_1.tfevents"
for i in $(seq 1 300); do echo "And God said, Let there be light: and there was light. $i"; done >"$scratch/corpus.txt"
printf '[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n[data]\npath = %s\n[train]\nsteps = 4\nbatch = 4\nlog_every = 4\nthreads = 1\n[eval]\nevery = 0\nbatches = 1\n[checkpoint]\nevery = 4\n[schedule]\nspec = cosine(peak=1e-3)\n' \
  "$scratch/corpus.txt" >"$scratch/tiny.cfg"
"$lrkit" train --config "$scratch/tiny.cfg" --out "$scratch/seed_run" >/dev/null || { echo "FAIL: the seed run did not train"; exit 1; }
cp "$scratch/seed_run/log.h5" "$scratch/log.h5"
checkpoint="$scratch/seed_run/checkpoints/step_0000000004.pt"

for ((k = 0; k < specs; k++)); do
  if ((k % 2 == 0)); then
    spec=""
    for ((j = 0; j < 1 + RANDOM % 12; j++)); do spec+=${fragments[$((RANDOM % ${#fragments[@]}))]}; done
  else
    spec=$(mutate_text "${valid[$((RANDOM % ${#valid[@]}))]}")
  fi
  steps=(--steps $((1 + RANDOM % 2000)))
  ((RANDOM % 3 == 0)) && steps=()
  attempt "spec #$k" "$lrkit" schedule "$spec" "${steps[@]}" --every 97
done

for ((k = 0; k < files; k++)); do
  mutate_file "$scratch/log.h5" "$scratch/m_log.h5"
  attempt "mutated log #$k (diagnose)" "$lrkit" diagnose "$scratch/m_log.h5"
  attempt "mutated log #$k (log check)" "$lrkit" log check "$scratch/m_log.h5"
  attempt "mutated log #$k (refine)" "$lrkit" refine "$scratch/m_log.h5" --peak 1e-3 --out "$scratch/m_refined.csv"
  attempt "mutated log #$k (table)" "$lrkit" schedule "table(file=$scratch/m_log.h5, values=/train/lr)" --steps 10
  attempt "mutated log #$k (compare)" "$lrkit" schedule "cosine(peak=1e-3)" --compare "$scratch/m_log.h5"
  attempt "mutated log #$k (fit)" "$lrkit" schedule --fit "$scratch/m_log.h5"
  attempt "mutated log #$k (log repair)" "$lrkit" log repair "$scratch/m_log.h5"  # last: it may write the file
  mutate_file "$checkpoint" "$scratch/m_ckpt.pt"
  attempt "mutated checkpoint #$k" "$lrkit" train --config "$scratch/tiny.cfg" --train.steps=1 --init-from "$scratch/m_ckpt.pt" \
    --overwrite --out "$scratch/m_init"
  mutate_file "$scratch/tiny.cfg" "$scratch/m_tiny.cfg"
  attempt "mutated config #$k" "$lrkit" train --config "$scratch/m_tiny.cfg" --train.steps=2 --overwrite --out "$scratch/m_config"
  mutate_file "$scratch/table.csv" "$scratch/m_table.csv"
  attempt "mutated table #$k" "$lrkit" schedule "table(file=$scratch/m_table.csv)" --steps 50
  attempt "mutated table #$k (compare)" "$lrkit" schedule "cosine(peak=1e-3)" --compare "$scratch/m_table.csv"
  attempt "mutated table #$k (fit)" "$lrkit" schedule --fit "$scratch/m_table.csv"
  mutate_file "$scratch/events.tfevents" "$scratch/m_events.tfevents"
  attempt "mutated event file #$k (table)" "$lrkit" schedule "table(file=$scratch/m_events.tfevents, column=v/1)" \
    --steps 10
  attempt "mutated event file #$k (refined)" "$lrkit" schedule \
    "refined(norms=$scratch/m_events.tfevents, column=v/22, peak=1e-3)" --steps 10
  attempt "mutated event file #$k (compare)" "$lrkit" schedule "constant(1.5)" --compare "$scratch/m_events.tfevents" \
    --column v/1
  mutate_file "$scratch/trainer_state.json" "$scratch/m_trainer_state.json"
  attempt "mutated trainer state #$k (compare)" "$lrkit" schedule "cosine(peak=5e-5)" --compare \
    "$scratch/m_trainer_state.json" --column train/learning_rate
  attempt "mutated trainer state #$k (fit)" "$lrkit" schedule --fit "$scratch/m_trainer_state.json" --column grad_norm
  mutate_file "$scratch/log.jsonl" "$scratch/m_log.jsonl"
  attempt "mutated JSON lines #$k (table)" "$lrkit" schedule "table(file=$scratch/m_log.jsonl)" --steps 10
  attempt "mutated JSON lines #$k (fit)" "$lrkit" schedule --fit "$scratch/m_log.jsonl"
  mutate_file "$scratch/mlflow_metric" "$scratch/mlruns/0/run/metrics/lr"
  attempt "mutated MLflow metric #$k (compare)" "$lrkit" schedule "cosine(peak=5e-5)" --compare "$scratch/mlruns/0/run"
  if [ -n "$sqlite_python" ]; then
    mutate_file "$scratch/mlflow.db" "$scratch/m_mlflow.db"
    attempt "mutated MLflow store #$k (fit)" "$lrkit" schedule --fit "$scratch/m_mlflow.db" --column lr
    attempt "mutated MLflow store #$k (run)" "$lrkit" schedule "table(file=$scratch/m_mlflow.db/fuzz, column=lr)" \
      --steps 10
  fi
  mutate_file "$scratch/run.wandb" "$scratch/m_run.wandb"
  attempt "mutated W&B run log #$k (fit)" "$lrkit" schedule --fit "$scratch/m_run.wandb" --column lr
  mutate_file "$scratch/ddp_rank2.wandb" "$ddp_run"
  attempt "mutated W&B rank run #$k (diagnose)" "$lrkit" diagnose "$scratch/ddp"
  mutate_file "$scratch/tb_rank2.tfevents" "$tb_rank"
  attempt "mutated TensorBoard rank run #$k (diagnose)" "$lrkit" diagnose "$scratch/tb_ddp"
  mutate_file "$scratch/tb_grad_norm_1.tfevents" "$tb_gathered"
  attempt "mutated add_scalars run #$k (diagnose)" "$lrkit" diagnose "$scratch/tb_gathered" --json
done

summary=""
for status in "${!exits[@]}"; do summary+=" exit $status: ${exits[$status]};"; done
echo "$runs commands ($specs specs, $files mutated files of each kind):$summary $failures failure(s)"
((failures == 0))
