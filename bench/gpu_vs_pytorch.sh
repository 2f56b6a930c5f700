#!/usr/bin/env bash
# lrkit against the PyTorch loop a user would write, on one GPU, side by side
# in one invocation (ROUNDS alternations; medians): the same byte GPT, corpus,
# batch, AdamW parameter groups, clipping and bf16 autocast. Forms:
#   lrkit explicit    model.attention=explicit      vs  pytorch explicit (masked scores, torch's default AdamW)
#   lrkit             model.attention=auto (fused)  vs  pytorch fused (SDPA causal + AdamW(fused=True), eager)
#                                                   and pytorch compiled (the same under torch.compile)
#   lrkit fused norm  the same + model.fused_norm=on (lrkit's add + LayerNorm kernel; where the build has it)
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
source bench/lrkit_windows.sh
source bench/medians.sh
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
# Every lrkit run of this script: the shape, the device, bf16, no evaluation.
lrkit_train=("$LRKIT" train --config configs/quickstart.cfg "${lrkit_shape[@]}" --train.device="$device"
             --train.precision=$precision --eval.every=0 --train.threads=0 --overwrite)
lrkit_ms() {  # attention form [model.fused_norm] -> median ms/step of the progress windows after the first
  local name=lrkit_$1_norm_${2:-off}
  # shellcheck disable=SC2046  # lrkit_window_args prints two words
  "${lrkit_train[@]}" --model.attention="$1" --model.fused_norm="${2:-off}" $(lrkit_window_args "$steps") \
    --train.peak_tflops="$peak_setting" --out "$out/$name" > "$out/$name.txt" 2>&1 ||
    { cat "$out/$name.txt" >&2; exit 1; }
  awk -v tokens="$tokens_per_step" -v rate="$(lrkit_window_rate "$out/$name.txt")" 'BEGIN {printf "%.3f", 1000 * tokens / rate}'
}
pytorch_ms() {  # loop options -> ms/step
  local line
  line=$("$python" bench/pytorch_loop.py "${shape[@]}" --steps "$steps" --device "$device" --bf16 --threads "$(nproc)" "$@" 2>"$out/pytorch.err") ||
    { cat "$out/pytorch.err" >&2; return 1; }
  echo "$line" | sed -E 's/.*ms_per_step=([0-9.]+).*/\1/'
}
tokens_per_step=$(( ${shape[9]} * ${shape[7]} ))   # batch x context
compile_ok=$("$python" -c 'import torch; print(int(hasattr(torch, "compile")))')
# lrkit's fused add + LayerNorm: only where this build has the kernel and the run is on CUDA (else refused in one line).
fused_norm_ok=0
"${lrkit_train[@]}" --model.fused_norm=on --train.steps=5 --out "$out/fused_norm_probe" > "$out/fused_norm_probe.txt" 2>&1 &&
  fused_norm_ok=1
