"""What lrkit's PyTorch integrations (LRScheduler, HDET, DispersionHook) share:
the schedule a loop runs, the parameter groups' rate ratios, checkpoint
compatibility, the process group's presence and files replaced whole, each
done one way."""
import contextlib
import csv
import errno
import math
import numbers
import operator
import os
import secrets
import sys
import warnings
from collections.abc import Mapping

import torch

from ._lrkit import Schedule


def distributed():
    """torch.distributed, once a process group exists; a clear RuntimeError otherwise."""
    import torch.distributed as dist

    if not dist.is_available():
        raise RuntimeError("this torch has no torch.distributed; lrkit's distributed tools need it")
    if not dist.is_initialized():
        raise RuntimeError("call torch.distributed.init_process_group first")
    return dist


def collective_device(dist, group):
    """Where the tensors of `group`'s collectives must live: NCCL takes only CUDA tensors (this process's
    current device), Gloo takes host tensors (and CUDA ones)."""
    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def is_number(value):
    """A real number, not a bool (which Python counts as an int)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def shown(value):
    """`value` as an error shows what the caller gave: its repr where that is short and on one line, else its type
    (an optimizer's or a tensor's repr runs over many lines)."""
    text = repr(value)
    return text if len(text) <= 60 and "\n" not in text else f"an object of type {type(value).__name__}"


def is_finite_number(value):
    return is_number(value) and math.isfinite(value)


def scalar_tensor(value, who, what="the loss"):
    """A number a loop hands over each step (a loss, a gradient norm): a Python or NumPy number or a one-element
    tensor, as a 0-d float64 tensor (a tensor's stays on its device: no wait for it here); a clear error otherwise.
    A per-sample loss vector would otherwise fail in a reshape with torch's words, or be taken apart silently."""
    if torch.is_tensor(value):
        if value.numel() != 1:
            raise ValueError(f"{who}: {what} must be one number (got a tensor of shape {tuple(value.shape)}; reduce it "
                             "first, e.g. .mean())")
        if value.dtype == torch.bool or value.is_complex():
            raise TypeError(f"{who}: {what} must be a real number (got a {value.dtype} tensor)")
        return value.detach().double().reshape(())
    if not isinstance(value, (bool, str, bytes)):
        try:
            return torch.tensor(float(value), dtype=torch.float64)
        except (TypeError, ValueError):
            pass
    shape = getattr(value, "shape", None)
    raise TypeError(f"{who}: {what} must be a number or a one-element tensor (got {type(value).__name__}"
                    f"{f' of shape {tuple(shape)}' if shape is not None else ''})")


def optional_distributed(group, who):
    """torch.distributed when a process group is initialized (looked up at each call: a loop may build lrkit's
    objects before init_process_group); None for a single-process loop, where a `group` given is an error."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist
    if group is not None:
        raise RuntimeError(f"{who} was given a process_group but no process group is initialized")
    return None


def whole_number(value, what):
    """`value` as an int >= 0, any integer type (a checkpoint's count may come back as a numpy or a 0-d torch
    integer; a bool is refused); a ValueError naming `what` otherwise."""
    try:
        number = -1 if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = -1
    if number < 0:
        raise ValueError(f"{what} must be a whole number >= 0 (got {shown(value)})")
    return number


def require_optimizer(optimizer, who):
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"{who} needs a torch.optim.Optimizer, got {type(optimizer).__name__}")


def loop_schedule(spec, total_steps):
    """The Schedule a training loop runs (lrkit.Schedule refuses a total that cuts a WSD-S's last decay), its rates
    checked over the run when it has an end: an infinite or NaN rate is refused here, not met as NaN weights."""
    if isinstance(spec, Schedule) and total_steps is not None and total_steps != spec.total_steps:
        # A Schedule carries its own length; a second, different one would be dropped without a word.
        raise ValueError(f"the Schedule '{spec.spec}' runs {spec.total_steps} steps but total_steps={total_steps!r} "
                         "was given too; give one of them")
    schedule = spec if isinstance(spec, Schedule) else Schedule(spec, total_steps)
    if schedule.total_steps is not None:
        schedule.check_rates()
    return schedule


_LIBRARY_FOLDERS = tuple(os.path.dirname(module.__file__) + os.sep for module in (torch, sys.modules[__package__]))


def stacklevel_of_caller():
    """warnings.warn's stacklevel, for the function that calls this, of the first frame outside torch and lrkit: the
    line of the user's loop, however many frames torch puts between it and a scheduler (2.11's step() has one more
    than 1.13's)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_FOLDERS):
        level, frame = level + 1, frame.f_back
    return level


def warn_past_end(scheduler, step):
    """Warns once per scheduler when the next update, `step`, lies past the end of its schedule: a loop longer than
    total_steps otherwise trains on at the end value (often 0) without a word (PyTorch's OneCycleLR raises there)."""
    total = scheduler.schedule.total_steps
    if total is None or step <= total or getattr(scheduler, "_warned_past_end", False):
        return
    scheduler._warned_past_end = True
    warnings.warn(f"{type(scheduler).__name__}: the loop has taken more than the {total} updates of its schedule "
                  f"'{scheduler.schedule.spec}'; the rate stays at its end value {scheduler.schedule(total)!r} "
                  "(give the loop's number of updates as total_steps)", stacklevel=stacklevel_of_caller())


def group_ratios(optimizer):
    """Each parameter group's initial rate over the first non-zero one's, as LambdaLR keeps them: a group built at 0
    stays at 0 (a frozen group; taking group 0 as the reference once made every ratio 1 when it was frozen, and every
    group trained at the scheduled rate); all at 0: all 1. Floats, also where the rates are tensors (a checkpoint's
    ratios must be numbers). The C++ schedulers keep the same ones (lrkit::distributed::rate_ratios)."""
    initial = [float(group.get("initial_lr", group["lr"])) for group in optimizer.param_groups]
    reference = next((rate for rate in initial if rate != 0), 0.0)
    return [1.0 if reference == 0 else rate / reference for rate in initial]


def require_a_ratio_per_group(optimizer, ratios, who):
    """The optimizer still has the groups `ratios` are for. A group added after the scheduler `who` was made has no
    ratio: PyTorch's schedulers leave it at its rate, unscheduled, without a word (lrkit's C++ schedulers refuse it
    with these words)."""
    groups = len(optimizer.param_groups)
    if groups != len(ratios):
        raise ValueError(f"{who}: the optimizer has {groups} parameter groups but had {len(ratios)} when {who} was "
                         f"made, so a group would keep its rate unscheduled; make {who} after adding every group")


def keep_initial_rates(optimizer):
    """Sets each group's initial_lr, as PyTorch's schedulers do, to a copy where the rate is a tensor: torch 1.13's
    schedulers keep the tensor itself, which set_rate's in-place update would then move along with the rate."""
    for group in optimizer.param_groups:
        if torch.is_tensor(group["lr"]) and "initial_lr" not in group:
            group["initial_lr"] = group["lr"].clone()


def set_rate(group, rate):
    """A parameter group's learning rate set to `rate`. A rate held as a tensor (torch.compile'd and capturable
    optimizer steps read it so; PyTorch's own schedulers fill it in place) stays that tensor: a float put in its
    place recompiles the compiled step at every new rate."""
    if torch.is_tensor(group["lr"]):
        group["lr"].fill_(rate)
    else:
        group["lr"] = rate


def saved_ratios(state_dict, optimizer, who):
    """A checkpoint's rate ratios, one finite number >= 0 per parameter group of `optimizer`: a list of another length
    left some groups at their old rates without a word, and a NaN made a NaN rate."""
    ratios = list(state_dict["ratios"])
    groups = len(optimizer.param_groups)
    if len(ratios) != groups or not all(is_finite_number(r) and r >= 0 for r in ratios):
        raise ValueError(f"the checkpoint's {who} holds rate ratios {ratios!r}; this optimizer needs one finite number "
                         f">= 0 for each of its {groups} parameter group(s)")
    return [float(r) for r in ratios]


def saved_state(state_dict, who, keys):
    """`state_dict` where it is what `who`'s own state_dict() returns, a mapping with `keys`. Anything else (another
    object's state, such as PyTorch's CosineAnnealingLR's in place of the scheduler's, or None from a checkpoint that
    did not save it) is refused naming what was given, instead of an AttributeError or a KeyError."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"{who}.load_state_dict takes what {who}.state_dict() returned, a dict; got "
                        f"{type(state_dict).__name__}")
    missing = [key for key in keys if key not in state_dict]
    if missing:
        held = [repr(key) for key in state_dict]
        listed = ", ".join(held[:8]) + (f" and {len(held) - 8} more" if len(held) > 8 else "")
        raise ValueError(f"{who}.load_state_dict: the state has no {', '.join(map(repr, missing))}, so it is not what "
                         f"{who}.state_dict() returned (its keys: {listed or 'none'})")
    return state_dict


def check_same_schedule(state_dict, schedule, who):
    spec, total = state_dict.get("spec"), state_dict.get("total_steps")
    if spec != schedule.spec or total != schedule.total_steps:
        raise ValueError(f"the checkpoint's {who} ran schedule '{spec}' (total_steps={total}); "
                         f"this one runs '{schedule.spec}' (total_steps={schedule.total_steps})")


def _name_cut_to(name, room):
    """`name` cut to at most `room` bytes as the file system stores it, at a character's start where it is UTF-8."""
    stored = os.fsencode(name)
    if len(stored) <= room:
        return name
    end = room
    while end > 0 and stored[end] & 0xC0 == 0x80:
        end -= 1
    return os.fsdecode(stored[:end])


def _reserve_unfinished(path):
    """A new empty file beside `path`, '.NAME.PID-HEX.unfinished': a name of its own, made with O_EXCL and the mode any
    new file gets (the umask's). NAME is cut where the whole would pass the file system's longest name, so that a
    `path` as long as the file system takes can be written."""
    folder, name = os.path.split(os.fspath(path))
    try:
        longest = os.pathconf(folder or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    while True:
        mark = f".{os.getpid()}-{secrets.token_hex(4)}.unfinished"
        unfinished = os.path.join(folder or ".", "." + _name_cut_to(name, max(longest - len(mark) - 1, 0)) + mark)
        try:
            os.close(os.open(unfinished, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))
            return unfinished
        except FileExistsError:
            continue


@contextlib.contextmanager
def written_whole(path):
    """Yields a file beside `path` to write its next version in, renamed over `path` when the block ends: a kill in
    between leaves the old version whole. The file is this writer's own, so two writers of one file (the ranks of a
    loop that each save it) never write into one, where a reader found half of one version with half of the other
    and one writer's rename failed. On any exception, Ctrl-C included, it is removed and `path` stays as it was."""
    unfinished = _reserve_unfinished(path)
    try:
        yield unfinished
        os.replace(unfinished, path)
    except BaseException:
        try:
            os.remove(unfinished)
        except FileNotFoundError:
            pass
        raise


def require_replaceable(path, refusal="cannot write"):
    """Files are written whole beside `path` and renamed over it: a device, pipe or socket there (os.devnull, as root,
    or a link to it) would be replaced by a regular file; nothing can be written through a loop of links. Refused with
    a ValueError, "<refusal> '<path>': ..."."""
    if os.path.islink(path) and not os.path.exists(path):
        try:
            os.stat(path)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise ValueError(f"{refusal} '{path}': it is a link in a loop of links") from None
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        raise ValueError(f"{refusal} '{path}': it is not a regular file (a device or pipe), and writing the file whole "
                         "and renaming it into place would replace it: name a file")


def through_links(path):
    """Where `path` leads: the file a link there names (through a chain of links; for a dangling link, the file to
    create), else `path`. Files are written beside it and renamed over it: beside the link, the rename would put a
    file in the link's place and leave the file it names as it was, where a shell's `>` writes through the link.
    Call after require_replaceable, which refuses a loop of links."""
    return os.path.realpath(path) if os.path.islink(path) else path


def write_csv(path, header, rows):
    """A CSV file written whole or not at all (a kill while a loop saves its norms kept half a file). An OSError names
    `path`, and the unfinished file is removed (a folder given as the path left one beside it). A link at
    `path` stays, and the file it names gets the rows."""
    path = os.fspath(path)
    require_replaceable(path)
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(21, "Is a directory")
        with written_whole(through_links(path)) as unfinished, open(unfinished, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(rows)
    except OSError as error:
        raise type(error)(error.errno, f"cannot write '{path}': {error.strerror or error}") from None
