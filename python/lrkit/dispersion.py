"""Worker dispersion inside DistributedDataParallel's own all-reduce
(ALGORITHMS.md section 7; Li et al. 2026).

    hook = DispersionHook(log="ranks.jsonl")
    ddp.register_comm_hook(None, hook)
    ...
    loss.backward()        # DDP runs the hook on every gradient bucket
    optimizer.step()
    hook.step(loss)        # one all-gather of 4 scalars per step; rank 0 writes the row
                           # (metrics=False: no wait for the device; the rows reach the log every flush_every steps)

Each bucket's local gradient is kept until its all-reduce finishes, so
||g_k||, g_k . g_bar and ||g_bar|| come out of DDP's reduction with no extra
collective per bucket (dot products in the gradients' dtype, accumulated in
float64 across buckets). cos(g_k, g_bar) and the mean pairwise inner product
(N^2 ||g_bar||^2 - sum_k ||g_k||^2) / (N (N - 1)) are exact. With
exact_pairwise=True the mean pairwise cosine C is exact too, for one extra
all-reduce of the normalized gradient per step. The log is the per-rank JSON
lines `lrkit diagnose` reads (step, rank, loss, grad_norm, cos_to_mean; the
rows of a session's first step add "session": "fresh" or "resume"), or,
for a path ending in .h5, an HDF5 file in the run-log layout (/train/step,
/train/loss, /train/grad_norm, /ranks/{loss,grad_norm,cos_to_mean},
/diagnostics/...), written in SWMR mode and flushed every `flush_every` steps.

A new hook starts a new log. A loop resumed from a checkpoint of step S passes
start_step=S: the log then keeps its rows of the steps before S (the rows a
killed run wrote past its checkpoint are dropped, so no step appears twice) and
goes on from there. Each log records where each session started, so `lrkit
diagnose` lists the resumes and says where a flagged window starts at one: an
HDF5 log as lrkit train's does (/sessions/<i>: kind, step, started_utc,
command_line), JSON lines by the "session" field above.
"""
import json
import math
import os
import sys
import time

import torch

from ._torch_common import (distributed, require_replaceable, scalar_tensor, through_links, whole_number,
                            written_whole)
from ._worker_callbacks import handed_to_worker
from .logs import _text, open_hdf5

__all__ = ["DispersionHook"]


# Elements of a half-precision bucket upcast at a time (32 MiB of float32 per operand at most).
_UPCAST_PIECE = 1 << 23


def _dot(a, b):
    """a . b as a 0-d float64 tensor, on a's device. A bucket of bfloat16 or float16 gradients (a model kept in half
    precision) is summed in float32, a piece at a time: its own type rounds the result to 3 digits, which made every
    rank's norm and cosine the same (a spread of exactly 0), float16's overflows past 65504, and the CPU has no
    float16 dot at all."""
    if a.dtype not in (torch.float16, torch.bfloat16):
        return torch.dot(a, b).double()
    total = torch.zeros((), dtype=torch.float64, device=a.device)
    for start in range(0, a.numel(), _UPCAST_PIECE):
        piece = slice(start, start + _UPCAST_PIECE)
        total += torch.dot(a[piece].float(), b[piece].float()).double()
    return total


