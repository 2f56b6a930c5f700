#!/usr/bin/env bash
# Continual pre-training (ALGORITHMS.md section 5): a quickstart model fully
# trained and decayed on the King James Bible (old data) continues on the
# State of the Union addresses (new data) with rewarm(peak, warmup) for
# warmups of 0 / 1 / 2 % and two peaks, against training from scratch on the
# new data, and with 5 % / 25 % of every batch replayed from the old data
# (Ibrahim et al. 2024); old- and new-data held-out loss over time, one table.
# Finished runs (final checkpoint present) are not trained again.
# Usage: scripts/rewarm_experiment.sh [STEPS] [extra --section.key=value ...]   (needs a build, data/kjv.txt, data/sotu.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
python=$(python_with h5py numpy)
steps=${1:-600}
shift || true
source scripts/lrkit_binary.sh
lrkit=$LRKIT
[ -s data/sotu.txt ] || bash scripts/prepare_sotu.sh
mkdir -p out/rewarm
common=(--config configs/quickstart.cfg --train.log_every=100 "$@")
if [ ! -s out/rewarm/base/checkpoints/step_0000001000.pt ]; then
  echo "== base (old data)" >&2
  "$lrkit" train "${common[@]}" --eval.every=0 --overwrite --out out/rewarm/base >&2
fi
base=out/rewarm/base/checkpoints/step_0000001000.pt
final=$(printf 'step_%010d.pt' "$steps")
train_once() {  # NAME ARGS...: skipped when its final checkpoint exists
  local name=$1
  shift
  runs+=("$name")
  [ -s "out/rewarm/$name/checkpoints/$final" ] && return 0
  echo "== $name" >&2
  "$lrkit" train "${common[@]}" --train.steps="$steps" --eval.every=$((steps / 12)) "$@" --overwrite --out "out/rewarm/$name" >&2
}
new=(--data.path=data/sotu.txt --eval.sets="heldout, old=data/kjv.txt")
runs=()
for peak in 3e-3 1e-3; do
  for warmup in 0 1% 2%; do
    train_once "rewarm_p${peak}_w${warmup%\%}" "${new[@]}" --init-from "$base" --schedule.spec="rewarm(peak=$peak, warmup=$warmup)"
  done
done
train_once scratch_p3e-3_w1 "${new[@]}" --schedule.spec="rewarm(peak=3e-3, warmup=1%)"
# Replay: a mixture of the new and the old corpus; eval.sets=heldout then scores both ("new", "old").
for replay in 5 25; do
  train_once "replay${replay}_p3e-3_w1" --data.sources="new=data/sotu.txt, old=data/kjv.txt" \
    --data.proportions="$((100 - replay)), $replay" --eval.sets=heldout --init-from "$base" --schedule.spec="rewarm(peak=3e-3, warmup=1%)"
done
"$python" - "${runs[@]}" <<'PY'
import sys
import h5py, numpy as np
with h5py.File("out/rewarm/base/log.h5", "r") as f:
    print(f"base model on old data: held-out loss {f['/eval/heldout/loss'][-1]:.4f}\n")
print("| run | peak | warmup | old data: first eval | worst | end | new data: first eval | end |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for run in sys.argv[1:]:
    with h5py.File(f"out/rewarm/{run}/log.h5", "r") as f:
        old = f["/eval/old/loss"][:]
        new = f["/eval/heldout/loss" if "heldout" in f["/eval"] else "/eval/new/loss"][:]
    _, peak, warmup = run.split("_")
    print(f"| {run} | {peak[1:]} | {warmup[1:]} % | {old[0]:.4f} | {old.max():.4f} | {old[-1]:.4f} | {new[0]:.4f} | {new[-1]:.4f} |")
PY
