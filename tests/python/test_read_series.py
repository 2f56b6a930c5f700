"""lrkit.read_series: a series as table(...), refined(...) and `lrkit schedule --compare` read it, here from the
TensorBoard event files tests/golden/make_tfevents.py writes (a Hugging Face Trainer run resumed from a checkpoint, a
plain loop that rebuilt its scheduler at a resume), and from a CSV."""
import os
import pathlib

import pytest

np = pytest.importorskip("numpy", reason="NumPy is not installed for this Python")
import lrkit  # noqa: E402

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden" / "tfevents"


def test_a_resumed_trainer_run_reads_as_tensorboard_shows_it():
    series = lrkit.read_series(GOLDEN / "hf_resumed", "train/learning_rate")
    assert list(series["steps"]) == list(range(10, 201, 10))
    assert series["replaced"] == 5
    assert series["values"].dtype == np.float64
    verdict = lrkit.Schedule("cosine(peak=5e-4, warmup=20)", 200).compare(series["steps"], series["values"])
    assert verdict["follows"], verdict
    # The second session's losses (0.01 higher) replaced the first's from step 110.
    loss = lrkit.read_series(str(GOLDEN / "hf_resumed"), "/train/loss")
    expected = [3.0 / (1.0 + s / 50.0) + (0.01 if s > 100 else 0.0) for s in range(10, 201, 10)]
    np.testing.assert_allclose(loss["values"], expected, rtol=1e-7)


def test_a_rebuilt_scheduler_is_named_from_the_events():
    series = lrkit.read_series(GOLDEN / "restarted", "lr")
    assert series["replaced"] == 20
    verdict = lrkit.Schedule("cosine(peak=0.1, warmup=10)", 80).compare(series["steps"], series["values"])
    assert verdict["mistake"] == "restarted" and verdict["restarts"] == [40], verdict


