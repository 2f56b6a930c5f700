"""lrkit._lrkit linked with libstdc++ statically, as some toolchains link it (the GPU machine's /opt/gcc): beside torch,
its report is the one the module linked to libstdc++.so gives. Its copy of the C++ library once stood open to the
libstdc++.so torch brings in; the module ran half on each copy, and the report's numbers came out as garbage (torch
1.13) or a segmentation fault (torch 2.11)."""
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys

import pytest

import lrkit


def static_libstdcxx_module():
    """The build's twin of lrkit._lrkit linked with -static-libstdc++ (python/CMakeLists.txt), or None."""
    found = sorted((pathlib.Path(lrkit.__file__).parent.parent / "static_libstdcxx").glob("_lrkit*"))
    return found[0] if found else None


def test_a_module_with_its_own_libstdcxx_reports_the_same_beside_torch(tmp_path):
    pytest.importorskip("torch")
    module = static_libstdcxx_module()
    if module is None:
        pytest.skip("this build has no twin linked with libstdc++ statically (GCC builds it with the tests)")
    package = tmp_path / "lrkit"
    shutil.copytree(pathlib.Path(lrkit.__file__).parent, package, ignore=shutil.ignore_patterns("_lrkit*", "__pycache__"))
    shutil.copy(module, package)
    rng = random.Random(7)
    log = tmp_path / "ranks.jsonl"
    log.write_text("".join(json.dumps({"step": step, "rank": rank, "loss": 2.0 + rng.gauss(0, 0.02),
                                       "grad_norm": 1.0 + rng.gauss(0, 0.05)}) + "\n"
                           for step in range(300) for rank in range(4)))
    script = ("import sys, json, torch, lrkit; r = lrkit.diagnose(sys.argv[1]); "
              "print(json.dumps({'module': lrkit._lrkit.__file__, 'report': dict(r), 'text': str(r)}))")
    run = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-3000:]
    twin = json.loads(run.stdout)
    assert pathlib.Path(twin["module"]).parent == package, "the twin, not the build's module"
    report = lrkit.diagnose(log)
    assert twin["report"] == dict(report)
    assert twin["text"] == str(report)
