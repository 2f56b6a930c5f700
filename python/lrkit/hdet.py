"""HDET in a torch.distributed (or DDP) loop (ALGORITHMS.md section 6): each
rank trains at its own spread learning rate around the schedule's, the
parameters are averaged every sync_every steps, and the auto-LR meta-update
moves the base rate toward the ranks whose window loss was lowest. The
controller is lrkit's C++ one (lrkit.Hdet); this class only feeds it.

    hdet = HDET(optimizer, model, "cosine(peak=1e-3)", total_steps, alpha=1/9, sync_every=100)
    for ...:
        loss.backward()            # DDP all-reduces the gradients (the paper's shared-gradient mode)
        optimizer.step()
        hdet.step(loss)            # gathers the ranks' losses, averages, meta-updates, sets the next rate

The gathered losses stay where the collective left them (an NCCL group's: on
the GPU) until the step that ends a sync window needs them: one copy to the
host per window, not a wait for the device every step. Reading hdet.state or
hdet.state_dict() hands them over first.

alpha = 0 reproduces the plain loop bit for bit: every rank then has the
schedule's rate and identical parameters, so nothing is averaged.

spread={"weight_decay": 0.5} spreads another hyper-parameter too, with its own
permutation (see lrkit._hdet_spread): a number of the optimizer's parameter
groups is set in every group; any other value, spread={"dropout":
dict(alpha=0.5, base=0.1, upper=0.5)}, is read with hdet.value("dropout").
"""
import torch

from ._hdet_spread import SpreadValue, in_api_words
from ._lrkit import Hdet, HdetConfig, HdetState
from ._torch_common import (check_same_schedule, collective_device, distributed, group_ratios, is_number, loop_schedule,
                            require_a_ratio_per_group, require_optimizer, saved_ratios, saved_state, scalar_tensor,
                            set_rate, shown, warn_past_end, whole_number)

__all__ = ["HDET"]

_BUCKET_BYTES = 25 << 20
_STATE_FIELDS = ("step", "syncs", "scale", "offset", "velocity", "delta", "permutation", "window_loss", "window_steps")