timed_rounds() {  # ROUNDS alternations of the five forms, then the table and the ratios
  local -A ms med
  forms=("lrkit explicit" "pytorch explicit" "lrkit" "lrkit fused norm" "pytorch fused" "pytorch compiled")
  for ((r = 1; r <= rounds; r++)); do
    ms["lrkit explicit"]+="$(lrkit_ms explicit) "
    if ((r == 1)); then  # "model: 6.29549e+08 FLOPs per token (6P + 12LWT); device NAME, peak 989.4 TFLOP/s"
      model_line=$(grep -m1 '^model: ' "$out/lrkit_explicit_norm_off.txt")
      flops_per_token=$(echo "$model_line" | sed -E 's/^model: ([^ ]+) FLOPs.*/\1/')
      peak=$(echo "$model_line" | sed -E 's/.*peak ([^ ]+) TFLOP\/s.*/\1/')
    fi
    ms["pytorch explicit"]+="$(pytorch_ms --attention explicit) "
    ms["lrkit"]+="$(lrkit_ms auto) "
    if [ "$fused_norm_ok" = 1 ]; then ms["lrkit fused norm"]+="$(lrkit_ms auto on) "; fi
    ms["pytorch fused"]+="$(pytorch_ms --attention fused --adamw fused) "
    if [ "$compile_ok" = 1 ]; then ms["pytorch compiled"]+="$(pytorch_ms --attention fused --adamw fused --compile) "; fi
    echo "round $r: $(for f in "${forms[@]}"; do [ -n "${ms[$f]:-}" ] && printf '%s %s ms; ' "$f" "$(echo ${ms[$f]} | awk '{print $NF}')"; done)"
  done
  echo
  echo "device: $("$python" -c "import torch; print(torch.cuda.get_device_name(0) if '$device' == 'cuda' else 'cpu')"), torch $("$python" -c 'import torch; print(torch.__version__)'), shape ${shape[*]}, $precision, $steps steps x $rounds rounds"
  echo "FLOPs per token $flops_per_token (6P + 12LWT), peak ${peak} TFLOP/s"
  printf '%-18s %10s %12s %7s\n' run ms/step tokens/s MFU
  for f in "${forms[@]}"; do
    if [ -z "${ms[$f]:-}" ]; then
      [ "$f" = "lrkit fused norm" ] && reason="($(tail -1 "$out/fused_norm_probe.txt"))" || reason="(no torch.compile in this torch)"
      printf '%-18s %s\n' "$f" "$reason"
      continue
    fi
    med[$f]=$(median ${ms[$f]})
    awk -v name="$f" -v m="${med[$f]}" -v t="$tokens_per_step" -v fl="$flops_per_token" -v p="$peak" 'BEGIN {
      tps = t / (m / 1000); mfu = p > 0 ? sprintf("%.1f%%", 100 * fl * tps / (p * 1e12)) : "-";
      printf "%-18s %10.2f %12.0f %7s\n", name, m, tps, mfu }'
  done
  speed_ratio() { ratio "$2" "$1"; }  # A's speed over B's, from their times
  echo "lrkit explicit / pytorch explicit: $(speed_ratio "${med[lrkit explicit]}" "${med[pytorch explicit]}")x"
  echo "lrkit / pytorch fused (eager):      $(speed_ratio "${med[lrkit]}" "${med[pytorch fused]}")x"
  if [ -n "${med[pytorch compiled]:-}" ]; then
    echo "lrkit / pytorch compiled:           $(speed_ratio "${med[lrkit]}" "${med[pytorch compiled]}")x"
  fi
  if [ -n "${med[lrkit fused norm]:-}" ]; then
    echo "lrkit fused norm / pytorch fused:   $(speed_ratio "${med[lrkit fused norm]}" "${med[pytorch fused]}")x"
    [ -z "${med[pytorch compiled]:-}" ] ||
      echo "lrkit fused norm / pytorch compiled: $(speed_ratio "${med[lrkit fused norm]}" "${med[pytorch compiled]}")x"
    echo "lrkit fused norm / lrkit:           $(speed_ratio "${med[lrkit fused norm]}" "${med[lrkit]}")x"
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
lrkit_trace() {  # run directory, model.fused_norm -> the trace of 3 steps
  "${lrkit_train[@]}" --model.attention=auto --model.fused_norm="$2" --train.steps=14 --train.profile_from=11 \
    --train.profile_steps=3 --out "$out/$1" > "$out/$1.txt" 2>&1 || { cat "$out/$1.txt" >&2; exit 1; }
  traces+=("$out/$1/profile/rank0.trace.json")
}
traces=()
names="[1] lrkit, [2] pytorch fused (eager)"
lrkit_trace lrkit_profiled off
pytorch_ms --attention fused --adamw fused --steps 10 --profile "$out/pytorch_fused.trace.json" > /dev/null
traces+=("$out/pytorch_fused.trace.json")
if [ "$compile_ok" = 1 ]; then
  pytorch_ms --attention fused --adamw fused --compile --steps 10 --profile "$out/pytorch_compiled.trace.json" > /dev/null
  traces+=("$out/pytorch_compiled.trace.json")
  names+=", [3] pytorch compiled"
fi
if [ "$fused_norm_ok" = 1 ]; then
  lrkit_trace lrkit_fused_norm_profiled on
  names+=", [${#traces[@]}] lrkit fused norm"
fi
echo "traces: $names"
"$python" bench/trace_summary.py "${traces[@]}"
exit 0
