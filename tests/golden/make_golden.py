#!/usr/bin/env python3
"""Regenerates tests/golden/schedules.tsv and schedules_momentum.tsv from PyTorch's own LR schedulers.

Run with a Python that imports torch (on Debian, the system interpreter with python3-torch):
    python3 tests/golden/make_golden.py [OUTPUT]   (default: beside this script)
    python3 tests/golden/make_golden.py --check COMMITTED FRESH   (the suite's check: values within 1e-12)
OUTPUT (COMMITTED, FRESH) names the rates' file; the momentum's is beside it, with _momentum before .tsv.
Each row of the rates: case name, lrkit spec, total steps T, then the learning rate PyTorch
uses for updates 0..T-1 (read from the optimizer before each step, the way a
training loop sees it). The Hugging Face rows (hf_*) transcribe the formulas of
transformers' get_scheduler (not packaged in Debian) in wsd_lambda and hf_lambda below, the Megatron-LM rows
(megatron_*) its OptimizerParamScheduler.get_lr in megatron_lr, the timm rows (timm_*) its schedulers' _get_lr in
timm_lr.
Each row of the momentum: case name, lrkit spec, T, base and max momentum, then the momentum (SGD's, or Adam's
beta1) that OneCycleLR or CyclicLR with cycle_momentum sets for updates 0..T-1.
"""
import math
import os
import sys

import torch
from torch.optim import lr_scheduler as S


def run(peak, make_scheduler, total, read=lambda group: group["lr"], optimizer=torch.optim.SGD):
    param = torch.nn.Parameter(torch.zeros(1))
    opt = optimizer([param], lr=peak)
    sched = make_scheduler(opt)
    values = []
    for _ in range(total):
        values.append(read(opt.param_groups[0]))
        opt.step()
        sched.step()
    return values


def momentum_of(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def wsd_lambda(step, warmup, stable, decay, decay_type, min_lr_ratio, warmup_type="linear"):
    """transformers.optimization._get_wsd_scheduler_lambda (num_cycles=0.5)."""
    if step < warmup:
        progress = step / max(1, warmup)
        if warmup_type == "linear":
            factor = progress
        elif warmup_type == "cosine":
            factor = 0.5 * (1.0 - math.cos(math.pi * progress))
        else:  # 1-sqrt
            factor = 1.0 - math.sqrt(1.0 - progress)
        return max(0.0, factor * (1.0 - min_lr_ratio) + min_lr_ratio)
    if step < warmup + stable:
        return 1.0
    if step < warmup + stable + decay:
        progress = (step - warmup - stable) / max(1, decay)
        if decay_type == "linear":
            factor = 1.0 - progress
        elif decay_type == "cosine":
            factor = 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress))
        else:  # 1-sqrt
            factor = 1.0 - math.sqrt(progress)
        return max(0.0, factor * (1.0 - min_lr_ratio) + min_lr_ratio)
    return min_lr_ratio


def hf_wsd(peak, warmup, decay, total, decay_type, ratio, warmup_type="linear", stable=None):
    stable = total - warmup - decay if stable is None else stable
    return run(peak, lambda o: S.LambdaLR(o, lambda t: wsd_lambda(t, warmup, stable, decay, decay_type, ratio,
                                                                  warmup_type)), total)


# The other multipliers of transformers.get_scheduler (transformers/optimization.py), each with its linear warmup
# from 0 over W steps, for T steps in all.
def hf_warmup(step, warmup):
    return step / max(1, warmup)


