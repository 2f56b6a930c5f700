#!/usr/bin/env bash
# bench/trace_summary.py on real traces: lrkit's (--train.profile_steps) beside
# the PyTorch loop's (bench/pytorch_loop.py --profile) of the same tiny model.
# It must read both, find their steps and phases, count the same linear layers
# (one addmm each), and refuse a trace without step annotations by name.
# usage: trace_summary_test.sh LRKIT SOURCE_DIR SCRATCH
set -euo pipefail
lrkit=$1
source_dir=$2
scratch=$3
source "$source_dir/scripts/find_python.sh"
python=$(python_with torch) || { echo "skipped: no python3 that imports torch"; exit 77; }
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "FAIL: $*"; exit 1; }
for i in $(seq 1 400); do echo "And God said, Let there be light: and there was light. $i"; done >"$scratch/corpus.txt"
shape=(--model.layers=2 --model.heads=2 --model.width=32 --model.context=32 --train.batch=4)
"$lrkit" train "${shape[@]}" --data.path="$scratch/corpus.txt" --train.steps=8 --train.threads=1 --eval.every=0 \
  --eval.batches=1 --train.profile_steps=3 --train.profile_from=4 --out "$scratch/run" >"$scratch/lrkit.txt" 2>&1 ||
  { cat "$scratch/lrkit.txt"; fail "lrkit train with a profile window"; }
lrkit_trace="$scratch/run/profile/rank0.trace.json"
"$python" -c "import json, sys; json.load(open(sys.argv[1]))" "$lrkit_trace" || fail "lrkit's trace is not valid JSON"
"$python" "$source_dir/bench/pytorch_loop.py" --data "$scratch/corpus.txt" --layers 2 --heads 2 --width 32 --context 32 \
  --batch 4 --steps 10 --profile "$scratch/pytorch.json" --profile-steps 3 >"$scratch/pytorch.txt" 2>&1 ||
  { cat "$scratch/pytorch.txt"; fail "pytorch_loop.py --profile"; }

summary=$("$python" "$source_dir/bench/trace_summary.py" "$lrkit_trace" "$scratch/pytorch.json") || fail "trace_summary: $summary"
echo "$summary"
echo "$summary" | grep -q "^\[1\] .*rank0.trace.json: 3 steps" || fail "lrkit's 3 traced steps not found"
echo "$summary" | grep -q "^\[2\] .*pytorch.json: 3 steps" || fail "the loop's 3 traced steps not found"
for phase in lrkit.forward_backward lrkit.optimizer loop.forward_backward loop.optimizer; do
  echo "$summary" | grep -q "^$phase " || fail "phase $phase missing"
done
echo "$summary" | grep -q "^GEMM (matmul) " || fail "no GEMM row"
echo "$summary" | grep -q "^largest differences, \[2\] - \[1\]" || fail "no differences section"
# Both run each linear layer as one addmm with its bias: 4 per block, 2 blocks, 3 steps.
count_addmm='import json, sys
d = json.load(open(sys.argv[1]))
events = d["traceEvents"] if isinstance(d, dict) else d
print(sum(1 for e in events if e.get("name") == "aten::addmm"))'
for trace in "$lrkit_trace" "$scratch/pytorch.json"; do
  n=$("$python" -c "$count_addmm" "$trace")
  [ "$n" = 24 ] || fail "$trace: $n addmm calls in 3 steps, not 24"
done
# torch 2.x's Kineto exports the optimizer's own range as a user annotation, "Optimizer.step#AdamW.step" (counted as
# steps, it halved every per-step figure of the loop): added to the loop's trace, still 3 steps, the same figures.
"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
events = d["traceEvents"] if isinstance(d, dict) else d
events += [dict(e, name="Optimizer.step#AdamW.step", cat="user_annotation") for e in events if e.get("name") == "loop.optimizer"]
json.dump(d, open(sys.argv[2], "w"))' "$scratch/pytorch.json" "$scratch/pytorch_optimizer_range.json"
both=$("$python" "$source_dir/bench/trace_summary.py" "$scratch/pytorch.json" "$scratch/pytorch_optimizer_range.json") ||
  fail "trace_summary with the optimizer's range: $both"
echo "$both" | grep -q "^\[2\] .*pytorch_optimizer_range.json: 3 steps" || fail "the optimizer's range counted as a step: $both"
echo "$both" | grep -E "^(wall ms|host operators, all|device kernels|loop.forward_backward) " |
  awk '$(NF - 1) != $NF {bad = 1} END {exit bad}' || fail "per-step figures changed by the optimizer's range: $both"
echo '{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 0, "dur": 1}]}' >"$scratch/no_steps.json"
out=$("$python" "$source_dir/bench/trace_summary.py" "$scratch/no_steps.json" 2>&1) && fail "a trace without steps was accepted"
echo "$out" | grep -q "no_steps.json' has no step annotations" || fail "unclear refusal: $out"
echo "not json" >"$scratch/broken.json"
out=$("$python" "$source_dir/bench/trace_summary.py" "$scratch/broken.json" 2>&1) && fail "a broken trace was accepted"
echo "$out" | grep -q "cannot read trace '.*broken.json'" || fail "unclear refusal: $out"
echo "trace_summary: ok"
