"""lrkit.diagnose: the report `lrkit diagnose` gives, from Python (the same C++ code), on per-rank logs whose
anomalies are planted, and its errors."""
import json
import os
import random
import re
import subprocess
import warnings

import pytest

import lrkit


def per_rank_rows(ranks=4, steps=400, jump_from=250, seed=3):
    """(step, rank, loss, grad_norm) rows: a smoothly falling loss with per-rank noise; from `jump_from` on, for 20
    steps, the ranks drift apart symmetrically (the mean loss does not move): a silent inconsistency."""
    rng = random.Random(seed)
    rows = []
    for step in range(steps):
        level = 2.0 + 2.718281828 ** (-step / 200.0)
        for rank in range(ranks):
            drift = (0.3 if rank % 2 == 0 else -0.3) if jump_from <= step < jump_from + 20 else 0.0
            rows.append((step, rank, level + 0.02 * rng.gauss(0, 1) + drift, 1.0 + 0.05 * rng.gauss(0, 1)))
    return rows


def write_jsonl(path, rows, names=("step", "rank", "loss", "grad_norm")):
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(dict(zip(names, row))) + "\n")
    return path


def test_the_report_is_the_commands(tmp_path, lrkit_binary):
    log = write_jsonl(tmp_path / "ranks.jsonl", per_rank_rows())
    report = lrkit.diagnose(log)
    assert report["verdict"].startswith("silent inconsistency: ")
    assert [(w["metric"], w["first_step"]) for w in report["windows"]][0] == ("loss_std", 250)
    assert report["resumes"] is None, "a per-rank log records no sessions"
    command = subprocess.run([lrkit_binary, "diagnose", str(log), "--json", "--window", "60"], capture_output=True,
                             text=True, check=True).stdout
    assert dict(lrkit.diagnose(log, window=60)) == json.loads(command)
    text = subprocess.run([lrkit_binary, "diagnose", str(log)], capture_output=True, text=True, check=True).stdout
    assert str(report) == report.text == text


def test_columns_one_file_per_rank_and_a_missing_row(tmp_path):
    rows = per_rank_rows(ranks=2)
    renamed = write_jsonl(tmp_path / "renamed.jsonl", rows, ("global_step", "rank", "train/loss", "grad_norm"))
    plain = lrkit.diagnose(write_jsonl(tmp_path / "plain.jsonl", rows))
    assert plain["windows"], plain.text
    assert lrkit.diagnose(renamed, columns={"step": "global_step", "loss": "train/loss"})["windows"] == plain["windows"]
    assert lrkit.diagnose(renamed, columns="step=global_step,loss=train/loss")["windows"] == plain["windows"]
    # A dict's name may hold a comma (or "="), which the command's text form cannot: before, it was joined into that
    # text and split at the comma ("columns: 'mean' is not FIELD=NAME").
    comma = write_jsonl(tmp_path / "comma.jsonl", rows, ("step", "rank", "loss, mean=all", "grad_norm"))
    assert lrkit.diagnose(comma, columns={"loss": "loss, mean=all"})["windows"] == plain["windows"]
    assert lrkit.read_log(comma, columns={"loss": "loss, mean=all"}).arrays["/ranks/loss"].shape == (400, 2)
    per_rank = [write_jsonl(tmp_path / f"rank{r}.jsonl", [(s, l, g) for s, rank, l, g in rows if rank == r],
                            ("step", "loss", "grad_norm")) for r in range(2)]
    assert lrkit.diagnose(*per_rank)["windows"] == plain["windows"]
    assert lrkit.diagnose(tmp_path / "rank*.jsonl")["windows"] == plain["windows"]  # a glob, as the command takes one
    with pytest.raises(FileNotFoundError, match=r"^no file matches '.*worker\*\.jsonl'$"):
        lrkit.diagnose(tmp_path / "worker*.jsonl")
    gapped = write_jsonl(tmp_path / "gapped.jsonl", [row for row in rows if row[:2] != (7, 1)])
    with pytest.warns(UserWarning, match="step 7"):
        assert lrkit.diagnose(gapped, skip=0)["steps"] == 399


