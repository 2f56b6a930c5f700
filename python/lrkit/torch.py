"""lrkit inside PyTorch training loops.

- ``LRScheduler(optimizer, spec, total_steps)``: a torch.optim.lr_scheduler
  scheduler whose first parameter group's rate is the lrkit schedule's value,
  bit for bit (other groups keep their ratio to the first, as LambdaLR does);
  ``state_dict`` resumes at the same step and refuses another schedule.
- ``branch_scheduler(optimizer, branch)``: the scheduler of one budget's
  decay branch of a sweep planned by ``lrkit.decay_branches`` (WSD: one main
  run, each budget's decay continued from the main run's state).
- ``refine(log_or_norms, peak, total_steps)``: a schedule refined from a
  finished run's gradient norms (Defazio et al. 2023), and ``GradNormRecorder``,
  which records the norms a later refinement needs.
- ``HDET`` (lrkit.hdet), ``DispersionHook`` (lrkit.dispersion),
  ``SampleReweighting`` (lrkit.reweighting) and ``SpikeGuard`` (lrkit.spikes),
  re-exported here so that one import serves a training loop.
"""
import math
import os
import tempfile

import torch
from torch.optim import lr_scheduler as _lr_scheduler

from ._lrkit import DecayBranch, Schedule, spec_word
from ._torch_common import (check_same_schedule, collective_device, distributed, group_ratios, is_number,
                            keep_initial_rates, loop_schedule, require_a_ratio_per_group, require_optimizer,
                            saved_ratios, saved_state, set_rate, shown, warn_past_end, whole_number, write_csv)

_SchedulerBase = getattr(_lr_scheduler, "LRScheduler", None) or _lr_scheduler._LRScheduler


class LRScheduler(_SchedulerBase):
    """Sets every parameter group's learning rate from an lrkit schedule spec.

    ``scheduler.step()`` after each ``optimizer.step()``, as with any PyTorch
    scheduler. The first group with a non-zero rate gets ``schedule(step)``
    exactly; group i gets it times its initial rate over that group's (a group
    built at 0 stays frozen), so the rate the optimizer was built with does not
    scale the schedule (LambdaLR's trap).

    ``cycle_momentum=(base, max)`` also cycles every group's momentum (SGD's,
    or Adam's beta1) against the rate of an ``onecycle`` or ``triangular``
    schedule, as PyTorch's OneCycleLR (defaults 0.85, 0.95) and CyclicLR
    (0.8, 0.9) do unless given cycle_momentum=False: max where the rate is
    lowest, base at its peak. Without it only rates are set.
    """

    def __init__(self, optimizer, spec, total_steps=None, last_epoch=-1, cycle_momentum=None):
        require_optimizer(optimizer, "LRScheduler")
        self.schedule = loop_schedule(spec, total_steps)
        self.cycle_momentum = _momentum_range(cycle_momentum, self.schedule, optimizer)
        keep_initial_rates(optimizer)
        self.ratios = group_ratios(optimizer)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        require_a_ratio_per_group(self.optimizer, self.ratios, "LRScheduler")
        step = max(self.last_epoch, 0)
        warn_past_end(self, step)
        if self.cycle_momentum:
            _set_momentum(self.optimizer, self.schedule.cycled_momentum(step, *self.cycle_momentum))
        rate = self.schedule(step)
        return [rate * ratio for ratio in self.ratios]

    def state_dict(self):
        return {"spec": self.schedule.spec, "total_steps": self.schedule.total_steps, "last_epoch": self.last_epoch,
                "ratios": list(self.ratios), "cycle_momentum": self.cycle_momentum, "_step_count": self._step_count,
                "_last_lr": list(getattr(self, "_last_lr", []))}

    def load_state_dict(self, state_dict):
        saved_state(state_dict, "LRScheduler", ("spec", "total_steps", "last_epoch", "ratios"))
        check_same_schedule(state_dict, self.schedule, "scheduler")
        saved_momentum = state_dict.get("cycle_momentum")  # absent from states saved before it existed: None
        if saved_momentum != self.cycle_momentum:
            raise ValueError(f"the checkpoint's scheduler ran with cycle_momentum={saved_momentum!r}; this one with "
                             f"cycle_momentum={self.cycle_momentum!r}")
        last_epoch = state_dict["last_epoch"]
        if not (last_epoch == -1 or (is_number(last_epoch) and last_epoch == int(last_epoch) and last_epoch >= 0)):
            raise ValueError(f"the checkpoint's scheduler holds last_epoch {last_epoch!r}; it must be -1 or a step >= 0")
        self.ratios = saved_ratios(state_dict, self.optimizer, "scheduler")
        self.last_epoch = int(last_epoch)
        self._step_count = state_dict.get("_step_count", self.last_epoch + 1)
        rates = self.get_lr()
        for group, rate in zip(self.optimizer.param_groups, rates):
            set_rate(group, rate)
        self._last_lr = rates