def hf_lambda(name, warmup, total, **kw):
    def multiplier(step):
        if step < warmup and name != "cosine_warmup_with_min_lr":
            return hf_warmup(step, warmup)
        progress = (step - warmup) / max(1, total - warmup)
        if name == "constant_with_warmup":
            return 1.0
        if name == "linear":
            return max(0.0, (total - step) / max(1, total - warmup))
        if name in ("cosine", "cosine_with_min_lr"):
            factor = 0.5 * (1.0 + math.cos(math.pi * kw.get("num_cycles", 0.5) * 2.0 * progress))
            rate = kw.get("min_lr_rate", 0.0)
            return max(0, factor * (1 - rate) + rate)
        if name == "cosine_with_restarts":
            if progress >= 1.0:
                return 0.0
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((kw["num_cycles"] * progress) % 1.0))))
        if name == "polynomial":  # lr_init: the optimizer's rate, which LambdaLR multiplies back
            lr_init, lr_end = kw["lr_init"], kw["lr_end"]
            remaining = 1 - (step - warmup) / (total - warmup)
            return ((lr_init - lr_end) * remaining ** kw["power"] + lr_end) / lr_init
        if name == "cosine_warmup_with_min_lr":  # counts steps from 1; warmup_lr_rate r: from r * peak in W - 1 steps
            rate, start = kw["min_lr_rate"], kw.get("warmup_lr_rate")
            if step < warmup:
                return (step + 1.0) / max(1.0, warmup) if start is None else \
                    start + (1.0 - start) * step / max(1, warmup - 1)
            factor = 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * (step - warmup + 1.0) / max(1.0, total - warmup)))
            return max(0, factor * (1 - rate) + rate)
        if name == "inverse_sqrt":
            timescale = kw.get("timescale") or warmup or 10_000
            return 1.0 / math.sqrt((step + timescale - warmup) / timescale)
        raise ValueError(name)
    return multiplier


def hf(name, peak, warmup, total, **kw):
    return run(peak, lambda o: S.LambdaLR(o, hf_lambda(name, warmup, total, lr_init=peak, **kw)), total)


CASES = [
    ("cosine_annealing", "cosine(peak=1e-3, floor=1e-5)", 100,
     lambda: run(1e-3, lambda o: S.CosineAnnealingLR(o, T_max=100, eta_min=1e-5), 100)),
    ("cosine_annealing_long", "cosine(0.1)", 1000,
     lambda: run(0.1, lambda o: S.CosineAnnealingLR(o, T_max=1000), 1000)),
    ("linear_decay", "linear(peak=0.5, floor=0.005)", 500,
     lambda: run(0.5, lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.01, total_iters=500), 500)),
    ("linear_ramp", "linear(0.05, 0.5)", 50,
     lambda: run(0.5, lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=50), 50)),
    ("onecycle_default", "onecycle(peak=0.01)", 1000,
     lambda: run(0.01, lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=1000), 1000)),
    ("onecycle_linear_three_phase",
     "onecycle(peak=0.1, pct_start=0.25, div_factor=10, final_div_factor=100, anneal=linear, three_phase=true)", 333,
     lambda: run(0.1, lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=333, pct_start=0.25, div_factor=10,
                                             final_div_factor=100, anneal_strategy="linear", three_phase=True), 333)),
    ("onecycle_short", "onecycle(peak=0.3, pct_start=0.4)", 17,
     lambda: run(0.3, lambda o: S.OneCycleLR(o, max_lr=0.3, total_steps=17, pct_start=0.4), 17)),
    ("polynomial_square", "polynomial(peak=0.01, power=2)", 200,
     lambda: run(0.01, lambda o: S.PolynomialLR(o, total_iters=200, power=2.0), 200)),
    ("polynomial_sqrt", "polynomial(peak=0.01, power=0.5)", 200,
     lambda: run(0.01, lambda o: S.PolynomialLR(o, total_iters=200, power=0.5), 200)),
    ("step", "step(peak=0.1, every=30, gamma=0.5)", 200,
     lambda: run(0.1, lambda o: S.StepLR(o, step_size=30, gamma=0.5), 200)),
    ("multistep", "multistep(peak=0.1, milestones=[50, 120, 160], gamma=0.2)", 200,
     lambda: run(0.1, lambda o: S.MultiStepLR(o, milestones=[50, 120, 160], gamma=0.2), 200)),
    ("exponential", "exponential(peak=0.1, gamma=0.99)", 500,
     lambda: run(0.1, lambda o: S.ExponentialLR(o, gamma=0.99), 500)),
    ("warm_restarts_mult2", "restarts(peak=0.1, period=50, mult=2, floor=1e-4)", 700,
     lambda: run(0.1, lambda o: S.CosineAnnealingWarmRestarts(o, T_0=50, T_mult=2, eta_min=1e-4), 700)),
    ("cyclic_triangular", "triangular(peak=0.1, floor=0.01, up=20)", 200,
     lambda: run(0.01, lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=20, cycle_momentum=False), 200)),
    ("cyclic_triangular2_uneven", "triangular(peak=0.1, floor=0.001, up=15, down=25, mode=triangular2)", 300,
     lambda: run(0.001, lambda o: S.CyclicLR(o, base_lr=0.001, max_lr=0.1, step_size_up=15, step_size_down=25,
                                             mode="triangular2", cycle_momentum=False), 300)),
    ("cyclic_exp_range", "triangular(peak=0.05, floor=0.005, up=10, mode=exp_range, gamma=0.995)", 250,
     lambda: run(0.005, lambda o: S.CyclicLR(o, base_lr=0.005, max_lr=0.05, step_size_up=10, mode="exp_range",
                                             gamma=0.995, cycle_momentum=False), 250)),
    ("warm_restarts_mult1", "restarts(peak=0.05, period=40)", 300,
     lambda: run(0.05, lambda o: S.CosineAnnealingWarmRestarts(o, T_0=40), 300)),
]


