#!/usr/bin/env bash
# `pip install .` without network (--no-index): PYTHON's pip builds the wheel
# through the in-tree backend into a scratch target, and the installed package
# evaluates a schedule. Exits 77 (skipped) when PYTHON has no pip.
set -euo pipefail
python=$1 source=$2 target=$3
if ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "skipped: $python has no pip (Debian: python3-pip)"
  exit 77
fi
rm -rf "$target"
"$python" -m pip install --no-index --no-deps --disable-pip-version-check --target "$target" "$source"
printed=$(cd /tmp && PYTHONPATH="$target" "$python" -c \
  "import lrkit; s = lrkit.Schedule('wsd(peak=1e-3, warmup=10, decay=20%, shape=linear)', 100); print(s(5), s(50), s(90))")
[ "$printed" = "0.0005 0.001 0.0005" ] || { echo "the pip-installed package printed '$printed'"; exit 1; }
echo "pip-installed lrkit printed $printed"
