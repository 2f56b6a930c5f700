#!/usr/bin/env bash
# Continual pre-training (ALGORITHMS.md section 5): a quickstart model fully
# trained and decayed on the King James Bible (old data) continues on the
# State of the Union addresses (new data) with rewarm(peak, warmup) for
# warmups of 0 / 1 / 2 % and two peaks, against training from scratch on the
# new data; old- and new-data held-out loss over time, one table.
# Usage: scripts/rewarm_experiment.sh [STEPS] [extra --section.key=value ...]   (needs a build, data/kjv.txt, data/sotu.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-600}
shift || true
lrkit=build/train/lrkit
[ -s data/sotu.txt ] || bash scripts/prepare_sotu.sh
mkdir -p out/rewarm
common=(--config configs/quickstart.cfg --train.log_every=100 "$@")
if [ ! -s out/rewarm/base/checkpoints/step_0000001000.pt ]; then
  echo "== base (old data)" >&2
  "$lrkit" train "${common[@]}" --eval.every=0 --out out/rewarm/base >&2
fi
base=out/rewarm/base/checkpoints/step_0000001000.pt
new=(--data.path=data/sotu.txt --train.steps="$steps" --eval.every=$((steps / 12)) --eval.sets="heldout, old=data/kjv.txt")
runs=()
for peak in 3e-3 1e-3; do
  for warmup in 0 1% 2%; do
    name="rewarm_p${peak}_w${warmup%\%}"
    runs+=("$name")
    echo "== $name" >&2
    "$lrkit" train "${common[@]}" "${new[@]}" --init-from "$base" --schedule.spec="rewarm(peak=$peak, warmup=$warmup)" \
      --out "out/rewarm/$name" >&2
  done
done
runs+=(scratch_p3e-3_w1)
echo "== scratch" >&2
"$lrkit" train "${common[@]}" "${new[@]}" --schedule.spec="rewarm(peak=3e-3, warmup=1%)" --out out/rewarm/scratch_p3e-3_w1 >&2
/usr/bin/python3 - "${runs[@]}" <<'PY'
import sys
import h5py, numpy as np
with h5py.File("out/rewarm/base/log.h5", "r") as f:
    print(f"base model on old data: held-out loss {f['/eval/heldout/loss'][-1]:.4f}\n")
print("| run | peak | warmup | old data: first eval | worst | end | new data: first eval | end |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for run in sys.argv[1:]:
    with h5py.File(f"out/rewarm/{run}/log.h5", "r") as f:
        old, new = f["/eval/old/loss"][:], f["/eval/heldout/loss"][:]
    _, peak, warmup = run.split("_")
    print(f"| {run} | {peak[1:]} | {warmup[1:]} % | {old[0]:.4f} | {old.max():.4f} | {old[-1]:.4f} | {new[0]:.4f} | {new[-1]:.4f} |")
PY
