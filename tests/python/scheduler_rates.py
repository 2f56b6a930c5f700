"""What the tests of Schedule.compare and fit_schedule share: the rates a PyTorch loop logs under a scheduler, and
Hugging Face's schedules as the functions their LambdaLR runs (transformers is not in Debian: transcribed from its
get_cosine_schedule_with_warmup and get_linear_schedule_with_warmup, as tests/golden/make_golden.py does). Imported
after the tests' importorskip of torch."""
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
