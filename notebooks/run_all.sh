#!/usr/bin/env bash
# Makes fresh logs with the built lrkit and executes every notebook headless
# with jupyter-nbconvert under the first python3 that has nbconvert, h5py and
# matplotlib (exit 77: none); exits non-zero when any cell fails. Executed copies go
# to OUT_DIR/executed/ (outputs are never committed).
# Usage: notebooks/run_all.sh LRKIT_BINARY OUT_DIR
set -euo pipefail
lrkit=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../scripts/find_python.sh"
if ! python=$(python_with nbconvert h5py matplotlib 2>/dev/null); then
  echo "skipped: no python3 with nbconvert, h5py and matplotlib (Debian: jupyter-nbconvert python3-h5py python3-matplotlib)"
  exit 77
fi
rm -rf "$out"
bash "$here/make_logs.sh" "$lrkit" "$out"
export LRKIT="$lrkit" LRKIT_SCHEDULES="$out/schedules" LRKIT_RUN="$out/run/log.h5" LRKIT_HDET="$out/hdet/log.h5" LRKIT_SWEEP="$out/sweep/summary.h5"
# No MPLBACKEND: the kernel's inline backend is headless already and keeps each figure in the
# executed notebook (a forced Agg backend drew them nowhere).
unset MPLBACKEND
# execute NOTEBOOK NAME: runs it into $out/executed/NAME.ipynb; fails on a failed cell or a notebook that kept no figure.
execute() {
  echo "executing $(basename "$1") as $2"
  (cd "$here" && "$python" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
     --output "$2" --output-dir "$out/executed" "$1" >/dev/null 2>"$out/$2.log") ||
    { cat "$out/$2.log" >&2; echo "notebook $2 failed" >&2; exit 1; }
  figures=$(grep -c '"image/png"' "$out/executed/$2.ipynb" || true)
  [ "$figures" -gt 0 ] || { echo "notebook $2 kept no figures" >&2; exit 1; }
  echo "  $figures figure(s) kept"
}
for notebook in "$here"/*.ipynb; do
  execute "$notebook" "$(basename "$notebook" .ipynb)"
done
# The diagnostics notebook takes a per-rank log too: the run's per-rank scalars as JSON lines, as a DispersionHook
# or another trainer's export writes them (no pairwise matrices, no skipped updates); and the losses alone, as a loop
# that logs no gradient norm writes them.
"$python" - "$out/run/log.h5" "$out/ranks.jsonl" "$out/losses.jsonl" <<'EOF'
import json, sys
import h5py
with h5py.File(sys.argv[1], "r") as f, open(sys.argv[2], "w") as out, open(sys.argv[3], "w") as losses:
    step, loss, norm = f["/train/step"][()], f["/ranks/loss"][()], f["/ranks/grad_norm"][()]
    for t, s in enumerate(step):
        for k in range(loss.shape[1]):
            out.write(json.dumps({"step": int(s), "rank": k, "loss": float(loss[t, k]), "grad_norm": float(norm[t, k])}) + "\n")
            losses.write(json.dumps({"step": int(s), "rank": k, "loss": float(loss[t, k])}) + "\n")
EOF
LRKIT_RUN="$out/ranks.jsonl" execute "$here/diagnostics.ipynb" per_rank_diagnostics
LRKIT_RUN="$out/losses.jsonl" execute "$here/diagnostics.ipynb" loss_only_diagnostics
echo "all notebooks executed: $out/executed"
