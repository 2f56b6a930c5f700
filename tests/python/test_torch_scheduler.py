"""lrkit.torch.LRScheduler and refine() in a PyTorch loop."""
import copy
import json
import math
import os
import stat

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
import lrkit  # noqa: E402
import lrkit.torch as lt  # noqa: E402
from conftest import DEVICES, run_torchrun  # noqa: E402
from small_model import model_and_optimizer  # noqa: E402
from lrkit._torch_common import _name_cut_to  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def train(model, optimizer, scheduler, steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    rates = []
    for _ in range(steps):
        rates.append([group["lr"] for group in optimizer.param_groups])
        x = torch.randn(8, 4, generator=g)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return rates


def test_rates_are_the_schedule_bit_for_bit_and_groups_keep_their_ratio():
    spec = "wsds(peak=3e-3, budgets=[40, 80], decay=25%)"
    schedule = lrkit.Schedule(spec)
    model, optimizer = model_and_optimizer(lr=123.0, groups=2)  # the optimizer's lr does not scale the schedule
    scheduler = lt.LRScheduler(optimizer, spec)
    rates = train(model, optimizer, scheduler, schedule.total_steps)
    assert [r[0] for r in rates] == schedule.values(np.arange(schedule.total_steps)).tolist()
    assert all(abs(r[1] - r[0] / 10) <= 1e-18 + 1e-15 * r[0] for r in rates)
    assert scheduler.get_last_lr()[0] == schedule(schedule.total_steps)


@pytest.mark.parametrize("mode,gamma", [("triangular", 1.0), ("triangular2", 1.0), ("exp_range", 0.99)])
def test_a_loop_moving_from_cyclic_lr_keeps_its_rates_bit_for_bit(mode, gamma):
    # CyclicLR(base_lr=1e-3, max_lr=1e-2, step_size_up=7, step_size_down=5) as an lrkit spec, an open-ended schedule
    # like CyclicLR itself: the rates of a loop are PyTorch's, through a resume from the scheduler's state mid-cycle.
    gamma_key = f", gamma={gamma}" if mode == "exp_range" else ""
    spec = f"triangular(peak=1e-2, floor=1e-3, up=7, down=5, mode={mode}{gamma_key})"
    model, optimizer = model_and_optimizer()
    cyclic = torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr=1e-3, max_lr=1e-2, step_size_up=7, step_size_down=5,
                                               mode=mode, gamma=gamma, cycle_momentum=False)
    expected = train(model, optimizer, cyclic, 60)
    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, spec)
    rates = train(model, optimizer, scheduler, 30)
    saved = scheduler.state_dict()
    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, spec)
    scheduler.load_state_dict(saved)
    rates += train(model, optimizer, scheduler, 30)
    assert rates == expected


def test_state_dict_resumes_the_same_rates_and_refuses_another_schedule():
    spec, total = "wsd(peak=1e-2, warmup=5, decay=30%)", 50
    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, spec, total)
    whole = train(model, optimizer, scheduler, total)

    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, spec, total)
    first = train(model, optimizer, scheduler, 20)
    state = {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}
    torch.save(state, "/dev/null")  # the state pickles

    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, spec, total)
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    rest = train(model, optimizer, scheduler, total - 20, seed=1)
    assert first + rest == whole

    other = lt.LRScheduler(model_and_optimizer()[1], "cosine(peak=1e-2)", total)
    with pytest.raises(ValueError, match="ran schedule 'wsd"):
        other.load_state_dict(state["scheduler"])


@pytest.mark.parametrize("key,value,message", [
    ("ratios", [1.0], r"rate ratios \[1.0\]; this optimizer needs one finite number >= 0 for each of its 2 parameter"),
    ("ratios", [1.0, float("nan")], r"rate ratios \[1.0, nan\]"),
    ("last_epoch", -5, r"holds last_epoch -5; it must be -1 or a step >= 0"),
    ("last_epoch", "7", r"holds last_epoch '7'"),
])
def test_a_damaged_state_is_refused_and_leaves_the_scheduler_as_it_was(key, value, message):
    # A ratios list of another length left the second group at its old rate, a NaN ratio made a NaN rate.
    _, optimizer = model_and_optimizer(groups=2)
    scheduler = lt.LRScheduler(optimizer, "cosine(peak=1e-2)", 10)
    optimizer.step()
    scheduler.step()
    saved = dict(scheduler.state_dict(), **{key: value})
    fresh = lt.LRScheduler(optimizer, "cosine(peak=1e-2)", 10)
    before = [group["lr"] for group in optimizer.param_groups]
    with pytest.raises(ValueError, match=message):
        fresh.load_state_dict(saved)
    assert [group["lr"] for group in optimizer.param_groups] == before and fresh.last_epoch == 0


