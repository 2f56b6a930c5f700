# Per-rank log for `lrkit diagnose` from a plain PyTorch DDP loop. Run under torchrun:
#   python3 -m torch.distributed.run --nproc_per_node 2 examples/ddp_rank_log.py
import json, os, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)  # the same initial weights on every rank
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
torch.manual_seed(1 + rank)  # each rank its own data
out = open(os.environ.get("RANK_LOG", "ranks.jsonl"), "w") if rank == 0 else None
for step in range(int(os.environ.get("STEPS", "200"))):
    x = torch.randn(64, 32)
    opt.zero_grad()
    with ddp.no_sync():  # keep the local gradient: it is what the diagnostics look at
        loss = torch.nn.functional.mse_loss(ddp(x), x.sum(1, keepdim=True).sin())
        loss.backward()
    local = torch.cat([p.grad.flatten() for p in model.parameters()])
    mean = local.clone(); dist.all_reduce(mean); mean /= world  # what DDP would have applied
    for p in model.parameters(): dist.all_reduce(p.grad); p.grad /= world
    mine = torch.stack([loss.detach(), local.norm(), local @ mean / (local.norm() * mean.norm())])
    rows = [torch.empty(3) for _ in range(world)]; dist.all_gather(rows, mine)
    opt.step()
    for r, (l, g, c) in enumerate(t.tolist() for t in rows):
        if out: out.write(json.dumps(dict(step=step, rank=r, loss=l, grad_norm=g, cos_to_mean=c)) + "\n")
