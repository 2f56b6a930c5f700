#!/usr/bin/env bash
# What writing and reading a checkpoint costs in memory: `lrkit train` of a model of LAYERS x WIDTH (the quickstart
# config otherwise) for 2 steps, which ends with a checkpoint, then a resume of it for one more step. Each run's
# peak resident memory (getrusage of the finished process) and wall time. The training itself holds about 16 bytes
# per parameter (weights, gradients, AdamW's moments); what a run peaks above that is the checkpoint's cost. With
# LRKIT_BASELINE=<another build's lrkit> that build runs the same right after, and the ratios are printed (a
# change's effect, side by side). usage: bench/checkpoint_memory.sh [LAYERS] [WIDTH]   (needs a build, data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
layers=${1:-4}
width=${2:-2048}
out=out/bench_checkpoint_memory
mkdir -p "$out"

# measure LRKIT STEPS [ARGS]: prints "peak_mb seconds" of `lrkit train` for STEPS steps; its output goes to
# $out/progress.txt.
measure() {
  local lrkit=$1 steps=$2
  shift 2
  python3 - "$out/progress.txt" "$lrkit" train --config configs/quickstart.cfg --model.layers="$layers" --model.width="$width" \
    --model.heads=4 --train.steps="$steps" --train.log_every=1 --eval.every=0 --schedule.spec='constant(3e-4)' \
    --out "$out/run" "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
open(sys.argv[1], "w").write(done.stdout)
if done.returncode != 0:
    sys.exit(done.stdout[-2000:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, f"{time.monotonic() - start:.1f}")
PY
}

# both LRKIT: prints "save_mb save_s resume_mb resume_s": a fresh run of 2 steps, then its resume for a third.
both() {
  rm -rf "$out/run"
  read -r save_mb save_s < <(measure "$1" 2)
  read -r resume_mb resume_s < <(measure "$1" 3 --resume auto)
  echo "$save_mb $save_s $resume_mb $resume_s"
}

read -r save_mb save_s resume_mb resume_s < <(both "$LRKIT")
echo "model: $layers layers x $width wide; $(grep -m1 '^memory: ' "$out/progress.txt")"
echo "lrkit:    train + checkpoint peak $save_mb MB, $save_s s; resume peak $resume_mb MB, $resume_s s"
if [ -n "${LRKIT_BASELINE:-}" ]; then
  read -r base_save_mb base_save_s base_resume_mb base_resume_s < <(both "$LRKIT_BASELINE")
  echo "baseline: train + checkpoint peak $base_save_mb MB, $base_save_s s; resume peak $base_resume_mb MB, $base_resume_s s"
  awk -v a="$save_mb" -v b="$base_save_mb" -v c="$resume_mb" -v d="$base_resume_mb" -v s="$save_s" -v t="$base_save_s" \
    -v u="$resume_s" -v v="$base_resume_s" \
    'BEGIN {printf "lrkit / baseline: peak memory %.2f (train + checkpoint), %.2f (resume); wall time %.2f, %.2f\n", a / b, c / d, s / t, u / v}'
fi
