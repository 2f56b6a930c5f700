#!/usr/bin/env bash
# Fresh small inputs for the notebooks, made with the built lrkit in a few
# seconds: schedule tables for the gallery, a 2-worker run with diagnostics on
# the default corpus, a schedule refined from that run's gradient norms, an
# HDET run of 4 virtual replicas, and a small sweep in every mode.
# Usage: notebooks/make_logs.sh LRKIT_BINARY OUT_DIR
set -euo pipefail
lrkit=$1
out=$2
cd "$(dirname "$0")/.."
bash scripts/prepare_data.sh >/dev/null
mkdir -p "$out/schedules"
steps=1000
table() { "$lrkit" schedule "$2" --steps "$steps" --out "$out/schedules/$1.h5"; }
for shape in linear cosine 1-sqrt square exp inverse polynomial geometric; do
  table "wsd_$shape" "wsd(peak=1e-3, warmup=2%, decay=30%, shape=$shape, floor=1e-5)"
done
for phi in 0.5 1 2 5; do table "uba_phi$phi" "uba(peak=1e-3, phi=$phi, warmup=2%)"; done
table cosine "cosine(peak=1e-3, floor=1e-5, warmup=2%)"
table linear "linear(peak=1e-3, warmup=2%)"
table onecycle "onecycle(peak=1e-3)"
table restarts "restarts(peak=1e-3, period=200, mult=2)"
table step "multistep(peak=1e-3, milestones=[500, 800])"
table wsds "wsds(peak=1e-3, budgets=[250, 500, 925], decay=10%, warmup=20)"  # ends at 925 + 25 + 50 = 1000
table rewarm "rewarm(peak=1e-3)"
table infinite "infinite(peak=1e-3, const=40%, warmup=1%)"

# dist.timeout_s: a sanitized build under a loaded test run once missed the 60 s rendezvous.
"$lrkit" train --config configs/quickstart.cfg --nproc 2 --model.layers=1 --model.width=32 --model.context=32 --dist.timeout_s=300 \
  --train.steps=150 --train.log_every=50 --eval.every=50 --eval.batches=2 --checkpoint.every=50 \
  --diagnostics.pairwise=exact --diagnostics.matrix_every=25 --out "$out/run" >/dev/null
"$lrkit" schedule "refined(norms=\"$out/run/log.h5\", peak=3e-3)" --steps 150 --out "$out/schedules/refined.h5"
"$lrkit" train --config configs/quickstart.cfg --model.layers=1 --model.width=32 --model.context=32 \
  --train.steps=150 --train.log_every=50 --eval.every=50 --eval.batches=2 --hdet.enabled=true \
  --hdet.replicas_per_rank=4 --hdet.sync_every=25 --hdet.sigma=0.002 \
  --schedule.spec="wsd(peak=3e-2, warmup=5%, decay=20%)" --out "$out/hdet" >/dev/null
# A small sweep in every mode: cosine (separate runs), WSD (decay branches), WSD-S and cyclic cosine (one run each).
cat > "$out/sweep.cfg" <<EOF
[sweep]
train_config = configs/quickstart.cfg
out = $out/sweep
budgets = 40, 80
peaks = 3e-3, 1e-2
jobs = 2
[schedules]
cosine = cosine(warmup=4)
wsd = branching: wsd(warmup=4, decay=20%, shape=1-sqrt)
wsds = single: wsds(budgets={budgets}, warmup=4, decay=20%)
cyclic = single: cyclic(budgets={budgets}, warmup=4, rewarm=4)
[model]
layers = 1
width = 32
context = 32
[train]
log_every = 1000
[eval]
every = 0
batches = 2
EOF
"$lrkit" sweep --config "$out/sweep.cfg" >/dev/null
echo "notebook inputs in $out"
