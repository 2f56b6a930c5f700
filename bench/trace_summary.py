#!/usr/bin/env python3
"""Where a training step's time goes, from profiler traces, side by side.

usage: trace_summary.py TRACE [TRACE...] [--top N]

Reads Chrome trace-event JSON: lrkit's (`--train.profile_steps`, in
RUN/profile/rank<r>.trace.json), torch.profiler's export_chrome_trace (Kineto's
format, with "cat"), and the list that torch 1.13 without Kineto exports.
Steps are the host annotations named lrkit.step (lrkit) and loop.step
(bench/pytorch_loop.py --profile); every figure is per step, averaged over the traced
steps. For each trace it prints:
  - wall time per step, the host time of each annotated phase;
  - host operators per step: top-level (what the program dispatched) and all;
  - device (where the trace has kernels): kernels per step, busy time per step
    (the union of kernel, copy and memset intervals) and idle time within the
    steps;
  - time per step by kind of work (GEMMs, attention, elementwise, norms, ...):
    device time where there are kernels, else the operators' self time on the
    host; then the names that differ most between the first trace and each other.
Standard library only: it runs under any python3.
"""
import argparse
import json
import re
import sys
from collections import defaultdict

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
ANNOTATION_CATS = {"user_annotation"}
# Not every name ending in ".step": torch 2.x's Kineto also exports the optimizer's own range,
# "Optimizer.step#AdamW.step", as a user annotation (counted as steps, it halved every per-step figure of the loop).
STEP_NAMES = {"lrkit.step", "loop.step"}

# (kind, pattern over a kernel's or operator's name), first match wins.
KINDS = [
    ("copy / memset", r"memcpy|memset|^aten::(copy_|to|_to_copy|clone|contiguous|cat|stack|fill_|zero_|zeros)$"),
    ("optimizer (AdamW)", r"adam|^aten::(_fused_adamw_?|addcdiv_|addcmul_|lerp_)$"),
    ("multi-tensor (foreach)", r"foreach|multi_tensor_apply|multitensorapply"),
    ("attention", r"flash|fmha|attention|sdpa|_efficient_attention|^aten::(softmax|_softmax|_softmax_backward_data|masked_fill)"),
    ("GEMM (matmul)", r"gemm|cutlass|xmma|sm\d+_|cublas|nvjet|^aten::(mm|bmm|addmm|matmul|linear|baddbmm)$"),
    ("layer norm", r"layer_norm|layernorm"),
    ("loss (log-softmax, NLL)", r"log_softmax|nll_loss|cross_entropy"),
    ("GELU", r"gelu"),
    ("embedding / indexing", r"embedding|index|gather|scatter"),
    ("reduction (sum, mean, norm)", r"reduce|^aten::(sum|mean|norm|linalg_vector_norm|max|min|amax)$"),
    ("compiled (triton)", r"^triton_"),
    ("elementwise", r"elementwise|vectorized|unrolled|^aten::(add|add_|mul|mul_|div|div_|sub|pow|sqrt|neg|where|clamp\w*|reciprocal|abs)$"),
]
KIND_PATTERNS = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in KINDS]


def kind_of(name):
    for kind, pattern in KIND_PATTERNS:
        if pattern.search(name):
            return kind
    return "other"


def load_events(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"trace_summary: cannot read trace '{path}': {e}")
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        sys.exit(f"trace_summary: '{path}' is not a Chrome trace (no traceEvents list)")
    out = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e or "dur" not in e:
            continue
        name = str(e.get("name", ""))
        cat = e.get("cat")
        if cat is None:  # torch 1.13 without Kineto: host operators and record_function ranges only
            cat = "user_annotation" if re.match(r"^[a-z_]+\.", name) and not name.startswith("aten::") else "cpu_op"
        out.append({"name": name, "cat": cat, "ts": float(e["ts"]), "dur": float(e["dur"]),
                    "track": (str(e.get("pid")), str(e.get("tid")))})
    return out


def nesting(events):
    """For host operators: (top-level ones, self time of each) by containment on the same thread."""
    by_track = defaultdict(list)
    for e in events:
        by_track[e["track"]].append(e)
    top, self_time = [], {}
    for track in by_track.values():
        track.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in track:
            end = e["ts"] + e["dur"]
            while stack and stack[-1]["ts"] + stack[-1]["dur"] < end - 1e-6:
                stack.pop()
            self_time[id(e)] = e["dur"]
            if stack:
                self_time[id(stack[-1])] -= e["dur"]
            else:
                top.append(e)
            stack.append(e)
    return top, self_time