class DispersionHook:
    def __init__(self, process_group=None, log=None, exact_pairwise=False, flush_every=10, start_step=0):
        start_step = whole_number(start_step, "DispersionHook: start_step")
        flush_every = whole_number(flush_every, "DispersionHook: flush_every")
        if flush_every < 1:
            raise ValueError(f"DispersionHook: flush_every must be >= 1 (got {flush_every})")
        self._dist = distributed()
        self.group = process_group
        self.world = self._dist.get_world_size(process_group)
        self.rank = self._dist.get_rank(process_group)
        self.exact_pairwise = exact_pairwise
        self.__name__ = self.__qualname__ = "lrkit_dispersion_hook"  # DDP inspects the hook like a function
        self.steps = start_step
        self._flush_every = flush_every
        self._measured = []  # (step, values on the device) of the steps whose metrics no one has read yet
        self._copies = {}  # bucket index -> this rank's copy of its local gradient
        self._out = (_open_rank_log(log, self.world, exact_pairwise, flush_every, start_step)
                     if (log and self.rank == 0) else None)
        self._reset()

    def _reset(self):
        self._local_sq = None
        self._kept = []
        # Bucket index -> [g_k . g_bar, |g_bar|^2] of that bucket, summed in step() in bucket order. The all-reduces'
        # callbacks each write their own entry: they run on the process group's threads (Gloo has several) and on
        # CUDA each on a stream of its own, so one running total across them lost updates and, on CUDA, added
        # partial sums that another stream had not yet written (cos_to_mean off by up to 0.8 on an H100).
        self._reduced = {}
        self._buckets = []  # the indices of the buckets seen this step

    @staticmethod
    def _add(total, value):
        return value if total is None else total + value

    def __call__(self, state, bucket):
        buffer = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
        # The local gradient, kept until the all-reduce finishes, in a copy reused every step (no allocation).
        index = bucket.index()
        self._buckets.append(index)
        local = self._copies.get(index)
        if local is None or local.shape != buffer.shape or local.dtype != buffer.dtype:
            local = self._copies[index] = torch.empty_like(buffer)
        local.copy_(buffer)
        flat = local.flatten()
        self._local_sq = self._add(self._local_sq, _dot(flat, flat))
        if self.exact_pairwise:
            self._kept.append(local)
        buffer.div_(self.world)
        future = self._dist.all_reduce(buffer, group=self.group, async_op=True).get_future()

        def measured(fut):
            mean = fut.value()[0]
            flat_mean = mean.flatten()
            self._reduced[index] = torch.stack([_dot(flat, flat_mean), _dot(flat_mean, flat_mean)])
            return mean

        return future.then(handed_to_worker(measured))  # runs on the process group's thread

    def step(self, loss, metrics=True):
        """After backward (and the optimizer step): this step's metrics, on every rank. With metrics=False it returns
        None and waits for nothing: the step's values reach the host when the log writes them (every flush_every
        steps, and at close), so a GPU loop that only logs them has no wait for the device per step."""
        if self._local_sq is None:
            raise RuntimeError("DispersionHook.step: no gradient bucket was seen this step "
                               "(register the hook with ddp.register_comm_hook and call step after backward)")
        loss = scalar_tensor(loss, "DispersionHook.step").to(self._local_sq.device)
        unfinished = sorted(set(self._buckets) - set(self._reduced))
        if unfinished:
            raise RuntimeError(f"DispersionHook.step: the all-reduce of bucket(s) {unfinished} has not finished "
                               "(call step after backward, which waits for them)")
        # DDP's backward waited for every bucket's callback, on this thread's current stream.
        reduced = [self._reduced[index] for index in sorted(self._reduced)]
        if self._local_sq.is_cuda:  # read here on this stream, not only on the stream that made them
            for sums in reduced:
                sums.record_stream(torch.cuda.current_stream(sums.device))
        dot, mean_sq = torch.stack(reduced).sum(0)
        mine = torch.stack([loss, self._local_sq, dot, mean_sq])
        gathered = [torch.empty_like(mine) for _ in range(self.world)]
        self._dist.all_gather(gathered, mine, group=self.group)
        measured = torch.stack(gathered)  # per rank: loss, |g_k|^2, g_k . g_bar, |g_bar|^2
        values = measured.flatten()
        if self.exact_pairwise:
            values = torch.cat([values, self._exact_pairwise(measured).reshape(1)])
        if metrics or self._out:  # the values someone reads; every rank has joined the step's collectives by now
            self._measured.append((self.steps, values))
        self.steps += 1
        self._reset()
        if metrics:
            return self._hand_over()[-1]
        if len(self._measured) >= self._flush_every:
            self._hand_over()
        return None

    def _hand_over(self):
        """The queued steps' metrics, in one copy to the host; rank 0 writes them to its log."""
        steps = [step for step, _ in self._measured]
        rows = torch.stack([values for _, values in self._measured]).cpu().tolist() if self._measured else []
        self._measured = []
        done = [_metrics(step, values, self.world, self.exact_pairwise) for step, values in zip(steps, rows)]
        if self._out:
            for metrics in done:
                self._out.write(metrics)
        return done

    def _exact_pairwise(self, measured):
        """C as a 0-d tensor on the gradients' device: every rank joins the all-reduce of its unit gradient, one
        whose gradient is zero too (it once left it out, and the ranks' collectives no longer paired up: Gloo aborted
        the job). A cosine with a zero gradient is undefined, and so is the mean over pairs that include one: NaN on
        every rank, as lrkit train logs it."""
        n = self.world
        nan = torch.full((), float("nan"), dtype=torch.float64, device=measured.device)
        if n < 2:
            return nan
        norms = measured[:, 1].sqrt()
        own = norms[self.rank]
        normalized = torch.cat([k.double().flatten() for k in self._kept]) / torch.where(own > 0, own, torch.ones_like(own))
        self._dist.all_reduce(normalized, group=self.group)
        return torch.where((norms == 0).any(), nan, (normalized.pow(2).sum() - n) / (n * (n - 1)))

    def close(self):
        """Writes what is buffered and closes the log (rank 0)."""
        if self._out:
            self._hand_over()
            self._out.close()
            self._out = None


