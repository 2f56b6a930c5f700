"""lrkit.torch.SpikeGuard: its decisions against the rule worked out here,
its checkpoint, bad settings, and under torchrun the same decisions on every
rank, those of the ranks' mean loss."""
import json
import math
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit.torch as lt  # noqa: E402
from conftest import DEVICES, run_torchrun  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Brute:
    """z against the last `window` values that entered; spikes stay out until the third in a row."""

    def __init__(self, threshold, window):
        self.threshold, self.window, self.entered, self.in_a_row = threshold, window, [], 0

    def score(self, x):
        if len(self.entered) < self.window:
            self.entered.append(x)
            return math.nan, False
        last = self.entered[-self.window:]
        mean = sum(last) / len(last)
        std = math.sqrt(sum((v - mean) ** 2 for v in last) / len(last))
        z = (x - mean) / std
        spike = self.threshold > 0 and z > self.threshold
        self.in_a_row = self.in_a_row + 1 if spike else 0
        if not spike or self.in_a_row >= 3:
            self.entered.append(x)
        return z, spike


def series(n, seed):
    g = torch.Generator().manual_seed(seed)
    values = (2 + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)).tolist()
    for t in range(20, n, 23):
        values[t] *= 3  # spikes
    return values


def test_decisions_follow_the_rule_and_a_checkpoint_resumes_them():
    losses, norms = series(120, 1), series(120, 2)
    guard = lt.SpikeGuard(loss_z=4, grad_z=3, window=16)
    brute_loss, brute_norm = Brute(4, 16), Brute(3, 16)
    outcomes, saved = [], None
    for t, (loss, norm) in enumerate(zip(losses, norms)):
        lz, loss_spike = brute_loss.score(loss)
        gz, grad_spike = brute_norm.score(norm)
        applied = guard.check(torch.tensor(loss, dtype=torch.float64), norm)  # a tensor or a number
        assert applied == (not loss_spike and not grad_spike), t
        assert (math.isnan(guard.loss_z) and math.isnan(lz)) or guard.loss_z == pytest.approx(lz, rel=1e-9), t
        assert (math.isnan(guard.grad_norm_z) and math.isnan(gz)) or guard.grad_norm_z == pytest.approx(gz, rel=1e-9), t
        outcomes.append(guard.outcome)
        if t == 59:
            saved = guard.state_dict()
    assert outcomes.count("loss_spike") >= 4 and outcomes.count("applied") > 100
    resumed = lt.SpikeGuard(loss_z=4, grad_z=3, window=16)
    resumed.load_state_dict(saved)
    assert resumed.updates == 60
    again = []
    for loss, norm in zip(losses[60:], norms[60:]):
        resumed.check(loss, norm)
        again.append(resumed.outcome)
    assert again == outcomes[60:]


def test_a_nonfinite_loss_is_skipped_unscored():
    guard = lt.SpikeGuard(window=2)
    for v in (1.0, 1.1):
        assert guard.check(v, 1.0)
    assert not guard.check(float("nan"), 1.0) and guard.outcome == "nonfinite" and math.isnan(guard.loss_z)
    assert guard.state_dict()["loss_window"] == [1.0, 1.1]
    assert guard.check(1.05, 1.0) and guard.outcome == "applied", "off (0): never a spike, z still scored"
    assert guard.loss_z == pytest.approx(0.0)


@pytest.mark.parametrize("kwargs,message", [
    (dict(loss_z=-1), r"loss_z must be a finite number >= 0 \(0: never skip; got -1\)"),
    (dict(grad_z=float("inf")), r"grad_z must be a finite number >= 0"),
    (dict(loss_z=True), r"loss_z must be a finite number >= 0 \(0: never skip; got True\)"),
    (dict(window=1), r"window must be a whole number >= 2 \(got 1\)"),
    (dict(window=2.5), r"window must be a whole number >= 2 \(got 2.5\)"),
    # The optimizer in the threshold's place (a guard that skips updates, made like a scheduler): its repr ran over
    # eleven lines of the message.
    (dict(loss_z=torch.optim.AdamW(torch.nn.Linear(2, 1).parameters())),
     r"^SpikeGuard: loss_z must be a finite number >= 0 \(0: never skip; got an object of type AdamW\)$"),
    (dict(window=torch.arange(100)), r"window must be a whole number >= 2 \(got an object of type Tensor\)$"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lt.SpikeGuard(**kwargs)


@pytest.mark.parametrize("loss,grad_norm,error,message", [
    (torch.ones(4), 1.0, ValueError, r"SpikeGuard.check: the loss must be one number \(got a tensor of shape \(4,\); reduce"),
    (1.0, "big", TypeError, r"SpikeGuard.check: the gradient norm must be a number or a one-element tensor \(got str\)"),
    (None, 1.0, TypeError, r"SpikeGuard.check: the loss must be a number or a one-element tensor \(got NoneType\)"),
])
def test_a_loss_or_norm_that_is_not_one_number_is_named(loss, grad_norm, error, message):
    guard = lt.SpikeGuard(loss_z=6, window=4)
    with pytest.raises(error, match=message):
        guard.check(loss, grad_norm)
    assert guard.updates == 0, "nothing was counted"
    assert guard.check(torch.tensor([2.0]), torch.tensor(1.0, dtype=torch.bfloat16)), "one-element tensors are taken"


@pytest.mark.parametrize("key,value,message", [
    ("loss_spikes_in_a_row", -3, r"spikes_in_a_row -3; it counts, so it is >= 0"),
    ("grad_norm_window", [1.0, float("inf")], "non-finite value"),
    ("updates", -1, r"SpikeGuard updates must be a whole number >= 0 \(got -1\)"),
])
def test_a_damaged_state_is_refused_and_changes_nothing(key, value, message):
    guard = lt.SpikeGuard(loss_z=6, grad_z=6, window=4)
    for i in range(6):
        guard.check(1.0 + 0.01 * i, 1.0 + 0.02 * i)
    before = guard.state_dict()
    with pytest.raises(ValueError, match=message):
        guard.load_state_dict(dict(lt.SpikeGuard(window=4).state_dict(), **{key: value}))
    assert guard.state_dict() == before, "the loss window was restored before the norm's was refused"


@pytest.mark.parametrize("device", DEVICES)
def test_every_rank_decides_alike_on_the_mean_loss(tmp_path, device):
    if not torch.distributed.is_available():
        pytest.skip("this torch has no torch.distributed")
    run_torchrun(2, [os.path.join(HERE, "spike_worker.py"), str(tmp_path)], LRKIT_TEST_DEVICE=device)
    a, b = (json.load(open(tmp_path / f"rank{r}.json")) for r in range(2))
    assert [r["applied"] for r in a["rows"]] == [r["applied"] for r in b["rows"]]
    assert a["weights"] == b["weights"], "the ranks stayed in step"
    brute_loss, brute_norm = Brute(1.0, 5), Brute(1.0, 5)
    for t, row in enumerate(a["rows"]):
        lz, loss_spike = brute_loss.score(row["mean_loss"])
        gz, grad_spike = brute_norm.score(row["norm"])
        assert row["applied"] == (not loss_spike and not grad_spike), t
    assert sum(not r["applied"] for r in a["rows"]) >= 2, "the planted spikes are skipped"
