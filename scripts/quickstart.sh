#!/usr/bin/env bash
# README command (1): install the system packages, build, prepare the default
# corpus (King James Bible, Debian's bible-kjv) and train the small default GPT
# on it with 2 data-parallel workers (configs/quickstart.cfg, under a minute on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
source scripts/lrkit_binary.sh
bash scripts/prepare_data.sh
"$LRKIT" schedule "$(sed -n 's/^spec = //p' configs/quickstart.cfg)" --steps 1000 --summary
"$LRKIT" train --config configs/quickstart.cfg --nproc 2 --overwrite --out out/quickstart
# The worker-dispersion verdict for the run just made (full report: lrkit diagnose out/quickstart/log.h5).
"$LRKIT" diagnose out/quickstart/log.h5 | tail -n 1
