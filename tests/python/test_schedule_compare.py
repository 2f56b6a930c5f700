"""Schedule.compare: the rates a PyTorch loop logged against the schedule it meant to follow, and the loop mistake
that explains a difference (the same verdict as `lrkit schedule SPEC --compare FILE`)."""
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit  # noqa: E402
import lrkit.torch as lt  # noqa: E402
from scheduler_rates import hugging_face_cosine, rates_of  # noqa: E402
from small_model import model_and_optimizer  # noqa: E402

SPEC, TOTAL = "cosine(peak=0.05, floor=1e-4, warmup=5)", 40


def logged_rates(step_scheduler_first=False, accumulation=1, resume_at=None):
    """A loop under lt.LRScheduler that logs the rate of each update, with a mistake on request: the
    scheduler stepped before the optimizer, stepped per micro-batch, or built anew (its state lost) at a resume."""
    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, SPEC, TOTAL)
    rates = []
    for step in range(TOTAL):
        if step == resume_at:
            for group in optimizer.param_groups:
                group["lr"] = group["initial_lr"]
            scheduler = lt.LRScheduler(optimizer, SPEC, TOTAL)
        if step_scheduler_first:
            scheduler.step()
        rates.append(optimizer.param_groups[0]["lr"])
        for _ in range(accumulation):
            model(torch.ones(2, 4)).sum().backward()
            if accumulation > 1 and scheduler.last_epoch < TOTAL:
                scheduler.step()
        optimizer.step()
        optimizer.zero_grad()
        if not step_scheduler_first and accumulation == 1:
            scheduler.step()
    return rates


@pytest.mark.filterwarnings("ignore::UserWarning")  # the loops with a mistake step past the schedule's end
@pytest.mark.parametrize("mistake,loop,amount", [
    ("none", {}, 0),
    ("read_ahead", {"step_scheduler_first": True}, 1),
    ("faster", {"accumulation": 4}, 4),
    ("restarted", {"resume_at": 25}, 1),
])
def test_a_loops_mistake_is_named_from_its_logged_rates(mistake, loop, amount):
    verdict = lrkit.Schedule(SPEC, TOTAL).compare(range(TOTAL), logged_rates(**loop))
    assert verdict["follows"] == (mistake == "none")
    assert verdict["mistake"] == mistake
    assert verdict["amount"] == amount
    assert verdict["rows"] == TOTAL
    if mistake == "restarted":
        assert verdict["restarts"] == [25]
        assert verdict["first_difference"]["step"] == 25
        assert "a resume that built a new scheduler" in verdict["explanation"]
    if mistake == "none":
        assert verdict["first_difference"] is None and verdict["explanation"] is None


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's own: scheduler.step() before optimizer.step()
def test_the_verdict_is_the_command_lines(lrkit_binary, tmp_path):
    rates = logged_rates(step_scheduler_first=True)
    path = tmp_path / "rates.csv"
    path.write_text("step,lr\n" + "".join(f"{t},{r!r}\n" for t, r in enumerate(rates)))
    verdict = lrkit.Schedule(SPEC, TOTAL).compare(range(TOTAL), rates)
    done = subprocess.run([lrkit_binary, "schedule", SPEC, "--steps", str(TOTAL), "--compare", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == verdict["explanation"]


HF_SPEC = "cosine(peak=0.05, warmup=5)"


def test_a_scheduler_given_another_run_length_is_named_with_it():
    """num_training_steps counted in micro-batches: len(dataloader) * epochs = 163 where the run takes 40 updates."""
    _, optimizer = model_and_optimizer()
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, hugging_face_cosine(5, 163))
    verdict = lrkit.Schedule(HF_SPEC, TOTAL).compare(range(TOTAL), rates_of(optimizer, scheduler, TOTAL))
    assert verdict["mistake"] == "other_length"
    assert (verdict["amount"], verdict["other_length"], verdict["other_length_last"]) == (163, 163, 163)
    assert verdict["left_end_value_at"] is None and verdict["length_change"] is None and verdict["setting"] is None
    assert verdict["explanation"].startswith("the log follows the schedule built for 163 steps instead of 40 (4.075 "
                                             "times as long)")


def test_a_scheduler_run_past_a_shorter_length_is_named_where_it_leaves_its_end():
    """PyTorch's CosineAnnealingLR given T_max = 10 for a 40-update run starts another period after step 10."""
    _, optimizer = model_and_optimizer()
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10, eta_min=1e-4)
    rates = rates_of(optimizer, scheduler, TOTAL)
    verdict = lrkit.Schedule("cosine(peak=0.05, floor=1e-4)", TOTAL).compare(range(TOTAL), rates)
    assert (verdict["mistake"], verdict["other_length"], verdict["left_end_value_at"]) == ("other_length", 10, 11)
    assert "PyTorch's CosineAnnealingLR starts another period" in verdict["explanation"]


def test_a_run_resumed_with_another_length_is_named_with_both():
    """A Trainer-style resume with max_steps raised from 40 to 60: a new optimizer and scheduler (of the new length)
    load the checkpoint's states. The restored optimizer holds the rate of step 25 under the old length, the
    scheduler's next step computes step 26 under the new one."""
    model, optimizer = model_and_optimizer()
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, hugging_face_cosine(5, 40))
    rates = rates_of(optimizer, scheduler, 25)
    saved = optimizer.state_dict(), scheduler.state_dict()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, hugging_face_cosine(5, 60))
    optimizer.load_state_dict(saved[0])
    scheduler.load_state_dict(saved[1])
    rates += rates_of(optimizer, scheduler, 35)
    for length in (40, 60):
        verdict = lrkit.Schedule(HF_SPEC, length).compare(range(60), rates)
        assert verdict["mistake"] == "length_changed", length
        assert verdict["length_change"] == {"before": 40, "after": 60, "last_step_before": 25,
                                            "first_step_after": 26}
        assert verdict["amount"] == 100 - length  # the length that is not the one compared


def test_another_warmup_is_named_with_its_value():
    """The Trainer's warmup_steps counted in micro-batches (3 per update): 15 warmup updates where the spec has 5."""
    _, optimizer = model_and_optimizer()
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, hugging_face_cosine(15, TOTAL))
    verdict = lrkit.Schedule(HF_SPEC, TOTAL).compare(range(TOTAL), rates_of(optimizer, scheduler, TOTAL))
    assert verdict["mistake"] == "other_setting"
    assert verdict["setting"] == {"name": "warmup", "given": "5", "value": "15", "spec": "cosine(peak=0.05, warmup=15)",
                                  "lowest": "15", "highest": "15", "highest_is_last": False}
    assert verdict["length_change"] is None and verdict["other_length"] is None


def test_rows_it_cannot_compare_are_value_errors():
    s = lrkit.Schedule(SPEC, TOTAL)
    with pytest.raises(ValueError, match=r"^Schedule.compare: row 2: step 1.5 is not a whole number"):
        s.compare([0, 1.5], [0.0, 0.01])
    with pytest.raises(ValueError, match=r"^Schedule.compare: the series has 2 steps for 1 values$"):
        s.compare([0, 1], [0.0])
    with pytest.raises(TypeError, match=r"^Schedule.compare: rates must be a 1-d sequence of numbers$"):
        s.compare([0], [[0.0]])
    with pytest.raises(ValueError, match=r"^Schedule.compare: tolerance must be a finite number >= 0 \(got -1\)$"):
        s.compare([0], [0.0], tolerance=-1)