def _momentum_range(cycle_momentum, schedule, optimizer):
    """LRScheduler's cycle_momentum as [base, max], or None; refuses what cannot cycle."""
    if cycle_momentum is None or cycle_momentum is False:
        return None
    if not (isinstance(cycle_momentum, (tuple, list)) and len(cycle_momentum) == 2
            and all(is_number(m) for m in cycle_momentum)):
        raise TypeError(f"LRScheduler: cycle_momentum must be (base, max), such as OneCycleLR's (0.85, 0.95) or "
                        f"CyclicLR's (0.8, 0.9) (got {shown(cycle_momentum)})")
    base, top = (float(m) for m in cycle_momentum)
    if not 0.0 <= base <= top < 1.0:
        raise ValueError(f"LRScheduler: cycle_momentum goes from base to max with 0 <= base <= max < 1 (got "
                         f"{shown(cycle_momentum)})")
    if schedule.cycled_momentum(0, base, top) is None:
        raise ValueError(f"LRScheduler: cycle_momentum needs a schedule that cycles the momentum against its rate, "
                         f"onecycle or triangular as PyTorch's OneCycleLR and CyclicLR (with at most a warmup in "
                         f"front); '{schedule.spec}' does not")
    if "betas" not in optimizer.defaults and "momentum" not in optimizer.defaults:
        raise ValueError(f"LRScheduler: cycle_momentum needs an optimizer with a momentum or Adam's betas; "
                         f"{type(optimizer).__name__} has neither")
    return [base, top]


def _set_momentum(optimizer, momentum):
    """Every group's momentum, or beta1 where the optimizer has betas (as OneCycleLR and CyclicLR set it)."""
    beta1 = "betas" in optimizer.defaults
    for group in optimizer.param_groups:
        if beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum


def branch_scheduler(optimizer, branch):
    """The scheduler of one branch of a budget sweep with decay branches (``lrkit.decay_branches``).

    The model and ``optimizer`` hold the main run's state after ``branch.fork``
    updates (a fresh start when the fork is 0); the scheduler's next ``step()``
    sets update ``branch.fork``'s rate, and the branch then runs the separate
    run of ``branch.budget`` steps from there, bit for bit. It is an
    ``LRScheduler`` over ``branch.schedule``: its ``state_dict`` resumes an
    interrupted branch.
    """
    if not isinstance(branch, DecayBranch):
        raise TypeError(f"branch_scheduler needs an lrkit DecayBranch (decay_branches(...).branches[i]), got "
                        f"{type(branch).__name__}")
    require_optimizer(optimizer, "branch_scheduler")
    if branch.fork > 0:
        missing = next((i for i, group in enumerate(optimizer.param_groups) if "initial_lr" not in group), None)
        if missing is not None:
            raise ValueError(f"branch_scheduler: parameter group {missing} has no 'initial_lr', so this optimizer "
                             f"does not hold the main run's state: load the optimizer's state_dict saved after "
                             f"{branch.fork} updates of the main run (under its scheduler) first")
    return LRScheduler(optimizer, branch.schedule, last_epoch=branch.fork - 1)


