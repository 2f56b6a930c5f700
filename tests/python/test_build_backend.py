"""The in-tree PEP 517 backend's CMake lines (python/lrkit_build_backend.py), with
subprocess.run recorded instead of run; the real `pip install .` is pip_install.sh."""
import importlib.util
import os
import sys

import pytest

BACKEND = os.path.join(os.path.dirname(__file__), "..", "..", "python", "lrkit_build_backend.py")
# Whether the recorded `cmake --version` fails inside pip's isolation, as a pip-installed cmake does there.
PIP_CMAKE = {"fails": False}


@pytest.fixture
def backend(monkeypatch):
    spec = importlib.util.spec_from_file_location("lrkit_build_backend_under_test", BACKEND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        # A pip-installed cmake inside pip's isolated build: its module hidden by pip's PYTHONPATH.
        fails = command == ["cmake", "--version"] and "PYTHONPATH" in kwargs["env"] and PIP_CMAKE["fails"]
        return module.subprocess.CompletedProcess(command, 1 if fails else 0)

    PIP_CMAKE["fails"] = False
    monkeypatch.setattr(module.subprocess, "run", run)
    return module, calls


def test_configure_line_without_cmake_args(backend, monkeypatch):
    module, calls = backend
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    module._build_package("/scratch/build")
    probe, configure, build = calls
    assert probe == ["cmake", "--version"]
    assert configure[:5] == ["cmake", "-S", module.ROOT, "-B", "/scratch/build"]
    assert configure[-1] == f"-DPython3_EXECUTABLE={sys.executable}"
    assert "-DLRKIT_WITH_TORCH=OFF" in configure and "-DLRKIT_PYTHON=ON" in configure
    assert build[:5] == ["cmake", "--build", "/scratch/build", "--target", "lrkit_python"]


def test_cmake_args_are_split_as_a_shell_would_and_come_last(backend, monkeypatch):
    module, calls = backend
    monkeypatch.setenv("CMAKE_ARGS", "-C '/deps dir/hints.cmake'  -DBoost_DIR=/opt/boost -DCMAKE_CXX_FLAGS=\"-O2 -g\"")
    module._build_package("/scratch/build")
    configure = calls[1]  # after the probe of cmake
    assert configure[-4:] == ["-C", "/deps dir/hints.cmake", "-DBoost_DIR=/opt/boost", "-DCMAKE_CXX_FLAGS=-O2 -g"]


def test_a_cmake_that_fails_inside_pips_isolation_runs_outside_it(backend, monkeypatch):
    # PyTorch's virtual environments hold a pip-installed cmake, a script importing the cmake module; pip's isolated
    # build hides that module (its PYTHONPATH), and `pip install .` failed there with ModuleNotFoundError.
    module, calls = backend
    monkeypatch.setenv("PYTHONPATH", "/tmp/pip-build-env-x/site")
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    PIP_CMAKE["fails"] = True
    assert "PYTHONPATH" not in module._cmake_environment() and "PYTHONNOUSERSITE" not in module._cmake_environment()
    PIP_CMAKE["fails"] = False
    assert module._cmake_environment()["PYTHONPATH"] == "/tmp/pip-build-env-x/site", "a cmake that runs keeps it"


def test_no_cmake_or_a_broken_one_is_named(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("lrkit_build_backend_alone", BACKEND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"needs cmake on PATH"):
        module._cmake_environment()
    broken = tmp_path / "cmake"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(RuntimeError, match=r"`cmake --version` fails \(exit 3\), with and without pip's isolated"):
        module._cmake_environment()
