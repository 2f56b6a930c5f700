#!/usr/bin/env bash
# Step time of a WORKERS-worker (default 2) PyTorch DDP loop (bench/ddp_loop.py
# under torchrun; Gloo on the CPU) plain and with each of lrkit's PyTorch tools
# named, alternated ROUNDS times in one run; prints the medians and the ratios
# to the plain loop. MODES: hook (DispersionHook, scalars), hook_lazy (the same
# with step(loss, metrics=False): no wait for the device), exact (its exact
# pairwise cosine), reweight (SampleReweighting), spike_guard (SpikeGuard),
# lr_scheduler (LRScheduler), hdet (HDET: compare it with lr_scheduler),
# hdet_every_step (HDET handing its losses to the host every step),
# torch_python_hook (PyTorch's own Python all-reduce hook: what any Python comm
# hook costs). DEVICE=cuda trains on the GPU (NCCL with a GPU per worker).
# Usage: [DEVICE=cuda] [WORKERS=N] bench/ddp_overhead.sh [ROUNDS] [STEPS] [MODE...]
#   (default: 3 60 hook exact; needs a build with the Python package)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/medians.sh
rounds=${1:-3}
steps=${2:-60}
shift $(($# < 2 ? $# : 2))
modes=("$@")
((${#modes[@]})) || modes=(hook exact)
source scripts/find_python.sh
python=$(python_of_the_build)
export PYTHONPATH=$PWD/build/python OMP_NUM_THREADS=1
declare -A times
for ((i = 0; i < rounds; i++)); do
  for mode in plain "${modes[@]}"; do
    ms=$("$python" -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node "${WORKERS:-2}" --master_port 29741 \
           bench/ddp_loop.py "$mode" "$steps" 2>/dev/null | sed -nE 's/.*ms_per_step=([0-9.]+).*/\1/p')
    times[$mode]+="$ms "
    echo "round $((i + 1)) $mode: $ms ms/step"
  done
done
plain=$(median ${times[plain]})
for mode in "${modes[@]}"; do
  m=$(median ${times[$mode]})
  echo "$mode: median $m ms/step vs plain $plain: ratio $(ratio "$m" "$plain" 3)"
done
