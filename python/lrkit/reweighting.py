"""Loss-based sample reweighting in a PyTorch loop (Sow et al., ICLR 2025;
ALGORITHMS.md section 8), with the weights of lrkit's C++ library, as
`lrkit train`'s [reweight] computes them:

    reweighting = SampleReweighting("linupper", strength=0.4, warmup=1000)
    for ...:
        per_sample = F.cross_entropy(logits.transpose(1, 2), y, reduction="none").mean(1)  # [batch]
        loss = reweighting(per_sample)   # the global batch's sum_i w_i l_i, this rank's share
        optimizer.zero_grad(); loss.backward(); optimizer.step()

Under torch.distributed every rank's per-sample losses are gathered (no
gradient through the weights), so every rank computes the weights of the whole
global batch and the run is the same for any number of ranks.
"""
import math

import torch

from ._lrkit import relative_weight_histogram, reweight_strategy, sample_weights, weight_stats
from ._torch_common import collective_device, is_finite_number, optional_distributed, saved_state, shown, whole_number

__all__ = ["SampleReweighting"]


class SampleReweighting:
    """Weighs each sample of the global batch by its loss: ``w = softmax(f(x) / strength)``, ``x`` the losses put on
    [-1, 1], ``f`` the strategy (linupper, quadratic, extremes, linear; uniform is the plain mean).

    ``reweighting(losses, token_counts=None)``, once per optimizer step, takes this rank's per-sample losses (a 1-D
    tensor with its graph) and returns the loss to call ``backward()`` on: this rank's terms of ``sum_i w_i l_i``
    over every rank's samples, times the group's size when ``averaged_gradients`` (DDP and FSDP average the ranks'
    gradients, so the mean of the ranks' gradients is then the gradient of the global weighted loss). Ranks may hold
    different numbers of samples. ``token_counts`` (one per sample, > 0) weighs samples of uneven lengths by their
    tokens (``l_i`` is then the sample's mean token loss). The first ``warmup`` calls weigh uniformly.

    After a call: ``weighted_loss`` (the global ``sum_i w_i l_i``, a float), ``weights`` (the global batch's weights,
    rank-major, a float64 CPU tensor), ``stats`` (entropy, max_min_ratio, effective_size, as the trainer logs them)
    and ``histogram()``. A non-finite loss gets weight 0 but leaves the returned loss non-finite, so the loop's own
    check still sees it. With gradient accumulation, pass the micro-batches' losses together (their activations
    are then kept, as ``lrkit train`` does), or each micro-batch is weighed as a batch of its own.
    """

    def __init__(self, strategy="linupper", strength=0.4, warmup=0, *, process_group=None, averaged_gradients=True):
        if not isinstance(strategy, str):
            raise TypeError(f"SampleReweighting: strategy must be a name such as 'linupper' (got {shown(strategy)})")
        try:
            self.strategy = reweight_strategy(strategy)
        except ValueError as error:  # the C++ message names the trainer's key; say it in this API's words
            choices = str(error).split(" must be ", 1)[-1].split(" (got")[0]
            raise ValueError(f"SampleReweighting: strategy must be {choices} (got {shown(strategy)})") from None
        if not (is_finite_number(strength) and strength > 0):
            raise ValueError(f"SampleReweighting: strength must be a finite number > 0 (got {shown(strength)})")
        self.strength = float(strength)
        self.warmup = whole_number(warmup, "SampleReweighting: warmup")
        self.group = process_group
        self.averaged_gradients = bool(averaged_gradients)
        self.steps = 0
        self.weighted_loss = self.weights = self.stats = None
        self._capacity = 0  # the most rows any rank has held: what every rank pads its rows to in the all-gather

    def __call__(self, losses, token_counts=None):
        problem = _local_problem(losses, token_counts)
        dist = optional_distributed(self.group, "SampleReweighting")
        world, rank = (dist.get_world_size(self.group), dist.get_rank(self.group)) if dist else (1, 0)
        rows = 0 if problem else losses.numel()
        counts = None if token_counts is None or problem else torch.as_tensor(token_counts).detach().reshape(-1)
        if dist:
            sizes, table = self._gather(dist, losses, counts, rows, problem is None)
        else:
            sizes, table = [(rows, problem is None, counts is not None)], None
        if problem:
            raise ValueError("SampleReweighting: " + problem)
        invalid = [r for r, (_, ok, _) in enumerate(sizes) if not ok]
        if invalid:
            raise ValueError(f"SampleReweighting: rank(s) {invalid} of the process group passed invalid losses (their own "
                             "error says how); no rank weighs this batch")
        if len({with_counts for _, _, with_counts in sizes}) > 1:
            raise ValueError("SampleReweighting: some ranks passed token_counts and others did not; pass them on every "
                             "rank or on none")
        if sum(n for n, _, _ in sizes) == 0:
            raise ValueError("SampleReweighting: the global batch is empty (no rank passed a sample)")
        all_losses, all_counts = _rows(table, sizes) if dist else _local_rows(losses, counts)
        strategy = self.strategy if self.steps >= self.warmup else "uniform"
        weights = sample_weights(all_losses, strategy, self.strength, all_counts)
        first = sum(n for n, _, _ in sizes[:rank])
        dtype = torch.promote_types(losses.dtype, torch.float32)
        scale = world if self.averaged_gradients else 1
        mine = torch.tensor(weights[first:first + rows], dtype=torch.float64).mul_(scale).to(losses.device, dtype)
        self.weights = torch.tensor(weights, dtype=torch.float64)
        self.weighted_loss = math.fsum(w * l for w, l in zip(weights, all_losses))
        self.stats = weight_stats(weights)
        self.steps += 1
        return (mine * losses.to(dtype)).sum()

    def histogram(self, bins=20, max_relative=4.0):
        """Counts of N w_i over [0, max_relative] (1 is the uniform weight) for the last call's weights."""
        if self.weights is None:
            raise RuntimeError("SampleReweighting.histogram: no batch was weighed yet")
        return relative_weight_histogram(self.weights.tolist(), whole_number(bins, "SampleReweighting: bins"), float(max_relative))

    def state_dict(self):
        return {"strategy": self.strategy, "strength": self.strength, "warmup": self.warmup, "steps": self.steps}

    def load_state_dict(self, state_dict):
        saved_state(state_dict, "SampleReweighting", ("strategy", "strength", "warmup", "steps"))
        saved = {key: state_dict[key] for key in ("strategy", "strength", "warmup")}
        if saved != {"strategy": self.strategy, "strength": self.strength, "warmup": self.warmup}:
            raise ValueError(f"the checkpoint's SampleReweighting had {saved}; this one has strategy={self.strategy!r}, "
                             f"strength={self.strength!r}, warmup={self.warmup!r}")
        self.steps = whole_number(state_dict["steps"], "SampleReweighting: steps")

    def _gather(self, dist, losses, counts, rows, ok):
        """Every rank's header (row count, whether its input is valid, whether it has token counts) and rows, in one
        all-gather and one copy to the host while the rows fit the capacity the ranks agreed on (the most rows any
        rank has held); a rank with more rows makes every rank gather once more, at the new capacity. One rank's bad
        input thus raises on every rank instead of leaving the others waiting in the next collective."""
        device = collective_device(dist, self.group)
        world = dist.get_world_size(self.group)
        capacity = self._capacity
        while True:
            mine = torch.zeros(3 + 2 * capacity, dtype=torch.float64, device=device)
            mine[:3] = torch.tensor([rows, ok, counts is not None], dtype=torch.float64)
            if ok and rows <= capacity:
                mine[3:3 + rows] = losses.detach().reshape(-1).to(device, torch.float64)
                if counts is not None:
                    mine[3 + capacity:3 + capacity + rows] = counts.to(device, torch.float64)
            gathered = [torch.empty_like(mine) for _ in range(world)]
            dist.all_gather(gathered, mine, group=self.group)
            table = torch.stack(gathered).cpu()  # the call's one device-to-host copy, unless the capacity grows
            sizes = [(int(n), bool(valid), bool(counted)) for n, valid, counted in table[:, :3].tolist()]
            longest = max(n for n, _, _ in sizes)
            if longest <= capacity or not all(valid for _, valid, _ in sizes):
                break
            capacity = longest  # every rank saw the same headers: all gather again, at the same new capacity
        self._capacity = max(self._capacity, longest)
        return sizes, table[:, 3:].reshape(world, 2, -1)


