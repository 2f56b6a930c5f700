#!/usr/bin/env bash
# Prepares the default corpus: the King James Bible from Debian's bible-kjv
# package as plain text (4.4 MB) at data/kjv.txt. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data
if [ ! -s data/kjv.txt ]; then
  command -v bible >/dev/null || { echo "prepare_data: 'bible' not found: run scripts/setup.sh" >&2; exit 1; }
  bible -f "Genesis 1:1-Revelation 22:21" > data/kjv.txt.tmp
  mv data/kjv.txt.tmp data/kjv.txt
fi
echo "prepare_data: data/kjv.txt ($(wc -c < data/kjv.txt) bytes)"
