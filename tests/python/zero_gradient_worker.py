"""One torchrun worker of test_distributed.py's zero-gradient test: the DispersionHook with the exact pairwise cosine
where one rank's gradient is exactly zero at step 1 (its loss times 0), on the device of worker_setup. Writes
OUT/rank<r>.json."""
import json
import os
import sys

import torch

import lrkit.torch as lt
from worker_setup import DEVICE, start

out = sys.argv[1]
rank, _ = start()
torch.manual_seed(0)
model = torch.nn.Linear(4, 1).to(DEVICE)
ddp = torch.nn.parallel.DistributedDataParallel(model)
hook = lt.DispersionHook(exact_pairwise=True)
ddp.register_comm_hook(None, hook)
rows = []
for step in range(4):
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(10 * step + rank)).to(DEVICE)
    loss = ddp(x).pow(2).mean() * (0.0 if (step == 1 and rank == 1) else 1.0)
    loss.backward()
    metrics = hook.step(loss)
    rows.append({key: metrics[key] for key in ("cos_pairwise", "grad_norm", "cos_to_mean")})
    model.zero_grad()
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump(rows, f)
