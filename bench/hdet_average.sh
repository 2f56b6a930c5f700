#!/usr/bin/env bash
# lrkit.torch.HDET's parameter average (every sync) with WORKERS Gloo ranks
# (Debian's torchrun): flattened buckets of 25 MB against one all-reduce per
# tensor, alternated in one run; prints both medians and their ratio.
# Usage: bench/hdet_average.sh [ROUNDS] [LAYERS] [WIDTH] [WORKERS]   (needs a build with the Python package)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/medians.sh
rounds=${1:-20}
layers=${2:-12}
width=${3:-256}
workers=${4:-2}
source scripts/find_python.sh
python=$(python_of_the_build)
export PYTHONPATH=$PWD/build/python OMP_NUM_THREADS=1
line=$("$python" -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node "$workers" --master_port 29743 \
         bench/hdet_average_loop.py "$rounds" "$layers" "$width" 2>/dev/null | grep -m1 "per_tensor_ms=" | sed "s/^\[default0\]://")
echo "$line"
per_tensor=$(sed -nE 's/.*per_tensor_ms=([0-9.]+).*/\1/p' <<<"$line")
bucketed=$(sed -nE 's/.*bucketed_ms=([0-9.]+).*/\1/p' <<<"$line")
echo "$layers layers x width $width, $workers workers: bucketed $bucketed ms vs per tensor $per_tensor ms per average: ratio $(ratio "$bucketed" "$per_tensor")"
