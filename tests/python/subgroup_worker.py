"""One torchrun worker of test_distributed.py's data-parallel subgroups: 4 ranks
in the two groups {0, 2} and {1, 3}, as a model-parallel job's data-parallel
groups are laid out, each running DDP with HDET and the DispersionHook on its
own group, on the device of worker_setup. Writes OUT/rank<r>.json."""
import json
import os
import sys

import torch
import torch.distributed as dist

import lrkit.torch as lt
from worker_setup import DEVICE, start

out = sys.argv[1]
rank, _ = start()
groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]  # every rank creates every group, in the same order
mine = groups[rank % 2]

torch.manual_seed(rank % 2)  # the same initial weights within a group, other weights in the other group
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).to(DEVICE)
ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=mine)
hook = lt.DispersionHook(process_group=mine)
ddp.register_comm_hook(None, hook)
optimizer = torch.optim.SGD(ddp.parameters(), lr=1.0)
hdet = lt.HDET(optimizer, model, "constant(peak=0.05)", 6, alpha=0.3, sync_every=3, process_group=mine)
rates, world_sizes = [], []
for step in range(6):
    rates.append(optimizer.param_groups[0]["lr"])
    g = torch.Generator().manual_seed(100 * step + rank)
    x = torch.randn(10, 8, generator=g).to(DEVICE)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(ddp(x), x.sum(1, keepdim=True).cos())
    loss.backward()
    optimizer.step()
    world_sizes.append(len(hook.step(loss)["grad_norm"]))
    hdet.step(loss)
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"rates": rates, "weights": weights.tolist(), "permutation": list(hdet.state.permutation),
               "syncs": hdet.state.syncs, "hook_world_sizes": world_sizes}, f)
dist.destroy_process_group()
