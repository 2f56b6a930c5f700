"""DispersionHook's log across a kill and a resume: a new hook starts a new log; start_step=S keeps the rows of
the steps before S and goes on, so no step appears twice (lrkit diagnose refuses a (step, rank) given twice)."""
import json
import os
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
if not torch.distributed.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)
from conftest import run_python  # noqa: E402

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook_log_worker.py")


def loop(log, start, stop, ending="closed"):
    done = run_python([WORKER, str(log), str(start), str(stop), ending], store=str(log) + ".store")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if os.path.exists(str(log) + ".store"):
        os.remove(str(log) + ".store")


def logged(log):
    """(step, loss) of each row; the loss's integer part is the step that wrote it."""
    if str(log).endswith(".jsonl"):
        rows = [json.loads(line) for line in open(log)]
        return [(row["step"], int(row["loss"])) for row in rows]
    pytest.importorskip("h5py", reason="h5py is not installed for this Python")
    import lrkit

    arrays = lrkit.read_log(log).arrays
    return [(int(s), int(l)) for s, l in zip(arrays["/train/step"], arrays["/ranks/loss"][:, 0])]


def sessions_marked(log):
    """(step, rank, session) of each JSON line that marks where a session started."""
    rows = [json.loads(line) for line in open(log)]
    return [(row["step"], row["rank"], row["session"]) for row in rows if "session" in row]


@pytest.mark.parametrize("name", ["ranks.jsonl", "ranks.h5"])
def test_a_resumed_loop_goes_on_without_repeating_steps(tmp_path, name):
    log = tmp_path / name
    loop(log, 0, 10, "killed")  # the checkpoint was at step 6; the kill came at step 10
    before = logged(log)
    # JSON lines are written every step; the HDF5 log every 3 steps (flush_every), so the last step waited.
    assert before == [(s, s) for s in range(10 if name.endswith(".jsonl") else 9)]
    binary = os.environ.get("LRKIT")
    lrkit_cli = binary if binary and os.access(binary, os.X_OK) else None

    def cli(*args):
        return subprocess.run([lrkit_cli, *args, str(log)], capture_output=True, text=True)

    if lrkit_cli and name.endswith(".h5"):
        check = cli("log", "check")
        assert check.returncode == 1 and "marked open for writing" in check.stdout, check.stdout + check.stderr
        assert cli("log", "repair").returncode == 0
        check = cli("log", "check")
        assert check.returncode == 0 and "ok (9 steps)" in check.stdout, check.stdout + check.stderr
    loop(log, 6, 12)
    assert logged(log) == [(s, s) for s in range(12)]
    if lrkit_cli:
        report = cli("diagnose")
        assert report.returncode == 0 and "1 rank(s), 11 steps analysed (first 1 skipped)" in report.stdout, report.stdout + report.stderr
        if name.endswith(".h5"):
            check = cli("log", "check")
            assert check.returncode == 0 and "ok (12 steps)" in check.stdout, check.stdout + check.stderr
        # Both logs record each session of the loop; the report lists the resume (the loop's settings are not the
        # hook's to know). A JSON-lines log recorded none before.
        assert "resumes: \n  step 6: its settings are not logged\n" in report.stdout, report.stdout
    if name.endswith(".jsonl"):
        assert sessions_marked(log) == [(0, 0, "fresh"), (6, 0, "resume")]
    if name.endswith(".h5"):
        import lrkit

        sessions = lrkit.read_log(log).sessions
        assert [(s["index"], s["kind"], s["step"]) for s in sessions] == [(0, "fresh", "0"), (1, "resume", "6")]
        assert "hook_log_worker.py" in sessions[1]["command_line"] and "changed" not in sessions[1]
    loop(log, 0, 4)  # a new loop, a new log
    assert logged(log) == [(s, s) for s in range(4)]
    if name.endswith(".jsonl"):
        assert sessions_marked(log) == [(0, 0, "fresh")]
    if name.endswith(".h5"):
        assert [s["kind"] for s in lrkit.read_log(log).sessions] == ["fresh"]
    assert not [p for p in os.listdir(tmp_path) if "unfinished" in p]


@pytest.mark.parametrize("name", ["ranks.jsonl", "ranks.h5"])
def test_a_log_named_by_a_link_is_written_and_resumed_in_the_file_it_names(tmp_path, name):
    # The log was written beside the link and renamed over it: the link became a file, and the file it named (on
    # another disk, say) was left as it was.
    if name.endswith(".h5"):
        pytest.importorskip("h5py", reason="h5py is not installed for this Python")
    (tmp_path / "disk").mkdir()
    link = tmp_path / name
    os.symlink(os.path.join("disk", name), link)  # dangling: the first loop creates the file
    loop(link, 0, 6)
    loop(link, 3, 8)
    assert os.readlink(link) == os.path.join("disk", name)
    assert logged(tmp_path / "disk" / name) == [(s, s) for s in range(8)]
    # The lock beside the file, not the link: a second loop given the file's own name is refused too.
    assert sorted(os.listdir(tmp_path / "disk")) == [name, name + ".lock"], "no unfinished file left"
    assert sorted(os.listdir(tmp_path)) == ["disk", name]


