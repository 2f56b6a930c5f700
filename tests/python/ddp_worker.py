"""One torchrun worker of the distributed tests (test_distributed.py): the
DispersionHook against brute force, HDET against the plain loop and its
parameter average against brute force, on the device of worker_setup. Writes
OUT/rank<r>.json."""
import json
import os
import sys

import torch
import torch.distributed as dist

import lrkit.torch as lt
from worker_setup import DEVICE, start

out = sys.argv[1]
log_name = sys.argv[2] if len(sys.argv) > 2 else "ranks.jsonl"  # .jsonl or .h5
rank, world = start()


def make_model():
    torch.manual_seed(0)  # the same initial weights on every rank
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 1)).to(DEVICE)


def batch(step):
    g = torch.Generator().manual_seed(1000 * step + rank)  # each rank its own data
    x = torch.randn(12, 16, generator=g).to(DEVICE)
    return x, x.sum(1, keepdim=True).sin()


def flat_grad(module):
    return torch.cat([p.grad.flatten() for p in module.parameters()])


# 1. The hook against brute force (every rank's local gradient gathered).
model = make_model()
reference = make_model()
ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.001)  # several buckets
hook = lt.DispersionHook(log=os.path.join(out, log_name), exact_pairwise=True, flush_every=3)
ddp.register_comm_hook(None, hook)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
hook_rows, brute_rows = [], []
for step in range(8):
    x, y = batch(step)
    reference.load_state_dict(model.state_dict())
    reference.zero_grad()
    torch.nn.functional.mse_loss(reference(x), y).backward()
    local = flat_grad(reference).double()
    every = [torch.empty_like(local) for _ in range(world)]
    dist.all_gather(every, local)
    g = torch.stack(every)
    mean = g.mean(0)
    units = g / g.norm(dim=1, keepdim=True)
    pairwise = [(units[i] @ units[j]).item() for i in range(world) for j in range(world) if i < j]
    brute_rows.append({"grad_norm": g.norm(dim=1).tolist(), "cos_to_mean": (g @ mean / (g.norm(dim=1) * mean.norm())).tolist(),
                       "mean_grad_norm": mean.norm().item(), "cos_pairwise": sum(pairwise) / len(pairwise) if pairwise else float("nan")})
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    optimizer.step()
    metrics = hook.step(loss)
    all_losses = [torch.zeros(1, device=DEVICE) for _ in range(world)]
    dist.all_gather(all_losses, loss.detach().reshape(1))
    brute_rows[-1]["loss"] = [v.item() for v in all_losses]
    hook_rows.append(metrics)
hook.close()

# 1b. The same loop with step(loss, metrics=False), its rows written at flush_every and close: the same log.
model = make_model()
ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.001)
lazy_log = os.path.join(out, "lazy_" + log_name)
lazy = lt.DispersionHook(log=lazy_log, exact_pairwise=True, flush_every=3)
ddp.register_comm_hook(None, lazy)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
lazy_returns, lazy_rows_written = [], []
for step in range(8):
    x, y = batch(step)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    optimizer.step()
    lazy_returns.append(lazy.step(loss, metrics=False))
    if rank == 0 and log_name.endswith(".jsonl"):
        lazy_rows_written.append(sum(1 for _ in open(lazy_log)) // world)
lazy.close()


# 2. HDET: alpha = 0 against the plain loop bit for bit; alpha > 0 spreads and averages.
def run(make_controller, steps=9):
    model = make_model()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1.0)
    controller = make_controller(optimizer, model)
    rates, weights = [], []
    for step in range(steps):
        rates.append(optimizer.param_groups[0]["lr"])
        x, y = batch(step)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        optimizer.step()
        controller.step(loss) if isinstance(controller, lt.HDET) else controller.step()
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    return rates, weights, controller


spec, total = "wsd(peak=1e-2, warmup=2, decay=30%)", 9
plain_rates, plain_weights, _ = run(lambda o, m: lt.LRScheduler(o, spec, total))
zero_rates, zero_weights, _ = run(lambda o, m: lt.HDET(o, m, spec, total, alpha=0.0, sync_every=3))
spread_rates, spread_weights, spread = run(lambda o, m: lt.HDET(o, m, spec, total, alpha=0.3, sync_every=3, sigma=0.01))
after_sync = spread_weights[5]  # after the step that ends the second window (steps 3..5)
everyone = [torch.empty_like(after_sync) for _ in range(world)]
dist.all_gather(everyone, after_sync)
between = spread_weights[4]
everyone_between = [torch.empty_like(between) for _ in range(world)]
dist.all_gather(everyone_between, between)


# 3. HDET's parameter average against brute force: buckets of a few tensors (a 160-byte limit), two dtypes.
import lrkit.hdet  # noqa: E402

lrkit.hdet._BUCKET_BYTES = 160
torch.manual_seed(10 + rank)  # every rank other parameters
mixed = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Linear(7, 3).double(), torch.nn.Linear(3, 2)).to(DEVICE)
averaging = lt.HDET(torch.optim.SGD(mixed.parameters(), lr=0.1), mixed, "constant(peak=0.1)", 4, alpha=0.2)
before = [p.detach().clone() for p in mixed.parameters()]
averaging._average_parameters()
average_errors = []
for p, mine in zip(mixed.parameters(), before):
    every = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(every, mine)
    brute = torch.stack([e.double() for e in every]).mean(0)
    average_errors.append([str(p.dtype), (p.detach().double() - brute).abs().max().item()])
buckets = [[tuple(p.shape) for p in bucket] for bucket in lrkit.hdet._buckets(list(mixed.parameters()), 160)]

with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"hook": hook_rows, "brute": brute_rows,
               "hdet_zero_equal": plain_rates == zero_rates and all(torch.equal(a, b) for a, b in zip(plain_weights, zero_weights)),
               "spread_rates": spread_rates, "base_rates": [spread.base_lr()],
               "synced_equal": all(torch.equal(w, everyone[0]) for w in everyone),
               "between_equal": all(torch.equal(w, everyone_between[0]) for w in everyone_between),
               "hdet_state": spread.state_dict()["state"]["syncs"], "average_errors": average_errors,
               "buckets": buckets, "lazy_returns": lazy_returns, "lazy_rows_written": lazy_rows_written}, f)
dist.destroy_process_group()