def sequential(peak, parts, milestones, total):
    """SequentialLR over schedulers made by `parts` (each given the optimizer)."""
    return run(peak, lambda o: S.SequentialLR(o, [part(o) for part in parts], milestones=milestones), total)


# PyTorch's composite recipes (torchvision's reference scripts warm up with LinearLR or ConstantLR in a SequentialLR).
CASES += [
    ("sequential_linear_cosine", "cosine(peak=0.5, floor=1e-4, warmup=5, warmup_init=0.005)", 90,
     lambda: sequential(0.5, [lambda o: S.LinearLR(o, start_factor=0.01, total_iters=5),
                              lambda o: S.CosineAnnealingLR(o, T_max=85, eta_min=1e-4)], [5], 90)),
    ("sequential_linear_step", "join(linear(0.001, 0.1, 10), step(peak=0.1, every=30, gamma=0.1), at=[10])", 200,
     lambda: sequential(0.1, [lambda o: S.LinearLR(o, start_factor=0.01, total_iters=10),
                              lambda o: S.StepLR(o, step_size=30, gamma=0.1)], [10], 200)),
    ("sequential_constant_exponential", "join(constant(0.05), exponential(peak=0.1, gamma=0.98), at=[20])", 200,
     lambda: sequential(0.1, [lambda o: S.ConstantLR(o, factor=0.5, total_iters=20),
                              lambda o: S.ExponentialLR(o, gamma=0.98)], [20], 200)),
    ("constant_lr", "join(constant(0.025), constant(0.1), at=[5])", 50,
     lambda: run(0.1, lambda o: S.ConstantLR(o, factor=0.25, total_iters=5), 50)),
]
CASES += [
    ("hf_constant_with_warmup", "constant(peak=3e-4, warmup=100)", 1000,
     lambda: hf("constant_with_warmup", 3e-4, 100, 1000)),
    ("hf_linear", "linear(peak=3e-4, warmup=100)", 1000, lambda: hf("linear", 3e-4, 100, 1000)),
    ("hf_cosine", "cosine(peak=3e-4, warmup=100)", 1000, lambda: hf("cosine", 3e-4, 100, 1000)),
    ("hf_cosine_with_min_lr", "cosine(peak=3e-4, floor=10%, warmup=100)", 1000,
     lambda: hf("cosine_with_min_lr", 3e-4, 100, 1000, min_lr_rate=0.1)),
    ("hf_cosine_cycles", "cosine(peak=3e-4, warmup=100, cycles=1)", 1000,
     lambda: hf("cosine", 3e-4, 100, 1000, num_cycles=1)),
    ("hf_cosine_with_min_lr_cycles", "cosine(peak=3e-4, floor=10%, warmup=100, cycles=1.75)", 1000,
     lambda: hf("cosine_with_min_lr", 3e-4, 100, 1000, min_lr_rate=0.1, num_cycles=1.75)),
    ("hf_cosine_with_restarts", "restarts(peak=3e-4, period=300, warmup=100)", 1000,
     lambda: hf("cosine_with_restarts", 3e-4, 100, 1000, num_cycles=3)),
    ("hf_cosine_with_restarts_cycles", "restarts(peak=3e-4, cycles=3, warmup=100)", 1000,
     lambda: hf("cosine_with_restarts", 3e-4, 100, 1000, num_cycles=3)),
    ("hf_cosine_with_restarts_uneven", "restarts(peak=3e-4, cycles=7, warmup=100)", 1000,
     lambda: hf("cosine_with_restarts", 3e-4, 100, 1000, num_cycles=7)),
    ("hf_cosine_warmup_with_min_lr", "cosine(peak=3e-4, floor=10%, warmup=99, warmup_init=3e-6, total=999)", 1000,
     lambda: hf("cosine_warmup_with_min_lr", 3e-4, 100, 1000, min_lr_rate=0.1)),
    ("hf_cosine_warmup_with_min_lr_rate",
     "cosine(peak=3e-4, floor=10%, warmup=99, warmup_init=1.5e-5, total=999)", 1000,
     lambda: hf("cosine_warmup_with_min_lr", 3e-4, 100, 1000, min_lr_rate=0.1, warmup_lr_rate=0.05)),
    ("hf_polynomial", "polynomial(peak=3e-4, floor=1e-7, power=2, warmup=100)", 1000,
     lambda: hf("polynomial", 3e-4, 100, 1000, lr_end=1e-7, power=2.0)),
    ("hf_inverse_sqrt", "invsqrt(peak=3e-4, warmup=100)", 1000, lambda: hf("inverse_sqrt", 3e-4, 100, 1000)),
    ("hf_inverse_sqrt_timescale", "invsqrt(peak=3e-4, warmup=100, timescale=400, shift=true)", 1000,
     lambda: hf("inverse_sqrt", 3e-4, 100, 1000, timescale=400)),
]
for shape in ("linear", "cosine", "1-sqrt"):
    CASES.append((f"hf_wsd_{shape}", f"wsd(peak=1e-3, warmup=100, decay=200, shape={shape})", 1000,
                  lambda s=shape: hf_wsd(1e-3, 100, 200, 1000, s, 0.0)))
    CASES.append((f"hf_wsd_{shape}_min_ratio", f"wsd(peak=1e-3, warmup=100, decay=20%, shape={shape}, floor=10%, "
                  "warmup_init=1e-4)", 1000, lambda s=shape: hf_wsd(1e-3, 100, 200, 1000, s, 0.1)))