def _open_rank_log(path, world, exact_pairwise, flush_every, start_step):
    path = os.fspath(path)
    if not path.endswith((".h5", ".jsonl", ".json")):
        raise ValueError(f"DispersionHook log '{path}' must end in .jsonl (JSON lines) or .h5 (HDF5)")
    require_replaceable(path, "DispersionHook: cannot write log")  # before a resume reads it: a pipe waits for a writer
    try:
        if os.path.isdir(path):  # checked first: the unfinished file beside it would be left behind
            raise IsADirectoryError(21, "Is a directory")
        target = through_links(path)  # a link stays a link; its file is the log (and its lock is that file's)
        if path.endswith(".h5"):
            return _Hdf5RankLog(target, world, exact_pairwise, flush_every, start_step)
        return _JsonRankLog(target, start_step)
    except OSError as error:  # the log's own name, not the lock's or the unfinished file's
        raise OSError(error.errno, f"DispersionHook: cannot write log '{path}': {error.strerror or error}") from None


class _JsonRankLog:
    def __init__(self, path, start_step):
        self._lock = _hold_writer_lock(path)  # two loops appending to one log mixed their rows
        try:
            kept = []
            if start_step > 0 and os.path.exists(path):
                with open(path) as old:
                    for line in old:
                        try:
                            row = json.loads(line)
                        except ValueError:
                            continue  # a blank line, or the row a kill cut off
                        step = row.get("step") if isinstance(row, dict) else None
                        if isinstance(step, (int, float)) and step < start_step:
                            kept.append(line if line.endswith("\n") else line + "\n")
            with written_whole(path) as unfinished, open(unfinished, "w") as new:
                new.writelines(kept)
            self.file = open(path, "a")
        except BaseException:  # no lock held (written_whole leaves no file beside the log)
            os.close(self._lock)
            raise
        # The rows of this session's first step say it started there, as the HDF5 log's /sessions do: `lrkit
        # diagnose` lists the resumes and says where a flagged window starts at one. A field on the rows, not a line
        # of its own, so that every line stays a row (a count of lines, pandas' read_json(lines=True)).
        self._session = "resume" if start_step > 0 else "fresh"

    def write(self, m):
        for r in range(len(m["loss"])):
            row = {"step": m["step"], "rank": r, "loss": m["loss"][r], "grad_norm": m["grad_norm"][r],
                   "cos_to_mean": m["cos_to_mean"][r]}
            if self._session:
                row["session"] = self._session
            self.file.write(json.dumps(row) + "\n")
        self._session = None
        self.file.flush()

    def close(self):
        self.file.close()
        os.close(self._lock)  # releases LOG.lock; the file stays


def _hold_writer_lock(path):
    """LOG.lock, locked (flock) and holding this process's pid while the log is written, as lrkit train holds
    DIR/lrkit.lock: `lrkit log check` then names the live writer instead of calling its mark a killed one's, and
    `lrkit log repair` refuses to cut a log a loop still writes. A second writer of the same log is refused."""
    import fcntl

    lock_path = path + ".lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    # `lrkit log check` probes the lock with a shared flock held for an instant: wait such an instant out (up to a
    # second); a loop that writes the log keeps the lock.
    for attempt in range(200):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if attempt < 199:
                time.sleep(0.005)
    else:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise RuntimeError(f"DispersionHook: log '{path}' is being written by another process (pid {holder or '?'}); "
                           "give this loop another log") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


