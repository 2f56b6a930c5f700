#!/usr/bin/env bash
# The perturbation ladder: identical data on every rank (control), all ranks the
# same seed, one rank desynchronized (its own data stream and dropout seed), every
# rank its own seed; then one table from `lrkit diagnose --json` of each run.
# Usage: scripts/ladder.sh [WORKERS] [extra --section.key=value ...]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
python=$(python_with json)
workers=${1:-4}
shift || true
source scripts/lrkit_binary.sh
lrkit=$LRKIT
declare -A knobs=(
  [identical]="--dist.data_split=identical"
  [same_seed]=""
  [one_rank]="--dist.desync_ranks=1"
  [every_rank]="--dist.desync_ranks=all"
)
order=(identical same_seed one_rank every_rank)
mkdir -p out/ladder
for setting in "${order[@]}"; do
  echo "== $setting" >&2
  # shellcheck disable=SC2086
  "$lrkit" train --config configs/ladder.cfg --nproc "$workers" ${knobs[$setting]} "$@" --overwrite --out "out/ladder/$setting" \
    | tee "out/ladder/$setting.txt" >&2
  "$lrkit" diagnose "out/ladder/$setting/log.h5" --json --skip 20 > "out/ladder/$setting/diagnose.json"
done
"$python" - "${order[@]}" <<'PY'
import json, re, sys
print(f"| setting | loss roughness % | held-out loss | loss std | grad-norm std | pairwise cos | verdict |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
for setting in sys.argv[1:]:
    r = json.load(open(f"out/ladder/{setting}/diagnose.json"))
    d = {m["name"]: m for m in r["dispersion"]}
    heldout = re.search(r"held-out loss ([0-9.]+)", open(f"out/ladder/{setting}.txt").read()).group(1)
    print(f"| {setting} | {100 * r['loss']['roughness']:.2f} | {float(heldout):.4f} | {d['loss_std']['mean']:.4f} | "
          f"{d['grad_norm_std']['mean']:.4f} | {d['consistency']['mean']:.4f} | {r['verdict']} |")
PY