for warmup_shape in ("cosine", "1-sqrt"):
    CASES.append((f"hf_wsd_{warmup_shape}_warmup", f"wsd(peak=1e-3, warmup=100, decay=200, shape=cosine, floor=10%, "
                  f"warmup_init=1e-4, warmup_shape={warmup_shape})", 1000,
                  lambda w=warmup_shape: hf_wsd(1e-3, 100, 200, 1000, "cosine", 0.1, warmup_type=w)))
CASES.append(("hf_wsd_stable_steps", "wsd(peak=1e-3, warmup=100, decay=200, shape=linear, floor=10%, "
              "warmup_init=1e-4, total=800)", 1000, lambda: hf_wsd(1e-3, 100, 200, 1000, "linear", 0.1, stable=500)))


def megatron_lr(step, init, peak, floor, warmup, decay_steps, style, wsd_decay=0, wsd_style="linear"):
    """megatron.core.optimizer_param_scheduler.OptimizerParamScheduler.get_lr at num_steps = step (iterations; with
    sample counts every ratio below is the same quotient)."""
    if warmup > 0 and step <= warmup:
        return init + ((peak - init) * float(step) / float(warmup))
    if style == "constant":
        return peak
    if step > decay_steps:
        return floor
    if style == "inverse-square-root":
        return max(floor, peak * max(warmup, 1) ** 0.5 / (max(step, 1) ** 0.5))
    ratio = float(step - warmup) / float(decay_steps - warmup)
    if style == "linear":
        coeff = 1.0 - ratio
    elif style == "cosine":
        coeff = 0.5 * (math.cos(math.pi * ratio) + 1.0)
    else:  # WSD
        anneal_start = decay_steps - wsd_decay
        if step <= anneal_start:
            coeff = 1.0
        else:
            r = float(step - anneal_start) / float(wsd_decay)
            coeff = {"linear": lambda: 1.0 - r, "cosine": lambda: 0.5 * (math.cos(math.pi * r) + 1.0),
                     "exponential": lambda: 2.0 * math.pow(0.5, r) - 1.0,
                     "minus_sqrt": lambda: 1.0 - math.sqrt(r)}[wsd_style]()
    return floor + coeff * (peak - floor)


