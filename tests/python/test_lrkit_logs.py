"""notebooks/lrkit_logs.py, the plots the notebooks draw: the diagnostics dashboard of a per-rank log whose gradient
norms and cosines are logged every few steps draws them over those steps."""
import importlib.util
import json
import math
import os

import pytest


def notebook_helpers():
    pytest.importorskip("h5py", reason="h5py is not installed for this Python (Debian: python3-h5py)")
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed for this Python")
    matplotlib.use("Agg")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "notebooks", "lrkit_logs.py")
    spec = importlib.util.spec_from_file_location("lrkit_logs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fields_logged_every_few_steps_are_drawn_over_those_steps(tmp_path):
    """Gradient norms and cosines every 4th step (NaN between, as read_log gives them): each rank's line, the
    gradient-norm spread and the smoothed cosines are drawn over those steps, where drawn over every step no line
    was drawn at all. Rank 1's own NaN at step 40 still breaks its line."""
    lk = notebook_helpers()
    import matplotlib.pyplot as plt
    logged = list(range(0, 60, 4))
    with open(tmp_path / "sparse.jsonl", "w") as f:
        for step in range(60):
            for rank in range(2):
                row = {"step": step, "rank": rank, "loss": 3.0 - step / 100 + rank / 50}
                if step in logged:
                    row["grad_norm"] = None if (rank, step) == (1, 40) else 1.0 + rank / 10 + step / 1000
                    row["cos_to_mean"] = 0.9 - rank / 10
                f.write(json.dumps(row) + "\n")
    fig = lk.diagnostics_dashboard(str(tmp_path / "sparse.jsonl"))
    loss_axes, norm_axes, spread_axes, cosine_axes = fig.axes
    assert [len(line.get_xdata()) for line in loss_axes.get_lines()] == [60, 60]
    for rank, line in enumerate(norm_axes.get_lines()):
        assert list(line.get_xdata()) == logged, rank
        gaps = [x for x, y in zip(line.get_xdata(), line.get_ydata()) if math.isnan(y)]
        assert gaps == ([40] if rank == 1 else []), rank
    spread = {line.get_label(): line for line in spread_axes.get_lines()}
    assert len(spread["loss std"].get_xdata()) == 60
    assert list(spread["grad norm std"].get_xdata()) == logged
    for line in cosine_axes.get_lines():
        assert list(line.get_xdata()) == logged
        assert all(math.isfinite(y) for y in line.get_ydata()), "smoothed over the logged steps"
    plt.close(fig)
