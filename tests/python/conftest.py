"""Shared fixtures: the built `lrkit` executable (from $LRKIT, set by ctest)."""
import os
import subprocess

import pytest


@pytest.fixture
def lrkit_binary():
    path = os.environ.get("LRKIT")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("the lrkit executable is not built here ($LRKIT unset: a build without LibTorch)")
    return path


def run(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