def refine(log_or_norms, peak, total_steps, norm="l1", tau=0.1, save_norms_to=None):
    """A Schedule refined from a finished run's gradient norms.

    ``log_or_norms``: an lrkit run log (.h5) or its run directory, a CSV
    written by GradNormRecorder, or a sequence of per-step norms (saved to ``save_norms_to``, by default a
    file in a fresh temporary directory, which the schedule's spec names).
    A NaN or infinite norm is a skipped update's (a GradScaler's overflow): it
    is filled in from the norms before and after it.
    ``norm``: "l1" (Adam-type, the gradient's l1 norms) or "l2" (SGD-type).
    """
    if norm not in ("l1", "l2"):
        raise ValueError(f"norm must be 'l1' or 'l2' (got {shown(norm)})")
    if isinstance(log_or_norms, (str, os.PathLike)):
        path = os.fspath(log_or_norms)
        if not os.path.exists(path):
            raise FileNotFoundError(f"refine: '{path}' does not exist")
    else:
        try:
            norms = list(log_or_norms)
        except TypeError:
            raise TypeError(f"refine: log_or_norms must be a run log, a CSV of norms or a sequence of norms (got "
                            f"{type(log_or_norms).__name__})") from None
        for i, v in enumerate(norms):
            if not is_number(v) and not (torch.is_tensor(v) and v.numel() == 1):
                raise TypeError(f"refine: norm {i} is {shown(v)}, not a number")
        norms = [float(v) for v in norms]
        if not norms:
            raise ValueError("refine: no gradient norms given")
        bad = next((i for i, v in enumerate(norms) if math.isfinite(v) and v <= 0), None)  # the others are filled
        if bad is not None:
            raise ValueError(f"refine: norm {bad} is {norms[bad]}; norms must be > 0")
        if not any(math.isfinite(v) for v in norms):
            raise ValueError(f"refine: no norm of the {len(norms)} is finite: every update of that run was skipped")
        path = save_norms_to or os.path.join(tempfile.mkdtemp(prefix="lrkit_norms_"), "norms.csv")
        write_csv(path, ["grad_norm_l1" if norm == "l1" else "grad_norm"], ([v] for v in norms))
    return Schedule(f"refined(norms={spec_word(path)}, peak={float(peak)!r}, norm={norm}, tau={float(tau)!r})", total_steps)


def _norm_sums(grads):
    """(squared l2 norm, l1 norm) of the gradients, in float64 on the first one's device: the per-tensor norms come
    from two multi-tensor kernels and meet there (a model split over devices, or with parameters offloaded to the
    host, has them on several, and stack takes one)."""
    device = grads[0].device
    return torch.stack([torch.stack([n.to(device) for n in torch._foreach_norm(grads, 2)]).double().pow(2).sum(),
                        torch.stack([n.to(device) for n in torch._foreach_norm(grads, 1)]).double().sum()])


def _parameter_list(parameters):
    """What clip_grad_norm_ takes as its parameters (an iterable of tensors, or one tensor), or a module (its
    parameters()), as a list; anything else named: iterating a module failed with torch's words."""
    if isinstance(parameters, torch.nn.Module):
        return list(parameters.parameters())
    if torch.is_tensor(parameters):
        return [parameters]  # iterated, a tensor would give its rows, which never have a gradient
    try:
        listed = list(parameters)
    except TypeError:
        raise TypeError(f"GradNormRecorder takes a module or its parameters (an iterable of tensors), got "
                        f"{type(parameters).__name__}") from None
    bad = next((i for i, p in enumerate(listed) if not torch.is_tensor(p)), None)
    if bad is not None:
        raise TypeError(f"GradNormRecorder: parameter {bad} is a {type(listed[bad]).__name__}, not a tensor")
    if not listed:
        raise ValueError("GradNormRecorder: no parameters (an iterator such as model.parameters() that was used up "
                         "before gives none)")
    return listed