def test_a_table_with_a_column_per_rank_reads_as_the_rows_it_came_from(tmp_path):
    """A per-rank log's frame("ranks") written out (a row per step, a column per rank and field, as pandas writes a
    frame) is a log the report reads: the same report as the rows it came from, as CSV and as JSON lines."""
    rows = per_rank_rows(ranks=4)
    long = write_jsonl(tmp_path / "long.jsonl", rows)
    frame = lrkit.read_log(long).frame("ranks")
    assert frame.columns.tolist() == ["step"] + [f"{n}_{k}" for n in ("loss", "grad_norm") for k in range(4)]
    frame.to_csv(tmp_path / "wide.csv", index=False)
    with open(tmp_path / "wide.jsonl", "w") as f:
        for record in frame.itertuples(index=False):
            f.write(json.dumps({name: (int(v) if name == "step" else float(v))
                                for name, v in zip(frame.columns, record)}) + "\n")
    expected = lrkit.diagnose(long)
    assert expected["windows"], expected.text
    for wide in ("wide.csv", "wide.jsonl"):
        report = lrkit.diagnose(tmp_path / wide)
        assert report["verdict"] == expected["verdict"] and report["windows"] == expected["windows"], wide
        assert (report["ranks"], report["steps"]) == (expected["ranks"], expected["steps"]), wide


def test_a_diverged_ranks_nan_survives_a_pandas_csv(tmp_path):
    """pandas writes NaN as an empty cell: a rank that diverged in the frame written as CSV is the report's NaN/Inf
    rank, as it is in the rows the frame came from (before, its steps were skipped as rows the table lacked, and the
    verdict said no NaN/Inf). A row that holds no rank's value at all is left out with a warning."""
    pandas = pytest.importorskip("pandas")
    rows = [(step, rank, float("nan") if rank == 2 and step >= 300 else loss, grad_norm)
            for step, rank, loss, grad_norm in per_rank_rows(ranks=4)]
    long = write_jsonl(tmp_path / "long.jsonl", rows)
    frame = lrkit.read_log(long).frame("ranks")
    frame.to_csv(tmp_path / "wide.csv", index=False)
    assert ",," in (tmp_path / "wide.csv").read_text(), "pandas wrote the NaN as an empty cell"
    expected = lrkit.diagnose(long)
    assert expected["verdict"].startswith("rank 2's loss is NaN/Inf from step 300"), expected.text
    report = lrkit.diagnose(tmp_path / "wide.csv")
    assert (report["verdict"], report["non_finite"], report["steps"]) == \
        (expected["verdict"], expected["non_finite"], expected["steps"])
    frame["step"] = frame["step"] * 2  # room for a row of other columns between the steps
    other = frame.iloc[:1].copy()
    other.loc[:, other.columns != "step"] = float("nan")
    other["step"] = 1
    pandas.concat([frame, other]).sort_values("step").to_csv(tmp_path / "sparse.csv", index=False)
    with pytest.warns(UserWarning, match=r"left out 1 step\(s\) whose row holds no rank's value .*: step 1$"):
        assert lrkit.diagnose(tmp_path / "sparse.csv")["steps"] == expected["steps"]


def test_gradient_norms_logged_every_few_steps_survive_a_pandas_csv(tmp_path):
    """A loop that logs each rank's gradient norm every 3rd step: the report tests them over those steps (said in a
    note), and the frame read_log gives (NaN between them) written by pandas (empty cells) reads back to the same
    report, not as every rank's NaN."""
    rows = per_rank_rows(ranks=4, steps=300)
    long = write_jsonl(tmp_path / "sparse.jsonl", [row if row[0] % 3 == 0 else row[:3] for row in rows],
                       ("step", "rank", "loss", "grad_norm"))
    expected = lrkit.diagnose(long, window=20)
    assert "gradient norms are logged at 90 of the 270 steps analysed: their tests run over those steps, the window " \
        "counting 20 of them" in expected["notes"], expected.text
    assert expected["non_finite"] == [] and "grad_norm_std" in [d["name"] for d in expected["dispersion"]]
    frame = lrkit.read_log(long).frame("ranks")
    assert frame["grad_norm_1"].isna().tolist() == [step % 3 != 0 for step in range(300)]
    frame.to_csv(tmp_path / "sparse.csv", index=False)
    report = lrkit.diagnose(tmp_path / "sparse.csv", window=20)
    del report["source"], expected["source"]
    assert report == expected


