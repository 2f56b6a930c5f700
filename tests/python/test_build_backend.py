"""The in-tree PEP 517 backend's CMake lines (python/lrkit_build_backend.py), with
subprocess.run recorded instead of run; the real `pip install .` is pip_install.sh."""
import importlib.util
import os
import sys

import pytest

BACKEND = os.path.join(os.path.dirname(__file__), "..", "..", "python", "lrkit_build_backend.py")


@pytest.fixture
def backend(monkeypatch):
    spec = importlib.util.spec_from_file_location("lrkit_build_backend_under_test", BACKEND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls = []
    monkeypatch.setattr(module.subprocess, "run", lambda command, **kwargs: calls.append(command))
    return module, calls


def test_configure_line_without_cmake_args(backend, monkeypatch):
    module, calls = backend
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    module._build_package("/scratch/build")
    configure, build = calls
    assert configure[:5] == ["cmake", "-S", module.ROOT, "-B", "/scratch/build"]
    assert configure[-1] == f"-DPython3_EXECUTABLE={sys.executable}"
    assert "-DLRKIT_WITH_TORCH=OFF" in configure and "-DLRKIT_PYTHON=ON" in configure
    assert build[:5] == ["cmake", "--build", "/scratch/build", "--target", "lrkit_python"]


def test_cmake_args_are_split_as_a_shell_would_and_come_last(backend, monkeypatch):
    module, calls = backend
    monkeypatch.setenv("CMAKE_ARGS", "-C '/deps dir/hints.cmake'  -DBoost_DIR=/opt/boost -DCMAKE_CXX_FLAGS=\"-O2 -g\"")
    module._build_package("/scratch/build")
    configure = calls[0]
    assert configure[-4:] == ["-C", "/deps dir/hints.cmake", "-DBoost_DIR=/opt/boost", "-DCMAKE_CXX_FLAGS=-O2 -g"]