class GradNormRecorder:
    """Records the gradient's l2 and l1 norms after each backward pass.

    Call ``record()`` after ``loss.backward()`` (before clipping, where the
    refinement wants them; with a GradScaler, after ``scaler.unscale_``) and
    ``save(path)`` at the end: a CSV with columns step, grad_norm, grad_norm_l1
    that ``refine(path, ...)`` and the spec ``refined(norms=path, ...)`` read.
    ``state_dict()`` goes into the loop's checkpoint, so a resumed run records
    on where it stopped.

    ``record()`` does not wait for the device: the norms come from two
    multi-tensor kernels and stay on the device until ``l2``, ``l1``,
    ``state_dict()`` or ``save()`` asks for them, or ``flush_every`` records
    have piled up (one wait per that many steps).

    The norms are those of the gradients this process holds: under DDP the
    whole (averaged) gradient. Where each rank holds a shard of it (FSDP's
    FullyShardedDataParallel), pass the group it is sharded over as
    ``shard_group`` (FSDP's ``process_group``; with HYBRID_SHARD the
    intra-node one): each record then sums the ranks' squared l2 and l1 norms
    in one all-reduce (with Gloo, a wait for the device), every rank of the
    group records the model's norms, and every rank must call ``record()``.
    """

    def __init__(self, parameters, flush_every=1000, shard_group=None):
        self.parameters = _parameter_list(parameters)
        self.flush_every = whole_number(flush_every, "GradNormRecorder: flush_every")
        if self.flush_every < 1:
            raise ValueError(f"GradNormRecorder: flush_every must be >= 1 (got {shown(flush_every)})")
        self.shard_group = shard_group
        if shard_group is not None:
            distributed()  # a shard group needs its process group now, not at the first record
        self._l2, self._l1, self._pending = [], [], []

    @torch.no_grad()
    def record(self):
        grads = [p.grad.detach() for p in self.parameters if p.grad is not None]
        if not grads and self.shard_group is None:
            raise RuntimeError("GradNormRecorder.record: no parameter has a gradient (call it after backward)")
        # Half-precision gradients are summed in float32: their own type would round the norm to 3 digits.
        grads = [g.float() if g.dtype in (torch.float16, torch.bfloat16) else g for g in grads]
        sums = _norm_sums(grads) if grads else None
        if self.shard_group is not None:
            sums = self._summed_over_shards(sums, len(grads))
        self._pending.append(torch.stack([sums[0].sqrt(), sums[1]]))
        if len(self._pending) >= self.flush_every:
            self._flush()

    def _summed_over_shards(self, sums, held):
        """The shard group's sums of (squared l2, l1, gradients held), on every rank: one all-reduce, which a rank
        holding no gradient joins with zeros (it would leave the others waiting in the collective). Such a rank alone
        reads the group's count, and a loop that records before backward is told so on every rank."""
        dist = distributed()
        summed = torch.zeros(3, dtype=torch.float64, device=collective_device(dist, self.shard_group))
        if sums is not None:
            summed[:2] = sums
            summed[2] = held
        dist.all_reduce(summed, group=self.shard_group)
        if sums is None and summed[2].item() == 0:
            raise RuntimeError("GradNormRecorder.record: no rank of the shard group has a gradient (call it after "
                               "backward)")
        return summed

    def _flush(self):
        if self._pending:
            pairs = torch.stack(self._pending).cpu().tolist()
            self._pending = []
            self._l2 += [a for a, _ in pairs]
            self._l1 += [b for _, b in pairs]

    @property
    def l2(self):
        """The recorded l2 norms, one per ``record()``."""
        self._flush()
        return self._l2

    @property
    def l1(self):
        """The recorded l1 norms, one per ``record()``."""
        self._flush()
        return self._l1

    def state_dict(self):
        """The norms so far, for the loop's checkpoint: a resumed run's refinement then sees the whole run."""
        return {"l2": list(self.l2), "l1": list(self.l1)}

    def load_state_dict(self, state_dict):
        saved_state(state_dict, "GradNormRecorder", ("l2", "l1"))
        l2, l1 = list(state_dict["l2"]), list(state_dict["l1"])
        if len(l2) != len(l1):
            raise ValueError(f"GradNormRecorder.load_state_dict: {len(l2)} l2 norms but {len(l1)} l1 norms")
        # A damaged norm would surface only in the next run's refine(), far from its cause. NaN and infinity are
        # norms record() takes (a skipped update's), so a loop's own state comes back.
        for name, norms in (("l2", l2), ("l1", l1)):
            bad = next((i for i, v in enumerate(norms) if not is_number(v) or v < 0), None)
            if bad is not None:
                raise ValueError(f"GradNormRecorder.load_state_dict: {name} norm {bad} is {norms[bad]!r}; a norm is a "
                                 "number >= 0")
        self._l2, self._l1, self._pending = [float(v) for v in l2], [float(v) for v in l1], []

    def save(self, path):
        write_csv(path, ["step", "grad_norm", "grad_norm_l1"], ([i, a, b] for i, (a, b) in enumerate(zip(self.l2, self.l1))))
        return os.fspath(path)


from .dispersion import DispersionHook  # noqa: E402,F401
from .hdet import HDET  # noqa: E402,F401
from .reweighting import SampleReweighting  # noqa: E402,F401
from .spikes import SpikeGuard  # noqa: E402,F401

# What a training loop uses; the standard-library modules and the helpers shared with lrkit.hdet stay out
# of `from lrkit.torch import *`.
__all__ = ["LRScheduler", "branch_scheduler", "refine", "GradNormRecorder", "HDET", "DispersionHook", "SampleReweighting", "SpikeGuard"]
