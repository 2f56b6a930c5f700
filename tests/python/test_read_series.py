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