def test_a_csv_reads_by_column_name(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("step,lr\n0,0.5\n10,0.25\n")
    series = lrkit.read_series(path, "lr", "step")
    assert list(series["steps"]) == [0, 10] and list(series["values"]) == [0.5, 0.25]
    assert series["replaced"] == 0
    # Appended to across a resume from step 10's checkpoint: the resumed rows replace those from 10 on.
    path.write_text("step,lr\n0,0.5\n10,0.25\n20,0.125\n10,0.3\n20,0.2\n")
    series = lrkit.read_series(path, "lr", "step")
    assert list(series["steps"]) == [0, 10, 20] and list(series["values"]) == [0.5, 0.3, 0.2]
    assert series["replaced"] == 2


def test_a_file_name_that_is_not_utf8_comes_back_as_the_str_given(tmp_path):
    folder = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9")  # Latin-1: a str with a surrogate in Python
    os.makedirs(folder)
    path = os.fsdecode(os.path.join(folder, b"log.csv"))
    with open(path, "w") as f:
        f.write("step,lr\n0,1\n")
    assert list(lrkit.read_series(path, "lr", "step")["values"]) == [1.0]
    with pytest.raises(ValueError) as error:
        lrkit.read_series(path, "loss")
    assert "'" + path + "' line 1: no column named 'loss'" in str(error.value)


def test_bad_input_is_a_value_error_naming_the_file():
    with pytest.raises(ValueError, match="no scalar tag 'train/lr'; its scalar tags: loss, lr"):
        lrkit.read_series(GOLDEN / "restarted")
    with pytest.raises(ValueError, match="does not exist"):
        lrkit.read_series(os.path.join(str(GOLDEN), "missing.csv"))
    with pytest.raises(TypeError, match="path must be a str"):
        lrkit.read_series(b"/tmp/x.csv")


def trainer_state(log_history, max_steps):
    """A trainer_state.json's text as transformers' TrainerState.save_to_json writes it."""
    import json
    state = {"best_global_step": None, "best_metric": None, "best_model_checkpoint": None, "epoch": 0.5,
             "eval_steps": 50, "global_step": log_history[-1]["step"], "is_hyper_param_search": False,
             "is_local_process_zero": True, "is_world_process_zero": True, "log_history": log_history,
             "logging_steps": 10, "max_steps": max_steps, "num_input_tokens_seen": 0, "num_train_epochs": 1,
             "save_steps": 100, "stateful_callbacks": {"TrainerControl": {"args": {"should_save": True}}},
             "total_flos": 0.0, "train_batch_size": 8, "trial_name": None, "trial_params": None}
    return json.dumps(state, indent=2, sort_keys=True) + "\n"


def test_a_trainers_checkpoint_gives_its_logged_rates_and_its_runs_length(tmp_path, lrkit_binary):
    """A Trainer run of max_steps 200 under get_cosine_schedule_with_warmup (20 warmup steps), saved at step 100:
    its rates, as log_history holds them beside the losses and an evaluation, fit over the length it records."""
    import subprocess
    from scheduler_rates import hugging_face_cosine
    multiplier = hugging_face_cosine(20, 200)
    history = []
    for step in range(10, 101, 10):
        history.append({"epoch": step / 200, "grad_norm": float("nan") if step == 30 else 1.5,
                        "learning_rate": 5e-4 * multiplier(step), "loss": 2.0, "step": step})
        if step == 50:
            history.append({"epoch": 0.25, "eval_loss": 2.5, "eval_runtime": 0.5, "step": 50})
    checkpoint = tmp_path / "out" / "checkpoint-100"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text(trainer_state(history, 200))
    series = lrkit.read_series(tmp_path / "out", "train/learning_rate")
    assert list(series["steps"]) == list(range(10, 101, 10)) and series["run_steps"] == 200
    assert series["source"] == str(checkpoint / "trainer_state.json")
    assert list(series["values"]) == [row["learning_rate"] for row in history if "learning_rate" in row]
    assert np.isnan(lrkit.read_series(checkpoint / "trainer_state.json", "grad_norm", "step")["values"][2])
    assert list(lrkit.read_series(checkpoint, "eval_loss", "step")["steps"]) == [50]
    fit = lrkit.fit_schedule(series["steps"], series["values"], total=series["run_steps"])
    assert (fit["fits"], fit["spec"], fit["total"]) == (True, "cosine(peak=0.0005, warmup=20)", 200)
    done = subprocess.run([lrkit_binary, "schedule", "--fit", str(tmp_path / "out"), "--column", "train/learning_rate"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].startswith("fits cosine(peak=0.0005, warmup=20) over 200 steps: ")
    with pytest.raises(ValueError, match=r"no entry of log_history holds 'train/lr' or 'lr' \(they hold epoch, "
                                         r"grad_norm, learning_rate, loss, step, eval_loss, eval_runtime\)"):
        lrkit.read_series(tmp_path / "out")


def test_a_lightning_csv_loggers_table_and_json_lines(tmp_path):
    """Lightning's CSVLogger writes one table of every metric (csv.DictWriter, a metric's cell empty in the rows that
    log others); LearningRateMonitor names a group's rate lr-AdamW/pg1. A JSON-lines log cut off mid-line by a kill."""
    import csv
    import json
    rows = []
    for step in range(0, 100, 5):
        rows.append({"lr-AdamW/pg1": 1e-3 * (1 - step / 100), "lr-AdamW/pg2": 1e-4, "step": step})
        rows.append({"epoch": 0, "train_loss": 3.0 - step / 100, "step": step})
    path = tmp_path / "metrics.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["epoch", "lr-AdamW/pg1", "lr-AdamW/pg2", "step", "train_loss"])
        writer.writeheader()
        writer.writerows(rows)
    series = lrkit.read_series(path, "lr-AdamW/pg1", "step")
    assert list(series["steps"]) == list(range(0, 100, 5))
    assert list(series["values"]) == [row["lr-AdamW/pg1"] for row in rows if "lr-AdamW/pg1" in row]
    assert series["run_steps"] is None and not series["last_line_cut"] and series["source"] is None
    # The same table as pandas writes it with to_json(orient="records"): an array of records, NaN where a row has no
    # value (pandas writes null).
    records = tmp_path / "metrics.json"
    records.write_text(json.dumps([{"lr-AdamW/pg1": row.get("lr-AdamW/pg1"), "step": row["step"]} for row in rows]))
    series = lrkit.read_series(records, "lr-AdamW/pg1", "step")
    assert list(series["steps"]) == list(range(0, 100, 5))
    lines = tmp_path / "log.jsonl"
    lines.write_text('{"step": 0, "lr": 0.001, "loss": NaN}\n{"step": 1, "eval_loss": 2.0}\n'
                     '{"step": 2, "lr": 0.002}\n{"step": 3, "lr": 0.0')
    series = lrkit.read_series(lines, "lr", "step")
    assert list(series["steps"]) == [0, 2] and series["last_line_cut"]


def test_an_mlflow_run_gives_its_metric(tmp_path):
    """mlruns/EXPERIMENT/RUN as MLflow's FileStore writes it under Hugging Face's MLflowCallback (the metrics at the
    global step, "%s %s %s\\n" % (timestamp, value, step) appended per value), resumed from step 60's checkpoint
    after it had logged step 80."""
    from scheduler_rates import hugging_face_cosine
    multiplier = hugging_face_cosine(20, 100)
    run = tmp_path / "mlruns" / "7" / "0f1e2d3c"
    (run / "metrics").mkdir(parents=True)
    (tmp_path / "mlruns" / "7" / "meta.yaml").write_text("experiment_id: '7'\nname: lrkit\n")
    (run / "meta.yaml").write_text("run_id: 0f1e2d3c\nstatus: 3\n")
    logged = [s for s in range(10, 81, 10)] + [s for s in range(70, 101, 10)]
    with open(run / "metrics" / "learning_rate", "w") as f:
        for i, step in enumerate(logged):
            f.write("%s %s %s\n" % (1764201600000 + 1000 * i, 1e-3 * multiplier(step), step))
    series = lrkit.read_series(run, "train/learning_rate")
    assert list(series["steps"]) == list(range(10, 101, 10)) and series["replaced"] == 2
    fit = lrkit.fit_schedule(series["steps"], series["values"])
    assert (fit["fits"], fit["spec"], fit["total"]) == (True, "cosine(peak=0.001, warmup=20)", 100)
    with pytest.raises(ValueError, match=r"the MLflow runs below it: .*0f1e2d3c: name one$"):
        lrkit.read_series(tmp_path / "mlruns" / "7", "learning_rate")


def mlflow_store(path, runs):
    """An MLflow database store as MLflow's SQLAlchemy store writes one (tests/golden/mlflow/schema.sql): `runs` maps a
    run's ID to (name, start in ms, [(key, value, step, timestamp), ...]), each run with the param max_steps 100 (a
    Trainer's TrainingArguments); a NaN is stored as 0 with is_nan, an infinity as the largest double of its sign."""
    import math
    import sqlite3
    with sqlite3.connect(path) as db:
        db.executescript((GOLDEN.parent / "mlflow" / "schema.sql").read_text())
        db.execute("INSERT INTO experiments VALUES (1, 'lrkit', 'mlflow-artifacts:/1', 'active', 0, 0)")
        for run_id, (name, start, rows) in runs.items():
            db.execute("INSERT INTO runs (run_uuid, name, source_type, status, start_time, lifecycle_stage, "
                       "experiment_id) VALUES (?, ?, 'LOCAL', 'FINISHED', ?, 'active', 1)", (run_id, name, start))
            db.execute("INSERT INTO params VALUES ('max_steps', '100', ?)", (run_id,))
            for key, value, step, timestamp in rows:
                stored = 0.0 if math.isnan(value) else math.copysign(1.7976931348623157e308, value) \
                    if math.isinf(value) else value
                db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)",
                           (key, stored, timestamp, run_id, step, int(math.isnan(value))))
    db.close()