def loaders():
    """Each single-process object with a state_dict, and its class name, which its refusals begin with."""
    model, optimizer = model_and_optimizer()
    return [("LRScheduler", lt.LRScheduler(optimizer, "cosine(peak=1e-2)", 10)),
            ("GradNormRecorder", lt.GradNormRecorder(model.parameters())), ("SpikeGuard", lt.SpikeGuard()),
            ("SampleReweighting", lt.SampleReweighting())]


@pytest.mark.parametrize("index", range(4))
def test_a_state_that_is_not_the_objects_own_is_refused_by_name(index):
    # Another scheduler's state (PyTorch's CosineAnnealingLR's: a loop moving to lrkit), None from a checkpoint that
    # never saved one, or a list failed with AttributeError or KeyError.
    who, loader = loaders()[index]
    _, optimizer = model_and_optimizer()
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, 10).state_dict()
    with pytest.raises(ValueError, match=rf"^{who}.load_state_dict: the state has no '.*', so it is not what {who}"
                                         r"\.state_dict\(\) returned \(its keys: 'T_max', 'eta_min', 'base_lrs'"):
        loader.load_state_dict(cosine)
    with pytest.raises(ValueError, match=r"\(its keys: none\)$"):
        loader.load_state_dict({})
    for wrong, kind in ((None, "NoneType"), ([1, 2], "list"), ("state", "str")):
        with pytest.raises(TypeError, match=rf"^{who}.load_state_dict takes what {who}\.state_dict\(\) returned, a "
                                            rf"dict; got {kind}$"):
            loader.load_state_dict(wrong)
    loader.load_state_dict(loader.state_dict())  # its own state still loads


def test_a_frozen_first_group_stays_frozen_and_the_others_keep_their_proportions():
    # The ratios were taken to group 0: a first group built at 0 made them all 1, so the frozen group trained at the
    # scheduled rate and the others lost their proportions.
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    optimizer = torch.optim.AdamW([{"params": model[0].parameters(), "lr": 0.0},
                                   {"params": model[1].parameters(), "lr": 0.05},
                                   {"params": model[2].parameters(), "lr": 0.005}])
    schedule = lrkit.Schedule("cosine(peak=1e-2, warmup=2)", 10)
    scheduler = lt.LRScheduler(optimizer, schedule)
    assert scheduler.ratios == [0.0, 1.0, pytest.approx(0.1, rel=1e-15)]
    for step in range(10):
        assert [group["lr"] for group in optimizer.param_groups] == [0.0, schedule(step), schedule(step) * scheduler.ratios[2]]
        optimizer.step()
        scheduler.step()
    frozen = torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[1].parameters()}], lr=0.0)
    assert lt.LRScheduler(frozen, schedule).ratios == [1.0, 1.0]  # every group at 0: nothing to keep


def test_a_group_added_after_the_scheduler_is_refused_at_the_next_step():
    # PyTorch's schedulers leave such a group at the rate it was added with, unscheduled, without a word; lrkit's C++
    # schedulers refuse it (rate_ratios.hpp), and so do these.
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model[0].parameters(), lr=0.1)
    scheduler = lt.LRScheduler(optimizer, "cosine(peak=1e-2)", 10)
    optimizer.step()
    scheduler.step()
    optimizer.add_param_group({"params": model[1].parameters(), "lr": 0.05})
    with pytest.raises(ValueError, match=r"^LRScheduler: the optimizer has 2 parameter groups but had 1 when "
                                         r"LRScheduler was made, .*; make LRScheduler after adding every group$"):
        scheduler.step()
    rebuilt = torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[1].parameters(), "lr": 0.05}], lr=0.1)
    saved = scheduler.state_dict()
    with pytest.raises(ValueError, match="one finite number >= 0 for each of its 2 parameter group"):
        lt.LRScheduler(rebuilt, "cosine(peak=1e-2)", 10).load_state_dict(saved)


