"""The PEP 517 build backend of `pip install .`: standard library only (no
setuptools to download, so it works without network). It configures this
repository with CMake for the interpreter running pip (the torch-free
libraries and the pybind11 module only), builds lrkit._lrkit, and packs it with
the package's Python files into a wheel. Needs cmake (a pip-installed one too), a C++17 compiler,
pybind11 (Debian pybind11-dev, or pip's in the building interpreter) and HDF5
(libhdf5-dev), as the CMake build does. CMAKE_ARGS in the environment (split as
a shell would) is added to the configure line, for dependencies outside the
system's paths: CMAKE_ARGS="-DBoost_DIR=..." pip install .
"""
import base64
import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME, VERSION = "lrkit", "0.1.0"


def _tag():
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{python}-{python}{sys.abiflags}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def _usable_cpus():
    """The CPUs this build may run on (a container's or batch job's share, as `nproc` counts them)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# What pip's isolated build sets for every process under it: PYTHONPATH to a sitecustomize that drops the building
# environment's site-packages, PYTHONNOUSERSITE=1.
_PIP_ISOLATION = ("PYTHONPATH", "PYTHONNOUSERSITE")


def _cmake_environment():
    """The environment cmake runs in: this one, or where `cmake --version` fails in it, this one less pip's isolation.
    A pip-installed cmake (a script that imports the cmake module, as in PyTorch's virtual environments, where it may
    be the only cmake) cannot import its module inside pip's isolated build."""
    isolated = dict(os.environ)
    outside = {name: value for name, value in isolated.items() if name not in _PIP_ISOLATION}
    for environment in (isolated, outside):
        try:
            probe = subprocess.run(["cmake", "--version"], env=environment, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        except FileNotFoundError:
            raise RuntimeError("lrkit: building the package needs cmake on PATH (Debian: apt-get install cmake)") from None
        if probe.returncode == 0:
            return environment
    raise RuntimeError(f"lrkit: `cmake --version` fails (exit {probe.returncode}), with and without pip's isolated "
                       f"{' and '.join(_PIP_ISOLATION)}: run it to see why")


def _build_package(build_dir):
    configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DLRKIT_WITH_TORCH=OFF",
                 "-DLRKIT_BUILD_TESTS=OFF", "-DLRKIT_BUILD_BENCH=OFF", "-DLRKIT_PYTHON=ON",
                 f"-DPython3_EXECUTABLE={sys.executable}"] + shlex.split(os.environ.get("CMAKE_ARGS", ""))
    environment = _cmake_environment()
    subprocess.run(configure, check=True, stdout=sys.stderr, env=environment)
    subprocess.run(["cmake", "--build", build_dir, "--target", "lrkit_python", "--parallel", str(_usable_cpus())],
                   check=True, stdout=sys.stderr, env=environment)
    return os.path.join(build_dir, "python", NAME)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    dist_info = f"{NAME}-{VERSION}.dist-info"
    wheel_name = f"{NAME}-{VERSION}-{_tag()}.whl"
    with tempfile.TemporaryDirectory(prefix="lrkit_wheel_") as build_dir:
        package = _build_package(build_dir)
        files = {f"{NAME}/{name}": open(os.path.join(package, name), "rb").read() for name in sorted(os.listdir(package))
                 if name.endswith((".py", ".so"))}
    files[f"{dist_info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
                                      "Summary: Learning-rate schedules and training dynamics (C++ core, PyTorch integration)\n"
                                      "Requires-Python: >=3.9\n").encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: lrkit_build_backend\nRoot-Is-Purelib: false\n"
                                   f"Tag: {_tag()}\n").encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return wheel_name
