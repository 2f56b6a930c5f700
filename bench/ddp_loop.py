"""A DDP training loop timed per step, plain or with one of lrkit's PyTorch tools:
the DispersionHook (hook, exact; hook_lazy: step(loss, metrics=False), which
waits for nothing), SampleReweighting (reweight), SpikeGuard
(spike_guard), LRScheduler (lr_scheduler) or HDET (hdet; hdet_every_step reads
hdet.state after every step, which hands the losses to the host every step, as
HDET did before it kept them on the device until a sync). Run by
bench/ddp_overhead.sh under torchrun; rank 0 prints ms_per_step=<median>.
DEVICE=cuda trains on the GPU (NCCL with a GPU per worker, Gloo where workers
share one); a step's time is then the run's wall time per step, the GPU
drained at both ends, since a step that does not wait for the device returns
before its work is done."""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

import lrkit.torch as lt

mode, steps = sys.argv[1], int(sys.argv[2])  # plain | torch_python_hook | hook | hook_lazy | exact | reweight | spike_guard | lr_scheduler | hdet | hdet_every_step
device = torch.device(os.environ.get("DEVICE", "cpu"))
gpus = torch.cuda.device_count() if device.type == "cuda" else 0
if gpus:
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % gpus)
    torch.cuda.set_device(device)
dist.init_process_group("nccl" if gpus >= int(os.environ["LOCAL_WORLD_SIZE"]) else "gloo")
rank = dist.get_rank()
torch.set_num_threads(1)
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
model = torch.nn.Sequential(torch.nn.Embedding(256, 128), torch.nn.TransformerEncoder(layer, 2),
                            torch.nn.Linear(128, 256)).to(device)
ddp = torch.nn.parallel.DistributedDataParallel(model)
hook = None
if mode == "torch_python_hook":  # PyTorch's own all-reduce hook: what any Python comm hook costs
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
elif mode in ("hook", "hook_lazy", "exact"):
    hook = lt.DispersionHook(exact_pairwise=mode == "exact")
    ddp.register_comm_hook(None, hook)
reweighting = lt.SampleReweighting("linupper", strength=0.4) if mode == "reweight" else None
guard = lt.SpikeGuard(loss_z=6, grad_z=6, window=128) if mode == "spike_guard" else None
optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
spec = "wsd(peak=1e-3, warmup=5, decay=20%)"
scheduler = lt.LRScheduler(optimizer, spec, steps) if mode == "lr_scheduler" else None
hdet = lt.HDET(optimizer, model, spec, steps, sync_every=20) if mode.startswith("hdet") else None
g = torch.Generator().manual_seed(rank)
batches = [torch.randint(0, 256, (16, 64), generator=g).to(device) for _ in range(steps)]
times = []
for step in range(steps):
    x = batches[step]
    if step == 10 and gpus:
        torch.cuda.synchronize()
        started = time.perf_counter()
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
        hook.step(loss, metrics=mode != "hook_lazy")
    if scheduler:
        scheduler.step()
    if hdet:
        hdet.step(loss)
        if mode == "hdet_every_step":
            hdet.state  # noqa: B018 (the read hands the pending losses over)
    times.append(time.perf_counter() - start)
if gpus:
    torch.cuda.synchronize()
    per_step = (time.perf_counter() - started) / (steps - 10)
else:
    per_step = statistics.median(times[10:])
if rank == 0:
    print(f"ms_per_step={1000 * per_step:.2f}")
dist.destroy_process_group()
