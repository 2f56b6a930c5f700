"""What the torchrun worker scripts of these tests share: the process group and the device their model and data live
on, both from the test's environment.

LRKIT_TEST_DEVICE=cuda puts every worker on the GPU (all of them on GPU 0: Gloo moves CUDA tensors, so one GPU runs
the multi-worker paths on the tensors a GPU loop hands lrkit); LRKIT_TEST_BACKEND=nccl makes the group NCCL's, which
takes CUDA tensors only. The data is drawn on the host, with the CPU runs' generators, and then moved: a CUDA run
sees the same batches as a CPU run."""
import os

import torch
import torch.distributed as dist

DEVICE = torch.device(os.environ.get("LRKIT_TEST_DEVICE", "cpu"))


def start():
    """Joins the process group; returns (rank, world size)."""
    if DEVICE.type == "cuda":
        torch.cuda.set_device(DEVICE.index or 0)
    dist.init_process_group(os.environ.get("LRKIT_TEST_BACKEND", "gloo"))
    torch.set_num_threads(1)
    return dist.get_rank(), dist.get_world_size()


def flat(module):
    """A module's parameters as one host list, for the worker's JSON."""
    return torch.cat([p.detach().flatten() for p in module.parameters()]).tolist()