def test_an_mlflow_database_gives_what_its_file_store_gives(tmp_path, lrkit_binary):
    """MLflow 3.7 and later log to sqlite:///mlflow.db by default: the rates of the file-store test above, resumed
    from step 60's checkpoint after step 80, read from the database as from the file store; several runs are named
    as DATABASE/RUN."""
    import subprocess
    from scheduler_rates import hugging_face_cosine
    multiplier = hugging_face_cosine(20, 100)
    logged = [s for s in range(10, 81, 10)] + [s for s in range(70, 101, 10)]
    rows = [("learning_rate", 1e-3 * multiplier(step), step, 1764201600000 + 1000 * i) for i, step in enumerate(logged)]
    run = tmp_path / "mlruns" / "7" / "0f1e2d3c"
    (run / "metrics").mkdir(parents=True)
    (run / "meta.yaml").write_text("run_id: 0f1e2d3c\nstatus: 3\n")
    (run / "params").mkdir()
    (run / "params" / "max_steps").write_text("100")
    with open(run / "metrics" / "learning_rate", "w") as f:
        f.writelines("%s %r %s\n" % (timestamp, value, step) for _, value, step, timestamp in rows)
    project = tmp_path / "project"
    project.mkdir()
    mlflow_store(project / "mlflow.db", {"0f1e2d3c": ("bright-owl-12", 1764201600000, rows)})
    try:
        series = lrkit.read_series(project / "mlflow.db", "train/learning_rate")
    except ValueError as error:
        if "built without SQLite" in str(error):
            pytest.skip(str(error))
        raise
    from_files = lrkit.read_series(run, "train/learning_rate")
    assert list(series["steps"]) == list(from_files["steps"]) == list(range(10, 101, 10))
    assert list(series["values"]) == list(from_files["values"])
    assert series["replaced"] == from_files["replaced"] == 2
    assert series["run_steps"] == from_files["run_steps"] == 100
    assert series["source"] == "MLflow run bright-owl-12 (0f1e2d3c)'s metric learning_rate"
    fit = subprocess.run([lrkit_binary, "schedule", "--fit", str(project), "--column", "train/learning_rate"],
                         capture_output=True, text=True, check=True).stdout
    assert fit.startswith(f"{project} (MLflow run bright-owl-12 (0f1e2d3c)'s metric learning_rate): 10 rows of "
                          "train/learning_rate, steps 10..100 (2 rows replaced by a resumed session's), of a run of "
                          "100 steps (its max_steps)\n"), fit
    assert "fits cosine(peak=0.001, warmup=20) over 100 steps" in fit, fit
    # A second run: named, as the refusal says.
    mlflow_store(tmp_path / "two.db", {"0f1e2d3c": ("bright-owl-12", 1764201600000, rows),
                                       "1a2b3c4d": ("calm-fox-3", 1764288000000, rows[:3])})
    with pytest.raises(ValueError, match=r"holds 2 MLflow runs with a metric 'train/learning_rate' or "
                                         r"'learning_rate' \(calm-fox-3 \(1a2b3c4d\), experiment lrkit, started "
                                         r"2025-11-28 00:00:00 UTC, bright-owl-12 .*: name one as '.*two\.db/RUN', "
                                         r"RUN its name or ID$"):
        lrkit.read_series(tmp_path / "two.db", "train/learning_rate")
    assert len(lrkit.read_series(f"{tmp_path}/two.db/calm-fox-3", "train/learning_rate")["steps"]) == 3


