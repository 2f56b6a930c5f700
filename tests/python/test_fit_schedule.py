"""lrkit.fit_schedule: the spec that the rates of PyTorch's own schedulers follow, found from the rates alone (the
same fit as `lrkit schedule --fit FILE`)."""
import math
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit  # noqa: E402
from scheduler_rates import hugging_face_linear, rates_of  # noqa: E402

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
])
def test_pytorchs_schedulers_are_fitted_from_their_rates(peak, make, spec):
    fit = lrkit.fit_schedule(range(STEPS), rates_under(peak, make))
    assert fit["fits"], fit
    assert (fit["spec"], fit["total"]) == (spec, STEPS)
    assert fit["first_difference"] is None and fit["worst"]["relative"] <= 1e-6
    # The spec found gives the same rates as lrkit's own schedule.
    schedule = lrkit.Schedule(fit["spec"], fit["total"])
    assert schedule.compare(range(STEPS), rates_under(peak, make))["follows"]


def test_a_trainer_log_of_every_10th_step_in_float32():
    """A Trainer's log: the rate after each 10th update, as float32, up to the last step max_steps (its end value)."""
    multiplier = hugging_face_linear(20, 200)
    steps = list(range(10, 201, 10))
    rates = [float(torch.tensor(5e-4 * multiplier(s), dtype=torch.float32)) for s in steps]
    fit = lrkit.fit_schedule(steps, rates)
    assert (fit["fits"], fit["spec"], fit["total"]) == (True, "linear(peak=0.0005, warmup=20)", 200)


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
