"""lrkit.torch.DispersionHook when its buckets' all-reduces finish out of order, each on a thread of its own (Gloo runs
collectives on several threads; on CUDA each callback also runs on a stream of its own): the sums over the buckets do
not depend on which finished first."""
import json
import math
import os
import tempfile

import pytest

pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
from conftest import run_python  # noqa: E402

OUT_OF_ORDER = """
import json, sys, threading, types
import torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)


class Bucket:
    def __init__(self, index, values):
        self._index, self._buffer = index, torch.tensor(values, dtype=torch.float32)

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer


class HeldAllReduce:
    # torch.distributed, except that each all_reduce finishes when finish() says: one rank, so the sum is the tensor.
    def __init__(self):
        self.pending = []

    def __getattr__(self, name):
        return getattr(dist, name)

    def all_reduce(self, tensor, group=None, async_op=False):
        future = torch.futures.Future()
        self.pending.append((future, tensor))
        return types.SimpleNamespace(get_future=lambda: future)

    def finish(self, index):
        future, tensor = self.pending[index]
        worker = threading.Thread(target=future.set_result, args=([tensor],))
        worker.start()
        worker.join()


def metrics(order):
    hook = lt.DispersionHook()
    held = hook._dist = HeldAllReduce()
    # |g|^2 of 2^54 and three of 1: added in float64 with the large one first, each 1 is lost (the spacing there is
    # 4); the three 1s first make 3, which rounds the total up to 2^54 + 4.
    chained = [hook(None, Bucket(i, values)) for i, values in enumerate([[2.0 ** 27], [1.0], [1.0], [1.0]])]
    for index in order:
        held.finish(index)
    torch.futures.wait_all(chained)
    return hook.step(torch.tensor(0.5))


def unfinished():
    hook = lt.DispersionHook()
    held = hook._dist = HeldAllReduce()
    for i in range(3):
        hook(None, Bucket(i, [1.0]))
    held.finish(1)
    try:
        hook.step(torch.tensor(0.5))
    except RuntimeError as error:
        return str(error)
    finally:  # else the interpreter's exit waits for their callbacks (_worker_callbacks)
        held.finish(0)
        held.finish(2)


print(json.dumps([metrics([0, 1, 2, 3]), metrics([3, 2, 1, 0]), metrics([2, 0, 3, 1]), unfinished()]))
"""


def test_the_buckets_sums_do_not_depend_on_the_order_their_all_reduces_finish():
    # The callbacks added into one running total in the order they ran: the metrics depended on it, and on CUDA
    # (several streams) the total lost partial sums: cos_to_mean was off by up to 0.8 on an H100.
    with tempfile.TemporaryDirectory() as scratch:
        store = os.path.join(scratch, "store")
        done = run_python(["-c", OUT_OF_ORDER, store], store=store)
    assert done.returncode == 0, done.stderr[-3000:]
    in_order, reversed_order, shuffled, unfinished = json.loads(done.stdout)
    for metrics in (in_order, reversed_order, shuffled):
        assert math.isnan(metrics.pop("inner_pairwise")), "undefined with one rank"
    assert reversed_order == in_order and shuffled == in_order
    assert in_order["cos_to_mean"] == [1.0], "one rank: its gradient is the mean, summed in the same order"
    assert in_order["mean_grad_norm"] == in_order["grad_norm"][0] == 2.0 ** 27
    assert unfinished == ("DispersionHook.step: the all-reduce of bucket(s) [0, 2] has not finished (call step after "
                          "backward, which waits for them)")
