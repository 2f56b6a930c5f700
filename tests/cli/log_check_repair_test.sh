#!/usr/bin/env bash
# `lrkit log check|repair` on the log of a run killed with SIGKILL: check names
# the writer's mark, h5dump (a plain HDF5 reader) refuses the file until repair
# clears it (and cuts the rows of a flush the kill landed in); repair is refused
# while a run holds the directory.
# usage: log_check_repair_test.sh LRKIT SCRATCH
set -euo pipefail
lrkit=$1
scratch=$2
command -v h5dump >/dev/null || { echo "skipped: h5dump (hdf5-tools) is not installed"; exit 77; }
rm -rf "$scratch" && mkdir -p "$scratch"
for i in $(seq 1 500); do echo "Blessed are the meek: for they shall inherit the earth. $i"; done >"$scratch/corpus.txt"
printf '[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n[data]\npath = %s\n[train]\nsteps = 1000000\nbatch = 8\nlog_every = 1000\nthreads = 1\n[eval]\nevery = 0\nbatches = 1\n[log]\nflush_every = 1\n[schedule]\nspec = constant(1e-3)\n' \
  "$scratch/corpus.txt" >"$scratch/long.cfg"
fail() { echo "FAIL: $*"; exit 1; }
run="$scratch/run"
"$lrkit" train --config "$scratch/long.cfg" --out "$run" >/dev/null 2>&1 &
writer=$!
live=""
for _ in $(seq 1 300); do  # until rows are flushed: a live writer's log checks ok so far, naming the writer
  [ -f "$run/log.h5" ] && live=$("$lrkit" log check "$run/log.h5" 2>&1) && [[ $live == *" so far: lrkit train (pid $writer) is writing it)"* ]] && break
  live=""
  sleep 0.1
done
[ -n "$live" ] || fail "check of the live writer's log never said it was ok so far"
# While the run holds the directory, repair is refused.
out=$("$lrkit" log repair "$run/log.h5" 2>&1) && fail "repair ran beside a live writer: $out"
echo "$out" | grep -q "is being written by lrkit train (pid $writer)" || fail "repair's refusal does not name the owner: $out"
kill -9 "$writer"
wait "$writer" 2>/dev/null || true

status=0
out=$("$lrkit" log check "$run/log.h5") || status=$?
[ "$status" = 1 ] || fail "check of a killed writer's log exited $status: $out"
echo "$out" | grep -q "marked open for writing by a writer that did not close it" || fail "check: $out"
h5dump -H "$run/log.h5" >/dev/null 2>&1 && fail "h5dump opened the marked file (the test proves nothing here)"
"$lrkit" log repair "$run/log.h5" | grep -q "cleared the mark" || fail "repair did not say it cleared the mark"
h5dump -H "$run/log.h5" >/dev/null || fail "h5dump still cannot open the repaired log"
"$lrkit" log check "$run/log.h5" | grep -q ": ok (" || fail "the repaired log does not check ok"
"$lrkit" log repair "$run/log.h5" | grep -q "nothing to repair" || fail "a second repair did something"

echo "ok"
