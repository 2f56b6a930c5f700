"""Skipping updates on loss and gradient-norm spikes in a PyTorch loop
(ALGORITHMS.md section 9; llm.c's -sl and -sg), with the detector `lrkit
train` uses for train.skip_loss_z and train.skip_grad_z:

    guard = SpikeGuard(loss_z=6, grad_z=6, window=128)
    for ...:
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)   # the norm before clipping
        if guard.check(loss, norm):
            optimizer.step()
        optimizer.zero_grad()
        scheduler.step()
"""
import math
import numbers

import torch

from ._lrkit import SpikeDetector
from ._torch_common import (collective_device, is_finite_number, optional_distributed, saved_state, scalar_tensor, shown,
                            whole_number)

__all__ = ["SpikeGuard"]


class SpikeGuard:
    """Decides, once per update, whether to apply it: the loss and the gradient norm are scored against the last
    ``window`` updates' (z-scores, NaN until the window is full), and an update whose loss z exceeds ``loss_z`` (or
    whose gradient-norm z exceeds ``grad_z``; 0: never) is a spike to skip. A skipped spike stays out of the window,
    from the third spike in a row on the values enter it (a lasting change of level is learnt), and the value scored
    is not part of its own statistics (llm.c's is, which caps its z at 11.2 over 128 values).

    Under torch.distributed (any backend, any process group) the ranks' losses and gradient norms are averaged in one
    all-reduce first, so every rank takes the same decision. After ``check``: ``loss_z``, ``grad_norm_z`` and
    ``outcome`` ("applied", "loss_spike", "grad_norm_spike", or "nonfinite" for a non-finite loss, which is not
    scored and is skipped: the loop's own check decides what a non-finite loss means).
    """

    def __init__(self, loss_z=0.0, grad_z=0.0, window=128, *, process_group=None):
        thresholds = {"loss_z": loss_z, "grad_z": grad_z}
        for name, value in thresholds.items():
            if not (is_finite_number(value) and value >= 0):
                raise ValueError(f"SpikeGuard: {name} must be a finite number >= 0 (0: never skip; got {shown(value)})")
        if isinstance(window, bool) or not isinstance(window, numbers.Integral) or window < 2:
            raise ValueError(f"SpikeGuard: window must be a whole number >= 2 (got {shown(window)})")
        self.settings = {"loss_z": float(loss_z), "grad_z": float(grad_z), "window": int(window)}
        self._loss = SpikeDetector(float(loss_z), int(window))
        self._grad_norm = SpikeDetector(float(grad_z), int(window))
        self.group = process_group
        self.loss_z = self.grad_norm_z = math.nan
        self.outcome = None
        self.updates = 0

    def check(self, loss, grad_norm):
        """True: apply this update. `loss` is this rank's loss, `grad_norm` the gradient norm before clipping
        (tensors or numbers)."""
        loss, grad_norm = self._agreed(loss, grad_norm)
        self.updates += 1
        if not math.isfinite(loss):
            self.loss_z = self.grad_norm_z = math.nan
            self.outcome = "nonfinite"
            return False
        self.loss_z, loss_spike = self._loss.score(loss)
        self.grad_norm_z, grad_spike = self._grad_norm.score(grad_norm)
        self.outcome = "loss_spike" if loss_spike else "grad_norm_spike" if grad_spike else "applied"
        return self.outcome == "applied"

    def state_dict(self):
        return {**self.settings, "updates": self.updates,
                "loss_window": list(self._loss.window), "loss_spikes_in_a_row": self._loss.spikes_in_a_row,
                "grad_norm_window": list(self._grad_norm.window),
                "grad_norm_spikes_in_a_row": self._grad_norm.spikes_in_a_row}

    def load_state_dict(self, state_dict):
        """A guard's saved state; its thresholds and window may differ from this one's (the newest values are kept
        when the window is smaller)."""
        saved_state(state_dict, "SpikeGuard", ("updates", "loss_window", "loss_spikes_in_a_row", "grad_norm_window",
                                               "grad_norm_spikes_in_a_row"))
        updates = whole_number(state_dict["updates"], "the checkpoint's SpikeGuard updates")
        # Restored into new detectors, kept only when both take their state: a refused checkpoint changes nothing.
        loss = SpikeDetector(self.settings["loss_z"], self.settings["window"])
        grad_norm = SpikeDetector(self.settings["grad_z"], self.settings["window"])
        loss.restore(list(state_dict["loss_window"]), int(state_dict["loss_spikes_in_a_row"]))
        grad_norm.restore(list(state_dict["grad_norm_window"]), int(state_dict["grad_norm_spikes_in_a_row"]))
        self._loss, self._grad_norm, self.updates = loss, grad_norm, updates

    def _agreed(self, loss, grad_norm):
        """The loss and gradient norm every rank decides on: the group's means (one all-reduce), in one host copy."""
        dist = optional_distributed(self.group, "SpikeGuard")
        values = [scalar_tensor(loss, "SpikeGuard.check"), scalar_tensor(grad_norm, "SpikeGuard.check", "the gradient norm")]
        # Where the collective needs them, or alone where the loop's tensors are (a GPU's: one copy to the host below).
        device = collective_device(dist, self.group) if dist else next(
            (v.device for v in values if v.device.type != "cpu"), torch.device("cpu"))
        both = torch.stack([v.to(device) for v in values])
        if dist:
            dist.all_reduce(both, group=self.group)
            both /= dist.get_world_size(self.group)
        mean_loss, mean_norm = both.tolist()
        return mean_loss, mean_norm