def union_length(intervals):
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def summarize(path):
    events = load_events(path)
    annotations = [e for e in events if e["cat"] in ANNOTATION_CATS]
    steps = [e for e in annotations if e["name"] in STEP_NAMES]
    if not steps:
        sys.exit(f"trace_summary: '{path}' has no step annotations (lrkit.step or loop.step): was it written by lrkit "
                 "--train.profile_steps or bench/pytorch_loop.py --profile?")
    n = len(steps)
    first, last = min(s["ts"] for s in steps), max(s["ts"] + s["dur"] for s in steps)
    inside = lambda e: e["ts"] >= first - 1e-6 and e["ts"] < last

    step_ids = {id(s) for s in steps}
    phases = defaultdict(float)
    for e in annotations:
        if id(e) in step_ids or not inside(e):
            continue
        phases[e["name"]] += e["dur"] / n / 1000

    host_ops = [e for e in events if e["cat"] == "cpu_op" and inside(e)]
    top, self_time = nesting(host_ops)
    device = [e for e in events if e["cat"] in DEVICE_CATS]
    # Device work a step launched may end after its host annotation: take the kernels from the first step's start on.
    device = [e for e in device if e["ts"] >= first - 1e-6]
    # Device time where the trace has kernels, else the host operators' self time.
    timed = [(e, e["dur"]) for e in device] if device else [(e, self_time[id(e)]) for e in host_ops]
    by_kind, by_name = defaultdict(float), defaultdict(lambda: [0.0, 0])
    for e, us in timed:
        t = us / n / 1000
        by_kind[kind_of(e["name"])] += t
        entry = by_name[e["name"]]
        entry[0] += t
        entry[1] += 1
    kernels = [e for e in device if e["cat"] == "kernel"]
    busy = union_length([(e["ts"], e["ts"] + e["dur"]) for e in device]) / n / 1000 if device else None
    wall = sum(s["dur"] for s in steps) / n / 1000
    return {
        "path": path, "steps": n, "wall": wall, "phases": dict(phases),
        "top_ops": len(top) / n, "all_ops": len(host_ops) / n,
        "kernels": len(kernels) / n if device else None, "busy": busy,
        "idle": wall - busy if busy is not None else None,
        "by_kind": dict(by_kind), "by_name": {k: (v[0], v[1] / n) for k, v in by_name.items()},
        "device": bool(device),
    }


def fmt(value, spec=".2f"):
    return "-" if value is None else format(value, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("traces", nargs="+")
    p.add_argument("--top", type=int, default=12, help="names listed in the differences (default 12)")
    a = p.parse_args()
    runs = [summarize(t) for t in a.traces]
    labels = [f"[{i + 1}]" for i in range(len(runs))]
    for label, r in zip(labels, runs):
        print(f"{label} {r['path']}: {r['steps']} steps, "
              f"{'device kernels' if r['device'] else 'host operators only (no device events in this trace)'}")
    width = 10

    def row(title, values, spec=".2f"):
        print(f"{title:<34}" + "".join(f"{fmt(v, spec):>{width}}" for v in values))

    print()
    print(f"{'per step':<34}" + "".join(f"{l:>{width}}" for l in labels))
    row("wall ms", [r["wall"] for r in runs])
    row("host operators, top-level", [r["top_ops"] for r in runs], ".0f")
    row("host operators, all", [r["all_ops"] for r in runs], ".0f")
    row("device kernels", [r["kernels"] for r in runs], ".0f")
    row("device busy ms", [r["busy"] for r in runs])
    row("device idle ms (wall - busy)", [r["idle"] for r in runs])
    print()
    print(f"{'host ms per phase':<34}" + "".join(f"{l:>{width}}" for l in labels))
    for phase in sorted({k for r in runs for k in r["phases"]}):
        row(phase, [r["phases"].get(phase) for r in runs])
    print()
    basis = "device ms" if all(r["device"] for r in runs) else "ms (device time, or host self time without kernels)"
    print(f"{'by kind, ' + basis:<34}" + "".join(f"{l:>{width}}" for l in labels))
    kinds = sorted({k for r in runs for k in r["by_kind"]}, key=lambda k: -max(r["by_kind"].get(k, 0) for r in runs))
    for kind in kinds:
        row(kind, [r["by_kind"].get(kind, 0.0) for r in runs])
    for label, r in zip(labels[1:], runs[1:]):
        base = runs[0]
        print()
        print(f"largest differences, {label} - [1] (ms per step; calls per step)")
        names = set(base["by_name"]) | set(r["by_name"])
        diffs = sorted(names, key=lambda k: -abs(r["by_name"].get(k, (0, 0))[0] - base["by_name"].get(k, (0, 0))[0]))
        for name in diffs[:a.top]:
            t1, c1 = base["by_name"].get(name, (0.0, 0))
            t2, c2 = r["by_name"].get(name, (0.0, 0))
            short = name if len(name) <= 70 else name[:67] + "..."
            print(f"  {t2 - t1:+8.3f} ms  {c1:6.1f} -> {c2:6.1f} calls  {short}")


if __name__ == "__main__":
    main()
