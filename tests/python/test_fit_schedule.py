"""lrkit.fit_schedule: the spec that the rates of PyTorch's own schedulers follow, found from the rates alone (the
same fit as `lrkit schedule --fit FILE`)."""
import math
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit  # noqa: E402
from scheduler_rates import (hugging_face_cosine, hugging_face_cosine_with_restarts, hugging_face_linear,  # noqa: E402
                             hugging_face_polynomial, hugging_face_wsd, rates_of)

STEPS = 300


def rates_under(peak, make_scheduler, steps=STEPS):
    """The rates of `steps` updates of SGD at `peak` under the scheduler make_scheduler(optimizer) builds."""
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
    return rates_of(optimizer, make_scheduler(optimizer), steps)


S = torch.optim.lr_scheduler


@pytest.mark.parametrize("peak,make,spec", [
    (0.01, lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=STEPS), "onecycle(peak=0.01)"),
    (0.1, lambda o: S.CosineAnnealingLR(o, T_max=STEPS, eta_min=1e-4), "cosine(peak=0.1, floor=0.1%)"),
    (0.5, lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.01, total_iters=STEPS),
     "linear(peak=0.5, floor=0.005)"),
    (0.5, lambda o: S.ExponentialLR(o, gamma=0.99), "exponential(peak=0.5, gamma=0.99)"),
    (0.5, lambda o: S.PolynomialLR(o, total_iters=STEPS, power=2.0), "polynomial(peak=0.5, power=2)"),
    (0.5, lambda o: S.StepLR(o, step_size=30, gamma=0.5), "step(peak=0.5, every=30, gamma=0.5)"),
    (3e-4, lambda o: S.LambdaLR(o, hugging_face_linear(30, STEPS)), "linear(peak=0.0003, warmup=30)"),
    # Read from the log's shape: every drop, the climbs after the peak, a warmup from above 0, OneCycleLR's settings.
    (0.1, lambda o: S.MultiStepLR(o, milestones=[50, 120, 160], gamma=0.2),
     "multistep(peak=0.1, milestones=[50, 120, 160], gamma=0.2)"),
    (0.1, lambda o: S.CosineAnnealingWarmRestarts(o, T_0=20, T_mult=2, eta_min=1e-4),
     "restarts(peak=0.1, period=20, mult=2, floor=0.1%)"),
    (0.01, lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=20, step_size_down=30,
                                cycle_momentum=False), "triangular(peak=0.1, floor=0.01, up=20, down=30)"),
    (0.001, lambda o: S.CyclicLR(o, base_lr=0.001, max_lr=0.1, step_size_up=15, mode="triangular2",
                                 cycle_momentum=False), "triangular(peak=0.1, floor=0.001, up=15, mode=triangular2)"),
    (0.005, lambda o: S.CyclicLR(o, base_lr=0.005, max_lr=0.05, step_size_up=10, mode="exp_range", gamma=0.995,
                                 cycle_momentum=False),
     "triangular(peak=0.05, floor=0.005, up=10, mode=exp_range, gamma=0.995)"),
    (0.5, lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.01, total_iters=5),
                                       S.CosineAnnealingLR(o, T_max=STEPS - 5, eta_min=1e-4)], milestones=[5]),
     "cosine(peak=0.5, floor=0.02%, warmup=5, warmup_init=0.005)"),
    (0.01, lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=STEPS, pct_start=0.25, div_factor=10,
                                  final_div_factor=100),
     "onecycle(peak=0.01, pct_start=0.25, div_factor=10, final_div_factor=100)"),
])
def test_pytorchs_schedulers_are_fitted_from_their_rates(peak, make, spec):
    fit = lrkit.fit_schedule(range(STEPS), rates_under(peak, make))
    assert fit["fits"], fit
    assert (fit["spec"], fit["total"]) == (spec, STEPS)
    assert fit["first_difference"] is None and fit["worst"]["relative"] <= 1e-6
    # The spec found gives the same rates as lrkit's own schedule.
    schedule = lrkit.Schedule(fit["spec"], fit["total"])
    assert schedule.compare(range(STEPS), rates_under(peak, make))["follows"]