class _Hdf5RankLog:
    """The run log's layout, so `lrkit diagnose` and lrkit.read_log read it like lrkit's own."""

    def __init__(self, path, world, exact_pairwise, flush_every, start_step):
        import h5py

        self._lock = _hold_writer_lock(path)
        scalars = ["/train/step", "/train/loss", "/train/grad_norm", "/diagnostics/loss_std",
                   "/diagnostics/grad_norm_std", "/diagnostics/inner_pairwise"]
        if exact_pairwise:
            scalars.append("/diagnostics/cos_pairwise")
        matrices = ["/ranks/loss", "/ranks/grad_norm", "/ranks/cos_to_mean"]
        self.flush_every = flush_every
        self.file = None
        try:
            kept, sessions = (_h5_rows_before(path, start_step, scalars + matrices, world)
                              if start_step > 0 and os.path.exists(path) else ({}, []))
            self.rows = len(kept.get("/train/step", []))
            with written_whole(path) as unfinished:  # the open file goes with its new name
                self.file = h5py.File(unfinished, "w", libver="latest")
                self._fill(kept, sessions, scalars, matrices, world, start_step)
        except BaseException:  # no file open, no lock held (written_whole leaves no file beside the log)
            if self.file is not None:
                self.file.close()
            os.close(self._lock)
            raise
        self.file.swmr_mode = True  # readable while training runs
        self.pending = []

    def _fill(self, kept, sessions, scalars, matrices, world, start_step):
        """The kept rows and every session, flushed: the file renamed over the log is whole."""
        self.series = {}
        for name in scalars + matrices:
            width = (world,) if name in matrices else ()
            self.series[name] = self.file.create_dataset(name, shape=(self.rows,) + width, maxshape=(None,) + width,
                                                         chunks=(256,) + width, dtype="f8")
            if self.rows:
                self.series[name][:] = kept[name]
        self.file.attrs["world_size"] = str(world)
        self.file.attrs["source"] = "lrkit.torch.DispersionHook"
        # Every session of the loop, as lrkit train records its own: `lrkit diagnose` lists the resumes whose rows the
        # log holds, and says where a flagged window starts at one (the loop's settings are not known: no "changed").
        sessions.append({"kind": "resume" if start_step > 0 else "fresh", "step": str(start_step),
                         "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         "command_line": " ".join(sys.argv)})
        for index, attributes in enumerate(sessions):
            group = self.file.create_group(f"/sessions/{index}")
            for name, value in attributes.items():
                group.attrs[name] = value
        self.file.flush()

    def write(self, m):
        self.pending.append(m)
        if len(self.pending) >= self.flush_every:
            self.flush()

    def flush(self):
        if not self.pending:
            return
        columns = {
            "/train/step": [m["step"] for m in self.pending],
            "/train/loss": [sum(m["loss"]) / len(m["loss"]) for m in self.pending],
            "/train/grad_norm": [m["mean_grad_norm"] for m in self.pending],
            "/diagnostics/loss_std": [m["loss_std"] for m in self.pending],
            "/diagnostics/grad_norm_std": [m["grad_norm_std"] for m in self.pending],
            "/diagnostics/inner_pairwise": [m["inner_pairwise"] for m in self.pending],
            "/ranks/loss": [m["loss"] for m in self.pending],
            "/ranks/grad_norm": [m["grad_norm"] for m in self.pending],
            "/ranks/cos_to_mean": [m["cos_to_mean"] for m in self.pending],
        }
        if "/diagnostics/cos_pairwise" in self.series:
            columns["/diagnostics/cos_pairwise"] = [m["cos_pairwise"] for m in self.pending]
        for name, rows in columns.items():
            dataset = self.series[name]
            dataset.resize(self.rows + len(rows), axis=0)
            dataset[self.rows:] = rows
        self.rows += len(self.pending)
        self.pending = []
        self.file.flush()

    def close(self):
        self.flush()
        self.file.close()
        os.close(self._lock)  # releases LOG.lock; the file stays, as DIR/lrkit.lock does


def _h5_rows_before(path, start_step, names, world):
    """The rows of an earlier log of this hook for the steps before start_step, every series cut to the rows all have,
    and its sessions' attributes in order (none in a log of an earlier lrkit)."""
    handle, _ = open_hdf5(path)  # a log whose writer was killed is still marked open for writing
    with handle as f:
        missing = [name for name in names if name not in f]
        if missing:
            raise ValueError(f"DispersionHook: '{path}' cannot go on at step {start_step}: it has no {missing[0]} "
                             "(written with other settings, e.g. exact_pairwise); give the resumed loop another log")
        if f["/ranks/loss"].shape[1] != world:
            raise ValueError(f"DispersionHook: '{path}' was written by {f['/ranks/loss'].shape[1]} ranks; "
                             f"this loop has {world}; give the resumed loop another log")
        whole = min(f[name].shape[0] for name in names)
        steps = f["/train/step"][:whole]
        keep = int((steps < start_step).sum())
        sessions = []
        while f"/sessions/{len(sessions)}" in f:
            sessions.append({name: _text(value) for name, value in f[f"/sessions/{len(sessions)}"].attrs.items()})
        return {name: f[name][:keep] for name in names}, sessions


def _metrics(step, values, n, exact_pairwise):
    """A step's metrics from its measured values: per rank (loss, |g_k|^2, g_k . g_bar, |g_bar|^2), then C."""
    rows = [values[4 * r:4 * r + 4] for r in range(n)]
    losses = [r[0] for r in rows]
    norms = [math.sqrt(r[1]) for r in rows]
    mean_norm = math.sqrt(rows[0][3])
    cos = [r[2] / (g * mean_norm) if g > 0 and mean_norm > 0 else float("nan") for r, g in zip(rows, norms)]
    metrics = {
        "step": step, "loss": losses, "grad_norm": norms, "cos_to_mean": cos, "mean_grad_norm": mean_norm,
        "loss_std": _population_std(losses), "grad_norm_std": _population_std(norms),
        "inner_pairwise": (n * n * rows[0][3] - sum(r[1] for r in rows)) / (n * (n - 1)) if n > 1 else float("nan"),
    }
    if exact_pairwise:
        metrics["cos_pairwise"] = values[4 * n]
    return metrics


def _population_std(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
