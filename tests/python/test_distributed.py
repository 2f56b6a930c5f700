"""DispersionHook and HDET under Debian's torchrun with 2 and 3 Gloo workers."""
import json
import math
import os
import subprocess
import tempfile

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
if not torch.distributed.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

from conftest import DEVICES, run_python, run_torchrun  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def torchrun(workers, out, log_name, device):
    run_torchrun(workers, [os.path.join(HERE, "ddp_worker.py"), str(out), log_name], LRKIT_TEST_DEVICE=device)
    return [json.load(open(out / f"rank{r}.json")) for r in range(workers)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("workers,log_name", [(2, "ranks.jsonl"), (3, "ranks.h5")])
def test_hook_equals_brute_force_and_hdet_alpha_zero_is_the_plain_loop(tmp_path, workers, log_name, device):
    results = torchrun(workers, tmp_path, log_name, device)
    for rank_result in results:
        for hook, brute in zip(rank_result["hook"], rank_result["brute"]):
            assert hook["loss"] == pytest.approx(brute["loss"], rel=1e-6)
            assert hook["grad_norm"] == pytest.approx(brute["grad_norm"], rel=1e-5)
            assert hook["cos_to_mean"] == pytest.approx(brute["cos_to_mean"], rel=1e-5, abs=1e-6)
            assert hook["mean_grad_norm"] == pytest.approx(brute["mean_grad_norm"], rel=1e-5)
            assert hook["cos_pairwise"] == pytest.approx(brute["cos_pairwise"], rel=1e-5, abs=1e-6)
            n = workers
            inner = (n * n * hook["mean_grad_norm"] ** 2 - sum(g * g for g in hook["grad_norm"])) / (n * (n - 1))
            assert hook["inner_pairwise"] == pytest.approx(inner, rel=1e-9, abs=1e-12)
        assert rank_result["hdet_zero_equal"], "HDET with alpha = 0 must be the plain loop bit for bit"
        assert rank_result["synced_equal"] and not rank_result["between_equal"]
        assert rank_result["hdet_state"] == 3
        # At 160 bytes: Linear(5, 7) float32 (140 + 28 bytes) closes a bucket, Linear(7, 3) float64's weight (168) one
        # alone; its bias (24) and Linear(3, 2) float32 (24 + 8) end in open buckets, one per dtype.
        assert rank_result["buckets"] == [[[7, 5], [7]], [[3, 7]], [[3]], [[2, 3], [2]]]
        assert [dtype for dtype, _ in rank_result["average_errors"]] == ["torch.float32"] * 2 + ["torch.float64"] * 2 + \
            ["torch.float32"] * 2
        for dtype, error in rank_result["average_errors"]:
            assert error <= (1e-6 if dtype == "torch.float32" else 1e-14), (dtype, error)
    rates = [r["spread_rates"][4] for r in results]
    assert len(set(rates)) == workers, "every rank its own rate"
    assert sum(rates) / workers == pytest.approx(results[0]["spread_rates"][4], rel=0.5)
    # step(loss, metrics=False) returns nothing and hands the rows to the log every 3 steps and at close: the same log.
    assert all(r is None for result in results for r in result["lazy_returns"])
    if log_name.endswith(".jsonl"):
        lines = [json.loads(line) for line in open(tmp_path / log_name)]
        assert len(lines) == 8 * workers and {line["rank"] for line in lines} == set(range(workers))
        assert [(line["step"], line["rank"]) for line in lines if line.get("session") == "fresh"] == \
            [(0, r) for r in range(workers)] and all("session" not in line for line in lines[workers:])
        assert open(tmp_path / ("lazy_" + log_name)).read() == open(tmp_path / log_name).read()
        assert results[0]["lazy_rows_written"] == [0, 0, 3, 3, 3, 6, 6, 6]
    else:
        pytest.importorskip("h5py", reason="h5py is not installed for this Python")
        import lrkit

        log = lrkit.read_log(tmp_path / log_name)
        assert log.arrays["/ranks/grad_norm"].shape == (8, workers)
        hook_rows = results[0]["hook"]
        assert log.arrays["/ranks/grad_norm"].tolist() == [row["grad_norm"] for row in hook_rows]
        assert log.arrays["/diagnostics/cos_pairwise"].tolist() == [row["cos_pairwise"] for row in hook_rows]
        import numpy as np

        lazy = lrkit.read_log(tmp_path / ("lazy_" + log_name))
        assert sorted(lazy.arrays) == sorted(log.arrays)
        for name, values in log.arrays.items():
            assert np.array_equal(lazy.arrays[name], values, equal_nan=True), name
    binary = os.environ.get("LRKIT")
    if binary and os.access(binary, os.X_OK):
        report = subprocess.run([binary, "diagnose", str(tmp_path / log_name), "--window", "4"], capture_output=True,
                                text=True)
        assert report.returncode == 0, report.stderr
        assert f"{workers} rank(s), 8 steps" in report.stdout, report.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_hdet_and_the_hook_run_on_data_parallel_subgroups_without_rank_zero(tmp_path, device):
    # Groups {0, 2} and {1, 3}: HDET's permutation broadcast used global rank 0 as its source, which group {1, 3}
    # does not hold (torch refused it there).
    run_torchrun(4, [os.path.join(HERE, "subgroup_worker.py"), str(tmp_path)], LRKIT_TEST_DEVICE=device)
    results = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(4)]
    for first, second in ((0, 2), (1, 3)):
        a, b = results[first], results[second]
        assert a["syncs"] == b["syncs"] == 2
        assert a["permutation"] == b["permutation"]
        assert a["weights"] == b["weights"], "a sync leaves every replica of a group with the group's mean"
        assert a["rates"][3] != b["rates"][3], "each replica of a group its own rate"
        assert a["hook_world_sizes"] == b["hook_world_sizes"] == [2] * 6
    assert results[0]["weights"] != results[1]["weights"], "the two groups train apart"


