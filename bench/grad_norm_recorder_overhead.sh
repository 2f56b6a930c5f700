#!/usr/bin/env bash
# Step time of a one-process PyTorch loop (a 4-layer width-128 transformer, 51 parameter tensors) with and without
# lrkit.torch.GradNormRecorder.record() after each backward pass, alternated ROUNDS times in one run; prints the
# medians, the ratio to the plain loop and the median host time of record() itself.
# Usage: bench/grad_norm_recorder_overhead.sh [ROUNDS] [STEPS] [DEVICE]   (needs a build with the Python package)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/medians.sh
rounds=${1:-5}
steps=${2:-60}
device=${3:-cpu}
source scripts/find_python.sh
python=$(python_of_the_build)
export PYTHONPATH=$PWD/build/python OMP_NUM_THREADS=1
declare -A times
record_ms=""
for ((i = 0; i < rounds; i++)); do
  for mode in plain record; do
    line=$("$python" bench/recorder_loop.py "$mode" "$steps" "$device")
    ms=$(sed -nE 's/.*ms_per_step=([0-9.]+).*/\1/p' <<< "$line")
    record_ms+="$(sed -nE 's/.*record_ms=([0-9.]+).*/\1/p' <<< "$line") "
    times[$mode]+="$ms "
    echo "round $((i + 1)) $line"
  done
done
plain=$(median ${times[plain]})
m=$(median ${times[record]})
echo "record: median $m ms/step vs plain $plain: ratio $(ratio "$m" "$plain" 3); record() $(median $record_ms) ms"
