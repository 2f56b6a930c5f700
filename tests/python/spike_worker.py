"""One torchrun worker of test_spikes.py: SpikeGuard under DDP, where every
rank's loss differs, must take the same decisions on every rank, those of the
ranks' mean loss; on the device of worker_setup. Writes OUT/rank<r>.json."""
import json
import os
import sys

import torch
import torch.distributed as dist

import lrkit.torch as lt
from worker_setup import DEVICE, flat, start

out = sys.argv[1]
rank, _ = start()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(DEVICE)
ddp = torch.nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
guard = lt.SpikeGuard(loss_z=1.0, grad_z=1.0, window=5)
rows = []
for step in range(40):
    g = torch.Generator().manual_seed(100 * step + rank)
    x = (torch.randn(6, 4, generator=g) * (8.0 if step % 9 == 8 else 1.0)).to(DEVICE)  # planted spikes
    loss = torch.nn.functional.mse_loss(ddp(x), x.sum(1, keepdim=True).sin())
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
    applied = guard.check(loss, norm)
    if applied:
        optimizer.step()
    losses = [torch.zeros(1, device=DEVICE) for _ in range(dist.get_world_size())]
    dist.all_gather(losses, loss.detach().reshape(1))
    rows.append({"applied": applied, "outcome": guard.outcome, "loss_z": guard.loss_z, "grad_norm_z": guard.grad_norm_z,
                 "mean_loss": sum(v.item() for v in losses) / len(losses), "norm": norm.item()})
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"rows": rows, "weights": flat(model)}, f)
dist.destroy_process_group()
