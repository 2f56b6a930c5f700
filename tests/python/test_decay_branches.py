"""lrkit.decay_branches and lrkit.torch.branch_scheduler: a budget sweep with decay branches in a PyTorch loop."""
import copy

import pytest

import lrkit

SPEC = "wsd(peak=3e-3, warmup=50, decay=10%, shape=linear, floor=10%)"


def test_the_plan_is_the_cpp_one():
    plan = lrkit.decay_branches(SPEC, [500, 1000, 2000])
    assert [(b.budget, b.fork) for b in plan.branches] == [(500, 451), (1000, 901), (2000, 1801)]
    assert plan.forks == [451, 901, 1801]
    assert plan.main_steps == 1801
    assert plan.steps == 2148  # 0.61x of the 3500 updates of three separate runs
    assert plan.main.total_steps == 2_000_000
    for b in plan.branches:
        assert b.schedule.spec == lrkit.Schedule(SPEC, b.budget).spec
        assert b.schedule.total_steps == b.budget
    assert repr(plan).endswith("branches=[500@451, 1000@901, 2000@1801], steps=2148)")
    assert repr(plan.branches[0]) == "DecayBranch(budget=500, fork=451)"
    # Budgets may be any iterable of whole numbers, floats like 1e3 included; forks at 0 are no checkpoints.
    fresh = lrkit.decay_branches("wsd(peak=1e-3, warmup=5%, decay=20%)", (1e3, 400))
    assert [b.fork for b in fresh.branches] == [1, 1]


@pytest.mark.parametrize("spec, budgets, error, message", [
    (SPEC, [], ValueError, "decay branches need at least one budget"),
    (SPEC, [500, 500], ValueError, "budget 500 is given twice"),
    (SPEC, [0], ValueError, "budget 0 is not a number of steps in [1, 100000000]"),
    (SPEC, [2.5], ValueError, "budget must be a whole number"),
    (SPEC, ["500"], TypeError, "budget"),
    (SPEC, 500, TypeError, "budgets must be a sequence of step counts, e.g. [500, 1000, 2000] (got 500)"),
    (SPEC, "500,1000", TypeError, "budgets must be a sequence of step counts"),
    ("wsd(peak=1e-3, decay=10%, total=900)", [500], ValueError, "has a length of its own (900 steps)"),
    ("constant(1e-3)", [500], ValueError, "never departs from the main run at budget 500"),
    ("wsd(peak=1e-3", [500], lrkit.SpecError, "expected ')'"),
])
def test_bad_plans_are_refused_naming_the_problem(spec, budgets, error, message):
    with pytest.raises(error) as raised:
        lrkit.decay_branches(spec, budgets)
    assert message in str(raised.value)


torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit.torch as lt  # noqa: E402

BRANCHED = "wsd(peak=1e-2, warmup=10, decay=20%, shape=1-sqrt)"
BUDGETS = [60, 100]


def fresh_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    params = [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.5}]  # two groups
    return model, torch.optim.AdamW(params, lr=1.0, weight_decay=0.1)


def update(model, optimizer, step):
    """Update `step` on its own batch, so that a branch sees the data its separate run sees."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(16, 4, generator=g)
    loss = (model(x) - x.sum(dim=1, keepdim=True).sin()).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def test_each_branch_is_its_budgets_separate_run_bit_for_bit():
    plan = lrkit.decay_branches(BRANCHED, BUDGETS)
    assert plan.forks and plan.main_steps < max(BUDGETS)
    model, optimizer = fresh_model()
    scheduler = lt.LRScheduler(optimizer, plan.main)
    saved = {}
    for step in range(plan.main_steps):
        update(model, optimizer, step)
        scheduler.step()
        if step + 1 in plan.forks:  # the state after step + 1 updates, as a loop's torch.save would keep it
            saved[step + 1] = copy.deepcopy((model.state_dict(), optimizer.state_dict()))
    for branch in plan.branches:
        model, optimizer = fresh_model()
        if branch.fork > 0:
            model.load_state_dict(saved[branch.fork][0])
            optimizer.load_state_dict(saved[branch.fork][1])
        scheduler = lt.branch_scheduler(optimizer, branch)
        rates = []
        for step in range(branch.fork, branch.budget):
            rates.append([group["lr"] for group in optimizer.param_groups])
            update(model, optimizer, step)
            scheduler.step()
        separate, separate_optimizer = fresh_model()
        separate_scheduler = lt.LRScheduler(separate_optimizer, BRANCHED, branch.budget)
        separate_rates = []
        for step in range(branch.budget):
            separate_rates.append([group["lr"] for group in separate_optimizer.param_groups])
            update(separate, separate_optimizer, step)
            separate_scheduler.step()
        assert rates == separate_rates[branch.fork:], branch
        for a, b in zip(model.parameters(), separate.parameters()):
            assert torch.equal(a, b), branch


def test_the_main_run_of_long_budgets_gets_a_scheduler():
    # 1000x a 400k-step budget is more steps than a scheduler checks; the main run stops at 1e8.
    plan = lrkit.decay_branches("wsd(peak=3e-4, warmup=2000, decay=20%)", [200_000, 400_000])
    assert plan.main.total_steps == 100_000_000
    _, optimizer = fresh_model()
    scheduler = lt.LRScheduler(optimizer, plan.main)
    assert scheduler.get_last_lr()[0] == 0.0  # update 0 of the warmup
    assert plan.forks == [160_001, 320_001]


def test_a_branch_needs_the_main_runs_optimizer_state():
    branch = lrkit.decay_branches(BRANCHED, BUDGETS).branches[0]
    _, optimizer = fresh_model()  # never stepped under a scheduler: no initial_lr
    with pytest.raises(ValueError, match=f"parameter group 0 has no 'initial_lr'.*after {branch.fork} updates"):
        lt.branch_scheduler(optimizer, branch)
    with pytest.raises(TypeError, match="needs an lrkit DecayBranch"):
        lt.branch_scheduler(optimizer, 60)