def test_a_deep_copied_scheduler_goes_on_at_the_same_rates():
    spec, total = "wsd(peak=1e-2, warmup=5, decay=30%)", 40
    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, spec, total)
    train(model, optimizer, scheduler, 15)
    twin = copy.deepcopy({"model": model, "optimizer": optimizer, "scheduler": scheduler})
    assert twin["scheduler"].optimizer is twin["optimizer"]
    rest = train(model, optimizer, scheduler, total - 15)
    assert train(twin["model"], twin["optimizer"], twin["scheduler"], total - 15) == rest


def _tensor_rate_optimizer():
    model = torch.nn.Linear(4, 1)
    rates = [torch.tensor(0.05), torch.tensor(0.01)]
    return rates, torch.optim.SGD([{"params": [model.weight], "lr": rates[0]}, {"params": [model.bias], "lr": rates[1]}])


def _torch_fills_tensor_rates():
    """Whether this torch's own schedulers update a rate held as a tensor in place (torch 2.x) or replace it (1.13)."""
    rate = torch.tensor(0.1)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=rate)
    torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.5)
    return optimizer.param_groups[0]["lr"] is rate


def test_rates_held_as_tensors_are_filled_in_place_and_checkpoint_as_numbers(tmp_path):
    # A compiled optimizer step reads its rate as a tensor, and a float put in its place recompiles the step. The
    # ratios were the tensors' quotient, which a checkpoint's load then refused as no number.
    schedule = lrkit.Schedule("cosine(peak=1e-2)", 10)
    _, optimizer = _tensor_rate_optimizer()
    scheduler = lt.LRScheduler(optimizer, schedule)
    assert all(type(r) is float for r in scheduler.ratios) and scheduler.ratios == pytest.approx([1.0, 0.2], rel=1e-6)
    for _ in range(3):
        optimizer.step()  # no gradients: nothing moves
        scheduler.step()
    state = torch.load(_saved(scheduler.state_dict(), tmp_path))
    rates, optimizer = _tensor_rate_optimizer()
    resumed = lt.LRScheduler(optimizer, schedule)
    resumed.load_state_dict(state)
    groups = optimizer.param_groups
    assert [float(g["lr"]) for g in groups] == pytest.approx([schedule(3), schedule(3) * 0.2], rel=1e-6)
    assert [float(g["initial_lr"]) for g in groups] == pytest.approx([0.05, 0.01]), "copies: they did not move along"
    if _torch_fills_tensor_rates():
        assert all(g["lr"] is rate for g, rate in zip(groups, rates)), "the loop's own tensors, filled in place"


def test_a_rate_held_as_a_tensor_trains_as_the_same_float_rate():
    try:
        torch.optim.AdamW([torch.nn.Parameter(torch.ones(1))], lr=torch.tensor(0.1), foreach=False).step()
    except (TypeError, RuntimeError) as error:
        pytest.skip(f"this torch's AdamW takes no tensor rate ({error})")

    def weights_after_training(rate):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.AdamW(model.parameters(), lr=rate, foreach=False)
        train(model, optimizer, lt.LRScheduler(optimizer, "wsd(peak=1e-2, warmup=3, decay=40%)", 12), 12)
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    assert torch.allclose(weights_after_training(torch.tensor(0.5)), weights_after_training(0.5), rtol=1e-5, atol=1e-7)


