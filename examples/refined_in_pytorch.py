# A refined schedule in a plain PyTorch loop: one run records its gradient norms, the next runs the schedule
# refined from them (Defazio et al. 2023). PYTHONPATH=build/python, or after `pip install .`.
import sys, tempfile
import numpy as np
import torch
import lrkit.torch as lt

out, steps = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(), 300

def batch(seed):
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(seed))
    return x, x[:, :4].sum(1, keepdim=True).sin()

def train(schedule):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.0, weight_decay=0.1)
    scheduler, recorder = lt.LRScheduler(optimizer, schedule, steps), lt.GradNormRecorder(model)
    for step in range(steps):
        x, y = batch(step)
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad(); loss.backward()
        recorder.record()  # before clipping; with a GradScaler, after scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step(); scheduler.step()
    with torch.no_grad():
        held_out = np.mean([(model(x) - y).pow(2).mean().item() for x, y in map(batch, range(10**6, 10**6 + 8))])
    return held_out, recorder

linear, recorder = train("linear(peak=1e-2)")
norms = recorder.save(f"{out}/norms.csv")  # step, grad_norm, grad_norm_l1: the norms of every update
refined = lt.refine(norms, peak=1e-2, total_steps=steps)  # l1 norms, for AdamW; a NaN norm (a skipped update's) is filled
rates = refined.values(range(steps + 1))
print(f"refined: peak at update {rates.argmax()}, {rates[steps // 2]:.2e} halfway, {rates[-2]:.2e} at the last update")
print(f"held-out loss: linear {linear:.4f}, refined from its norms {train(refined)[0]:.4f}")