def test_bad_input_is_named(tmp_path):
    with pytest.raises(TypeError, match="needs a log"):
        lrkit.diagnose()
    with pytest.raises(FileNotFoundError, match="log '.*nothing.jsonl' does not exist"):
        lrkit.diagnose(tmp_path / "nothing.jsonl")
    log = write_jsonl(tmp_path / "ranks.jsonl", per_rank_rows(ranks=2, steps=40))
    with pytest.raises(ValueError, match=r"^jump_z must be a finite number > 0 \(got -1\)$"):
        lrkit.diagnose(log, jump_z=-1)
    with pytest.raises(ValueError, match="unknown field"):
        lrkit.diagnose(log, columns={"lost": "loss"})
    with pytest.raises(TypeError, match=r"^columns must be a dict .* \(got an object of type list\)$"):
        lrkit.diagnose(log, columns=["loss=train/loss"])
    with pytest.raises(TypeError, match=r"^columns: a field and the file's name for it are str \(got 'loss': 3\)$"):
        lrkit.diagnose(log, columns={"loss": 3})
    with pytest.raises(ValueError, match=r"^columns: field 'loss' is mapped to an empty name$"):
        lrkit.diagnose(log, columns={"loss": ""})
    rankless = tmp_path / "rankless.csv"
    rankless.write_text("step,loss,grad_norm\n0,1,1\n")
    with pytest.raises(ValueError, match=r"no column 'rank' \(have: step,loss,grad_norm; map other names with "
                                         r"columns='rank=NAME'; a table with a column per rank names them loss_0, "):
        lrkit.diagnose(rankless)
    # The command's option names stood in these: "--columns: ...", "--skip 500 leaves", "map ... with --columns".
    with pytest.raises(ValueError, match=r"^columns: 'lossx' is not FIELD=NAME \(e\.g\. loss=train/loss\)$"):
        lrkit.diagnose(log, columns="lossx")
    with pytest.raises(ValueError, match=r"ranks\.jsonl \(JSON lines\): skip=500 leaves none of its 40 steps$"):
        lrkit.diagnose(log, skip=500)
    (tmp_path / "--skip").mkdir()
    renamed = tmp_path / "--skip" / "run--renamed.csv"  # a "--" in a file name stays as it is
    renamed.write_text("step,rank,loss,g\n" + "".join(f"{s},{r},{l},{g}\n" for s, r, l, g in per_rank_rows(ranks=2)))
    with pytest.raises(ValueError, match=r"/--skip/run--renamed\.csv \(CSV\) header: no column 'gn' \(mapped from "
                                         r"grad_norm\) .*map other names with columns='grad_norm=NAME'\)$"):
        lrkit.diagnose(renamed, columns="grad_norm=gn")
    # Its gradient norm unnamed: the loss alone is diagnosed, which the warning says in this function's words too.
    with pytest.warns(UserWarning, match=r"/--skip/run--renamed\.csv \(CSV\): no gradient norms .*: the loss alone is "
                                         r"diagnosed; map another name with columns='grad_norm=NAME'$"):
        assert lrkit.diagnose(renamed)["windows"]
    # A folder named like an option and its value, after a space: the message named 'run skip=5', which does not
    # exist. The option after the path is still said in this function's words.
    (tmp_path / "run --skip 5").mkdir()
    spaced = write_jsonl(tmp_path / "run --skip 5" / "ranks.jsonl", per_rank_rows(ranks=2, steps=40))
    with pytest.raises(ValueError, match=f"^{re.escape(str(spaced))} \\(JSON lines\\): skip=500 leaves none of its 40 "
                                         "steps$"):
        lrkit.diagnose(spaced, skip=500)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"step": 0, "rank": 0, "loss": 1.0, "grad_norm": 1.0}\n{"step": 1, "rank": 0\n{}\n')
    with pytest.raises(ValueError, match="broken.jsonl.*line 2"):
        lrkit.diagnose(broken)


def test_the_loss_alone_reports_as_the_loss_of_the_full_log(tmp_path):
    """Many loops log each rank's loss and no gradient norm: such a log's report is the full log's, less what the
    gradient norms give, with a warning and a note that say so; read_log gives its arrays without gradient norms."""
    rows = per_rank_rows(ranks=4)
    full = lrkit.diagnose(write_jsonl(tmp_path / "full.jsonl", rows))
    loss_rows = [(step, rank, loss) for step, rank, loss, _ in rows]
    loss_only = write_jsonl(tmp_path / "loss.jsonl", loss_rows, ("step", "rank", "loss"))
    with pytest.warns(UserWarning, match=r"loss\.jsonl \(JSON lines\): no gradient norms \('grad_norm', or "
                                         r"'grad_norm_0', \.\.\. with a field per rank\): the loss alone is diagnosed"):
        report = lrkit.diagnose(loss_only)
    def of_loss(findings, key):
        return [f for f in findings if "grad_norm" not in f[key]]
    assert report["windows"] and report["windows"] == of_loss(full["windows"], "metric")
    assert report["outliers"] == of_loss(full["outliers"], "metric")
    assert report["spikes"] == of_loss(full["spikes"], "series")
    assert report["dispersion"] == of_loss(full["dispersion"], "name")
    assert [d["name"] for d in report["dispersion"]] == ["loss_std", "loss_cv"]
    assert "no gradient norms logged: the loss alone is analysed" in report.text
    assert report["verdict"].startswith("silent inconsistency: ") and "grad_norm" not in report["verdict"]
    with pytest.warns(UserWarning, match="no gradient norms"):
        log = lrkit.read_log(loss_only)
    assert "/ranks/grad_norm" not in log.arrays and "/diagnostics/grad_norm_std" not in log.arrays
    assert log.frame("ranks").columns.tolist() == ["step"] + [f"loss_{k}" for k in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a log with gradient norms: no warning
        full_log = lrkit.read_log(tmp_path / "full.jsonl")
    assert (log.arrays["/diagnostics/loss_std"] == full_log.arrays["/diagnostics/loss_std"]).all()
    assert (log.arrays["/ranks/loss"] == full_log.arrays["/ranks/loss"]).all()


def test_a_log_whose_name_is_not_utf8_is_read_and_named_as_python_gives_it(tmp_path):
    # Its str (os.fsdecode's, with a surrogate) was refused as an argument ("incompatible function arguments"); its
    # bytes were too.
    name = os.fsdecode(b"r\xe9sultats.jsonl")  # Latin-1
    log = write_jsonl(tmp_path / name, per_rank_rows())
    report = lrkit.diagnose(log)
    assert report["verdict"].startswith("silent inconsistency: ")
    assert report.text.startswith(f"lrkit diagnose: {log} (JSON lines)\n"), report.text[:200]
    assert dict(lrkit.diagnose(os.fsencode(log))) == dict(report)
    broken = tmp_path / os.fsdecode(b"cass\xe9.jsonl")
    broken.write_text('{"step": 0, "rank": 0, "loss": 1.0, "grad_norm": 1.0}\n{"step": 1, "rank": 0\n')
    with pytest.raises(ValueError, match="line 2"):  # given as bytes: was a TypeError from the message's rewording
        lrkit.diagnose(os.fsencode(broken))
    with pytest.raises(ValueError) as raised:  # the message, not a UnicodeDecodeError about it
        lrkit.diagnose(broken)
    assert str(broken) in str(raised.value) and "line 2" in str(raised.value), str(raised.value)


def test_per_rank_wandb_runs_report_as_their_json_lines(tmp_path):
    """The committed W&B runs of a 4-rank DDP loop (make_wandb.py's ddp_runs(): one run per rank, written with the
    protobuf library, started out of rank order, each rank in its config) report as the same signals written as JSON
    lines: rank by rank, step by step."""
    pytest.importorskip("google.protobuf", reason="protobuf is not installed for this Python")
    pytest.importorskip("crcmod", reason="crcmod is not installed for this Python")
    import pathlib
    import sys
    golden = pathlib.Path(__file__).resolve().parents[1] / "golden"
    sys.path.insert(0, str(golden))
    from make_wandb import ddp_rank_signals
    rows = [(step, rank, *ddp_rank_signals(rank, step)) for step in range(40) for rank in range(4)]
    log = write_jsonl(tmp_path / "ranks.jsonl", rows, ("step", "rank", "loss", "grad_norm", "cos_to_mean"))
    from_wandb = lrkit.diagnose(golden / "wandb" / "ddp", window=10)
    from_json_lines = lrkit.diagnose(log, window=10)
    assert from_wandb["source"].endswith("run-lrkdp003.wandb (W&B run log) and 3 more run(s), one per rank")
    del from_wandb["source"], from_json_lines["source"]
    assert from_wandb == from_json_lines
    assert [(w["metric"], w["first_step"]) for w in from_wandb["windows"]][0] == ("loss_std", 25)
    frame = lrkit.read_log(golden / "wandb" / "ddp").frame("ranks")
    assert frame.equals(lrkit.read_log(log).frame("ranks")), "read_log: the same frame"
    assert list(frame.columns[:3]) == ["step", "loss_0", "loss_1"] and len(frame) == 40


def test_per_rank_tensorboard_runs_report_as_their_json_lines(tmp_path):
    """The same loop's TensorBoard runs (make_tfevents.py's ddp_runs(), written with the protobuf library): a writer
    per rank, and rank 0's add_scalars of every rank's values, report as the same float32 signals written as JSON
    lines; a resumed writer's second file replaces the steps it logs again; the runs are found below any depth."""
    pytest.importorskip("google.protobuf", reason="protobuf is not installed for this Python")
    pytest.importorskip("crcmod", reason="crcmod is not installed for this Python")
    import pathlib
    import struct
    import sys
    golden = pathlib.Path(__file__).resolve().parents[1] / "golden"
    sys.path.insert(0, str(golden))
    from make_tfevents import EventFile
    from make_wandb import ddp_rank_signals

    def f32(x):  # what add_scalar's simple_value holds
        return struct.unpack("<f", struct.pack("<f", x))[0]

    rows = [(step, rank, *map(f32, ddp_rank_signals(rank, step))) for step in range(40) for rank in range(4)]
    log = write_jsonl(tmp_path / "ranks.jsonl", rows, ("step", "rank", "loss", "grad_norm", "cos_to_mean"))
    from_json_lines = lrkit.diagnose(log, window=10)
    del from_json_lines["source"]
    for layout in ("ddp", "ddp_gathered"):
        report = lrkit.diagnose(golden / "tfevents" / layout, window=10)
        assert report["source"].endswith(" (TensorBoard run)" if layout == "ddp_gathered" else
                                         "rank_0 (TensorBoard run) and 3 more run(s), one per rank"), report["source"]
        assert report["resumes"] == []
        del report["source"], report["resumes"]
        assert report == {k: v for k, v in from_json_lines.items() if k != "resumes"}, layout
        frame = lrkit.read_log(golden / "tfevents" / layout).frame("ranks")
        assert frame.equals(lrkit.read_log(log).frame("ranks")), f"read_log of {layout}: the same frame"
    # Rank 1's writer killed after step 30 and resumed from step 20 an hour later: its second file logs 20.. again.
    for rank in range(2):
        sessions = ((1.7e9, range(0, 31), 0.0), (1.7e9 + 3600, range(20, 40), 1.0))
        for session, (opened, steps, shift) in enumerate(sessions):
            f = EventFile(opened)
            for step in steps:
                loss, grad_norm, _ = ddp_rank_signals(rank, step)
                f.scalar(step, "loss", loss + (shift if rank == 1 else 0.0))
                f.scalar(step, "grad_norm", grad_norm)
            run = tmp_path / "runs" / f"rank_{rank}"
            run.mkdir(parents=True, exist_ok=True)
            (run / f"events.out.tfevents.{int(opened)}.node1.{100 * session + rank}.0").write_bytes(f.bytes())
    resumed = lrkit.read_log(tmp_path / "runs")
    ranks = resumed.arrays["/ranks/loss"]
    assert list(resumed.arrays["/train/step"]) == list(range(40))
    assert ranks[19, 1] == f32(ddp_rank_signals(1, 19)[0]) and ranks[20, 1] == f32(ddp_rank_signals(1, 20)[0] + 1)
    assert [r["step"] for r in lrkit.diagnose(tmp_path / "runs", window=10)["resumes"]] == [20]
    # The directory above: runs two levels down are found, as TensorBoard finds them; a link back up is walked once.
    (tmp_path / "runs" / "rank_0" / "up").symlink_to("..", target_is_directory=True)
    above = lrkit.read_log(tmp_path)
    assert above.arrays["/ranks/loss"].tolist() == ranks.tolist()
    assert lrkit.diagnose(tmp_path, window=10)["source"] == f"{tmp_path}/runs/rank_0 (TensorBoard run) and 1 more " \
        "run(s), one per rank"