def test_bad_input_is_a_clear_python_exception():
    model, optimizer = model_and_optimizer()
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        lt.LRScheduler(model, "cosine(peak=1e-3)", 10)
    with pytest.raises(lrkit.SpecError):
        lt.LRScheduler(optimizer, "cosine(peak=1e-3", 10)
    with pytest.raises(lrkit.SpecError, match="total_steps"):
        lt.LRScheduler(optimizer, "cosine(peak=1e-3)")  # total_steps missing where the spec needs it
    with pytest.raises(ValueError, match="runs 10 steps but total_steps=20 was given too"):
        lt.LRScheduler(optimizer, lrkit.Schedule("cosine(peak=1e-3)", 10), 20)  # was run for 10, 20 dropped
    with pytest.raises(ValueError, match="cut off"):
        lt.LRScheduler(optimizer, "wsds(peak=1e-3, budgets=[100, 200])", 150)
    # A rate that would make every weight inf or NaN is refused at the start, the optimizer untouched.
    with pytest.raises(lrkit.SpecError, match="it is 1e\\+297 at step 1 of 0..10"):
        lt.LRScheduler(optimizer, "exponential(1e-3, gamma=1e300)", 10)
    with pytest.raises(lrkit.SpecError, match="at step 1 of 0..10"):
        lt.LRScheduler(optimizer, lrkit.Schedule("exponential(1e-3, gamma=1e300)", 10))
    assert optimizer.param_groups[0]["lr"] == 0.05 and "initial_lr" not in optimizer.param_groups[0]
    assert lt.LRScheduler(optimizer, lrkit.Schedule("cosine(peak=1e-3)", 10), 10).schedule.total_steps == 10
    # pybind11 answered these with the constructor's C++ signature, Python with float()'s and iter()'s words.
    with pytest.raises(TypeError, match=r"^Schedule: spec must be a string such as 'cosine\(peak=1e-3\)' \(got int\)$"):
        lt.LRScheduler(optimizer, 5, 10)
    with pytest.raises(TypeError, match=r"^refine: norm 1 is 'b', not a number$"):
        lt.refine([1.0, "b"], 1e-3, 10)
    with pytest.raises(TypeError, match=r"^refine: log_or_norms must be a run log, a CSV of norms or a sequence of norms"):
        lt.refine(None, 1e-3, 10)


def recorder_with_one_norm():
    model, _ = model_and_optimizer()
    recorder = lt.GradNormRecorder(model.parameters())
    model(torch.ones(1, 4)).sum().backward()
    recorder.record()
    return recorder


def test_a_save_that_cannot_be_written_names_its_file_and_leaves_nothing(tmp_path):
    # A folder given as the path left '.NAME.unfinished' beside it, and the error named that file.
    recorder = recorder_with_one_norm()
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError, match=f"cannot write '{tmp_path / 'folder'}': Is a directory"):
        recorder.save(tmp_path / "folder")
    with pytest.raises(FileNotFoundError, match=f"cannot write '{tmp_path / 'missing' / 'norms.csv'}'"):
        recorder.save(tmp_path / "missing" / "norms.csv")
    # A pipe, or a link to one (a link to os.devnull, as root, replaced /dev/null with the CSV): refused, left as it was.
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", tmp_path / "link")
    for name in ("pipe", "link"):
        with pytest.raises(ValueError, match=f"^cannot write '{tmp_path / name}': it is not a regular file \\(a device or "
                                             "pipe\\), and writing the file whole and renaming it into place would "
                                             "replace it: name a file$"):
            recorder.save(tmp_path / name)
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode) and os.path.islink(tmp_path / "link")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "link", "pipe"]
    assert list((tmp_path / "folder").iterdir()) == []


def test_a_save_named_by_a_link_writes_the_file_it_names_and_the_link_stays(tmp_path):
    # The CSV was written beside the link and renamed over it: the link became a file, the file it named kept the
    # old norms.
    recorder = recorder_with_one_norm()
    (tmp_path / "disk").mkdir()
    (tmp_path / "disk" / "norms.csv").write_text("old\n")
    os.symlink(os.path.join("disk", "norms.csv"), tmp_path / "norms.csv")
    os.symlink(tmp_path / "norms.csv", tmp_path / "chain.csv")
    os.symlink(os.path.join("disk", "new.csv"), tmp_path / "new.csv")
    for name in ("norms.csv", "chain.csv", "new.csv"):
        recorder.save(tmp_path / name)
        assert os.path.islink(tmp_path / name)
    for name in ("norms.csv", "new.csv"):
        lines = (tmp_path / "disk" / name).read_text().splitlines()
        assert lines[0] == "step,grad_norm,grad_norm_l1" and lines[1].startswith("0,") and len(lines) == 2, lines
    assert sorted(os.listdir(tmp_path / "disk")) == ["new.csv", "norms.csv"]
    os.symlink("loop_b.csv", tmp_path / "loop_a.csv")
    os.symlink("loop_a.csv", tmp_path / "loop_b.csv")
    with pytest.raises(ValueError, match=f"^cannot write '{tmp_path / 'loop_a.csv'}': it is a link in a loop of links$"):
        recorder.save(tmp_path / "loop_a.csv")
    assert os.path.islink(tmp_path / "loop_a.csv")


