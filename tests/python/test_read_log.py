"""lrkit.read_log on a real run log."""
import os
import struct
import subprocess
import threading
import zlib

import pytest

pytest.importorskip("h5py", reason="h5py is not installed for this Python")
pytest.importorskip("pandas", reason="pandas is not installed for this Python")
import lrkit  # noqa: E402


def test_a_run_log_as_arrays_frames_and_config(lrkit_binary, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("In the beginning was the word, and the word was with God. " * 400)
    subprocess.run([lrkit_binary, "train", f"--data.path={corpus}", "--model.layers=1", "--model.width=16",
                    "--model.heads=2", "--model.context=16", "--train.steps=12", "--train.batch=4",
                    "--eval.every=0", "--eval.batches=1", "--train.threads=1", "--schedule.spec=cosine(peak=1e-2)",
                    f"--out={tmp_path / 'run'}"], check=True, capture_output=True)
    log = lrkit.read_log(tmp_path / "run" / "log.h5")
    train = log.frame("train")
    assert len(train) == 12 and list(train["step"]) == list(range(12))
    # A group logged against /train/step carries the steps its rows are of.
    assert log.frame("ranks").columns.tolist() == ["step", "cos_to_mean_0", "grad_norm_0", "loss_0"]
    assert log.frame("ranks")["step"].tolist() == list(range(12))
    assert log.config["train.steps"] == "12" and log.config["schedule.spec"] == "cosine(peak=1e-2)"
    assert log.attrs["schedule_spec"] == "cosine(peak=1e-2)"
    s = lrkit.Schedule(log.config["schedule.spec"], int(log.config["train.steps"]))
    assert train["lr"].tolist() == [s(t) for t in range(12)]
    assert lrkit.read_log(tmp_path / "run").path == str(tmp_path / "run" / "log.h5")  # a run directory: its log
    with pytest.raises(FileNotFoundError):
        lrkit.read_log(tmp_path / "nothing.h5")
    with pytest.raises(FileNotFoundError, match=r"is a folder without a run log \(log.h5\): give a run directory or its log$"):
        lrkit.read_log(tmp_path)
    with pytest.raises(KeyError, match=r"has no series under /eval/; its groups: checkpoints, diagnostics, eval/heldout, "
                                       r"ranks, train"):
        log.frame("eval")
    (tmp_path / "junk.h5").write_text("not hdf5")
    with pytest.raises(ValueError, match="not a readable HDF5"):
        lrkit.read_log(tmp_path / "junk.h5")
    pipe = tmp_path / "pipe.h5"  # HDF5 waited on it for a writer; should that come back, a writer comes after 10 s
    os.mkfifo(pipe)
    writer = threading.Timer(10, lambda: os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)))
    writer.start()
    with pytest.raises(ValueError, match=r"^'.*pipe\.h5' is not a regular file \(a device or pipe may never end\)$"):
        lrkit.read_log(pipe)
    writer.cancel()
    (tmp_path / "cut.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(500))  # the signature, then a damaged superblock
    with pytest.raises(ValueError, match="not a readable HDF5"):
        lrkit.read_log(tmp_path / "cut.h5")
    short = tmp_path / "short.h5"  # short of the end HDF5 allocated, as a write a full disk refused leaves it
    short.write_bytes((tmp_path / "run" / "log.h5").read_bytes()[:-100])
    with pytest.raises(ValueError, match=r"truncated file.*; if a full disk cut it short, `lrkit log repair .*short\.h5` extends it$"):
        lrkit.read_log(short)
    subprocess.run([lrkit_binary, "log", "repair", str(short)], check=True, capture_output=True)
    assert len(lrkit.read_log(short).arrays["/train/step"]) == 12


def test_the_sessions_of_a_resumed_run(lrkit_binary, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("In the beginning was the word, and the word was with God. " * 400)
    common = [lrkit_binary, "train", f"--data.path={corpus}", "--model.layers=1", "--model.width=16", "--model.heads=2",
              "--model.context=16", "--train.batch=4", "--eval.every=0", "--eval.batches=1", "--train.threads=1",
              "--schedule.spec=constant(1e-2)", f"--out={tmp_path / 'run'}"]
    subprocess.run(common + ["--train.steps=6"], check=True, capture_output=True)
    subprocess.run(common + ["--train.steps=9", "--train.accumulation=2", "--resume=auto"], check=True,
                   capture_output=True)
    log = lrkit.read_log(tmp_path / "run")
    first, second = log.sessions
    assert (first["index"], first["kind"], first["step"], first["changed"]) == (0, "fresh", "0", "")
    assert (second["index"], second["kind"], second["step"]) == (1, "resume", "6")
    assert second["changed"] == "train.steps = 6 -> 9; train.accumulation = 1 -> 2"
    assert "--train.accumulation=2" in second["command_line"] and "--train.accumulation=2" not in first["command_line"]
    assert log.config["train.accumulation"] == "2", "the settings are the newest session's"
    assert [log.session_of(step)["index"] for step in range(9)] == [0] * 6 + [1] * 3
    text = corpus.read_bytes()  # under 256 KiB: every byte is read
    crc = zlib.crc32(text, zlib.crc32(struct.pack("<Q", len(text))))
    assert log.files == {"data.path": f"{len(text)} bytes, sampled crc32:{crc:08x}"}
    with pytest.raises(KeyError, match="no session that started at or before step -1"):
        log.session_of(-1)


def test_strings_in_run_logs_and_sweep_summaries_read_as_str(lrkit_binary, tmp_path):
    import h5py
    import pandas as pd

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("In the beginning was the word, and the word was with God. " * 400)
    train = tmp_path / "train.cfg"
    train.write_text(f"[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n[data]\npath = {corpus}\n"
                     "[train]\nbatch = 4\nthreads = 1\n[eval]\nevery = 0\nbatches = 1\n")
    sweep = tmp_path / "sweep.cfg"
    sweep.write_text(f"[sweep]\ntrain_config = {train}\nout = {tmp_path / 'sweep'}\nbudgets = 4, 6\npeaks = 0.01\n"
                     "[schedules]\ncos = cosine()\nlin = linear()\n")
    subprocess.run([lrkit_binary, "sweep", "--config", str(sweep)], check=True, capture_output=True)
    with h5py.File(tmp_path / "sweep" / "summary.h5", "r") as f:
        names = list(f["/schedules"].attrs["names"])
        assert names == ["cos", "lin"] and all(type(n) is str for n in names)
        frame = pd.DataFrame({"run": f["/results"].attrs["runs"], "loss": f["/results/loss"][()]})
        assert frame["run"].tolist()[0] == "cos_B4_p0.01_s1234"
        assert type(f.attrs["metric"]) is str
    # Run logs keep fixed-length strings (checksummed object headers): h5py gives bytes, read_log decodes.
    log = lrkit.read_log(tmp_path / "sweep" / "runs" / "cos_B4_p0.01_s1234" / "log.h5")
    assert log.attrs["schedule_spec"] == "cosine(peak=0.01)" and log.config["train.steps"] == "4"


def test_a_run_on_a_file_whose_name_is_not_utf8_reads_back_its_name_as_python_gives_it(lrkit_binary, tmp_path):
    # read_log raised UnicodeDecodeError on every such log (its /config and /sessions hold the name's bytes).
    corpus = tmp_path / os.fsdecode(b"caf\xe9.txt")  # Latin-1
    corpus.write_text("In the beginning was the word, and the word was with God. " * 400)
    subprocess.run([lrkit_binary, "train", f"--data.path={corpus}", "--model.layers=1", "--model.width=16",
                    "--model.heads=2", "--model.context=16", "--train.steps=4", "--train.batch=4", "--eval.every=0",
                    "--eval.batches=1", "--train.threads=1", f"--out={tmp_path / 'run'}"], check=True, capture_output=True)
    log = lrkit.read_log(tmp_path / "run")
    assert log.config["data.path"] == str(corpus)
    as_bytes = lrkit.read_log(os.fsencode(tmp_path / "run"))  # a bytes path, as os.listdir(bytes) gives names
    assert as_bytes.path == log.path and as_bytes.config == log.config
    with pytest.raises(FileNotFoundError, match=r"^run log '.*caf\udce9\.h5' does not exist$"):
        lrkit.read_log(os.fsencode(tmp_path) + b"/caf\xe9.h5")
    assert str(corpus) in log.sessions[0]["command_line"]
    with open(log.config["data.path"], "rb") as f:
        assert f.read(16) == b"In the beginning"
    assert list(log.files) == ["data.path"] and len(log.frame("train")) == 4


def _write_as_killed(path, rows):
    """A SWMR log as a SIGKILLed writer leaves it: flushed, never closed (the mark stays)."""
    import h5py
    import numpy as np

    child = os.fork()
    if child == 0:
        try:
            f = h5py.File(path, "w", libver="latest")
            for name, values in rows.items():
                f.create_dataset(name, data=np.asarray(values, dtype="f8"), maxshape=(None,), chunks=(64,))
            f.swmr_mode = True
            f.flush()
        finally:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    assert status == 0


def test_a_killed_writers_torn_flush_frames_the_rows_every_series_has(tmp_path):
    # SeriesLog writes series in name order: killed inside a flush, /diagnostics and /ranks hold step 2, /train not all.
    torn = tmp_path / "torn.h5"
    _write_as_killed(torn, {"/diagnostics/loss_std": [0.1, 0.2, 0.3], "/diagnostics/cos_matrix_step": [1],
                            "/diagnostics/cos_matrix": [0.5], "/ranks/loss": [2.0, 1.9, 1.8],
                            "/train/loss": [2.0, 1.9, 1.8], "/train/step": [0, 1]})
    log = lrkit.read_log(torn)
    assert log.open_for_writing and len(log.arrays["/train/loss"]) == 3
    assert log.step_column("/diagnostics/cos_matrix") == "/diagnostics/cos_matrix_step"
    assert log.step_column("diagnostics/loss_std") == "/train/step"
    for group in ("train", "diagnostics", "ranks"):  # cut alike, so that the frames line up
        with pytest.warns(UserWarning, match="the 2 rows every series of /train/step has"):
            frame = log.frame(group)
        assert len(frame) == 2
    assert frame.columns.tolist() == ["step", "loss"] and frame["step"].tolist() == [0, 1]
    with pytest.warns(UserWarning):
        assert log.frame("diagnostics").columns.tolist() == ["step", "loss_std"]  # its event stays in .arrays

    import h5py
    import numpy as np

    closed = tmp_path / "closed.h5"  # the same rows in a log its writer closed: an error, not a guess
    with h5py.File(closed, "w") as f:
        f["/train/step"] = np.arange(2.0)
        f["/train/loss"] = np.array([2.0, 1.9, 1.8])
        f["/diagnostics/loss_std"] = np.array([0.1, 0.2])
        f["/diagnostics/cos_matrix_step"] = np.array([1.0])
        f["/diagnostics/cos_matrix"] = np.array([[0.5]])
    log = lrkit.read_log(closed)
    assert not log.open_for_writing
    with pytest.raises(ValueError, match=r"different lengths \[2, 3\]"):
        log.frame("train")
    assert log.frame("diagnostics")["loss_std"].tolist() == [0.1, 0.2]  # its event stays in .arrays
    # The step column a group borrows: absent (a log without /train/step) its frame has none; shorter, an error.
    for name, steps in (("stepless.h5", None), ("short_step.h5", [0.0])):
        with h5py.File(tmp_path / name, "w") as f:
            f["/diagnostics/loss_std"] = np.array([0.1, 0.2])
            if steps is not None:
                f["/train/step"] = np.array(steps)
    assert lrkit.read_log(tmp_path / "stepless.h5").frame("diagnostics").columns.tolist() == ["loss_std"]
    with pytest.raises(ValueError, match=r"/train/step has 1 rows, the series under /diagnostics/ 2; read them from"):
        lrkit.read_log(tmp_path / "short_step.h5").frame("diagnostics")


def _two_rank_run(lrkit_binary, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("In the beginning was the word, and the word was with God. " * 400)
    subprocess.run([lrkit_binary, "train", f"--data.path={corpus}", "--nproc=2", "--model.layers=1", "--model.width=16",
                    "--model.heads=2", "--model.context=16", "--train.steps=10", "--train.batch=4", "--eval.every=0",
                    "--eval.batches=1", "--train.threads=1", "--schedule.spec=cosine(peak=1e-2)",
                    f"--out={tmp_path / 'run'}"], check=True, capture_output=True)
    return lrkit.read_log(tmp_path / "run")


def test_a_per_rank_log_reads_into_a_run_logs_layout_with_the_trainers_dispersion(lrkit_binary, tmp_path):
    # The diagnostics notebook, given a DispersionHook's ranks.jsonl as it says it may be, failed: "not a readable
    # HDF5 run log". The same per-rank scalars, exported as another trainer would, read back as the trainer logged them.
    import json

    import numpy as np

    run = _two_rank_run(lrkit_binary, tmp_path).arrays
    step, loss, norm, cos = (run[name] for name in ("/train/step", "/ranks/loss", "/ranks/grad_norm", "/ranks/cos_to_mean"))
    exported = tmp_path / "ranks.jsonl"
    exported.write_text("".join(json.dumps({"step": int(s), "rank": k, "loss": float(loss[t, k]),
                                            "grad_norm": float(norm[t, k]), "cos_to_mean": float(cos[t, k])}) + "\n"
                                for t, s in enumerate(step) for k in range(2)))
    log = lrkit.read_log(exported)
    assert log.path == str(exported) and log.sessions == [] and not log.open_for_writing
    assert log.arrays["/train/step"].tolist() == step.tolist()
    for name in ("/ranks/loss", "/ranks/grad_norm", "/ranks/cos_to_mean"):
        assert np.array_equal(log.arrays[name], run[name]), name
    for name in ("loss_std", "loss_cv", "loss_range", "grad_norm_std", "grad_norm_cv"):
        np.testing.assert_allclose(log.arrays["/diagnostics/" + name], run["/diagnostics/" + name], rtol=1e-12,
                                   err_msg=name)
    assert log.arrays["/diagnostics/loss_outlier_rank"].tolist() == run["/diagnostics/loss_outlier_rank"].tolist()
    np.testing.assert_allclose(log.arrays["/train/loss"], run["/train/loss"], rtol=1e-6)  # equal batches per rank
    assert log.frame("ranks").columns.tolist() == ["step"] + [f"{n}_{k}" for n in ("loss", "grad_norm", "cos_to_mean")
                                                              for k in (0, 1)]
    # One CSV per rank with a trainer's own column names: the same arrays.
    files = [tmp_path / f"rank{k}.csv" for k in (0, 1)]
    for k, path in enumerate(files):
        path.write_text("global_step,train/loss,gn\n" + "".join(f"{int(s)},{float(loss[t, k])!r},{float(norm[t, k])!r}\n"
                                                               for t, s in enumerate(step)))
    per_rank = lrkit.read_log(*files, columns={"step": "global_step", "loss": "train/loss", "grad_norm": "gn"})
    assert np.array_equal(per_rank.arrays["/ranks/loss"], loss) and "/ranks/cos_to_mean" not in per_rank.arrays
    assert per_rank.path == f"{files[0]}, {files[1]}"
    assert np.array_equal(per_rank.arrays["/diagnostics/loss_std"], log.arrays["/diagnostics/loss_std"])
    # Eleven ranks by a glob: rank10's rows are the last rank's (plain sorting read them as rank 2's).
    for k in range(11):
        (tmp_path / f"rank{k}.csv").write_text(f"step,loss,grad_norm\n0,{k},1\n")
    assert lrkit.read_log(tmp_path / "rank*.csv").arrays["/ranks/loss"][0].tolist() == list(range(11))
    with pytest.raises(FileNotFoundError, match=r"^no file matches '.*worker\*\.csv'$"):
        lrkit.read_log(tmp_path / "worker*.csv")


def test_a_per_rank_logs_gaps_and_faults_are_named(lrkit_binary, tmp_path):
    log = tmp_path / "ranks.csv"
    log.write_text("step,rank,loss,grad_norm\n0,0,2.0,1.0\n0,1,2.1,1.1\n0,2,2.6,1.0\n1,0,2.1,1.0\n1,1,2.0,1.0\n"
                   "2,0,1.0,0.9\n2,1,2.0,1.3\n2,2,2.1,1.3\n")
    with pytest.warns(UserWarning, match=r"skipped 1 step\(s\) missing a rank's row: step 1 \(no row for rank 2\)"):
        read = lrkit.read_log(log)
    assert read.arrays["/train/step"].tolist() == [0, 2]
    assert read.arrays["/diagnostics/loss_range"].tolist() == pytest.approx([0.6, 1.1])
    assert read.arrays["/diagnostics/loss_outlier_rank"].tolist() == [2, 0]
    log.write_text("step,rank,loss,grad_norm\n0,0,2.0,1.0\n0,1,2.2,-1\n")
    with pytest.raises(ValueError, match=r"ranks\.csv \(CSV\) line 3 column grad_norm: '-1' is not a gradient norm"):
        lrkit.read_log(log)
    with pytest.raises(ValueError, match=r"^columns: unknown field 'lr' \(fields: step, rank, loss, grad_norm, "):
        lrkit.read_log(log, columns="lr=learning_rate")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        lrkit.read_log(log, tmp_path / "rank1.csv")
    _two_rank_run(lrkit_binary, tmp_path)
    with pytest.raises(ValueError, match=r"is an HDF5 run log: it holds every rank already; give it alone"):
        lrkit.read_log(tmp_path / "run" / "log.h5", log)
    with pytest.raises(ValueError, match=r"columns name the fields of a CSV / JSON-lines log; '.*run' is read as an HDF5"):
        lrkit.read_log(tmp_path / "run", columns={"loss": "train/loss"})
    with pytest.raises(TypeError, match="needs a log"):
        lrkit.read_log()
