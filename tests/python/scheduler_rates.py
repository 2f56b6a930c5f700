"""What the tests of Schedule.compare and fit_schedule share: the rates a PyTorch loop logs under a scheduler, and
Hugging Face's schedules as the functions their LambdaLR runs (transformers is not in Debian: transcribed from its
transformers/optimization.py, as tests/golden/make_golden.py does). Imported after the tests' importorskip of
torch."""
import math


def rates_of(optimizer, scheduler, steps):
    """The rate of each of `steps` updates under a PyTorch scheduler, read before the update as a loop logs it."""
    rates = []
    for _ in range(steps):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return rates


def hugging_face_cosine(warmup, length):
    """get_cosine_schedule_with_warmup's multiplier (num_cycles 0.5), past `length` too (where it rises again)."""
    def multiplier(step):
        if step < warmup:
            return step / max(1, warmup)
        progress = (step - warmup) / max(1, length - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress)))
    return multiplier


def hugging_face_linear(warmup, length):
    """get_linear_schedule_with_warmup's multiplier."""
    return lambda step: step / max(1, warmup) if step < warmup else max(0.0, (length - step) / max(1, length - warmup))


def hugging_face_wsd(warmup, decay, length, min_lr_ratio, decay_type="linear"):
    """_get_wsd_scheduler_lambda's multiplier with a linear warmup and no stable-step count (the stable phase fills
    the run): from min_lr_ratio up, and down to it."""
    stable = length - warmup - decay

    def multiplier(step):
        if step < warmup:
            return step / max(1, warmup) * (1.0 - min_lr_ratio) + min_lr_ratio
        if step < warmup + stable:
            return 1.0
        if step < length:
            progress = (step - warmup - stable) / max(1, decay)
            factor = {"linear": 1.0 - progress, "cosine": 0.5 * (1.0 + math.cos(math.pi * progress)),
                      "1-sqrt": 1.0 - math.sqrt(progress)}[decay_type]
            return max(0.0, factor * (1.0 - min_lr_ratio) + min_lr_ratio)
        return min_lr_ratio
    return multiplier


def hugging_face_polynomial(warmup, length, peak, lr_end, power):
    """get_polynomial_decay_schedule_with_warmup's multiplier of the optimizer's rate `peak`."""
    def multiplier(step):
        if step < warmup:
            return step / max(1, warmup)
        if step > length:
            return lr_end / peak
        remaining = 1 - (step - warmup) / (length - warmup)
        return ((peak - lr_end) * remaining ** power + lr_end) / peak
    return multiplier


def hugging_face_cosine_with_restarts(warmup, length, cycles):
    """get_cosine_with_hard_restarts_schedule_with_warmup's multiplier."""
    def multiplier(step):
        if step < warmup:
            return step / max(1, warmup)
        progress = (step - warmup) / max(1, length - warmup)
        if progress >= 1.0:
            return 0.0
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((cycles * progress) % 1.0))))
    return multiplier