def megatron(total, *args, **kw):
    """The rate Megatron-LM sets for iterations 0..total-1 (step(0) at construction, step(1) after each)."""
    return [megatron_lr(step, *args, **kw) for step in range(total)]


# Megatron-LM's --lr-decay-style, with --lr-warmup-init, --min-lr and --lr-decay-iters short of the run.
CASES += [
    ("megatron_cosine", "cosine(peak=3e-4, floor=3e-5, warmup=100, warmup_init=1e-6, total=900)", 1000,
     lambda: megatron(1000, 1e-6, 3e-4, 3e-5, 100, 900, "cosine")),
    ("megatron_linear", "linear(peak=3e-4, floor=3e-5, warmup=100, warmup_init=1e-6, total=900)", 1000,
     lambda: megatron(1000, 1e-6, 3e-4, 3e-5, 100, 900, "linear")),
    ("megatron_constant", "constant(peak=3e-4, warmup=100, warmup_init=1e-6)", 1000,
     lambda: megatron(1000, 1e-6, 3e-4, 3e-5, 100, 900, "constant")),
    ("megatron_inverse_square_root",
     "join(warmup(floor(invsqrt(peak=3e-4, timescale=100, shift=true), min=3e-5), length=100, init=1e-6), "
     "constant(3e-5), at=[901])", 1000,
     lambda: megatron(1000, 1e-6, 3e-4, 3e-5, 100, 900, "inverse-square-root")),
    ("megatron_inverse_square_root_min_lr",  # --min-lr reached at iteration 625
     "join(warmup(floor(invsqrt(peak=3e-4, timescale=100, shift=true), min=1.2e-4), length=100, init=1e-6), "
     "constant(1.2e-4), at=[901])", 1000,
     lambda: megatron(1000, 1e-6, 3e-4, 1.2e-4, 100, 900, "inverse-square-root")),
]
for wsd_style, shape in (("linear", "linear"), ("cosine", "cosine"), ("exponential", "exp"), ("minus_sqrt", "1-sqrt")):
    CASES.append((f"megatron_wsd_{wsd_style}", f"wsd(peak=3e-4, floor=3e-5, warmup=100, warmup_init=1e-6, decay=200, "
                  f"shape={shape}, total=900)", 1000,
                  lambda w=wsd_style: megatron(1000, 1e-6, 3e-4, 3e-5, 100, 900, "WSD", wsd_decay=200, wsd_style=w)))