def test_a_save_named_as_long_as_the_file_system_takes_is_written(tmp_path):
    # The unfinished file's name, longer by its mark, went past the file system's 255 bytes: "File name too long".
    recorder = recorder_with_one_norm()
    for name in ("n" * 251 + ".csv", "\u00e9" * 125 + ".csv", os.fsdecode(b"\xff" * 251) + ".csv"):
        recorder.save(tmp_path / name)
        recorder.save(tmp_path / name)
        assert (tmp_path / name).read_text().splitlines()[0] == "step,grad_norm,grad_norm_l1"
    assert len(list(tmp_path.iterdir())) == 3, "no unfinished file left"
    assert _name_cut_to("caf\u00e9.csv", 4) == "caf", "not half of the two bytes of an accented e"
    assert _name_cut_to("caf\u00e9.csv", 5) == "caf\u00e9"


SAVES_NORMS = """
import sys, torch, lrkit.torch as lt
model = torch.nn.Linear(4, 1)
recorder = lt.GradNormRecorder(model.parameters())
for _ in range(int(sys.argv[2])):
    model.zero_grad()
    model(torch.ones(1, 4)).sum().backward()
    recorder.record()
for _ in range(150):
    recorder.save(sys.argv[1])
"""


def test_two_loops_saving_one_file_never_mix_their_versions(tmp_path):
    # The ranks of a loop that each save the norms: both wrote into '.NAME.unfinished', so a reader found half of one
    # version with half of the other, and one rank's save failed ("No such file or directory").
    import subprocess
    import sys

    path = tmp_path / "norms.csv"
    savers = [subprocess.Popen([sys.executable, "-c", SAVES_NORMS, str(path), str(records)], stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ, OMP_NUM_THREADS="1")) for records in (3000, 1000)]
    versions = set()
    while any(saver.poll() is None for saver in savers):
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            continue
        versions.add(len(lines) - 1)
    errors = [saver.stderr.read() for saver in savers]
    assert [saver.returncode for saver in savers] == [0, 0], errors
    assert versions <= {3000, 1000}, f"rows of a mixed or half version: {sorted(versions - {3000, 1000})}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["norms.csv"], "no unfinished file left"


def test_a_loop_longer_than_its_schedule_is_warned_once(recwarn):
    model, optimizer = model_and_optimizer()
    train(model, optimizer, lt.LRScheduler(optimizer, "cosine(peak=1e-2)", 12), 12)
    assert not [w for w in recwarn if "updates of its schedule" in str(w.message)], "a loop of total_steps is quiet"
    model, optimizer = model_and_optimizer()
    scheduler = lt.LRScheduler(optimizer, "cosine(peak=1e-2)", 12)
    with pytest.warns(UserWarning) as caught:
        train(model, optimizer, scheduler, 16)
    past = [str(w.message) for w in caught if "updates of its schedule" in str(w.message)]
    assert past == ["LRScheduler: the loop has taken more than the 12 updates of its schedule 'cosine(peak=0.01)'; the "
                    "rate stays at its end value 0.0 (give the loop's number of updates as total_steps)"]
    assert [w.filename for w in caught if "updates of its schedule" in str(w.message)] == [__file__], "the loop's line"


def _saved(state, tmp_path):
    path = tmp_path / "state.pt"
    torch.save(state, path)
    return path


