"""lrkit.torch.SampleReweighting: the weights against ALGORITHMS.md section 8's
formula computed here in torch, the warmup, checkpoints, bad input, and DDP
under torchrun against one process holding the whole global batch."""
import json
import math
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit  # noqa: E402
import lrkit.torch as lt  # noqa: E402
from conftest import DEVICES, run_torchrun  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCORES = {
    "uniform": lambda x: torch.zeros_like(x),
    "linupper": lambda x: torch.clamp(x + 1, max=1),
    "quadratic": lambda x: 1 - x * x,
    "extremes": lambda x: x.abs(),
    "linear": lambda x: (x + 1) / 2,
}


def formula_weights(losses, strategy, strength, tokens=None):
    """w_i proportional to n_i exp(f(x_i) / r), x_i = (2 l_i - (l_max + l_min)) / max(l_max - l_min, 1e-6)."""
    low, high = losses.min(), losses.max()
    x = (2 * losses - (high + low)) / torch.clamp(high - low, min=1e-6)
    logits = SCORES[strategy](x) / strength + (tokens.log() if tokens is not None else 0)
    return torch.softmax(logits, 0)


@pytest.mark.parametrize("strategy", sorted(SCORES))
@pytest.mark.parametrize("strength,with_tokens", [(0.4, False), (1.0, True), (0.05, False)])
def test_the_loss_and_its_gradient_are_the_formulas(strategy, strength, with_tokens):
    g = torch.Generator().manual_seed(3)
    losses = (torch.rand(11, generator=g, dtype=torch.float64) * 4).requires_grad_()
    tokens = torch.randint(1, 50, (11,), generator=g).double() if with_tokens else None
    reweighting = lt.SampleReweighting(strategy, strength)
    loss = reweighting(losses, tokens)
    expected = formula_weights(losses.detach(), strategy, strength, tokens)
    assert reweighting.weights.tolist() == pytest.approx(expected.tolist(), rel=1e-12, abs=1e-15)
    loss.backward()
    assert losses.grad.tolist() == pytest.approx(expected.tolist(), rel=1e-12, abs=1e-15), "no gradient through w"
    assert loss.item() == pytest.approx((expected * losses.detach()).sum().item(), rel=1e-12)
    assert reweighting.weighted_loss == pytest.approx(loss.item(), rel=1e-12)
    stats = reweighting.stats
    assert stats["entropy"] == pytest.approx(-(expected * expected.log()).sum().item(), rel=1e-9)
    assert stats["effective_size"] == pytest.approx(1 / expected.pow(2).sum().item(), rel=1e-9)
    assert stats["max_min_ratio"] == pytest.approx((expected.max() / expected.min()).item(), rel=1e-9)
    if not with_tokens:
        assert stats["max_min_ratio"] <= math.exp(1 / strength) * (1 + 1e-9)
    assert sum(reweighting.histogram(bins=8, max_relative=4.0)) == 11


def test_the_warmup_weighs_uniformly_and_a_checkpoint_keeps_its_count():
    losses = torch.tensor([1.0, 2.0, 4.0])
    reweighting = lt.SampleReweighting("linear", 0.3, warmup=2)
    assert [reweighting(losses).item() for _ in range(2)] == pytest.approx([7 / 3] * 2)
    saved = reweighting.state_dict()
    after = reweighting(losses).item()
    assert after > 7 / 3 + 0.5, "linear favours the hardest sample after the warmup"
    resumed = lt.SampleReweighting("linear", 0.3, warmup=2)
    resumed.load_state_dict(saved)
    assert resumed.steps == 2 and resumed(losses).item() == after
    with pytest.raises(ValueError, match="the checkpoint's SampleReweighting had .*'strategy': 'linear'.*this one has "
                                         "strategy='quadratic'"):
        lt.SampleReweighting("quadratic", 0.3, warmup=2).load_state_dict(saved)


def test_a_nonfinite_loss_gets_weight_zero_yet_shows_in_the_loss():
    reweighting = lt.SampleReweighting("linupper", 0.4)
    loss = reweighting(torch.tensor([1.0, float("nan"), 3.0]))
    assert reweighting.weights[1].item() == 0 and reweighting.weights.sum().item() == pytest.approx(1.0)
    assert math.isnan(loss.item()), "the loop's own non-finite check must still see it"


def test_bfloat16_losses_are_weighed_in_float32():
    losses = torch.tensor([1.0, 2.5, 3.0], dtype=torch.bfloat16, requires_grad=True)
    loss = lt.SampleReweighting("linupper", 0.4)(losses)
    assert loss.dtype == torch.float32
    loss.backward()
    assert losses.grad.dtype == torch.bfloat16


