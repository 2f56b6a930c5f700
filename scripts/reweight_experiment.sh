#!/usr/bin/env bash
# Loss-based sample reweighting (ALGORITHMS.md section 8) on the default
# corpus: the quickstart run with uniform weights and with each strategy
# (strength r = 1.0, the paper's choice for small models; uniform for the
# first 10 % of steps); one table of the final held-out loss and of how far
# the weights spread.
# Usage: scripts/reweight_experiment.sh [extra --section.key=value ...]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
python=$(python_with h5py numpy)
source scripts/lrkit_binary.sh
lrkit=$LRKIT
order=(uniform linupper quadratic extremes linear)
mkdir -p out/reweight
for strategy in "${order[@]}"; do
  echo "== $strategy" >&2
  "$lrkit" train --config configs/quickstart.cfg --eval.every=0 --reweight.strategy="$strategy" \
    --reweight.strength=1.0 --reweight.warmup=100 "$@" --overwrite --out "out/reweight/$strategy" | tee "out/reweight/$strategy.txt" >&2
done
"$python" - "${order[@]}" <<'PY'
import re, sys
import h5py, numpy as np
print("| strategy | held-out loss | vs uniform | train loss (last 100 steps) | mean max/min weight | mean effective batch (of 16) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
base = None
for strategy in sys.argv[1:]:
    heldout = float(re.search(r"held-out loss ([0-9.]+)", open(f"out/reweight/{strategy}.txt").read()).group(1))
    base = heldout if base is None else base
    with h5py.File(f"out/reweight/{strategy}/log.h5", "r") as f:
        train = f["/train/loss"][-100:].mean()
        ratio = f["/reweight/max_min_ratio"][100:].mean() if "/reweight" in f else 1.0
        size = f["/reweight/effective_size"][100:].mean() if "/reweight" in f else 16.0
    print(f"| {strategy} | {heldout:.4f} | {heldout - base:+.4f} | {train:.4f} | {ratio:.2f} | {size:.2f} |")
PY
