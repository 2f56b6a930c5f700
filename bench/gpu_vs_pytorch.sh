#!/usr/bin/env bash
# lrkit against the PyTorch loop a user would write, on one GPU, side by side
# in one invocation (ROUNDS alternations; medians): the same byte GPT, corpus,
# batch, AdamW parameter groups, clipping and bf16 autocast. Forms:
#   lrkit explicit    model.attention=explicit      vs  pytorch explicit (masked scores, torch's default AdamW)
#   lrkit             model.attention=auto (fused)  vs  pytorch fused (SDPA causal + AdamW(fused=True), eager)
#                                                   and pytorch compiled (the same under torch.compile)
# Each figure is the median over windows of 10 steps after the first 10 (both
# read the loss every step). Prints ms/step, tokens/s, MFU and the ratios.
# Usage: bench/gpu_vs_pytorch.sh [STEPS] [ROUNDS]
#   SHAPE=gpt2 (12 x 768, context 1024, batch 16: GPT-2 small on bytes, the default) | quick (the quickstart model)
#   DEVICE=cuda (default) | cpu (a smoke run of the script itself), PEAK_TFLOPS (default: lrkit's table; 989.4 on H100)
#   PROFILE=1 (default) | 0 | only: after the timed rounds (only: instead of them), trace 3 steps of lrkit, the
#   eager fused loop and the compiled one, and print bench/trace_summary.py's breakdown of the three (where the
#   gap is: kernels, idle device, host)
# FLOPs per token and the peak are the ones lrkit reports ("model: ..." line), for every row.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source scripts/find_python.sh
python=$(python_with torch)
steps=${1:-60}
rounds=${2:-3}
device=${DEVICE:-cuda}
case ${SHAPE:-gpt2} in
  gpt2) shape=(--layers 12 --heads 12 --width 768 --context 1024 --batch 16) ;;
  quick) shape=(--layers 2 --heads 4 --width 128 --context 64 --batch 16) ;;
  *) echo "SHAPE must be gpt2 or quick" >&2; exit 2 ;;