def test_refine_from_recorded_norms_and_from_an_array(tmp_path):
    model, optimizer = model_and_optimizer()
    recorder = lt.GradNormRecorder(model.parameters())
    g = torch.Generator().manual_seed(3)
    for _ in range(30):
        loss = model(torch.randn(8, 4, generator=g)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        recorder.record()
        optimizer.step()
    resumed = lt.GradNormRecorder(model.parameters())
    resumed.load_state_dict(torch.load(_saved(recorder.state_dict(), tmp_path)))
    assert (resumed.l2, resumed.l1) == (recorder.l2, recorder.l1) and len(resumed.l2) == 30
    with pytest.raises(ValueError, match="30 l2 norms but 29 l1 norms"):
        resumed.load_state_dict({"l2": recorder.l2, "l1": recorder.l1[1:]})
    path = recorder.save(tmp_path / "norms.csv")
    refined = lt.refine(path, peak=1e-3, total_steps=60)
    expected = np.array(lrkit.refine_multipliers(recorder.l1, 60, norm="l1")) * 1e-3
    assert np.allclose(refined.values(np.arange(61)), expected, rtol=1e-12, atol=0)
    assert max(refined.values(np.arange(61))) == pytest.approx(1e-3) and refined(60) == 0
    constant = lt.refine([1.0] * 10, peak=2.0, total_steps=10, norm="l2", save_norms_to=str(tmp_path / "c.csv"))
    assert np.allclose(constant.values(np.arange(11)), 2.0 * (1 - np.arange(11) / 10))
    with pytest.raises(ValueError, match=r"^refine: norm 1 is 0.0; norms must be > 0$"):
        lt.refine([1.0, 0.0], peak=1.0, total_steps=10)
    with pytest.raises(ValueError, match=r"^refine: no norm of the 2 is finite: every update of that run was skipped$"):
        lt.refine([float("nan"), float("inf")], peak=1.0, total_steps=10)
    # A skipped update's norm (NaN, or inf from a GradScaler's overflow) is filled in from its neighbours, from a list
    # or from the recorder's CSV.
    skipped = lt.refine([float("inf"), 2.0, float("nan"), 4.0, float("-inf")], peak=1.0, total_steps=10, tau=0)
    filled = lt.refine([2.0, 2.0, 3.0, 4.0, 4.0], peak=1.0, total_steps=10, tau=0)
    assert skipped.values(np.arange(11)).tolist() == filled.values(np.arange(11)).tolist()
    recorder.load_state_dict({"l2": [1.0] * 4, "l1": [float("inf"), 2.0, float("nan"), 4.0]})
    from_csv = lt.refine(recorder.save(tmp_path / "skipped.csv"), peak=1.0, total_steps=10, tau=0)
    assert from_csv.values(np.arange(11)).tolist() == lt.refine([2.0, 2.0, 3.0, 4.0], 1.0, 10, tau=0).values(np.arange(11)).tolist()
    recorder.load_state_dict(resumed.state_dict())

    # A save cut short (here by a value that cannot be written; in a loop, by a kill) leaves the last save whole.
    class Unwritable:
        def __str__(self):
            raise RuntimeError("cut short")

    before = open(path).read()
    recorder.l2.append(Unwritable())  # load_state_dict refuses it: a norm that is no number
    recorder.l1.append(1.0)
    with pytest.raises(RuntimeError, match="cut short"):
        recorder.save(path)
    assert open(path).read() == before


def test_the_recorder_takes_a_module_or_what_clip_grad_norm_takes(tmp_path):
    # A module failed with "'Linear' object is not iterable"; one tensor was taken apart into its rows, which have no
    # gradient, so record() said "no parameter has a gradient".
    model, _ = model_and_optimizer()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    by_module, by_list, by_tensor = (lt.GradNormRecorder(model), lt.GradNormRecorder(list(model.parameters())),
                                     lt.GradNormRecorder(model[0].weight))
    for recorder in (by_module, by_list, by_tensor):
        recorder.record()
    assert by_module.l2 == by_list.l2 and by_module.l1 == by_list.l1
    assert by_tensor.l2 == pytest.approx([model[0].weight.grad.norm().item()], rel=1e-6)  # float32 per tensor
    with pytest.raises(TypeError, match=r"^GradNormRecorder takes a module or its parameters \(an iterable of tensors\), "
                                        r"got int$"):
        lt.GradNormRecorder(5)
    with pytest.raises(TypeError, match=r"^GradNormRecorder: parameter 1 is a str, not a tensor$"):
        lt.GradNormRecorder([model[0].weight, "bias"])
    used_up = model.parameters()
    list(used_up)
    with pytest.raises(ValueError, match=r"^GradNormRecorder: no parameters \(an iterator such as model.parameters\(\) "
                                         r"that was used up before gives none\)$"):
        lt.GradNormRecorder(used_up)
    # NaN and infinity are what record() takes on a skipped update (a GradScaler's overflow): they come back.
    by_list.load_state_dict({"l2": [1.0, float("inf")], "l1": [float("nan"), 2]})
    assert by_list.l2 == [1.0, float("inf")] and math.isnan(by_list.l1[0]) and by_list.l1[1] == 2.0
    for bad, shown in (("3", "'3'"), (-1.0, "-1.0"), (True, "True")):
        with pytest.raises(ValueError, match=rf"^GradNormRecorder.load_state_dict: l1 norm 1 is {shown}; a norm is a "
                                             r"number >= 0$"):
            by_list.load_state_dict({"l2": [1.0, 1.0], "l1": [1.0, bad]})
    assert by_list.l2 == [1.0, float("inf")], "a refused state leaves the recorder as it was"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("workers", [2, 3])
def test_norms_of_gradients_sharded_across_ranks_are_the_whole_gradients(tmp_path, device, workers):
    # Under FSDP each rank holds a shard of the gradient: the recorder gave each rank its shard's norms.
    run_torchrun(workers, [os.path.join(HERE, "shard_norm_worker.py"), str(tmp_path)], LRKIT_TEST_DEVICE=device)
    ranks = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(workers)]
    for result in ranks:
        assert len(result["sharded"][0]) == 4
        for sharded, whole in zip(result["sharded"], result["reference"]):
            assert sharded == pytest.approx(whole, rel=1e-12)
        assert result["sharded"] == ranks[0]["sharded"], "every rank records the same norms"
        assert result["error"] == ("GradNormRecorder.record: no rank of the shard group has a gradient (call it after "
                                   "backward)")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_recorded_norms_are_the_gradients_norms_in_float64(dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3)).to(dtype)
    frozen = torch.nn.Parameter(torch.ones(2))  # no gradient: left out
    recorder = lt.GradNormRecorder(list(model.parameters()) + [frozen], flush_every=2)
    expected = []
    for step in range(5):
        model.zero_grad()
        model(torch.randn(4, 6).to(dtype)).pow(2).mean().backward()
        recorder.record()
        grads = [p.grad.double() for p in model.parameters()]
        expected.append((sum(g.pow(2).sum() for g in grads).sqrt().item(), sum(g.abs().sum() for g in grads).item()))
        assert len(recorder.l2) == step + 1  # every record is readable at once, flushed or not
    rtol = 1e-6 if dtype == torch.float32 else 1e-12 if dtype == torch.float64 else 1e-5
    assert np.allclose(recorder.l2, [e[0] for e in expected], rtol=rtol, atol=0)
    assert np.allclose(recorder.l1, [e[1] for e in expected], rtol=rtol, atol=0)
    with pytest.raises(ValueError, match="flush_every must be >= 1"):
        lt.GradNormRecorder(model.parameters(), flush_every=0)
    with pytest.raises(ValueError, match=r"flush_every must be a whole number >= 0 \(got 'a'\)"):
        lt.GradNormRecorder(model.parameters(), flush_every="a")  # was int()'s "invalid literal for int()"
    with pytest.raises(RuntimeError, match="no parameter has a gradient"):
        lt.GradNormRecorder([frozen]).record()


