"""lrkit.Schedule is the C++ schedule: the same values as `lrkit schedule`, bit for bit."""
import copy
import os
import pickle

import numpy as np
import pytest

import lrkit
from conftest import run

SPECS = [
    ("wsd(peak=3e-3, warmup=5%, decay=20%, shape=1-sqrt)", 1000),
    ("wsds(peak=3e-3, budgets=[100, 200], decay=10%)", None),
    ("uba(peak=1e-3, phi=0.5, warmup=20)", 400),
    ("onecycle(peak=0.1)", 250),
    ("join(linear(0, 1e-3, 200), cosine(1e-3, 1e-5), at=[200])", 1000),
]


@pytest.mark.parametrize("spec,total", SPECS)
def test_values_equal_the_command_line_bit_for_bit(lrkit_binary, spec, total):
    s = lrkit.Schedule(spec, total)
    steps = s.total_steps
    table = run(lrkit_binary, "schedule", spec, "--steps", str(steps), "--format", "csv").splitlines()[1:]
    expected = np.array([float(line.split(",")[1]) for line in table])
    assert np.array_equal(s.values(np.arange(steps + 1)), expected)
    assert [s(t) for t in range(steps + 1)] == expected.tolist()


def test_values_are_vectorized_over_any_shape():
    s = lrkit.Schedule("cosine(peak=1, floor=0)", 100)
    grid = np.arange(12).reshape(3, 4) * 9
    out = s.values(grid)
    assert out.shape == (3, 4) and out.dtype == np.float64
    assert out[1, 2] == s(54)
    with pytest.raises(ValueError, match=r"element 1 is 1\.5; steps must be whole numbers"):
        s.values([0, 1.5])
    with pytest.raises(ValueError, match=r"element 0 is 1e-07;"):  # not 0.000000, which looks whole
        s.values([1e-7])
    with pytest.raises(ValueError, match="element 0"):
        s.values([-1])


def test_canonical_spec_total_phases_checkpoints_and_summary():
    s = lrkit.Schedule("wsds(peak=1e-3, budgets=[12500, 25000, 50000])")
    assert s.total_steps == 53750
    assert s.checkpoints == [12500, 26250, 53750]
    assert lrkit.Schedule(s.spec, s.total_steps).values(np.arange(0, 53751, 50)).tolist() == \
        s.values(np.arange(0, 53751, 50)).tolist()
    kinds = [p["kind"] for p in s.phases]
    assert kinds.count("decay") == 3
    summary = s.summary()
    assert summary["peak"] == 1e-3 and summary["checkpoints"] == [12500, 26250, 53750]
    assert lrkit.Schedule("constant(peak=1e-3)").total_steps is None
    with pytest.raises(ValueError, match="give steps=N"):
        lrkit.Schedule("constant(peak=1e-3)").summary()
    assert "wsds(" in repr(s)


def test_spec_errors_are_value_errors_with_the_position():
    with pytest.raises(lrkit.SpecError) as caught:
        lrkit.Schedule("uba(peak=1e-3, phi=-1)", 100)
    e = caught.value
    assert isinstance(e, ValueError)
    assert e.rule and "phi" in str(e) and e.position > 0 and e.token
    with pytest.raises(lrkit.SpecError, match="total"):
        lrkit.Schedule("cosine(peak=1e-3)")  # needs the run's length
    with pytest.raises(ValueError, match="total_steps must be >= 1"):
        lrkit.Schedule("cosine(peak=1e-3)", 0)


def test_check_rates_names_the_first_step_no_optimizer_can_apply():
    s = lrkit.Schedule("exponential(1e-3, gamma=1.01)", 100000)  # passes float32's largest at step 9611
    with pytest.raises(lrkit.SpecError, match=r"it is 3.409756963459282e\+38 at step 9611 of 0..100000") as caught:
        s.check_rates()
    assert caught.value.position == 0 and caught.value.token == "exponential"
    s.check_rates(steps=9610)
    with pytest.raises(ValueError, match="no end; give steps=N"):
        lrkit.Schedule("exponential(1e-3, gamma=1.01)").check_rates()
    with pytest.raises(lrkit.SpecError, match="longer than 100000000, the most lrkit checks"):
        lrkit.Schedule("constant(1e-3)", 10**12).check_rates()  # refused at once, not after minutes


def test_families_list_every_family_with_its_keys():
    names = {f["name"]: f for f in lrkit.families()}
    for name in ("wsd", "wsds", "uba", "cosine", "linear", "onecycle", "refined", "table", "join"):
        assert name in names
    assert "phi" in names["uba"]["keys"]


def test_refined_multipliers_of_constant_norms_are_linear_decay():
    m = lrkit.refine_multipliers([2.0] * 100, 100, norm="l2")
    assert len(m) == 101 and m[0] == 1.0 and m[-1] == 0.0
    assert np.allclose(m, 1 - np.arange(101) / 100)
    with pytest.raises(ValueError):
        lrkit.refine_multipliers([1.0, -1.0], 10)
    with pytest.raises(ValueError, match=r"refinement needs a run of 1 to 100000000 steps \(got 10000000000\)"):
        lrkit.refine_multipliers([1.0, 2.0], 10**10)  # was MemoryError: std::bad_alloc


@pytest.mark.parametrize("spec,total", SPECS + [("constant(peak=1e-3)", None)])
def test_schedules_pickle_and_copy_to_the_same_values(spec, total):
    s = lrkit.Schedule(spec, total)
    back = pickle.loads(pickle.dumps(s))
    assert (back.spec, back.total_steps) == (s.spec, s.total_steps)
    steps = np.arange((s.total_steps or 500) + 3)
    assert back.values(steps).tolist() == s.values(steps).tolist()
    assert copy.copy(s) is s and copy.deepcopy(s) is s  # immutable