def timm_lr(t, kind, base, t_initial=0, lr_min=0.0, warmup_t=0, warmup_lr_init=0.0, warmup_prefix=False,
            cycle_decay=1.0, cycle_limit=1, power=0.5, decay_t=1, decay_rate=1.0):
    """timm.scheduler's CosineLRScheduler, PolyLRScheduler and StepLRScheduler._get_lr (cycle_mul 1, k_decay 1, no
    noise) at update t: timm's training loop calls step_update(num_updates) after each update."""
    if t < warmup_t:
        return warmup_lr_init + t * ((base - warmup_lr_init) / warmup_t)
    if warmup_prefix:
        t = t - warmup_t
    if kind == "step":
        return base * (decay_rate ** (t // decay_t))
    i = t // t_initial
    t_i = t_initial
    t_curr = t - (t_initial * i)
    lr_max = base * cycle_decay ** i
    if i >= cycle_limit:
        return lr_min
    if kind == "cosine":
        return lr_min + 0.5 * (lr_max - lr_min) * (1 + math.cos(math.pi * t_curr / t_i))
    return lr_min + (lr_max - lr_min) * (1 - t_curr / t_i) ** power  # poly


def timm(total, kind, base, **kw):
    return [timm_lr(t, kind, base, **kw) for t in range(total)]


# timm's schedulers stepped per update (step_update), with their own warmup: by default it takes the place of the
# schedule's first steps (warmup_prefix=False; StepLRScheduler's default is True).
TIMM = dict(base=5e-4, lr_min=1e-5, warmup_t=50, warmup_lr_init=1e-6)
CASES += [
    ("timm_cosine", "warmup(cosine(peak=5e-4, floor=1e-5), length=50, init=1e-6, prefix=false)", 1000,
     lambda: timm(1000, "cosine", t_initial=1000, **TIMM)),
    ("timm_cosine_warmup_prefix", "cosine(peak=5e-4, floor=1e-5, warmup=50, warmup_init=1e-6)", 1000,
     lambda: timm(1000, "cosine", t_initial=950, warmup_prefix=True, **TIMM)),
    ("timm_cosine_cycles",
     "join(warmup(restarts(peak=5e-4, floor=1e-5, period=300, peak_decay=0.5), length=50, init=1e-6, prefix=false), "
     "constant(1e-5), at=[900])", 1000,
     lambda: timm(1000, "cosine", t_initial=300, cycle_decay=0.5, cycle_limit=3, **TIMM)),
    ("timm_poly", "warmup(polynomial(peak=5e-4, floor=1e-5, power=0.5), length=50, init=1e-6, prefix=false)", 1000,
     lambda: timm(1000, "poly", t_initial=1000, **TIMM)),
    ("timm_step", "step(peak=5e-4, every=300, gamma=0.1, warmup=50, warmup_init=1e-6)", 1000,
     lambda: timm(1000, "step", decay_t=300, decay_rate=0.1, warmup_prefix=True, **TIMM)),
    ("timm_step_warmup_over", "warmup(step(peak=5e-4, every=300, gamma=0.1), length=50, init=1e-6, prefix=false)", 1000,
     lambda: timm(1000, "step", decay_t=300, decay_rate=0.1, **TIMM)),
]


# (name, spec, T, base momentum, max momentum, the momentum PyTorch sets): OneCycleLR's and CyclicLR's cycle_momentum,
# with SGD's momentum and with Adam's beta1.
MOMENTUM_CASES = [
    ("onecycle_default_sgd", "onecycle(peak=0.01)", 1000, 0.85, 0.95,
     lambda: run(0.01, lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=1000), 1000, momentum_of,
                 lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9))),
    ("onecycle_linear_three_phase_adamw",
     "onecycle(peak=0.1, pct_start=0.25, div_factor=10, final_div_factor=100, anneal=linear, three_phase=true)", 333,
     0.8, 0.9,
     lambda: run(0.1, lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=333, pct_start=0.25, div_factor=10,
                                             final_div_factor=100, anneal_strategy="linear", three_phase=True,
                                             base_momentum=0.8, max_momentum=0.9), 333, momentum_of,
                 torch.optim.AdamW)),
    ("cyclic_triangular2_sgd", "triangular(peak=0.1, floor=0.001, up=15, down=25, mode=triangular2)", 300, 0.8, 0.9,
     lambda: run(0.001, lambda o: S.CyclicLR(o, base_lr=0.001, max_lr=0.1, step_size_up=15, step_size_down=25,
                                             mode="triangular2"), 300, momentum_of,
                 lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9))),
    ("cyclic_exp_range_sgd", "triangular(peak=0.05, floor=0.005, up=10, mode=exp_range, gamma=0.995)", 250, 0.7, 0.95,
     lambda: run(0.005, lambda o: S.CyclicLR(o, base_lr=0.005, max_lr=0.05, step_size_up=10, mode="exp_range",
                                             gamma=0.995, base_momentum=0.7, max_momentum=0.95), 250, momentum_of,
                 lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9))),
]


