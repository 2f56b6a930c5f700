"""The installed Python package, from the install prefix: a schedule and, where
torch is installed, the LRScheduler in a two-step loop. Prints one line."""
import lrkit

s = lrkit.Schedule("wsd(peak=1e-3, warmup=10, decay=20%, shape=linear)", 100)
line = f"{s(5)} {s(50)} {s(90)}"
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    import lrkit.torch

    w = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.5)
    scheduler = lrkit.torch.LRScheduler(optimizer, s.spec, 100)
    for _ in range(5):
        optimizer.step()
        scheduler.step()
    line += f" {optimizer.param_groups[0]['lr']}"
print(line)