esac
[ -f data/kjv.txt ] || { echo "data/kjv.txt missing (bash scripts/prepare_data.sh)" >&2; exit 2; }
peak_setting=${PEAK_TFLOPS:-0}
profile=${PROFILE:-1}
out=out/bench_gpu_vs_pytorch
mkdir -p "$out"
# --layers 12 ... -> --model.layers=12 ... (batch is train.batch)
lrkit_shape=()
for ((i = 0; i < ${#shape[@]}; i += 2)); do
  key=${shape[i]#--}
  [ "$key" = batch ] && lrkit_shape+=("--train.batch=${shape[i + 1]}") || lrkit_shape+=("--model.$key=${shape[i + 1]}")
done
precision=bf16
lrkit_ms() {  # attention form -> median ms/step of the progress windows after the first
  "$LRKIT" train --config configs/quickstart.cfg "${lrkit_shape[@]}" --model.attention="$1" --train.device="$device" \
    --train.precision=$precision --train.steps=$((steps + 10)) --train.log_every=10 --eval.every=0 --train.threads=0 \
    --train.peak_tflops="$peak_setting" --overwrite --out "$out/lrkit_$1" > "$out/lrkit_$1.txt" 2>&1 ||
    { cat "$out/lrkit_$1.txt" >&2; exit 1; }
  grep -E '^step ' "$out/lrkit_$1.txt" | tail -n +2 | sed -E 's/.* ([0-9]+) tok\/s.*/\1/' |
    awk -v tokens="$tokens_per_step" '{print 1000 * tokens / $1}' | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR + 1) / 2)]}'
}
pytorch_ms() {  # loop options -> ms/step
  local line
  line=$("$python" bench/pytorch_loop.py "${shape[@]}" --steps "$steps" --device "$device" --bf16 --threads "$(nproc)" "$@" 2>"$out/pytorch.err") ||
    { cat "$out/pytorch.err" >&2; return 1; }
  echo "$line" | sed -E 's/.*ms_per_step=([0-9.]+).*/\1/'
}
tokens_per_step=$(( ${shape[9]} * ${shape[7]} ))   # batch x context
compile_ok=$("$python" -c 'import torch; print(int(hasattr(torch, "compile")))')
timed_rounds() {  # ROUNDS alternations of the five forms, then the table and the ratios
  local -A ms med
  forms=("lrkit explicit" "pytorch explicit" "lrkit" "pytorch fused" "pytorch compiled")
  for ((r = 1; r <= rounds; r++)); do
    ms["lrkit explicit"]+="$(lrkit_ms explicit) "
    if ((r == 1)); then  # "model: 6.29549e+08 FLOPs per token (6P + 12LWT); device NAME, peak 989.4 TFLOP/s"
      model_line=$(grep -m1 '^model: ' "$out/lrkit_explicit.txt")
      flops_per_token=$(echo "$model_line" | sed -E 's/^model: ([^ ]+) FLOPs.*/\1/')
      peak=$(echo "$model_line" | sed -E 's/.*peak ([^ ]+) TFLOP\/s.*/\1/')
    fi
    ms["pytorch explicit"]+="$(pytorch_ms --attention explicit) "
    ms["lrkit"]+="$(lrkit_ms auto) "
    ms["pytorch fused"]+="$(pytorch_ms --attention fused --adamw fused) "
    if [ "$compile_ok" = 1 ]; then ms["pytorch compiled"]+="$(pytorch_ms --attention fused --adamw fused --compile) "; fi
    echo "round $r: $(for f in "${forms[@]}"; do [ -n "${ms[$f]:-}" ] && printf '%s %s ms; ' "$f" "$(echo ${ms[$f]} | awk '{print $NF}')"; done)"
  done
  median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
  echo
  echo "device: $("$python" -c "import torch; print(torch.cuda.get_device_name(0) if '$device' == 'cuda' else 'cpu')"), torch $("$python" -c 'import torch; print(torch.__version__)'), shape ${shape[*]}, $precision, $steps steps x $rounds rounds"
  echo "FLOPs per token $flops_per_token (6P + 12LWT), peak ${peak} TFLOP/s"
  printf '%-18s %10s %12s %7s\n' run ms/step tokens/s MFU
  for f in "${forms[@]}"; do
    [ -n "${ms[$f]:-}" ] || { printf '%-18s %10s\n' "$f" "(no torch.compile in this torch)"; continue; }
    med[$f]=$(median "${ms[$f]}")
    awk -v name="$f" -v m="${med[$f]}" -v t="$tokens_per_step" -v fl="$flops_per_token" -v p="$peak" 'BEGIN {
      tps = t / (m / 1000); mfu = p > 0 ? sprintf("%.1f%%", 100 * fl * tps / (p * 1e12)) : "-";
      printf "%-18s %10.2f %12.0f %7s\n", name, m, tps, mfu }'
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b / a}'; }  # speed ratio from times
  echo "lrkit explicit / pytorch explicit: $(ratio "${med[lrkit explicit]}" "${med[pytorch explicit]}")x"
  echo "lrkit / pytorch fused (eager):      $(ratio "${med[lrkit]}" "${med[pytorch fused]}")x"
  if [ -n "${med[pytorch compiled]:-}" ]; then
    echo "lrkit / pytorch compiled:           $(ratio "${med[lrkit]}" "${med[pytorch compiled]}")x"
  fi
}

case $profile in
  0 | 1) timed_rounds ;;
  only) ;;
  *) echo "PROFILE must be 1, 0 or only" >&2; exit 2 ;;
esac
[ "$profile" != 0 ] || exit 0
# Where the time goes: 3 traced steps of each after 10 untraced ones (the profiler's own cost is in the host
# figures, not the device's kernel times).
echo
"$LRKIT" train --config configs/quickstart.cfg "${lrkit_shape[@]}" --model.attention=auto --train.device="$device" \
  --train.precision=$precision --train.steps=14 --train.profile_from=11 --train.profile_steps=3 --eval.every=0 \
  --train.threads=0 --overwrite --out "$out/lrkit_profiled" > "$out/lrkit_profiled.txt" 2>&1 ||
  { cat "$out/lrkit_profiled.txt" >&2; exit 1; }
traces=("$out/lrkit_profiled/profile/rank0.trace.json")
pytorch_ms --attention fused --adamw fused --steps 10 --profile "$out/pytorch_fused.trace.json" > /dev/null
traces+=("$out/pytorch_fused.trace.json")
if [ "$compile_ok" = 1 ]; then
  pytorch_ms --attention fused --adamw fused --compile --steps 10 --profile "$out/pytorch_compiled.trace.json" > /dev/null
  traces+=("$out/pytorch_compiled.trace.json")
fi
echo "traces: [1] lrkit, [2] pytorch fused (eager)$([ "$compile_ok" = 1 ] && echo ", [3] pytorch compiled")"
"$python" bench/trace_summary.py "${traces[@]}"
exit 0