@pytest.mark.parametrize("multiplier,spec", [
    (hugging_face_linear(20, 200), "linear(peak=0.0005, warmup=20)"),
    # min_lr_ratio: the warmup starts at the floor (where its line meets step 0), the decay where the log leaves the
    # peak.
    (hugging_face_wsd(20, 40, 200, 0.1, "cosine"),
     "wsd(peak=0.0005, floor=10%, decay=20%, shape=cosine, warmup=20, warmup_init=5e-05)"),
    # lr_end and the power: the floor is the rate of step max_steps, which the Trainer logs.
    (hugging_face_polynomial(20, 200, 5e-4, 1e-5, 2.0), "polynomial(peak=0.0005, floor=2%, power=2, warmup=20)"),
    # Equal cycles, the last ending at the floor (at max_steps, which the Trainer logs: not a cycle of 60 steps).
    (hugging_face_cosine_with_restarts(20, 200, 3), "restarts(peak=0.0005, warmup=20, cycles=3)"),
])
def test_a_trainer_log_of_every_10th_step_in_float32(multiplier, spec):
    """A Trainer's log: the rate after each 10th update, as float32, up to the last step max_steps (its end value)."""
    steps = list(range(10, 201, 10))
    rates = [float(torch.tensor(5e-4 * multiplier(s), dtype=torch.float32)) for s in steps]
    fit = lrkit.fit_schedule(steps, rates)
    assert (fit["fits"], fit["spec"], fit["total"]) == (True, spec, 200)


def test_a_warmup_ratio_that_ends_between_two_logged_steps():
    """A Trainer's warmup_ratio 0.0586 of 8000 steps: ceil(468.8) = 469 warmup steps, logged every 50th step, so that
    the peak itself is never logged; it is read where the warmup's line reaches a plain number between two rows."""
    multiplier = hugging_face_cosine(469, 8000)
    steps = list(range(50, 8001, 50))
    rates = [float(torch.tensor(5e-4 * multiplier(s), dtype=torch.float32)) for s in steps]
    assert max(rates) < 5e-4
    fit = lrkit.fit_schedule(steps, rates)
    assert (fit["fits"], fit["spec"], fit["total"]) == (True, "cosine(peak=0.0005, warmup=469)", 8000)


def test_no_family_tried_gives_the_closest_and_bad_input_is_refused():
    rates = [1e-3 * math.exp(-t / 50.0) * (1 + 0.1 * math.sin(t)) for t in range(STEPS)]
    fit = lrkit.fit_schedule(range(STEPS), rates)
    assert not fit["fits"] and fit["first_difference"] is not None and fit["spec"]
    with pytest.raises(ValueError, match=r"^fit_schedule: row 2: step 1.5 is not a whole number"):
        lrkit.fit_schedule([0, 1.5], [0.0, 0.01])
    with pytest.raises(ValueError, match=r"^fit_schedule: total must be at least 1 \(got 0\)$"):
        lrkit.fit_schedule([0, 1], [0.1, 0.1], total=0)
    with pytest.raises(ValueError, match=r"^fit_schedule: tolerance must be a finite number >= 0 \(got -1\)$"):
        lrkit.fit_schedule([0, 1], [0.1, 0.1], tolerance=-1)
    with pytest.raises(ValueError, match=r"^fit_schedule: no rate >= 0 to fit a schedule to$"):
        lrkit.fit_schedule([0, 1], [-0.1, -0.1])
    with pytest.raises(TypeError, match=r"^fit_schedule: rates must be a 1-d sequence of numbers$"):
        lrkit.fit_schedule([0], [[0.0]])


def test_the_fit_is_the_command_lines(lrkit_binary, tmp_path):
    rates = rates_under(0.1, lambda o: S.CosineAnnealingLR(o, T_max=STEPS, eta_min=1e-4))
    path = tmp_path / "rates.csv"
    path.write_text("step,lr\n" + "".join(f"{t},{r!r}\n" for t, r in enumerate(rates)))
    done = subprocess.run([lrkit_binary, "schedule", "--fit", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    fit = lrkit.fit_schedule(range(STEPS), rates)
    assert done.stdout.splitlines()[1].startswith(f"fits {fit['spec']} over {fit['total']} steps: ")
