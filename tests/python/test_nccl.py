"""lrkit's PyTorch tools on an NCCL process group, which takes CUDA tensors only: one worker on one GPU runs the
multi-worker test scripts with NCCL and with Gloo, and the two runs must agree. (Several workers on one GPU run the
same scripts over Gloo: the CUDA twins of test_distributed.py, test_reweighting.py and test_spikes.py.)"""
import json
import math
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this Python")
from conftest import run_torchrun  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HAS_NCCL = torch.cuda.is_available() and torch.distributed.is_available() and torch.distributed.is_nccl_available()


def numbers_and_words(value, path="result"):
    """(path, leaf) pairs of a worker's JSON, in order."""
    if isinstance(value, dict):
        return [pair for key in sorted(value) for pair in numbers_and_words(value[key], f"{path}.{key}")]
    if isinstance(value, list):
        return [pair for i, item in enumerate(value) for pair in numbers_and_words(item, f"{path}[{i}]")]
    return [(path, value)]


def agree(a, b):
    return a == b or (isinstance(a, float) and isinstance(b, float) and (
        (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-6, abs=1e-9)))


@pytest.mark.skipif(not HAS_NCCL, reason="no CUDA GPU with NCCL for this torch: the NCCL test runs where there is one")
@pytest.mark.parametrize("script", ["ddp_worker.py", "hdet_spread_worker.py", "reweight_worker.py", "spike_worker.py"])
def test_every_collective_takes_the_gpus_tensors_on_nccl_and_gives_what_gloo_gives(tmp_path, script):
    results = {}
    for backend in ("nccl", "gloo"):
        out = tmp_path / backend
        out.mkdir()
        run_torchrun(1, [os.path.join(HERE, script), str(out)], LRKIT_TEST_DEVICE="cuda", LRKIT_TEST_BACKEND=backend)
        results[backend] = numbers_and_words(json.load(open(out / "rank0.json")))
    assert [path for path, _ in results["nccl"]] == [path for path, _ in results["gloo"]]
    differing = [(path, a, b) for (path, a), (_, b) in zip(results["nccl"], results["gloo"]) if not agree(a, b)]
    assert not differing, f"{len(differing)} values differ, the first: {differing[:5]}"