def test_a_log_a_live_loop_writes_is_checked_so_far_and_not_repaired(tmp_path):
    # The hook's log is marked open while its loop runs: `lrkit log check` called that a killed writer's mark and
    # advised `lrkit log repair`, which cut the live file. The hook holds LOG.lock with its pid while it writes.
    binary = os.environ.get("LRKIT")
    if not (binary and os.access(binary, os.X_OK)):
        pytest.skip("LRKIT (the lrkit binary) is not given")
    log = tmp_path / "ranks.h5"
    holder = subprocess.Popen([sys.executable, WORKER, str(log), "0", "7", "held"], env=dict(os.environ, OMP_NUM_THREADS="1"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if os.path.exists(str(log) + ".held") or holder.poll() is not None:
                break
            time.sleep(0.1)
        assert os.path.exists(str(log) + ".held"), holder.communicate()[1][-2000:]
        check = subprocess.run([binary, "log", "check", str(log)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        assert f"ok (7 steps so far: a DispersionHook loop (pid {holder.pid}) is writing it)" in check.stdout, check.stdout
        repair = subprocess.run([binary, "log", "repair", str(log)], capture_output=True, text=True)
        assert repair.returncode == 2 and f"is being written by a DispersionHook loop (pid {holder.pid})" in repair.stderr, (
            repair.stdout + repair.stderr)
        opens_the_log = "import sys; from lrkit.dispersion import _open_rank_log; _open_rank_log(sys.argv[1], 1, False, 3, 0)"
        second = subprocess.run([sys.executable, "-c", opens_the_log, str(log)], capture_output=True, text=True, timeout=120)
        assert second.returncode != 0 and f"is being written by another process (pid {holder.pid})" in second.stderr, (
            second.stderr[-2000:])
    finally:
        holder.kill()
        holder.wait()
    check = subprocess.run([binary, "log", "check", str(log)], capture_output=True, text=True)
    assert check.returncode == 1 and "marked open for writing by a writer that did not close it" in check.stdout, check.stdout
    assert subprocess.run([binary, "log", "repair", str(log)], capture_output=True, text=True).returncode == 0
    assert "ok (7 steps)" in subprocess.run([binary, "log", "check", str(log)], capture_output=True, text=True).stdout


def test_a_log_check_probing_the_lock_does_not_refuse_a_starting_loop(tmp_path):
    # `lrkit log check` probes LOG.lock with a shared flock held for an instant; a loop whose hook opened its log in
    # that instant was refused as a second writer. The hook waits such a probe out; a writer that keeps it refuses.
    import fcntl
    import threading

    from lrkit.dispersion import _hold_writer_lock

    log = str(tmp_path / "ranks.h5")
    probe = os.open(log + ".lock", os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
    probe_ends = threading.Timer(0.05, os.close, [probe])
    probe_ends.start()
    try:
        held = _hold_writer_lock(log)
    finally:
        probe_ends.join()
    try:
        with open(log + ".lock") as f:
            assert f.read() == f"{os.getpid()}\n"
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=f"is being written by another process \\(pid {os.getpid()}\\)"):
            _hold_writer_lock(log)
        assert time.monotonic() - start < 10
    finally:
        os.close(held)


@pytest.mark.parametrize("name", ["ranks.jsonl", "ranks.h5"])
def test_a_second_loop_on_a_log_being_written_is_refused(tmp_path, name):
    # A JSON-lines log took no lock: two loops given one log appended their rows into it, each (step, rank) twice.
    if name.endswith(".h5"):
        pytest.importorskip("h5py", reason="h5py is not installed for this Python")
    from lrkit.dispersion import _open_rank_log

    log = str(tmp_path / name)
    first = _open_rank_log(log, 1, False, 3, 0)
    with pytest.raises(RuntimeError, match=f"log '.*{name}' is being written by another process \\(pid {os.getpid()}\\)"):
        _open_rank_log(log, 1, False, 3, 0)
    first.close()
    _open_rank_log(log, 1, False, 3, 0).close()  # once the first has closed it
    assert sorted(os.listdir(tmp_path)) == [name, name + ".lock"], "no unfinished file left"


def test_a_log_of_other_settings_is_not_continued(tmp_path):
    pytest.importorskip("h5py", reason="h5py is not installed for this Python")
    import h5py

    log = tmp_path / "ranks.h5"
    with h5py.File(log, "w") as f:
        f["/train/step"] = [0.0, 1.0]
    done = run_python([WORKER, str(log), "1", "3", "closed"], store=str(log) + ".store")
    assert done.returncode != 0 and "cannot go on at step 1: it has no /train/loss" in done.stderr, done.stderr[-2000:]
    with h5py.File(log, "r") as f:
        assert list(f) == ["train"] and f["/train/step"][()].tolist() == [0.0, 1.0]  # untouched
    # In a loop that goes on after the refusal, the log's lock was still held: a second try was refused as a second
    # writer.
    from lrkit.dispersion import _hold_writer_lock, _open_rank_log

    for _ in range(2):
        with pytest.raises(ValueError, match="it has no /train/loss"):
            _open_rank_log(str(log), 1, False, 3, 1)
    os.close(_hold_writer_lock(str(log)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranks.h5", "ranks.h5.lock"], "no unfinished file left"


def test_start_step_must_be_a_whole_number():
    import lrkit.torch as lt

    for bad in (-1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="start_step must be a whole number >= 0"):
            lt.DispersionHook(start_step=bad)
