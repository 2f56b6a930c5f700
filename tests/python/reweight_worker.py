"""One torchrun worker of test_reweighting.py: SampleReweighting under DDP with
ranks holding different numbers of samples, against one model trained on the
whole global batch with the weights computed from it; then one rank's invalid
input, which every rank must report; on the device of worker_setup. Writes OUT/rank<r>.json."""
import json
import os
import sys

import torch
import torch.distributed as dist

import lrkit
import lrkit.torch as lt
from worker_setup import DEVICE, flat, start


class CountedAllGathers:
    """torch.distributed.all_gather, counted: SampleReweighting gathers once per call while the rows fit."""

    def __init__(self):
        self.calls, self._all_gather = 0, dist.all_gather
        dist.all_gather = self

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self._all_gather(*args, **kwargs)

    def since(self, before):
        return self.calls - before


out = sys.argv[1]
rank, world = start()
ROWS = [5 + 2 * r for r in range(world)]  # uneven: 5, 7, 9, ...


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).to(DEVICE)


def global_batch(step):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(sum(ROWS), 6, generator=g)
    # The token counts stay on the host, as a loop's often are: SampleReweighting moves them.
    return x.to(DEVICE), (3 * x[:, :1]).sin().to(DEVICE), torch.randint(1, 9, (sum(ROWS),), generator=g).double()


def per_sample(model, x, y):
    return (model(x) - y).pow(2).mean(1)


model, whole = make_model(), make_model()
ddp = torch.nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
reference_optimizer = torch.optim.SGD(whole.parameters(), lr=0.1)
reweighting = lt.SampleReweighting("linupper", strength=0.5, warmup=1)
first = sum(ROWS[:rank])
weights, stats, weighted, gathers = [], [], [], []
all_gathers = CountedAllGathers()
for step in range(4):
    x, y, tokens = global_batch(step)
    mine = slice(first, first + ROWS[rank])
    optimizer.zero_grad()
    counts = tokens[mine] if step >= 2 else None  # token counts in the last two steps
    before = all_gathers.calls
    reweighting(per_sample(ddp, x[mine], y[mine]), counts).backward()
    gathers.append(all_gathers.since(before))
    optimizer.step()
    weights.append(reweighting.weights.tolist())
    stats.append(reweighting.stats)
    weighted.append(reweighting.weighted_loss)
    # The reference: the whole global batch in one process, its weights from the whole batch's losses.
    reference_optimizer.zero_grad()
    losses = per_sample(whole, x, y)
    strategy = "linupper" if step >= 1 else "uniform"
    w = lrkit.sample_weights(losses.detach().double().tolist(), strategy, 0.5, tokens.tolist() if step >= 2 else [])
    (torch.tensor(w, dtype=torch.float32, device=DEVICE) * losses).sum().backward()
    reference_optimizer.step()

# Rank 0 holds more rows than any rank did (the capacity grows: one more gather), then fewer again (one gather).
grown = []
for extra in (2 * world + 4, 0):
    x, y, _ = global_batch(7 + extra)
    mine_rows = ROWS[rank] + (extra if rank == 0 else 0)
    with torch.no_grad():
        own = per_sample(model, x[:mine_rows], y[:mine_rows])
    before = all_gathers.calls
    reweighting(own)
    grown.append({"gathers": all_gathers.since(before), "losses": own.double().tolist(),
                  "weights": reweighting.weights.tolist()})

errors = {}
for case, bad_rank in (("matrix", world - 1), ("counts_on_one_rank", 0)):
    x, y, tokens = global_batch(9)
    losses = per_sample(model, x[:ROWS[rank]], y[:ROWS[rank]])
    try:
        if case == "matrix":
            reweighting(losses.reshape(-1, 1) if rank == bad_rank else losses)
        else:
            reweighting(losses, tokens[:ROWS[rank]] if rank == bad_rank else None)
        errors[case] = None
    except ValueError as e:
        errors[case] = str(e)

with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"weights": weights, "stats": stats, "weighted_loss": weighted, "params": flat(model),
               "reference_params": flat(whole), "errors": errors, "steps": reweighting.steps,
               "gathers": gathers, "grown": grown}, f)
dist.destroy_process_group()
