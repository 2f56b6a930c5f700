#!/usr/bin/env bash
# ctest's driver of the Python package's tests: PYTHON runs pytest over
# tests/python with the built package first on the path; exits 77 (skipped)
# with the reason when that Python has no pytest.
python=$1
shift
if ! "$python" -c "import pytest" 2>/dev/null; then
  echo "skipped: $python has no pytest (Debian: python3-pytest)"
  exit 77
fi
exec "$python" -m pytest -q -p no:cacheprovider "$(dirname "$0")" "$@"
