"""Worker dispersion inside DistributedDataParallel's own all-reduce
(ALGORITHMS.md section 7; Li et al. 2026).

    hook = DispersionHook(log="ranks.jsonl")
    ddp.register_comm_hook(None, hook)
    ...
    loss.backward()        # DDP runs the hook on every gradient bucket
    optimizer.step()
    hook.step(loss)        # one all-gather of 4 scalars per step; rank 0 writes the row

Each bucket's local gradient is kept until its all-reduce finishes, so
||g_k||, g_k . g_bar and ||g_bar|| come out of DDP's reduction with no extra
collective per bucket (dot products in the gradients' dtype, accumulated in
float64 across buckets). cos(g_k, g_bar) and the mean pairwise inner product
(N^2 ||g_bar||^2 - sum_k ||g_k||^2) / (N (N - 1)) are exact. With
exact_pairwise=True the mean pairwise cosine C is exact too, for one extra
all-reduce of the normalized gradient per step. The log is the per-rank JSON
lines `lrkit diagnose` reads (step, rank, loss, grad_norm, cos_to_mean).
"""
import json
import math

import torch


def _distributed():
    import torch.distributed as dist

    if not dist.is_available():
        raise RuntimeError("this torch has no torch.distributed; DispersionHook needs it")
    if not dist.is_initialized():
        raise RuntimeError("DispersionHook: call torch.distributed.init_process_group first")
    return dist


class DispersionHook:
    def __init__(self, process_group=None, log=None, exact_pairwise=False):
        self._dist = _distributed()
        self.group = process_group
        self.world = self._dist.get_world_size(process_group)
        self.rank = self._dist.get_rank(process_group)
        self.exact_pairwise = exact_pairwise
        self.__name__ = self.__qualname__ = "lrkit_dispersion_hook"  # DDP inspects the hook like a function
        self.steps = 0
        self._copies = {}  # bucket index -> this rank's copy of its local gradient
        self._out = open(log, "a") if (log and self.rank == 0) else None
        self._reset()

    def _reset(self):
        self._local_sq = self._dot = self._mean_sq = None
        self._kept = []

    @staticmethod
    def _add(total, value):
        return value if total is None else total + value

    def __call__(self, state, bucket):
        buffer = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
        # The local gradient, kept until the all-reduce finishes, in a copy reused every step (no allocation).
        local = self._copies.get(bucket.index())
        if local is None or local.shape != buffer.shape or local.dtype != buffer.dtype:
            local = self._copies[bucket.index()] = torch.empty_like(buffer)
        local.copy_(buffer)
        flat = local.flatten()
        self._local_sq = self._add(self._local_sq, torch.dot(flat, flat).double())  # one pass, no temporaries
        if self.exact_pairwise:
            self._kept.append(local)
        buffer.div_(self.world)
        future = self._dist.all_reduce(buffer, group=self.group, async_op=True).get_future()

        def measured(fut):
            mean = fut.value()[0]
            flat_mean = mean.flatten()
            self._dot = self._add(self._dot, torch.dot(flat, flat_mean).double())
            self._mean_sq = self._add(self._mean_sq, torch.dot(flat_mean, flat_mean).double())
            return mean

        return future.then(measured)

    def step(self, loss):
        """After backward (and the optimizer step): this step's metrics, on every rank."""
        if self._local_sq is None:
            raise RuntimeError("DispersionHook.step: no gradient bucket was seen this step "
                               "(register the hook with ddp.register_comm_hook and call step after backward)")
        loss = loss.detach() if torch.is_tensor(loss) else torch.tensor(float(loss))
        mine = torch.stack([loss.to(self._local_sq.device).double().reshape(()), self._local_sq, self._dot, self._mean_sq])
        gathered = [torch.empty_like(mine) for _ in range(self.world)]
        self._dist.all_gather(gathered, mine, group=self.group)
        rows = torch.stack(gathered).cpu().tolist()  # the step's one device-to-host copy
        n = self.world
        losses = [r[0] for r in rows]
        norms = [math.sqrt(r[1]) for r in rows]
        mean_norm = math.sqrt(rows[0][3])
        cos = [r[2] / (g * mean_norm) if g > 0 and mean_norm > 0 else float("nan") for r, g in zip(rows, norms)]
        metrics = {
            "step": self.steps, "loss": losses, "grad_norm": norms, "cos_to_mean": cos, "mean_grad_norm": mean_norm,
            "loss_std": _population_std(losses), "grad_norm_std": _population_std(norms),
            "inner_pairwise": (n * n * rows[0][3] - sum(r[1] for r in rows)) / (n * (n - 1)) if n > 1 else float("nan"),
        }
        if self.exact_pairwise:
            metrics["cos_pairwise"] = self._exact_pairwise(norms[self.rank])
        if self._out:
            for r in range(n):
                row = {"step": self.steps, "rank": r, "loss": losses[r], "grad_norm": norms[r], "cos_to_mean": cos[r]}
                self._out.write(json.dumps(row) + "\n")
            self._out.flush()
        self.steps += 1
        self._reset()
        return metrics

    def _exact_pairwise(self, own_norm):
        n = self.world
        if n < 2 or own_norm == 0:
            return float("nan")
        normalized = torch.cat([k.double().flatten() for k in self._kept]) / own_norm
        self._dist.all_reduce(normalized, group=self.group)
        return (normalized.pow(2).sum().item() - n) / (n * (n - 1))

    def close(self):
        if self._out:
            self._out.close()
            self._out = None


def _population_std(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
