"""A DDP training loop timed per step, with or without lrkit.torch.DispersionHook.
Run by bench/dispersion_hook_overhead.sh under torchrun; rank 0 prints ms_per_step=<median>."""
import statistics
import sys
import time

import torch
import torch.distributed as dist

import lrkit.torch as lt

mode, steps = sys.argv[1], int(sys.argv[2])  # mode: plain | torch_python_hook | hook | exact
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.set_num_threads(1)
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
model = torch.nn.Sequential(torch.nn.Embedding(256, 128), torch.nn.TransformerEncoder(layer, 2), torch.nn.Linear(128, 256))
ddp = torch.nn.parallel.DistributedDataParallel(model)
hook = None
if mode == "torch_python_hook":  # PyTorch's own all-reduce hook: what any Python comm hook costs
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
elif mode != "plain":
    hook = lt.DispersionHook(exact_pairwise=mode == "exact")
    ddp.register_comm_hook(None, hook)
optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(rank)
times = []
for step in range(steps):
    x = torch.randint(0, 256, (16, 64), generator=g)
    start = time.perf_counter()
    loss = torch.nn.functional.cross_entropy(ddp(x).flatten(0, 1), x.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if hook:
        hook.step(loss)
    times.append(time.perf_counter() - start)
if rank == 0:
    print(f"ms_per_step={1000 * statistics.median(times[10:]):.2f}")
dist.destroy_process_group()
