# lrkit's schedules in a plain PyTorch loop (PYTHONPATH=build/python, or after `pip install .`).
import torch
import lrkit, lrkit.torch

s = lrkit.Schedule("wsds(peak=3e-3, budgets=[100, 200], decay=20%, warmup=10)")  # WSD-S: its own length
print(s.total_steps, s.checkpoints, s(150), s.values(range(5)))  # 220 [100, 220] 0.003 [0. 0.0003 ...]
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1.0)  # the optimizer's lr does not scale the schedule
scheduler = lrkit.torch.LRScheduler(optimizer, s.spec)
for step in range(s.total_steps):
    assert optimizer.param_groups[0]["lr"] == s(step)  # bit for bit
    loss = model(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad(); loss.backward(); optimizer.step(); scheduler.step()
    if step == 99:
        saved = scheduler.state_dict()  # resumes at step 100 with lrkit.torch.LRScheduler(...).load_state_dict(saved)
try:
    lrkit.Schedule("uba(peak=1e-3, phi=-1)", 100)
except lrkit.SpecError as e:  # a ValueError naming the position, the token and the rule
    print(e.position, e.token, e.rule)