@pytest.mark.parametrize("device", DEVICES)
def test_a_rank_with_a_zero_gradient_leaves_the_pairwise_cosine_unmeasured_on_every_rank(tmp_path, device):
    # The rank with the zero gradient left the exact pairwise all-reduce out: Gloo aborted the job.
    run_torchrun(2, [os.path.join(HERE, "zero_gradient_worker.py"), str(tmp_path)], LRKIT_TEST_DEVICE=device)
    ranks = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(2)]
    for rows in ranks:
        assert rows[1]["grad_norm"][1] == 0 and math.isnan(rows[1]["cos_to_mean"][1])
        assert math.isnan(rows[1]["cos_pairwise"]), "a cosine with a zero gradient is undefined"
        assert all(-1 <= rows[s]["cos_pairwise"] <= 1 for s in (0, 2, 3)), "the steps around it are measured"
    assert [row["cos_pairwise"] for row in ranks[0] if not math.isnan(row["cos_pairwise"])] == \
        [row["cos_pairwise"] for row in ranks[1] if not math.isnan(row["cos_pairwise"])]


def test_without_a_process_group_the_hook_and_hdet_say_so():
    import lrkit.torch as lt

    with pytest.raises(RuntimeError, match="init_process_group"):
        lt.DispersionHook()
    model = torch.nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match="init_process_group"):
        lt.HDET(torch.optim.SGD(model.parameters(), lr=0.1), model, "cosine(peak=0.1)", 10)


HDET_PAST_THE_END = """
import sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hdet = lt.HDET(optimizer, model, "linear(1e-2, 0)", 6, sync_every=2)
for step in range(int(sys.argv[2])):
    optimizer.step()
    hdet.step(1.0)
"""


