"""A DDP training loop timed per step, plain or with one of lrkit's PyTorch tools:
the DispersionHook (hook, exact), SampleReweighting (reweight) or SpikeGuard
(spike_guard). Run by bench/ddp_overhead.sh under torchrun; rank 0 prints
ms_per_step=<median>."""
import statistics
import sys
import time

import torch
import torch.distributed as dist

import lrkit.torch as lt

mode, steps = sys.argv[1], int(sys.argv[2])  # plain | torch_python_hook | hook | exact | reweight | spike_guard
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
elif mode in ("hook", "exact"):
    hook = lt.DispersionHook(exact_pairwise=mode == "exact")
    ddp.register_comm_hook(None, hook)
reweighting = lt.SampleReweighting("linupper", strength=0.4) if mode == "reweight" else None
guard = lt.SpikeGuard(loss_z=6, grad_z=6, window=128) if mode == "spike_guard" else None
optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(rank)
times = []
for step in range(steps):
    x = torch.randint(0, 256, (16, 64), generator=g)
    start = time.perf_counter()
    token_losses = torch.nn.functional.cross_entropy(ddp(x).flatten(0, 1), x.flatten(), reduction="none")
    loss = reweighting(token_losses.view(16, 64).mean(1)) if reweighting else token_losses.mean()
    optimizer.zero_grad()
    loss.backward()
    if guard:
        norm = torch.nn.utils.clip_grad_norm_(ddp.parameters(), float("inf"))  # the norm alone, as the plain loop clips nothing
        if guard.check(loss, norm):
            optimizer.step()
    else:
        optimizer.step()
    if hook:
        hook.step(loss)
    times.append(time.perf_counter() - start)
if rank == 0:
    print(f"ms_per_step={1000 * statistics.median(times[10:]):.2f}")
dist.destroy_process_group()