def test_a_pickled_refined_schedule_reads_its_norms_file_again(tmp_path):
    norms = tmp_path / "norms.csv"
    norms.write_text("grad_norm\n" + "\n".join(str(1.0 + (i % 7) / 10) for i in range(60)) + "\n")
    s = lrkit.Schedule(f"refined(norms={lrkit.spec_word(str(norms))}, peak=1e-3, norm=l2)", 60)
    state = pickle.dumps(s)
    assert pickle.loads(state).values(np.arange(61)).tolist() == s.values(np.arange(61)).tolist()
    norms.unlink()
    with pytest.raises(ValueError, match="norms.csv"):
        pickle.loads(state)


def test_a_malformed_pickled_state_is_a_value_error():
    s = lrkit.Schedule.__new__(lrkit.Schedule)
    with pytest.raises(ValueError, match=r"\(spec, total_steps\); got 1 items"):
        s.__setstate__(("cosine(peak=1)",))


def test_steps_are_ints_or_exactly_whole_floats():
    """total_steps=1e4 works as in PyTorch's own schedulers; 1.5, '5' and an int past int64 are refused by name."""
    schedule = lrkit.Schedule("cosine(peak=1e-3)", total_steps=1e4)
    assert schedule.total_steps == 10000
    assert schedule(5e3) == schedule(5000) == schedule(np.int64(5000))
    assert schedule.summary(steps=1e2)["steps"] == 100
    assert lrkit.refine_multipliers([1.0] * 4, 4.0) == lrkit.refine_multipliers([1.0] * 4, 4)
    with pytest.raises(ValueError, match=r"^total_steps must be a whole number \(got 1.5\)$"):
        lrkit.Schedule("cosine(peak=1e-3)", total_steps=1.5)
    with pytest.raises(ValueError, match=r"^step must be a whole number \(got nan\)$"):
        schedule(float("nan"))
    with pytest.raises(TypeError, match=r"^step must be a whole number \(got str\)$"):
        schedule("5")
    with pytest.raises(TypeError, match=r"^total_steps must be a whole number \(got bool\)$"):
        lrkit.Schedule("cosine(peak=1e-3)", total_steps=True)
    with pytest.raises(TypeError, match=r"^step must be a whole number \(got bool\)$"):
        schedule(np.True_)
    with pytest.raises(ValueError, match=r"^step is out of range \(got 1180591620717411303424\)$"):
        schedule(2**70)
    with pytest.raises(ValueError, match=r"^Schedule.check_rates: steps must be a whole number \(got 0.5\)$"):
        schedule.check_rates(steps=0.5)


def test_a_file_name_that_is_not_utf8_goes_into_a_spec_and_comes_back_as_python_gives_it(tmp_path):
    # Python names such a file with a surrogate (os.fsdecode, os.listdir); Schedule refused the spec ("Unable to cast
    # Python instance to C++ type") and spec_word the name ("incompatible function arguments").
    table = tmp_path / os.fsdecode(b"caf\xe9 rates.csv")  # Latin-1, and a space: spec_word quotes it
    table.write_text("step,lr\n0,1.0\n1,0.5\n2,0.25\n")
    word = lrkit.spec_word(str(table))
    assert word == f'"{table}"'
    s = lrkit.Schedule(f"table(file={word})")
    assert [s(t) for t in range(3)] == [1.0, 0.5, 0.25]
    assert str(table) in s.spec and str(table) in repr(s)
    assert lrkit.Schedule(s.spec, s.total_steps).spec == s.spec
    again = pickle.loads(pickle.dumps(s))
    assert again.spec == s.spec and [again(t) for t in range(3)] == [1.0, 0.5, 0.25]
    missing = tmp_path / os.fsdecode(b"absent\xe9.csv")
    with pytest.raises(lrkit.SpecError) as raised:  # the message, not a UnicodeDecodeError about it
        lrkit.Schedule(f"table(file={lrkit.spec_word(str(missing))})")
    assert raised.value.token == str(missing) and str(missing) in raised.value.rule, raised.value.rule
    with pytest.raises(ValueError) as raised:  # a message naming the file (pybind11 gave it as an empty ValueError)
        lrkit.decay_branches(f"table(file={word})", [2])
    assert str(table) in str(raised.value) and "has a length of its own" in str(raised.value), str(raised.value)
    with pytest.raises(TypeError, match=r"^decay_branches: spec must be a string .* \(got bytes\)$"):
        lrkit.decay_branches(b"wsd(peak=1)", [2])
    with pytest.raises(TypeError, match=r"^spec_word: text must be a string \(got int\)$"):
        lrkit.spec_word(3)


def test_a_spec_errors_position_indexes_the_str_the_spec_was_given_as():
    # The position counted the spec's bytes: after a "caf\u00e9" it pointed one character past the token, in the
    # message and in .position.
    for name in ("caf\u00e9.csv", os.fsdecode(b"caf\xe9.csv")):  # UTF-8, Latin-1
        spec = f"table(file={name}, colour=x)"
        with pytest.raises(lrkit.SpecError) as raised:
            lrkit.Schedule(spec)
        e = raised.value
        assert e.position == 21 and spec[e.position:e.position + len(e.token)] == e.token == "colour"
        assert " at position 21 ('colour')" in str(e), str(e)
