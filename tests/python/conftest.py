"""Shared fixtures and helpers: the built `lrkit` executable (from $LRKIT, set by ctest), torchrun."""
import os
import signal
import socket
import subprocess
import sys

import pytest


@pytest.fixture
def lrkit_binary():
    path = os.environ.get("LRKIT")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("the lrkit executable is not built here ($LRKIT unset: a build without LibTorch)")
    return path


def _cuda_available():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


# The devices a multi-worker test runs on: the CPU, and its CUDA twin where torch sees a GPU (every worker on GPU 0,
# over Gloo: tests/python/worker_setup.py).
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not _cuda_available(), reason="no CUDA GPU for this torch: the CUDA twin runs where there is one"))]


def run(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


# Debian's torch 1.13: a Gloo worker thread that releases a collective's tensors while the interpreter finalizes
# aborts the process after the script has ended ("terminate called without an active exception"; upstream, pytorch
# pull 179291). Seen once in a loaded CI run of a worker script whose results were all written; such a run is tried
# again, any other failure is not.
TORCH_EXIT_ABORT = "terminate called without an active exception"


def run_python(args, store=None, timeout=120):
    """`python ARGS...` (the Python running the tests, one thread), its output captured. A run that ended in torch's
    exit abort (TORCH_EXIT_ABORT: SIGABRT once the script was done) is tried again, as run_torchrun does, with its
    file:// store `store` removed first (the aborted run leaves it behind); the scripts run so write their results
    whole, so a second run gives the same."""
    for _ in range(3):
        if store and os.path.exists(store):
            os.remove(store)
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
        if not (done.returncode == -signal.SIGABRT and TORCH_EXIT_ABORT in done.stderr):
            break
    return done


def run_torchrun(workers, script_and_args, **environment):
    """torchrun (of the Python running the tests) on a port that was free a moment ago. torchrun binds it only once
    its agent is up, so another socket (a parallel test's) may take it first: that start is tried again on a new
    port, as is a run that ended in torch's exit abort (TORCH_EXIT_ABORT)."""
    for _ in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        # --redirects/--tee: Debian's torch 1.13 launcher fails under Python 3.11 with its default 0.
        command = [sys.executable, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1", "--nproc_per_node",
                   str(workers), "--master_port", str(port), *script_and_args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, OMP_NUM_THREADS="1", **environment))
        output = done.stdout + done.stderr
        if done.returncode == 0 or ("address already in use" not in output.lower() and TORCH_EXIT_ABORT not in output):
            break
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done
