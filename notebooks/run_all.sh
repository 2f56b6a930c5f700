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
for notebook in "$here"/*.ipynb; do
  echo "executing $(basename "$notebook")"
  (cd "$here" && "$python" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
     --output-dir "$out/executed" "$notebook" >/dev/null 2>"$out/$(basename "$notebook").log") ||
    { cat "$out/$(basename "$notebook").log" >&2; echo "notebook $(basename "$notebook") failed" >&2; exit 1; }
  executed="$out/executed/$(basename "$notebook")"
  figures=$(grep -c '"image/png"' "$executed" || true)
  [ "$figures" -gt 0 ] || { echo "notebook $(basename "$notebook") kept no figures" >&2; exit 1; }
  echo "  $figures figure(s) kept"
done
echo "all notebooks executed: $out/executed"
