"""One torchrun worker of test_torch_scheduler.py: GradNormRecorder over gradients sharded across the ranks, as
FSDP holds them, must record the norms of the whole gradient; on the device of worker_setup. Writes
OUT/rank<r>.json."""
import json
import sys

import torch
import torch.distributed as dist

import lrkit.torch as lt
from worker_setup import DEVICE, start

out = sys.argv[1]
rank, world = start()
whole = [torch.nn.Parameter(torch.zeros(shape, dtype=torch.float64, device=DEVICE)) for shape in ((5, 3), (7,), (2,))]
# This rank's shard of each parameter: its piece of the flattened tensor, as FSDP's flat parameters cut them (the
# 2-element one has no piece on the last rank of three), and the last parameter on rank 0 alone.
pieces = [list(p.detach().flatten().chunk(world)) for p in whole]
shards = [torch.nn.Parameter(piece[rank].clone()) for piece in pieces[:2] if rank < len(piece)]
if rank == 0:
    shards.append(torch.nn.Parameter(whole[2].detach().clone()))
sharded = lt.GradNormRecorder(shards, shard_group=dist.group.WORLD)
reference = lt.GradNormRecorder(whole)
for step in range(4):
    g = torch.Generator().manual_seed(10 + step)
    grads = [torch.randn(p.shape, generator=g, dtype=torch.float64).to(DEVICE) for p in whole]
    if step == 2:  # rank 1 holds no gradient: the whole one without its pieces
        for grad in grads[:2]:
            grad.view(-1).chunk(world)[1].zero_()
    for p, grad in zip(whole, grads):
        p.grad = grad
    held = [grad.flatten().chunk(world) for grad in grads[:2]]
    for shard, piece in zip(shards, [piece[rank] for piece in held if rank < len(piece)] + [grads[2]]):
        shard.grad = None if step == 2 and rank == 1 else piece.clone()  # step 2: rank 1 holds no gradient
    sharded.record()
    reference.record()
for shard in shards:
    shard.grad = None
try:
    sharded.record()
    error = None
except RuntimeError as e:
    error = str(e)
json.dump({"sharded": [sharded.l2, sharded.l1], "reference": [reference.l2, reference.l1], "error": error},
          open(f"{out}/rank{rank}.json", "w"))
