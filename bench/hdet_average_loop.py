"""Times lrkit.torch.HDET's parameter average (the ranks' mean, at every sync)
against one all-reduce per parameter tensor (what it did before), alternated in
one process. Run by bench/hdet_average.sh under torchrun; rank 0 prints
per_tensor_ms=<median> bucketed_ms=<median>."""
import statistics
import sys
import time

import torch
import torch.distributed as dist

import lrkit.torch as lt

rounds, layers, width = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.set_num_threads(1)
torch.manual_seed(rank)  # every rank other parameters, as between syncs
layer = torch.nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.0, batch_first=True)
model = torch.nn.Sequential(torch.nn.Embedding(256, width), torch.nn.TransformerEncoder(layer, layers),
                            torch.nn.Linear(width, 256))
hdet = lt.HDET(torch.optim.SGD(model.parameters(), lr=0.1), model, "constant(peak=0.1)", 10, alpha=0.1)


def per_tensor():
    with torch.no_grad():
        for p in model.parameters():
            dist.all_reduce(p.data)
            p.data.div_(world)


times = {"per_tensor": [], "bucketed": []}
for _ in range(rounds):
    for name, average in (("per_tensor", per_tensor), ("bucketed", hdet._average_parameters)):
        dist.barrier()
        start = time.perf_counter()
        average()
        times[name].append(time.perf_counter() - start)
if rank == 0:
    tensors = len(list(model.parameters()))
    elements = sum(p.numel() for p in model.parameters())
    print(f"tensors={tensors} parameters={elements} " +
          " ".join(f"{name}_ms={1000 * statistics.median(t):.2f}" for name, t in times.items()))
dist.destroy_process_group()