@pytest.mark.parametrize("device", DEVICES)
def test_recorded_norms_of_a_model_split_between_the_host_and_a_device(device):
    # The per-tensor norms of parameters on two devices (a layer offloaded to the host) could not be stacked.
    torch.manual_seed(1)
    first, second = torch.nn.Linear(6, 5), torch.nn.Linear(5, 3).to(device)
    parameters = [*first.parameters(), *second.parameters()]
    recorder = lt.GradNormRecorder(parameters)
    second(torch.tanh(first(torch.randn(4, 6))).to(device)).pow(2).mean().backward()
    recorder.record()
    grads = [p.grad.double().cpu() for p in parameters]
    assert recorder.l2 == pytest.approx([sum(g.pow(2).sum() for g in grads).sqrt().item()], rel=1e-6)
    assert recorder.l1 == pytest.approx([sum(g.abs().sum() for g in grads).item()], rel=1e-6)


def test_refine_takes_any_path_and_numpy_numbers(tmp_path):
    odd = tmp_path / "run (2), copy"
    odd.mkdir()
    saved = lt.refine(np.linspace(2.0, 1.0, 20), peak=np.float64(1e-3), total_steps=20, norm="l2",
                      tau=np.float32(0.25), save_norms_to=str(odd / "norms.csv"))
    again = lt.refine(odd / "norms.csv", peak=1e-3, total_steps=20, norm="l2", tau=0.25)
    assert saved.values(np.arange(21)).tolist() == again.values(np.arange(21)).tolist()
    assert lrkit.spec_word(str(odd)) == '"' + str(odd) + '"' and lrkit.spec_word("run.h5") == "run.h5"
    with pytest.raises(FileNotFoundError):
        lt.refine(str(tmp_path / "missing.h5"), peak=1.0, total_steps=10)