class HDET:
    def __init__(self, optimizer, model, schedule, total_steps=None, *, alpha=1.0 / 9.0, sync_every=100, auto_lr=True,
                 warmup_steps=0, sigma=0.1, standardize=False, beta=0.9, meta_lr=0.5, min_scale=0.05, max_scale=20.0,
                 seed=0, spread=None, process_group=None):
        require_optimizer(optimizer, "HDET")
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"HDET needs the model (a torch.nn.Module), got {type(model).__name__}")
        self._dist = distributed()
        self.group = process_group
        self.world = self._dist.get_world_size(process_group)
        self.rank = self._dist.get_rank(process_group)
        self.device = collective_device(self._dist, process_group)
        # broadcast's src is a global rank: the group's first member, not rank 0, which a data-parallel group of a
        # model-parallel job may not hold.
        self.leader = 0 if process_group is None else self._dist.get_global_rank(process_group, 0)
        self.optimizer, self.model = optimizer, model
        self.schedule = loop_schedule(schedule, total_steps)
        def config():
            """The settings every spread hyper-parameter shares; alpha, bounds and seed are each one's own."""
            c = HdetConfig()
            c.replicas = self.world
            for key, value in dict(alpha=alpha, sync_every=sync_every, auto_lr=auto_lr, warmup_steps=warmup_steps,
                                   sigma=sigma, standardize=standardize, beta=beta, meta_lr=meta_lr, min_scale=min_scale,
                                   max_scale=max_scale, seed=seed).items():
                setattr(c, key, _setting(key, value))
            return c

        lr_config = config()
        try:
            lr_config.validate()
        except ValueError as error:
            raise ValueError(f"HDET {in_api_words(error)}") from None
        self.controller = Hdet(lr_config)
        self._state = self.controller.init()
        self._pending = []  # the losses of the steps since the last hand-over, one tensor of the ranks' per step
        if spread is not None and not isinstance(spread, dict):
            raise TypeError(f"HDET spread must be a dict of name -> alpha or settings (got {type(spread).__name__})")
        if spread and "lr" in spread:
            raise ValueError("HDET spread: the learning rate is always spread; alpha= sets its spread")
        # Each its own permutations: seeds apart from the learning rate's and from each other.
        self.spread = [SpreadValue(name, setting, optimizer, config, (seed + (i + 1) * 0x9E3779B97F4A7C15) % (1 << 64))
                       for i, (name, setting) in enumerate((spread or {}).items())]
        self.ratios = group_ratios(optimizer)
        self._agree_on_permutation()
        self._apply()

    @property
    def state(self):
        """The controller's state (an lrkit.HdetState), every step's losses observed."""
        self._observe_pending()
        return self._state

    def _next_step(self):
        """The step the next update is: the observed steps and those whose losses are pending."""
        return self._state.step + len(self._pending)

    def lr(self):
        """This rank's rate for the next step."""
        return self.controller.replica_value(self._state, self.rank, self.schedule(self._next_step()))

    def base_lr(self):
        """The corrected base rate (the ranks' mean) for the next step."""
        return self.controller.base_value(self._state, self.schedule(self._next_step()))

    def value(self, name):
        """This rank's value of a spread hyper-parameter for the next step (for one in the parameter groups: the
        first group's with a non-zero initial value)."""
        return self._spread_value(name).value(self.rank)

    def base_value(self, name):
        """The corrected base of a spread hyper-parameter (the ranks' mean before clamping)."""
        entry = self._spread_value(name)
        return entry.controller.base_value(entry.state, entry.base)

    def step(self, local_loss):
        require_a_ratio_per_group(self.optimizer, self.ratios, "HDET")
        mine = scalar_tensor(local_loss, "HDET.step").reshape(1).to(self.device)
        gathered = [torch.empty_like(mine) for _ in range(self.world)]
        self._dist.all_gather(gathered, mine, group=self.group)
        self._pending.append(torch.cat(gathered))
        # Between syncs the rates depend on the step alone (the window's losses wait), so only a sync copies them.
        if self.controller.sync_due_after(self._state, len(self._pending)):
            self._observe_pending()
            if self._spread_at_all():  # every alpha 0: the ranks are identical already
                self._average_parameters()
            self._state = self.controller.sync(self._state, self.schedule(self._state.step - 1))
            for entry in self.spread:
                entry.state = entry.controller.sync(entry.state, entry.base)
            self._agree_on_permutation()
        self._apply()

    def _observe_pending(self):
        """Hands the pending steps' losses to the controllers, in order, in one copy to the host."""
        if not self._pending:
            return
        rows = torch.stack(self._pending).cpu().tolist()
        self._pending = []
        for losses in rows:
            self._state = self.controller.observe(self._state, losses)
            for entry in self.spread:
                entry.state = entry.controller.observe(entry.state, losses)

    def _spread_at_all(self):
        return any(c.config.alpha > 0 for c in [self.controller] + [entry.controller for entry in self.spread])

    def _spread_value(self, name):
        for entry in self.spread:
            if entry.name == name:
                return entry
        raise KeyError(f"HDET spreads no '{name}' (spread: {[entry.name for entry in self.spread]})")

    def _average_parameters(self):
        """Every rank's parameters become the ranks' mean: one all-reduce per bucket of about 25 MB of parameters of
        one device and dtype, flattened (as lrkit's C++ HDET and DDP do), not one per tensor. A tensor of 25 MB or
        more is reduced in place, so the flat copy is under 50 MB whatever the model's size."""
        with torch.no_grad():
            for bucket in _buckets(list(self.model.parameters()), _BUCKET_BYTES):
                in_place = len(bucket) == 1 and bucket[0].is_contiguous()
                flat = bucket[0].detach() if in_place else torch.cat([p.detach().reshape(-1) for p in bucket])
                self._dist.all_reduce(flat, group=self.group)
                flat.div_(self.world)
                if not in_place:
                    for p, mean in zip(bucket, flat.split([p.numel() for p in bucket])):
                        p.detach().copy_(mean.view_as(p))

    def _agree_on_permutation(self):
        # The permutation is a pure function of (seed, sync index); the group's first rank's is broadcast so ranks
        # cannot disagree.
        if self.world == 1:
            return
        states = [self] + self.spread  # each holds a .state; one broadcast carries every permutation
        permutations = torch.tensor([holder.state.permutation for holder in states], dtype=torch.long, device=self.device)
        self._dist.broadcast(permutations, src=self.leader, group=self.group)
        for holder, permutation in zip(states, permutations.tolist()):
            holder.state.permutation = permutation

    def _apply(self):
        warn_past_end(self, self._next_step())
        rate = self.lr()
        for group, ratio in zip(self.optimizer.param_groups, self.ratios):
            set_rate(group, rate * ratio)
        for entry in self.spread:
            entry.apply(self.optimizer, self.rank)

    def state_dict(self):
        return {"spec": self.schedule.spec, "total_steps": self.schedule.total_steps, "ratios": list(self.ratios),
                "state": _fields(self.state), "spread": {entry.name: _fields(entry.state) for entry in self.spread}}

    def load_state_dict(self, state_dict):
        saved_state(state_dict, "HDET", ("spec", "total_steps", "ratios", "state"))
        check_same_schedule(state_dict, self.schedule, "HDET")
        saved = state_dict["state"]
        if len(saved["permutation"]) != self.world:
            raise ValueError(f"the checkpoint's HDET had {len(saved['permutation'])} ranks; this run has {self.world}")
        saved_spread = state_dict.get("spread", {})  # checkpoints from before spread= hold none
        if list(saved_spread) != [entry.name for entry in self.spread]:
            raise ValueError(f"the checkpoint's HDET spread {list(saved_spread) or 'only the learning rate'}; this one "
                             f"spreads {[entry.name for entry in self.spread] or 'only the learning rate'}")
        state = _state(saved)
        spread_states = [_state(saved_spread[entry.name]) for entry in self.spread]
        try:  # a damaged or hand-edited state would index past the ranks at the next step
            for controller, checked in zip([self.controller] + [e.controller for e in self.spread], [state] + spread_states):
                controller.check_state(checked)
        except ValueError as error:
            raise ValueError(f"the checkpoint's HDET state does not fit this one: {error}") from None
        ratios = saved_ratios(state_dict, self.optimizer, "HDET")
        # All checked: a refused checkpoint leaves this HDET as it was. The pending losses were the old trajectory's.
        self._state, self.ratios, self._pending = state, ratios, []
        for entry, entry_state in zip(self.spread, spread_states):
            entry.state = entry_state
        self._apply()