@pytest.mark.parametrize("make,error,message", [
    (lambda: lt.SampleReweighting("lin"), ValueError,
     r"SampleReweighting: strategy must be uniform, linupper, quadratic, extremes or linear \(got 'lin'\)"),
    (lambda: lt.SampleReweighting(None), TypeError, r"strategy must be a name such as 'linupper' \(got None\)"),
    (lambda: lt.SampleReweighting(strength=0), ValueError, r"strength must be a finite number > 0 \(got 0\)"),
    (lambda: lt.SampleReweighting(strength=float("inf")), ValueError, r"strength must be a finite number > 0"),
    (lambda: lt.SampleReweighting(strength=True), ValueError, r"strength must be a finite number > 0 \(got True\)"),
    (lambda: lt.SampleReweighting(warmup=-1), ValueError, r"warmup must be a whole number >= 0 \(got -1\)"),
    (lambda: lt.SampleReweighting(warmup=1.5), ValueError, r"warmup must be a whole number >= 0 \(got 1.5\)"),
    (lambda: lt.SampleReweighting()(torch.ones(2, 3)), ValueError,
     r"losses must be one loss per sample, a 1-D tensor \(got shape \(2, 3\): reduce the token losses"),
    (lambda: lt.SampleReweighting()([1.0, 2.0]), ValueError, r"losses must be a tensor of per-sample losses \(got list\)"),
    (lambda: lt.SampleReweighting()(torch.ones(2, dtype=torch.long)), ValueError, r"floating point \(got torch.int64\)"),
    (lambda: lt.SampleReweighting()(torch.ones(3), [1, 2]), ValueError,
     r"token_counts must hold one count per sample: 3 \(got shape \(2,\)\)"),
    (lambda: lt.SampleReweighting()(torch.ones(3), [4, 0, 1]), ValueError, r"token_counts must be > 0 \(sample 1 has 0\)"),
    (lambda: lt.SampleReweighting()(torch.ones(2), [4, float("nan")]), ValueError, r"token_counts must be > 0 \(sample 1"),
    (lambda: lt.SampleReweighting()(torch.ones(0)), ValueError, r"the global batch is empty"),
    (lambda: lt.SampleReweighting().histogram(), RuntimeError, r"no batch was weighed yet"),
])
def test_bad_input_is_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize("device", DEVICES)
def test_ddp_with_uneven_ranks_trains_as_one_process_on_the_global_batch(tmp_path, device):
    if not torch.distributed.is_available():
        pytest.skip("this torch has no torch.distributed")
    workers = 3
    run_torchrun(workers, [os.path.join(HERE, "reweight_worker.py"), str(tmp_path)], LRKIT_TEST_DEVICE=device)
    results = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(workers)]
    for result in results:
        assert result["weights"] == results[0]["weights"] and result["stats"] == results[0]["stats"]
        assert result["weighted_loss"] == results[0]["weighted_loss"]
        assert [len(w) for w in result["weights"]] == [5 + 7 + 9] * 4
        assert result["params"] == pytest.approx(result["reference_params"], rel=1e-5, abs=1e-6)
        assert result["steps"] == 6, "a refused call does not count"
        assert result["gathers"] == [2, 1, 1, 1], "the first call learns the capacity; then one all-gather a call"
        assert [g["gathers"] for g in result["grown"]] == [2, 1], "a rank with more rows: once more, then one again"
    for call in range(2):  # the global batch of uneven, grown ranks, weighed as one
        everyone = [loss for result in results for loss in result["grown"][call]["losses"]]
        expected = lrkit.sample_weights(everyone, "linupper", 0.5, [])
        for result in results:
            assert result["grown"][call]["weights"] == pytest.approx(expected, rel=1e-12)
    first = results[0]["weights"][0]
    assert first == pytest.approx([1 / 21] * 21), "the warmup step is uniform"
    assert max(results[0]["weights"][1]) / min(results[0]["weights"][1]) > 2, "then the strategy spreads the weights"
    matrix = [r["errors"]["matrix"] for r in results]
    assert "losses must be one loss per sample" in matrix[workers - 1]
    for message in matrix[:workers - 1]:
        assert message == (f"SampleReweighting: rank(s) [{workers - 1}] of the process group passed invalid losses "
                           "(their own error says how); no rank weighs this batch")
    for result in results:
        assert "some ranks passed token_counts and others did not" in result["errors"]["counts_on_one_rank"]
