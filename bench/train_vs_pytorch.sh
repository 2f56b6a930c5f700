#!/usr/bin/env bash
# Side by side, in one run: tokens/s of `lrkit train` and of the plain PyTorch
# loop (bench/pytorch_loop.py, Debian's python3-torch) on the same model,
# batch, optimizer and corpus; alternated ROUNDS times, then the ratio of medians.
# Each side's rate is its median over windows of 10 steps after the first 10
# (bench/lrkit_windows.sh), each run being STEPS + 10 steps long.
# With NPROC > 1: `lrkit train --nproc NPROC` against PyTorch DistributedDataParallel
# under Debian's torchrun, both over Gloo with one intra-op thread per worker.
# With LRKIT_BASELINE=<another build's lrkit> each round also runs that build,
# and the ratio of the two builds' medians is printed (a refactor's cost, side by side).
# Usage: bench/train_vs_pytorch.sh [ROUNDS] [STEPS] [NPROC]   (needs a build and data/kjv.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
rounds=${1:-3}
steps=${2:-200}
nproc=${3:-1}
source scripts/find_python.sh
source bench/lrkit_windows.sh
source bench/medians.sh
python=$(python_with torch)
pytorch=("$python" bench/pytorch_loop.py)
# --redirects/--tee 1: Debian's torch 1.13 launcher fails under Python 3.11 with its default 0.
((nproc > 1)) && pytorch=("$python" -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node "$nproc"
                          --master_port 29731 bench/pytorch_loop.py)
lrkit_tokens_per_second() {
  local out=out/bench_train_vs_pytorch
  mkdir -p "$out"
  # shellcheck disable=SC2046  # lrkit_window_args prints two words
  "$1" train --config configs/quickstart.cfg $(lrkit_window_args "$steps") --eval.every=0 --nproc "$nproc" \
    --overwrite --out "$out/run" > "$out/progress.txt" 2>&1 || { cat "$out/progress.txt" >&2; exit 1; }
  lrkit_window_rate "$out/progress.txt"
}
lrkit_rates=() torch_rates=() baseline_rates=()
for ((i = 0; i < rounds; i++)); do
  lrkit_rates+=("$(lrkit_tokens_per_second "$LRKIT")")
  torch_rates+=("$("${pytorch[@]}" --steps "$steps" | grep tokens_per_second | sed -E 's/.*tokens_per_second=([0-9]+).*/\1/')")
  line="round $((i + 1)): lrkit ${lrkit_rates[-1]} tok/s, pytorch ${torch_rates[-1]} tok/s"
  if [ -n "${LRKIT_BASELINE:-}" ]; then
    baseline_rates+=("$(lrkit_tokens_per_second "$LRKIT_BASELINE")")
    line+=", baseline ${baseline_rates[-1]} tok/s"
  fi
  echo "$line"
done
l=$(median "${lrkit_rates[@]}") t=$(median "${torch_rates[@]}")
echo "$nproc worker(s), median: lrkit $l tok/s, pytorch $t tok/s, ratio lrkit/pytorch $(ratio "$l" "$t")"
if [ -n "${LRKIT_BASELINE:-}" ]; then
  b=$(median "${baseline_rates[@]}")
  echo "baseline $LRKIT_BASELINE: median $b tok/s, ratio lrkit/baseline $(ratio "$l" "$b")"
fi
