"""One torchrun worker of test_distributed.py's HDET spread test: the learning
rate, weight decay (a number of the optimizer's parameter groups) and a dropout
value (outside the optimizer) spread across the ranks, through syncs, and a
resume from a mid-run checkpoint against the uninterrupted run; then the
refused settings, on the device of worker_setup. Writes OUT/rank<r>.json."""
import json
import os
import sys

import torch
import torch.distributed as dist

import lrkit.torch as lt
from worker_setup import DEVICE, start

out = sys.argv[1]
rank, _ = start()
SPEC, STEPS = "constant(peak=0.01)", 12
SPREAD = {"weight_decay": 0.5, "dropout": dict(alpha=0.4, base=0.1, upper=0.12)}


def make():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(DEVICE)
    decayed = [p for p in model.parameters() if p.dim() > 1]
    others = [p for p in model.parameters() if p.dim() <= 1]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": others, "weight_decay": 0.0}], lr=1.0)
    return model, optimizer


def train(model, optimizer, hdet, steps, rows):
    for _ in range(steps):
        step = hdet.state.step
        rows.append({"lr": optimizer.param_groups[0]["lr"], "wd": [g["weight_decay"] for g in optimizer.param_groups],
                     "dropout": hdet.value("dropout"), "wd_base": hdet.base_value("weight_decay"),
                     "permutations": [hdet.state.permutation] + [e.state.permutation for e in hdet.spread]})
        g = torch.Generator().manual_seed(100 * step + rank)
        x = torch.randn(8, 4, generator=g).to(DEVICE)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True).sin()) * (1 + rank)  # ranks differ
        loss.backward()
        optimizer.step()
        hdet.step(loss)


model, optimizer = make()
whole = []
train(model, optimizer, lt.HDET(optimizer, model, SPEC, STEPS, alpha=0.2, sync_every=3, sigma=0.01, spread=SPREAD), STEPS, whole)

model, optimizer = make()
resumed = []
hdet = lt.HDET(optimizer, model, SPEC, STEPS, alpha=0.2, sync_every=3, sigma=0.01, spread=SPREAD)
train(model, optimizer, hdet, 7, resumed)
saved = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "hdet": hdet.state_dict()}
model, optimizer = make()
model.load_state_dict(saved["model"])
optimizer.load_state_dict(saved["optimizer"])  # its groups hold this rank's spread weight decay and the initial one
hdet = lt.HDET(optimizer, model, SPEC, STEPS, alpha=0.2, sync_every=3, sigma=0.01, spread=SPREAD)
hdet.load_state_dict(saved["hdet"])
train(model, optimizer, hdet, STEPS - 7, resumed)

errors = {}
for case, spread in {"tuple": {"betas": 0.1}, "no_base": {"label_smoothing": 0.5}, "base_for_group": {"weight_decay": dict(alpha=0.5, base=0.2)},
                     "lr": {"lr": 0.1}, "alpha": {"weight_decay": 1.5}, "unknown": {"weight_decay": dict(alpha=0.1, hi=2)},
                     "zero": {"eps": 0.1}, "not_a_dict": ["weight_decay"]}.items():
    model, optimizer = make()
    if case == "zero":
        for group in optimizer.param_groups:
            group["eps"] = 0.0
    try:
        lt.HDET(optimizer, model, SPEC, STEPS, spread=spread)
        errors[case] = None
    except (ValueError, TypeError) as e:
        errors[case] = f"{type(e).__name__}: {e}"
try:
    model, optimizer = make()
    lt.HDET(optimizer, model, SPEC, STEPS, spread={"weight_decay": 0.5}).load_state_dict(saved["hdet"])
except ValueError as e:
    errors["load_other_spread"] = str(e)
try:
    hdet.value("momentum")
except KeyError as e:
    errors["value_of_unspread"] = str(e)

with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"whole": whole, "resumed": resumed, "errors": errors}, f)
dist.destroy_process_group()
