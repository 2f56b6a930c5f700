#!/usr/bin/env bash
# A checkpoint write that runs out of room ends the run with one line naming
# the file and errno, leaves no temporary file, and the run log lists only the
# checkpoints that exist; the earlier checkpoint then resumes to the same
# losses as a run that never failed.
#
# usage: disk_full_test.sh LRKIT SCRATCH
# The full disk is a 300 KiB tmpfs (mounted in a user namespace, or directly as
# root); where neither is allowed, a file-size limit (ulimit -f) makes the
# same write fail with EFBIG instead.
set -euo pipefail
lrkit=$1
scratch=$2
command -v h5dump >/dev/null || { echo "skipped: h5dump (hdf5-tools) is not installed"; exit 77; }

series() {  # series LOG DATASET: the dataset's values, one per line
  h5dump -d "$2" -y -w 0 -O /dev/null -o /dev/stdout "$1" | tr -s ' ,' '\n\n' | sed '/^$/d' | paste -sd " "
}

if [ "${DISK_FULL_INSIDE:-}" = "" ]; then
  rm -rf "$scratch" && mkdir -p "$scratch/full"
  for i in $(seq 1 500); do echo "Blessed are the meek: for they shall inherit the earth. $i"; done >"$scratch/corpus.txt"
  printf '[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n[data]\npath = %s\n[train]\nsteps = 12\nbatch = 8\nlog_every = 6\nthreads = 1\n[eval]\nevery = 0\nbatches = 1\n[checkpoint]\nevery = 6\nkeep = 1\n[schedule]\nspec = constant(1e-3)\n' \
    "$scratch/corpus.txt" >"$scratch/tiny.cfg"
  "$lrkit" train --config "$scratch/tiny.cfg" --out "$scratch/reference" >/dev/null
  export DISK_FULL_INSIDE=1
  if unshare -rm true 2>/dev/null; then
    echo "full disk: a 300 KiB tmpfs in a user namespace"
    exec unshare -rm bash "$0" "$lrkit" "$scratch"
  elif [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=300k lrkit_test "$scratch/full" 2>/dev/null; then
    umount "$scratch/full"
    echo "full disk: a 300 KiB tmpfs"
    exec bash "$0" "$lrkit" "$scratch"
  else
    echo "full disk: not mountable here; a 100 KiB file-size limit instead (EFBIG)"
    export DISK_FULL_ULIMIT=1
    exec bash "$0" "$lrkit" "$scratch"
  fi
fi

run="$scratch/full/run"
status=0
if [ "${DISK_FULL_ULIMIT:-}" = "" ]; then
  mount -t tmpfs -o size=300k lrkit_test "$scratch/full"
  trap 'umount "$scratch/full" 2>/dev/null || true' EXIT
  "$lrkit" train --config "$scratch/tiny.cfg" --out "$run" >/dev/null 2>"$scratch/stderr" || status=$?
  expected="No space left on device (errno 28)"
else
  # The limit is per file: the first 6 steps run without it (its checkpoint is larger than the
  # limit), the resumed run under it.
  rm -rf "$run"
  "$lrkit" train --config "$scratch/tiny.cfg" --out "$run" --train.steps=6 >/dev/null
  (trap '' XFSZ; ulimit -f 100; exec "$lrkit" train --config "$scratch/tiny.cfg" --out "$run" --resume auto) \
    >/dev/null 2>"$scratch/stderr" || status=$?
  expected="File too large (errno 27)"
fi

fail() { echo "FAIL: $*"; echo "--- stderr:"; cat "$scratch/stderr"; exit 1; }
[ "$status" = 1 ] || fail "exit $status, expected 1 (a failure at run time, not bad input)"
[ "$(wc -l <"$scratch/stderr")" = 1 ] || fail "stderr is not one line"
grep -qF "lrkit train: cannot write checkpoint '$run/checkpoints/step_0000000012.pt': $expected" "$scratch/stderr" ||
  fail "the error does not name the checkpoint and the errno"
leftovers=$(find "$run" -name '*.tmp')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
[ "$(ls "$run/checkpoints")" = "step_0000000006.pt" ] || fail "checkpoints on disk: $(ls "$run/checkpoints")"
[ "$(series "$run/log.h5" /checkpoints/step)" = 6 ] || fail "the log lists checkpoints $(series "$run/log.h5" /checkpoints/step)"

# Room again: the checkpoint before the failure resumes exactly.
cp -r "$run" "$scratch/resumed"
"$lrkit" train --config "$scratch/tiny.cfg" --out "$scratch/resumed" --resume auto >/dev/null
[ "$(series "$scratch/resumed/log.h5" /train/loss)" = "$(series "$scratch/reference/log.h5" /train/loss)" ] ||
  fail "the resumed run's losses differ from the uninterrupted run's"
[ "$(series "$scratch/resumed/log.h5" /checkpoints/step)" = "6 12" ] || fail "resumed log's checkpoints"
echo "ok: $(cat "$scratch/stderr")"