def test_total_steps_takes_a_whole_float_as_torchs_schedulers_do():
    """PyTorch's own schedulers run with T_max=1e4 from a config; so do lrkit's, at the int's rates."""
    _, optimizer = model_and_optimizer()
    from_float = lt.LRScheduler(optimizer, "cosine(peak=1e-3)", total_steps=1e2)
    assert from_float.schedule.total_steps == 100
    assert from_float.schedule.values(np.arange(101)).tolist() == lrkit.Schedule("cosine(peak=1e-3)", 100).values(np.arange(101)).tolist()
    with pytest.raises(ValueError, match=r"total_steps must be a whole number \(got 99.5\)"):
        lt.LRScheduler(optimizer, "cosine(peak=1e-3)", total_steps=99.5)


def test_the_readme_shows_the_examples_the_tests_run():
    import os
    import subprocess
    import sys
    import tempfile

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    readme = open(os.path.join(root, "README.md")).read()
    for example in ("schedule_in_pytorch.py", "nanogpt_lrkit.py", "decay_branches_in_pytorch.py", "refined_in_pytorch.py"):
        text = open(os.path.join(root, "examples", example)).read()
        assert "```python\n" + text + "```" in readme, f"README.md does not show examples/{example} verbatim"
    done = subprocess.run([sys.executable, os.path.join(root, "examples", "schedule_in_pytorch.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("220 [100, 220] 0.003")
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, os.path.join(root, "examples", "decay_branches_in_pytorch.py"), out],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert sorted(os.listdir(out)) == ["fork_161.pt", "fork_321.pt", "fork_641.pt"]
    lines = done.stdout.splitlines()
    assert lines[0] == "[161, 321, 641] 918 updates instead of 1400"
    assert [line.split(", held-out")[0] for line in lines[1:]] == [
        "budget 200: forked at 161", "budget 400: forked at 321", "budget 800: forked at 641"]
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, os.path.join(root, "examples", "refined_in_pytorch.py"), out],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert os.listdir(out) == ["norms.csv"] and len(open(os.path.join(out, "norms.csv")).readlines()) == 301
    refined, losses = done.stdout.splitlines()
    # The first run's norms shrink as it learns: the refined schedule warms up on its own and anneals to 0.
    assert refined.startswith("refined: peak at update ") and int(refined.split()[4].rstrip(",")) > 0
    assert losses.startswith("held-out loss: linear 0.")


@pytest.mark.parametrize("module, names", [
    ("lrkit.torch", ["DispersionHook", "GradNormRecorder", "HDET", "LRScheduler", "SampleReweighting", "SpikeGuard",
                     "branch_scheduler", "refine"]),
    ("lrkit.hdet", ["HDET"]),
    ("lrkit.reweighting", ["SampleReweighting"]),
    ("lrkit.spikes", ["SpikeGuard"]),
    ("lrkit.dispersion", ["DispersionHook"]),
    ("lrkit.logs", ["RunLog", "read_log"]),
])
def test_star_import_gives_the_public_names_only(module, names):
    namespace = {}
    exec(f"from {module} import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == names
