#!/usr/bin/env bash
# What a large corpus costs the workers' memory: `lrkit train --nproc NPROC` for STEPS steps on data/kjv.txt
# repeated to about SIZE_MB megabytes. Sampled every 20 ms from /proc over the whole run: the largest sum over the
# workers of their private memory (RssAnon: what a worker holds alone) and of their file pages (RssFile: the page
# cache's, shared between workers and reclaimable), and the run's wall time. With LRKIT_BASELINE=<another
# build's lrkit> that build runs on the same file right after, and the ratios are printed (a change's effect, side by
# side). usage: bench/corpus_memory.sh [SIZE_MB] [NPROC] [STEPS]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
size_mb=${1:-500}
nproc=${2:-2}
steps=${3:-20}
out=out/bench_corpus_memory
mkdir -p "$out"
corpus="$out/corpus_${size_mb}mb.txt"
if [ ! -f "$corpus" ]; then
  : > "$corpus.part"
  while (($(stat -c %s "$corpus.part") < size_mb * 1000000)); do cat data/kjv.txt >> "$corpus.part"; done
  mv "$corpus.part" "$corpus"
fi

# measure LRKIT: prints "private_mb file_mb seconds" for one run.
measure() {
  local start peak_anon=0 peak_file=0 launcher anon file pids
  start=$(date +%s.%N)
  "$1" train --config configs/quickstart.cfg --data.path="$corpus" --train.steps="$steps" --train.log_every="$steps" \
    --eval.every=0 --nproc "$nproc" --overwrite --out "$out/run" > "$out/progress.txt" 2>&1 &
  launcher=$!
  while kill -0 "$launcher" 2> /dev/null; do
    pids=$(pgrep -P "$launcher" || true)
    ((nproc > 1)) || pids=$launcher
    anon=0 file=0
    for pid in $pids; do
      read -r a f < <(awk '/^RssAnon:/ {a = $2} /^RssFile:/ {f = $2} END {print a + 0, f + 0}' "/proc/$pid/status" 2> /dev/null ||
                      echo 0 0)
      anon=$((anon + a)) file=$((file + f))
    done
    ((anon > peak_anon)) && peak_anon=$anon
    ((file > peak_file)) && peak_file=$file
    sleep 0.02
  done
  wait "$launcher" || { cat "$out/progress.txt" >&2; exit 1; }
  echo "$((peak_anon / 1024)) $((peak_file / 1024)) $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.2f", e - s}')"
}

echo "corpus: $corpus ($(($(stat -c %s "$corpus") / 1000000)) MB), $nproc worker(s), $steps steps"
read -r anon file seconds < <(measure "$LRKIT")
echo "lrkit:    private $anon MB, file pages $file MB (all workers), $seconds s"
if [ -n "${LRKIT_BASELINE:-}" ]; then
  read -r base_anon base_file base_seconds < <(measure "$LRKIT_BASELINE")
  echo "baseline: private $base_anon MB, file pages $base_file MB (all workers), $base_seconds s"
  awk -v a="$anon" -v b="$base_anon" -v s="$seconds" -v t="$base_seconds" \
    'BEGIN {printf "lrkit / baseline: private memory %.2f, wall time %.2f\n", a / b, s / t}'
fi
