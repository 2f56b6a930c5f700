"""A one-process PyTorch training loop timed per step, with or without lrkit.torch.GradNormRecorder.record()
after each backward pass. Run by bench/grad_norm_recorder_overhead.sh; prints ms_per_step=<median> and, recording,
record_ms=<median host time of record()>."""
import statistics
import sys
import time

import torch

import lrkit.torch as lt

mode, steps, device = sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "cpu"  # mode: plain | record
torch.set_num_threads(1)
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
model = torch.nn.Sequential(torch.nn.Embedding(256, 128), torch.nn.TransformerEncoder(layer, 4), torch.nn.Linear(128, 256)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
recorder = lt.GradNormRecorder(model.parameters()) if mode == "record" else None
g = torch.Generator().manual_seed(0)
times, record_times = [], []
for step in range(steps):
    x = torch.randint(0, 256, (16, 64), generator=g).to(device)
    start = time.perf_counter()
    loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), x.flatten())
    optimizer.zero_grad()
    loss.backward()
    if recorder:
        before = time.perf_counter()
        recorder.record()
        record_times.append(time.perf_counter() - before)
    optimizer.step()
    if device != "cpu":
        torch.cuda.synchronize()
    times.append(time.perf_counter() - start)
if recorder:
    assert len(recorder.l1) == steps
print(f"ms_per_step={1000 * statistics.median(times[10:]):.3f}" +
      (f" record_ms={1000 * statistics.median(record_times[10:]):.3f}" if recorder else ""))
