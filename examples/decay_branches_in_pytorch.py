# A budget sweep with WSD decay branches in a plain PyTorch loop: one main run, one decay per budget.
import sys, tempfile
import torch
import lrkit, lrkit.torch

plan = lrkit.decay_branches("wsd(peak=1e-2, warmup=20, decay=20%, shape=1-sqrt)", [200, 400, 800])
print(plan.forks, plan.steps, "updates instead of", 200 + 400 + 800)  # [161, 321, 641] 918 updates instead of 1400
out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()

def fresh():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 1))
    return model, torch.optim.AdamW(model.parameters(), lr=1.0, weight_decay=0.1)

def loss_of(model, seed):  # the batch of a seed: update `step` sees batch `step` in the main run or a branch
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(seed))
    return (model(x) - x[:, :4].sum(1, keepdim=True).sin()).pow(2).mean()

def update(model, optimizer, step):
    loss = loss_of(model, step)
    optimizer.zero_grad(); loss.backward(); optimizer.step()

model, optimizer = fresh()
scheduler = lrkit.torch.LRScheduler(optimizer, plan.main)
for step in range(plan.main_steps):
    update(model, optimizer, step); scheduler.step()
    if step + 1 in plan.forks:  # the state a branch continues: after step + 1 updates
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, f"{out}/fork_{step + 1}.pt")
for branch in plan.branches:
    model, optimizer = fresh()
    if branch.fork > 0:
        state = torch.load(f"{out}/fork_{branch.fork}.pt")
        model.load_state_dict(state["model"]); optimizer.load_state_dict(state["optimizer"])
    scheduler = lrkit.torch.branch_scheduler(optimizer, branch)
    for step in range(branch.fork, branch.budget):
        update(model, optimizer, step); scheduler.step()
    with torch.no_grad():
        held_out = sum(loss_of(model, 10**6 + i).item() for i in range(8)) / 8
    print(f"budget {branch.budget}: forked at {branch.fork}, held-out loss {held_out:.4f}")
