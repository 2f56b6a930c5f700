"""One process of test_dispersion_log.py: a one-rank DDP loop with the DispersionHook writing LOG for steps
[START, STOP), then closing the log, dying as a kill would leave it (os._exit, nothing flushed or closed), or holding
it open until killed ("held")."""
import os
import sys
import time

import torch
import torch.distributed as dist

import lrkit.torch as lt

log, start, stop, ending = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
dist.init_process_group("gloo", init_method="file://" + log + ".store", rank=0, world_size=1)
torch.manual_seed(start)
model = torch.nn.Linear(4, 1)
ddp = torch.nn.parallel.DistributedDataParallel(model)
hook = lt.DispersionHook(log=log, start_step=torch.tensor(start), flush_every=3)  # as a checkpoint may hold it
ddp.register_comm_hook(None, hook)
for step in range(start, stop):
    loss = ddp(torch.randn(8, 4)).pow(2).mean() + step  # the loss names its step
    loss.backward()
    hook.step(loss)
    model.zero_grad()
if ending == "killed":
    os._exit(0)
if ending == "held":  # the log stays open for writing until the test kills this process
    hook._out.flush()
    open(log + ".held", "w").close()
    time.sleep(120)
hook.close()
dist.destroy_process_group()
