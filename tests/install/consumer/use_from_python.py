"""The installed Python package, from the install prefix: a schedule and, where
torch is installed, the LRScheduler and the dispersion hook in a five-step DDP
loop over a one-process Gloo group. Prints one line."""
import os
import tempfile

import lrkit

s = lrkit.Schedule("wsd(peak=1e-3, warmup=10, decay=20%, shape=linear)", 100)
line = f"{s(5)} {s(50)} {s(90)}"
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    import torch.distributed as dist

    import lrkit.torch

    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    model = torch.nn.Linear(2, 1)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    hook = lrkit.torch.DispersionHook()
    ddp.register_comm_hook(None, hook)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.5)
    scheduler = lrkit.torch.LRScheduler(optimizer, s.spec, 100)
    for _ in range(5):
        loss = ddp(torch.ones(4, 2)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics = hook.step(loss)
        scheduler.step()
    line += f" {optimizer.param_groups[0]['lr']} {round(metrics['cos_to_mean'][0], 6)}"
    dist.destroy_process_group()
print(line)
