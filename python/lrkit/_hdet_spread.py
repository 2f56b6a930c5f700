"""The hyper-parameters lrkit.torch.HDET spreads besides the learning rate
(ALGORITHMS.md section 6: any scalar that does not change the architecture),
each with its own controller, permutation and bounds, as `lrkit train`'s
hdet.weight_decay_alpha and hdet.dropout_alpha: a number in the optimizer's
parameter groups (weight_decay, momentum, ...) is set by HDET in every group,
around each group's own initial value; any other value (dropout, label
smoothing) has a base the loop gives and reads back with hdet.value(name)."""
import re

from ._lrkit import Hdet
from ._torch_common import is_finite_number, is_number, shown

_SETTINGS = ("alpha", "base", "lower", "upper")


def in_api_words(error):
    """A C++ HdetConfig refusal in this API's words: it names the trainer's keys (hdet.alpha must be ...), which are
    HDET's arguments here (alpha=)."""
    return re.sub(r"\bhdet[. ]", "", str(error))


class SpreadValue:
    def __init__(self, name, setting, optimizer, template, seed):
        self.name = name
        setting = dict(alpha=setting) if is_number(setting) else setting
        if not isinstance(setting, dict) or "alpha" not in setting:
            raise ValueError(f"HDET spread['{name}'] must be its alpha (a number) or a dict with alpha and optionally "
                             f"base, lower, upper (got {shown(setting)})")
        unknown = sorted(set(setting) - set(_SETTINGS))
        if unknown:
            raise ValueError(f"HDET spread['{name}']: unknown setting(s) {unknown}; the settings are {list(_SETTINGS)}")
        self.in_groups = _number_in_every_group(name, optimizer)
        if self.in_groups and "base" in setting:
            raise ValueError(f"HDET spread['{name}']: '{name}' is in the optimizer's parameter groups, whose initial "
                             "values are the bases; base= is for values outside the optimizer")
        if not self.in_groups and "base" not in setting:
            keys = sorted(k for k in optimizer.param_groups[0] if k != "params")
            raise ValueError(f"HDET spread['{name}']: '{name}' is no number in every parameter group of the optimizer "
                             f"(its keys: {', '.join(keys)}); for another value give its base (spread={{'{name}': "
                             f"dict(alpha=0.5, base=0.1)}}) and apply hdet.value('{name}') in the loop")
        if self.in_groups:
            # Each group's value before any spread, kept in the group as PyTorch's schedulers keep initial_lr: an
            # optimizer restored from a checkpoint holds this rank's spread value, and its initial one beside it.
            for group in optimizer.param_groups:
                group.setdefault("initial_" + name, group[name])
            self.bases = [float(group["initial_" + name]) for group in optimizer.param_groups]
            nonzero = [b for b in self.bases if b != 0]
            if not nonzero:
                raise ValueError(f"HDET spread['{name}']: {name} is 0 in every parameter group: nothing to spread")
            self.base = nonzero[0]  # the reference the meta-update scales; every group moves by the same factor
        else:
            self.base = _finite_number(setting["base"], f"HDET spread['{name}']: base")
        config = template()
        config.alpha = _finite_number(setting["alpha"], f"HDET spread['{name}']: alpha")
        config.lower = _finite_number(setting.get("lower", 0.0), f"HDET spread['{name}']: lower")
        config.upper = _finite_number(setting.get("upper", 1e300), f"HDET spread['{name}']: upper")
        config.seed = seed
        try:
            config.validate()
        except ValueError as error:
            raise ValueError(f"HDET spread['{name}']: {in_api_words(error)}") from None
        self.controller = Hdet(config)
        self.state = self.controller.init()

    def value(self, rank, base=None):
        return self.controller.replica_value(self.state, rank, self.base if base is None else base)

    def apply(self, optimizer, rank):
        if self.in_groups:
            for group, base in zip(optimizer.param_groups, self.bases):
                group[self.name] = self.value(rank, base)


def _number_in_every_group(name, optimizer):
    values = [group.get(name) for group in optimizer.param_groups]
    if name == "params" or all(v is None for v in values):
        return False
    for v in values:
        if not is_number(v):
            raise ValueError(f"HDET spread['{name}']: a parameter group of the optimizer holds {name} = {v!r}, not a "
                             "number; HDET spreads numbers")
    return True


def _finite_number(value, what):
    if not is_finite_number(value):
        raise ValueError(f"{what} must be a finite number (got {shown(value)})")
    return float(value)