@pytest.mark.parametrize("steps,warned", [(6, False), (9, True)])
def test_hdet_warns_once_when_the_loop_outlasts_its_schedule(tmp_path, steps, warned):
    done = run_python(["-c", HDET_PAST_THE_END, str(tmp_path / "store"), str(steps)], store=str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    expected = ("HDET: the loop has taken more than the 6 updates of its schedule 'linear(peak=0.01, floor=0)'; the rate stays at "
                "its end value 0.0")
    assert done.stderr.count(expected) == (1 if warned else 0), done.stderr


HDET_GROUP_ADDED = """
import sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
optimizer = torch.optim.SGD(model[0].parameters(), lr=0.1, momentum=0.5)
hdet = lt.HDET(optimizer, model, "cosine(peak=0.1)", 10, spread={"momentum": 0.5})
optimizer.step()
hdet.step(1.0)
optimizer.add_param_group({"params": model[1].parameters(), "momentum": 0.9})
try:
    hdet.step(1.0)
except ValueError as e:
    print(e)
print(optimizer.param_groups[1]["lr"], optimizer.param_groups[1]["momentum"], hdet.state.step)
"""


def test_hdet_refuses_a_group_added_after_it_was_made(tmp_path):
    # The group kept its rate and momentum, neither spread nor scheduled, without a word.
    done = run_python(["-c", HDET_GROUP_ADDED, str(tmp_path / "store")], store=str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "HDET: the optimizer has 2 parameter groups but had 1 when HDET was made, so a group would keep its rate "
        "unscheduled; make HDET after adding every group",
        "0.1 0.9 1"], done.stdout


HDET_FOREIGN_STATE = """
import json, sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hdet = lt.HDET(optimizer, model, "cosine(peak=0.1)", 10)
errors, cosine = [], torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, 10).state_dict()
for state in (cosine, None):
    try:
        hdet.load_state_dict(state)
    except (TypeError, ValueError) as e:
        errors.append(f"{type(e).__name__}: {e}")
hdet.load_state_dict(hdet.state_dict())
print(json.dumps({"errors": errors, "cosine_keys": list(cosine)}))
"""


def test_hdet_refuses_a_state_that_is_not_its_own_by_name(tmp_path):
    # A PyTorch scheduler's state (a loop moving to HDET) failed with KeyError 'state', None with AttributeError.
    done = run_python(["-c", HDET_FOREIGN_STATE, str(tmp_path / "store")], store=str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    keys = [repr(key) for key in result["cosine_keys"]]  # this torch's: they differ between versions
    listed = ", ".join(keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
    assert result["errors"] == [
        "ValueError: HDET.load_state_dict: the state has no 'spec', 'total_steps', 'ratios', 'state', so it is not what "
        f"HDET.state_dict() returned (its keys: {listed})",
        "TypeError: HDET.load_state_dict takes what HDET.state_dict() returned, a dict; got NoneType"]
    assert keys[:2] == ["'T_max'", "'eta_min'"]


HDET_TENSOR_RATES = """
import json, sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Linear(2, 1)
rates = [torch.tensor(0.05), torch.tensor(0.01)]
optimizer = torch.optim.SGD([{"params": [model.weight], "lr": rates[0]}, {"params": [model.bias], "lr": rates[1]}])
hdet = lt.HDET(optimizer, model, "cosine(peak=0.1)", 10, sync_every=2)
for step in range(3):
    optimizer.step()
    hdet.step(1.0 + step)
groups = optimizer.param_groups
print(json.dumps({"same_tensors": all(g["lr"] is rate for g, rate in zip(groups, rates)),
                  "rates": [float(g["lr"]) for g in groups], "expected": [hdet.lr(), hdet.lr() * 0.2],
                  "ratio_types": sorted({type(r).__name__ for r in hdet.state_dict()["ratios"]})}))
"""


def test_hdet_fills_rates_held_as_tensors_in_place(tmp_path):
    # A compiled optimizer step reads its rate as a tensor: HDET put a float in its place, which recompiles the step.
    done = run_python(["-c", HDET_TENSOR_RATES, str(tmp_path / "store")], store=str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["same_tensors"] and result["ratio_types"] == ["float"]
    assert result["rates"] == pytest.approx(result["expected"], rel=1e-6) and result["rates"][0] > 0


HDET_LOSSES_WAIT_FOR_A_SYNC = """
import json, sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)


def run(read_state_every_step):
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    hdet = lt.HDET(optimizer, model, "linear(peak=0.1, floor=0.01)", 11, sync_every=4, spread={"momentum": 0.5})
    rows = []
    for step in range(11):
        hdet.step(torch.tensor(3.0 - 0.1 * step, dtype=torch.float64))
        if read_state_every_step:
            hdet.state
        rows.append({"pending": len(hdet._pending), "lr": optimizer.param_groups[0]["lr"], "base": hdet.base_lr(),
                     "momentum": optimizer.param_groups[0]["momentum"]})
    return rows, hdet.state_dict()


print(json.dumps({"late": run(False), "eager": run(True)}))
"""


def test_hdet_hands_the_losses_over_at_a_sync_only_and_gives_the_same_run(tmp_path):
    # hdet.step copied the gathered losses to the host every step: on a GPU, a wait for the device per step.
    done = run_python(["-c", HDET_LOSSES_WAIT_FOR_A_SYNC, str(tmp_path / "store")], store=str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    (late_rows, late_state), (eager_rows, eager_state) = result["late"], result["eager"]
    assert [row["pending"] for row in late_rows] == [1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3], "one hand-over per window of 4"
    assert all(row["pending"] == 0 for row in eager_rows), "reading hdet.state hands them over"
    drop = lambda rows: [{k: v for k, v in row.items() if k != "pending"} for row in rows]  # noqa: E731
    assert drop(late_rows) == drop(eager_rows) and late_state == eager_state
    assert late_state["state"]["step"] == 11 and late_state["state"]["syncs"] == 2
    assert late_state["state"]["window_loss"] == [sum(3.0 - 0.1 * s for s in (8, 9, 10))]


BAD_LOSSES = """
import sys, numpy, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Linear(2, 1)
hdet = lt.HDET(torch.optim.SGD(model.parameters(), lr=0.1), model, "cosine(peak=0.1)", 10)
ddp = torch.nn.parallel.DistributedDataParallel(model)
hook = lt.DispersionHook()
ddp.register_comm_hook(None, hook)
ddp(torch.ones(4, 2)).sum().backward()
for step in (hdet.step, hook.step):
    for loss in (torch.ones(3), "1.5", None, numpy.ones(2), torch.tensor(True)):
        try:
            step(loss)
            print("taken", repr(loss))
        except (TypeError, ValueError) as error:
            print(type(error).__name__, error)
hdet.step(torch.tensor([[2.5]]))
hdet.step(numpy.float32(2.0))
print("HDET steps", hdet.state.step, "window", hdet.state.window_loss)
print("hook loss", hook.step(numpy.array(1.5))["loss"])
"""


def test_hdet_and_the_hook_name_a_loss_that_is_not_one_number():
    # A per-sample loss vector failed in a reshape with torch's words ("shape '[1]' is invalid for input of size 3").
    with tempfile.TemporaryDirectory() as scratch:
        done = run_python(["-c", BAD_LOSSES, os.path.join(scratch, "store")], store=os.path.join(scratch, "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for who, said in (("HDET.step", lines[:5]), ("DispersionHook.step", lines[5:10])):
        assert said == [
            f"ValueError {who}: the loss must be one number (got a tensor of shape (3,); reduce it first, e.g. .mean())",
            f"TypeError {who}: the loss must be a number or a one-element tensor (got str)",
            f"TypeError {who}: the loss must be a number or a one-element tensor (got NoneType)",
            f"TypeError {who}: the loss must be a number or a one-element tensor (got ndarray of shape (2,))",
            f"TypeError {who}: the loss must be a real number (got a torch.bool tensor)",
        ]
    assert lines[10] == "HDET steps 2 window [4.5]", "one-element tensors and NumPy numbers are taken"
    assert lines[11] == "hook loss [1.5]"


HDET_BAD_STATES = """
import copy, sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.1)
def hdet():
    return lt.HDET(optimizer, model, "cosine(peak=0.1)", 10, sync_every=2, spread={"weight_decay": 0.5})
saved = hdet()
saved.step(1.0)
good = saved.state_dict()
for part, field, value in [("state", "window_loss", []), ("state", "permutation", [3]), ("spread", "scale", float("nan")),
                           ("state", "velocity", "fast"), ("state", "syncs", None)]:
    bad = copy.deepcopy(good)
    (bad["state"] if part == "state" else bad["spread"]["weight_decay"])[field] = value
    fresh = hdet()
    try:
        fresh.load_state_dict(bad)
        print("loaded", field)
    except (TypeError, ValueError) as error:
        print(type(error).__name__, error)
    fresh.step(1.0)  # refused states leave the fresh one whole
try:
    hdet().load_state_dict(dict(good, ratios=[float("nan")]))
except ValueError as error:
    print(error)
del good["state"]["delta"]
try:
    hdet().load_state_dict(good)
except ValueError as error:
    print(str(error).split(" (it holds")[0])
"""


def test_hdet_refuses_a_checkpoint_state_that_is_not_its_own_naming_the_field():
    # An empty window_loss made the next step index past it: a segmentation fault.
    with tempfile.TemporaryDirectory() as scratch:
        done = run_python(["-c", HDET_BAD_STATES, os.path.join(scratch, "store")], store=os.path.join(scratch, "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    prefix = "ValueError the checkpoint's HDET state does not fit this one: hdet state: "
    assert done.stdout.splitlines() == [
        prefix + "window_loss holds 0 values for 1 replica",
        prefix + "permutation [3] is not an ordering of the 1 replica (each of 0..0 once)",
        prefix + "scale must be a finite number > 0 (got nan)",
        "TypeError the checkpoint's HDET state holds velocity = 'fast'; it must be a number",
        "TypeError the checkpoint's HDET state holds syncs = None; it must be a whole number",
        "the checkpoint's HDET holds rate ratios [nan]; this optimizer needs one finite number >= 0 for each of its 1 "
        "parameter group(s)",
        "the checkpoint's HDET state has no 'delta'",
    ]


BAD_SETTINGS = """
import os, sys, torch, torch.distributed as dist, lrkit.torch as lt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for settings in (dict(sync_every=2.5), dict(seed=-1), dict(seed=2**70), dict(auto_lr="yes"), dict(sigma="0.1"),
                 dict(alpha=-1), dict(min_scale=2.0)):
    try:
        lt.HDET(optimizer, model, "cosine(peak=0.1)", 10, **settings)
    except (TypeError, ValueError) as error:
        print(type(error).__name__, error)
os.makedirs(sys.argv[1] + ".folder/ranks.h5")
pipes = [sys.argv[1] + ".pipe/ranks" + ending for ending in (".jsonl", ".h5")]
os.makedirs(sys.argv[1] + ".pipe")
for pipe in pipes:
    os.mkfifo(pipe)
for make in (lambda: lt.DispersionHook(flush_every=0), lambda: lt.DispersionHook(log=sys.argv[1] + ".missing/ranks.h5"),
             lambda: lt.DispersionHook(log=sys.argv[1] + ".folder/ranks.h5"),
             lambda: lt.DispersionHook(log=pipes[0], start_step=3), lambda: lt.DispersionHook(log=pipes[1])):
    try:
        make()
    except (OSError, ValueError) as error:
        print(type(error).__name__, str(error).replace(sys.argv[1], "STORE"))
import stat
print("pipes left as they were:", all(stat.S_ISFIFO(os.stat(pipe).st_mode) for pipe in pipes))
"""


def test_bad_hdet_and_hook_settings_are_named_in_their_words():
    # pybind11 answered a wrong type with the C++ signature; flush_every=0 was taken as 1; the lock file's name stood
    # for the log's.
    with tempfile.TemporaryDirectory() as scratch:
        done = run_python(["-c", BAD_SETTINGS, os.path.join(scratch, "store")], store=os.path.join(scratch, "store"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "ValueError HDET sync_every must be a whole number >= 0 (got 2.5)",
        "ValueError HDET seed must be a whole number >= 0 (got -1)",
        "ValueError HDET seed must be below 2**64 (got 1180591620717411303424)",
        "TypeError HDET auto_lr must be True or False (got 'yes')",
        "TypeError HDET sigma must be a number (got '0.1')",
        "ValueError HDET alpha must be in [0, 1) (got -1)",  # the C++ check named the trainer's key, hdet.alpha
        "ValueError HDET bounds need 0 < min_scale <= 1 <= max_scale",
        "ValueError DispersionHook: flush_every must be >= 1 (got 0)",
        "FileNotFoundError [Errno 2] DispersionHook: cannot write log 'STORE.missing/ranks.h5': No such file or directory",
        "IsADirectoryError [Errno 21] DispersionHook: cannot write log 'STORE.folder/ranks.h5': Is a directory",
        # A resume read the pipe and waited for a writer; a fresh log replaced it with a file.
        "ValueError DispersionHook: cannot write log 'STORE.pipe/ranks.jsonl': it is not a regular file (a device or "
        "pipe), and writing the file whole and renaming it into place would replace it: name a file",
        "ValueError DispersionHook: cannot write log 'STORE.pipe/ranks.h5': it is not a regular file (a device or "
        "pipe), and writing the file whole and renaming it into place would replace it: name a file",
        "pipes left as they were: True",
    ]


def test_the_example_loop_trains_under_torchrun_and_lrkit_diagnose_reads_its_log(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("In the beginning God created the heaven and the earth. And the earth was without form. " * 300)
    example = os.path.join(HERE, "..", "..", "examples", "nanogpt_lrkit.py")
    run_torchrun(2, [example, str(tmp_path), "40"], CORPUS=str(corpus), HDET="1")
    lines = [json.loads(line) for line in open(tmp_path / "ranks.jsonl")]
    assert len(lines) == 2 * 44  # wsds(budgets=[20, 40], decay=20%) runs 40 + 20 % of 20 = 44 steps
    binary = os.environ.get("LRKIT")
    if binary and os.access(binary, os.X_OK):
        report = subprocess.run([binary, "diagnose", str(tmp_path / "ranks.jsonl"), "--window", "8"],
                                capture_output=True, text=True)
        assert report.returncode == 0 and "verdict:" in report.stdout, report.stdout + report.stderr


@pytest.mark.parametrize("device", DEVICES)
def test_hdet_spreads_weight_decay_and_other_values_each_with_its_own_permutation_and_resumes(tmp_path, device):
    workers = 3
    run_torchrun(workers, [os.path.join(HERE, "hdet_spread_worker.py"), str(tmp_path)], LRKIT_TEST_DEVICE=device)
    results = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(workers)]
    for result in results:
        assert result["resumed"] == result["whole"], "a resume continues every spread value exactly"
    rows = [r["whole"] for r in results]
    # Step 0: rho = 0.5, 1, 1.5 (alpha 0.5 over 3 ranks) times the decayed group's 0.1; the other group's 0 stays 0.
    assert sorted(row[0]["wd"][0] for row in rows) == pytest.approx([0.05, 0.1, 0.15], rel=1e-12)
    assert all(row[0]["wd"][1] == 0 for row in rows)
    # dropout: 0.1 x (0.6, 1, 1.4), clamped at upper = 0.12.
    assert sorted(row[0]["dropout"] for row in rows) == pytest.approx([0.06, 0.1, 0.12], rel=1e-12)
    for step in range(12):
        assert all(row[step]["permutations"] == rows[0][step]["permutations"] for row in rows), "the ranks agree"
        wd = [row[step]["wd"][0] for row in rows]
        assert sum(wd) / workers == pytest.approx(rows[0][step]["wd_base"], rel=1e-9), "mean = base (no clamping)"
    lr_permutations = [rows[0][s]["permutations"][0] for s in range(0, 12, 3)]
    wd_permutations = [rows[0][s]["permutations"][1] for s in range(0, 12, 3)]
    assert lr_permutations != wd_permutations, "each spread value draws its own permutations"
    assert rows[0][0]["wd_base"] == 0.1 and rows[0][11]["wd_base"] != pytest.approx(0.1, rel=1e-6), "auto-LR moves it"
    errors = results[0]["errors"]
    assert errors["tuple"] == ("ValueError: HDET spread['betas']: a parameter group of the optimizer holds betas = "
                               "(0.9, 0.999), not a number; HDET spreads numbers")
    assert ("'label_smoothing' is no number in every parameter group of the optimizer (its keys: amsgrad, betas, "
            in errors["no_base"]) and "apply hdet.value('label_smoothing')" in errors["no_base"]
    assert "base= is for values outside the optimizer" in errors["base_for_group"]
    assert "the learning rate is always spread" in errors["lr"]
    assert errors["alpha"] == "ValueError: HDET spread['weight_decay']: alpha must be in [0, 1) (got 1.5)"
    assert "unknown setting(s) ['hi']" in errors["unknown"]
    assert "eps is 0 in every parameter group: nothing to spread" in errors["zero"]
    assert errors["not_a_dict"].startswith("TypeError: HDET spread must be a dict")
    assert errors["load_other_spread"] == ("the checkpoint's HDET spread ['weight_decay', 'dropout']; this one spreads "
                                           "['weight_decay']")
    assert "HDET spreads no 'momentum'" in errors["value_of_unspread"]
