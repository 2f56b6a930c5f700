"""lrkit.torch.DispersionHook on a model kept in half precision: its dot products in float32 (dispersion.py)."""
import os
import tempfile

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
from conftest import run_python  # noqa: E402
from lrkit.dispersion import _dot  # noqa: E402


def test_half_precision_dots_keep_the_ranks_apart():
    # Four ranks' bfloat16 gradients 0.5 % apart: bfloat16's own dot rounded every norm to the same 3 digits, a
    # spread of exactly 0 (and every cosine to 1).
    torch.manual_seed(0)
    base = torch.randn(1 << 20, dtype=torch.float64) * 1e-3
    grads = [(base + 5e-6 * torch.randn(1 << 20, dtype=torch.float64)).to(torch.bfloat16) for _ in range(4)]
    exact = [torch.dot(g.double(), g.double()).sqrt().item() for g in grads]
    norms = [_dot(g, g).sqrt().item() for g in grads]
    assert len({torch.dot(g, g).item() for g in grads}) == 1, "bfloat16's own dot: one value for all four"
    for norm, want in zip(norms, exact):
        assert norm == pytest.approx(want, rel=1e-4)
    spread, exact_spread = max(norms) - min(norms), max(exact) - min(exact)
    assert spread == pytest.approx(exact_spread, rel=0.2)
    # float16: its own dot overflows past 65504 (and the CPU has none); in float32 it is 4 * 10^5.
    assert _dot(torch.full((100000,), 2.0, dtype=torch.float16), torch.full((100000,), 2.0, dtype=torch.float16)).item() == 400000.0
    assert _dot(torch.ones(3, dtype=torch.float32), torch.ones(3)).dtype == torch.float64


HALF_MODEL = """
import sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
torch.manual_seed(0)


class HalfWeights(torch.nn.Module):  # float16 weights, float32 arithmetic: the CPU has no float16 matmul
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3000).half())
        self.v = torch.nn.Parameter(torch.randn(3000).half())

    def forward(self, x):
        return (self.w.float() * x).sum() + (self.v.float() * x).pow(2).sum()


model = HalfWeights()
ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.001)
hook = lt.DispersionHook()
ddp.register_comm_hook(None, hook)
loss = ddp(torch.randn(3000))
loss.backward()
metrics = hook.step(loss)
exact = torch.cat([p.grad.double().flatten() for p in model.parameters()]).norm().item()
print(metrics["grad_norm"][0], exact, metrics["cos_to_mean"][0])
"""


def test_a_float16_model_under_ddp_is_measured():
    # Debian's CPU torch lacks a float16 dot product, so the hook raised on its first float16 bucket.
    with tempfile.TemporaryDirectory() as scratch:
        store = os.path.join(scratch, "store")
        done = run_python(["-c", HALF_MODEL, store], store=store)
    assert done.returncode == 0, done.stderr[-3000:]
    norm, exact, cos = (float(v) for v in done.stdout.split())
    assert norm == pytest.approx(exact, rel=1e-6)
    assert cos == pytest.approx(1.0, abs=1e-6), "one rank: its gradient is the mean"
