#!/usr/bin/env bash
# The schedule gallery: a summary and a terminal plot of the headline
# schedules, and their tables as HDF5 files under out/gallery/ (needs a build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
lrkit=$LRKIT
out=out/gallery
mkdir -p "$out"
steps=10000
specs=(
  "cosine(peak=1e-3, floor=1e-5, warmup=2%)"
  "wsd(peak=1e-3, warmup=2%, decay=20%, shape=1-sqrt)"
  "uba(peak=1e-3, phi=0.5, warmup=2%)"
  "wsds(peak=1e-3, budgets=[2500, 5000, 9250], decay=10%, warmup=100)"  # ends at 9250 + 250 + 500 = 10000
  "onecycle(peak=1e-3)"
  "infinite(peak=1e-3, const=40%, warmup=1%)"
)
i=0
for spec in "${specs[@]}"; do
  i=$((i + 1))
  echo "=== $spec"
  "$lrkit" schedule "$spec" --steps "$steps" --summary
  "$lrkit" schedule "$spec" --steps "$steps" --plot --height 10
  "$lrkit" schedule "$spec" --steps "$steps" --out "$out/schedule_$i.h5"
done
echo "Wrote ${#specs[@]} schedule tables (HDF5, /schedule/{step,lr}) to $out/"