def _rows(table, sizes):
    """The global batch's losses and token counts, rank-major, from the gathered [rank, loss | count, capacity]."""
    losses = [v for rank, (n, _, _) in enumerate(sizes) for v in table[rank, 0, :n].tolist()]
    counted = sizes[0][2]
    counts = [v for rank, (n, _, _) in enumerate(sizes) for v in table[rank, 1, :n].tolist()] if counted else []
    return losses, counts


def _local_rows(losses, counts):
    return losses.detach().reshape(-1).double().tolist(), (counts.double().tolist() if counts is not None else [])


def _local_problem(losses, token_counts):
    """What is wrong with this rank's input, in words, or None."""
    if not torch.is_tensor(losses):
        return f"losses must be a tensor of per-sample losses (got {type(losses).__name__})"
    if losses.dim() != 1:
        return (f"losses must be one loss per sample, a 1-D tensor (got shape {tuple(losses.shape)}: reduce the "
                "token losses of each sample first, e.g. .mean(1))")
    if not losses.is_floating_point():
        return f"losses must be floating point (got {losses.dtype})"
    if token_counts is None:
        return None
    counts = torch.as_tensor(token_counts).detach()
    if counts.dim() != 1 or counts.numel() != losses.numel():
        return f"token_counts must hold one count per sample: {losses.numel()} (got shape {tuple(counts.shape)})"
    bad = ((counts <= 0) | ~torch.isfinite(counts.double())).nonzero().flatten().tolist()
    if bad:
        return f"token_counts must be > 0 (sample {bad[0]} has {counts[bad[0]].item()!r})"
    return None
