"""LRScheduler's cycle_momentum: a loop moving to lrkit from PyTorch's OneCycleLR or CyclicLR keeps the momentum
they cycle against the rate (SGD's, or Adam's beta1), bit for bit, through a resume; what cannot cycle is refused."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit  # noqa: E402
import lrkit.torch as lt  # noqa: E402
from small_model import model_and_optimizer  # noqa: E402


def train_with_momentum(optimizer_class, make_scheduler, steps, resume_at=None):
    """Rates and momenta (SGD's, or Adam's beta1) a loop sees at each update, and its weights at the end. With
    `resume_at`, the loop stops there and a fresh model, optimizer and scheduler go on from their state_dicts."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    extra = {"momentum": 0.9} if optimizer_class is torch.optim.SGD else {}
    optimizer = optimizer_class(model.parameters(), lr=0.01, **extra)
    scheduler = make_scheduler(optimizer)
    g = torch.Generator().manual_seed(1)
    seen = []
    for step in range(steps):
        if step == resume_at:
            saved = [model.state_dict(), optimizer.state_dict(), scheduler.state_dict()]
            model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
            optimizer = optimizer_class(model.parameters(), lr=0.01, **extra)
            scheduler = make_scheduler(optimizer)
            model.load_state_dict(saved[0]), optimizer.load_state_dict(saved[1]), scheduler.load_state_dict(saved[2])
        group = optimizer.param_groups[0]
        seen.append((group["lr"], group["betas"][0] if "betas" in group else group["momentum"]))
        loss = model(torch.randn(8, 4, generator=g)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return seen, [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("optimizer_class", [torch.optim.AdamW, torch.optim.SGD])
def test_a_loop_moving_from_one_cycle_lr_with_its_momentum_trains_the_same_weights(optimizer_class):
    # OneCycleLR as most loops make it: its defaults cycle Adam's beta1 (or SGD's momentum) between 0.85 and 0.95.
    def one_cycle(optimizer):
        return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, total_steps=80, three_phase=True)

    def lrkit_one_cycle(optimizer):
        return lt.LRScheduler(optimizer, "onecycle(peak=0.01, three_phase=true)", 80, cycle_momentum=(0.85, 0.95))

    expected, weights = train_with_momentum(optimizer_class, one_cycle, 80)
    assert len({momentum for _, momentum in expected}) > 20  # the momentum does cycle
    for resume_at in (None, 37):
        seen, trained = train_with_momentum(optimizer_class, lrkit_one_cycle, 80, resume_at)
        assert seen == expected
        assert all(torch.equal(a, b) for a, b in zip(trained, weights))


def test_a_loop_moving_from_cyclic_lr_with_its_momentum_sees_the_same_momentum():
    def cyclic(optimizer):
        return torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr=1e-3, max_lr=1e-2, step_size_up=7, step_size_down=5,
                                                 mode="triangular2")

    def lrkit_cyclic(optimizer):
        return lt.LRScheduler(optimizer, "triangular(peak=1e-2, floor=1e-3, up=7, down=5, mode=triangular2)",
                              cycle_momentum=[0.8, 0.9])

    expected, weights = train_with_momentum(torch.optim.SGD, cyclic, 40)
    seen, trained = train_with_momentum(torch.optim.SGD, lrkit_cyclic, 40, resume_at=20)
    assert seen == expected
    assert all(torch.equal(a, b) for a, b in zip(trained, weights))


def test_cycled_momentum_is_refused_where_nothing_can_cycle():
    model, optimizer = model_and_optimizer()
    with pytest.raises(ValueError, match="'cosine\\(peak=0.01\\)' does not"):
        lt.LRScheduler(optimizer, "cosine(peak=0.01)", 10, cycle_momentum=(0.85, 0.95))
    with pytest.raises(ValueError, match=r"^LRScheduler: .*0 <= base <= max < 1 \(got \(0.95, 0.85\)\)"):
        lt.LRScheduler(optimizer, "onecycle(peak=0.01)", 10, cycle_momentum=(0.95, 0.85))
    with pytest.raises(ValueError, match="Schedule.cycled_momentum: .*got base nan"):
        lrkit.Schedule("onecycle(peak=0.01)", 10).cycled_momentum(0, float("nan"), 0.9)
    with pytest.raises(TypeError, match="must be \\(base, max\\)"):
        lt.LRScheduler(optimizer, "onecycle(peak=0.01)", 10, cycle_momentum=True)
    adagrad = torch.optim.Adagrad(model.parameters(), lr=0.01)
    with pytest.raises(ValueError, match="Adagrad has neither"):
        lt.LRScheduler(adagrad, "onecycle(peak=0.01)", 10, cycle_momentum=(0.85, 0.95))
    # A scheduler's state resumes only the same momentum cycle; a state saved before the key existed is one without.
    cycling = lt.LRScheduler(optimizer, "onecycle(peak=0.01)", 10, cycle_momentum=(0.85, 0.95))
    model, optimizer = model_and_optimizer()
    plain = lt.LRScheduler(optimizer, "onecycle(peak=0.01)", 10)
    with pytest.raises(ValueError, match=r"cycle_momentum=\[0.85, 0.95\]; this one with cycle_momentum=None"):
        plain.load_state_dict(cycling.state_dict())
    older = {key: value for key, value in plain.state_dict().items() if key != "cycle_momentum"}
    plain.load_state_dict(older)