def test_a_wandb_run_gives_its_rates_at_its_step_metric(tmp_path):
    """A Lightning loop under PyTorch's OneCycleLR reported to W&B (WandbLogger's define_metric of
    trainer/global_step; LearningRateMonitor's lr-AdamW at every step), its run log written by make_wandb.py's framing
    with the protobuf library; and the committed Trainer run, read from its directory, at its max_steps."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
    pytest.importorskip("google.protobuf", reason="protobuf is not installed for this Python")
    pytest.importorskip("crcmod", reason="crcmod is not installed for this Python")
    import sys
    sys.path.insert(0, str(GOLDEN.parent))
    from make_wandb import RunLog
    from scheduler_rates import rates_of
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    rates = rates_of(optimizer, torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, total_steps=120), 120)
    log = RunLog(1764500000.0)
    log.begin("lrkpy004", "lrkit-test", {"max_epochs": 2})
    log.define_metric(name="trainer/global_step")
    log.define_metric(glob="*", step_metric="trainer/global_step", step_sync=True)
    for step, rate in enumerate(rates):
        log.log({"lr-AdamW": rate, "trainer/global_step": step})
        if step % 10 == 9:
            log.log({"train_loss": 2.0, "trainer/global_step": step})
    run = tmp_path / "wandb" / "run-20261201_000000-lrkpy004"
    run.mkdir(parents=True)
    (run / "run-lrkpy004.wandb").write_bytes(bytes(log.data))
    series = lrkit.read_series(run, "lr-AdamW")
    assert list(series["steps"]) == list(range(120)) and list(series["values"]) == rates
    assert series["run_steps"] is None and series["source"] == str(run / "run-lrkpy004.wandb")
    fit = lrkit.fit_schedule(series["steps"], series["values"], total=120)
    assert (fit["fits"], fit["spec"]) == (True, "onecycle(peak=0.01)"), fit
    assert list(lrkit.read_series(tmp_path, "lr-AdamW")["values"]) == rates, "the one run below wandb/"
    (tmp_path / "wandb" / "run-20261202_000000-other").mkdir()
    (tmp_path / "wandb" / "run-20261202_000000-other" / "run-other.wandb").write_bytes(bytes(log.data))
    with pytest.raises(ValueError, match=r"the W&B runs below it: .*run-20261201_000000-lrkpy004, "
                                         r".*run-20261202_000000-other: name one$"):
        lrkit.read_series(tmp_path, "lr-AdamW")
    trainer = lrkit.read_series(GOLDEN.parent / "wandb" / "hf_output" / "wandb" / "run-20261127_000000-lrkhf001",
                                "train/learning_rate")
    assert list(trainer["steps"]) == list(range(10, 201, 10)) and trainer["run_steps"] == 200