def momentum_path(path):
    """The momentum's golden file beside the rates': schedules.tsv -> schedules_momentum.tsv."""
    root, extension = os.path.splitext(path)
    return root + "_momentum" + extension


def read_cases(path):
    """{name: (spec, total, values)} of a golden file; "#" lines (the generator's torch version) are not data."""
    cases = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, *settings, values = line.rstrip("\n").split("\t")
            cases[name] = (tuple(settings), [float(v) for v in values.split()])
    return cases


def check(committed, fresh, rel=1e-12):
    """Compares values, not text: another torch may print the last digit differently. Returns the problems."""
    want, got = read_cases(committed), read_cases(fresh)
    problems = [f"case {n} missing from the fresh file" for n in want if n not in got]
    problems += [f"case {n} is new (not committed)" for n in got if n not in want]
    for name in sorted(set(want) & set(got)):
        (settings_a, a), (settings_b, b) = want[name], got[name]
        if (settings_a, len(a)) != (settings_b, len(b)):
            problems.append(f"case {name}: spec, settings or length differ")
            continue
        for step, (x, y) in enumerate(zip(a, b)):
            if not math.isclose(x, y, rel_tol=rel, abs_tol=1e-300):
                problems.append(f"case {name} step {step}: committed {x!r}, PyTorch {torch.__version__} gives {y!r}")
                break
    return problems


def main():
    args = sys.argv[1:]
    if args and args[0] == "--check":  # --check COMMITTED FRESH: regenerate into FRESH, compare with COMMITTED
        committed, fresh = args[1], args[2]
        write(fresh)
        problems = check(committed, fresh) + check(momentum_path(committed), momentum_path(fresh))
        for p in problems:
            print(p, file=sys.stderr)
        sys.exit(1 if problems else 0)
    write(args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "schedules.tsv"))


def write(out):
    write_rows(out, [(name, [spec, str(total)], total, make) for name, spec, total, make in CASES])
    write_rows(momentum_path(out), [(name, [spec, str(total), repr(base), repr(top)], total, make)
                                    for name, spec, total, base, top, make in MOMENTUM_CASES])


def write_rows(out, rows):
    with open(out, "w") as f:
        f.write(f"# generated by tests/golden/make_golden.py with torch {torch.__version__}\n")
        for name, settings, total, make in rows:
            values = make()
            assert len(values) == total, name
            f.write("\t".join([name, *settings, " ".join(repr(float(v)) for v in values)]) + "\n")
    print(f"wrote {len(rows)} cases to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