def _setting(key, value):
    """An HDET setting as HdetConfig takes it, or an error naming it (pybind11's words list a C++ signature)."""
    if key in ("sync_every", "warmup_steps", "seed"):
        number = whole_number(value, f"HDET {key}")
        if number >= 1 << 64:
            raise ValueError(f"HDET {key} must be below 2**64 (got {value!r})")
        return number
    if key in ("auto_lr", "standardize"):
        if not isinstance(value, bool):
            raise TypeError(f"HDET {key} must be True or False (got {shown(value)})")
        return value
    if not is_number(value):
        raise TypeError(f"HDET {key} must be a number (got {shown(value)})")
    return float(value)


def _fields(state):
    return {k: getattr(state, k) for k in _STATE_FIELDS}


def _state(fields):
    state = HdetState()
    for key in _STATE_FIELDS:
        if key not in fields:
            raise ValueError(f"the checkpoint's HDET state has no '{key}' (it holds {sorted(fields)})")
        try:
            setattr(state, key, fields[key])
        except TypeError:  # pybind11's words list the C++ signature
            kind = {int: "a whole number", float: "a number"}.get(type(getattr(state, key)), "a list of numbers")
            raise TypeError(f"the checkpoint's HDET state holds {key} = {fields[key]!r}; it must be {kind}") from None
    return state


def _buckets(parameters, limit):
    """The parameters in buckets of one device and dtype, each closed once it holds `limit` bytes or more, in
    model order within a kind (every rank builds the same buckets from the same model); a tensor of `limit` bytes
    or more is a bucket of its own."""
    open_buckets, done = {}, []
    for p in parameters:
        if p.numel() * p.element_size() >= limit:
            done.append([p])
            continue
        kind = (p.device, p.dtype)
        bucket = open_buckets.setdefault(kind, [[], 0])
        bucket[0].append(p)
        bucket[1] += p.numel() * p.element_size()
        if bucket[1] >= limit:
            done.append(bucket[0])
            del open_buckets[kind]
    return done + [tensors for tensors, _ in open_buckets.values()]
