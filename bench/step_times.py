"""Step-time summary of bench runs: per setting, the 20th percentile and the
median of per-step times (from each run log's /train/wall_s, pooled over
rounds) and the overhead against the first setting. Other tenants of a shared
machine only ever add time, so the 20th percentile is the robust figure.

usage: python3 bench/step_times.py OUT_DIR SETTING... [--sync-every N]
  OUT_DIR/SETTING/round*/log.h5 are read; with --sync-every, the steps right
  after each HDET sync (whose time includes the converge step) are also
  reported apart, against the setting's other steps.
"""
import argparse
import glob

import h5py
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("out_dir")
parser.add_argument("settings", nargs="+")
parser.add_argument("--sync-every", type=int, default=0)
args = parser.parse_args()

rows = {}
for setting in args.settings:
    times, sync_times = [], []
    for path in sorted(glob.glob(f"{args.out_dir}/{setting}/round*/log.h5")):
        wall = h5py.File(path, "r")["/train/wall_s"][:]
        d = np.diff(wall)  # d[t]: step t+1's work plus what ran after step t was logged (a sync at step t)
        index = np.arange(len(d))
        warm = index >= 10
        synced = (index + 1) % args.sync_every == 0 if args.sync_every else np.zeros_like(warm)
        times.append(d[warm & ~synced])
        sync_times.append(d[warm & synced])
    if not times:
        raise SystemExit(f"no logs under {args.out_dir}/{setting}")
    times, sync_times = np.concatenate(times), np.concatenate(sync_times)
    rows[setting] = (np.percentile(times, 20) * 1e3, np.median(times) * 1e3, len(times), sync_times * 1e3)

base = rows[args.settings[0]][0]
for setting, (p20, median, n, sync) in rows.items():
    print(f"{setting:>8}: p20 {p20:7.3f} ms/step, median {median:7.3f} ms/step over {n} steps; "
          f"vs {args.settings[0]} (p20) {(p20 / base - 1) * 100:+.1f} %")
    if len(sync):
        extra = np.median(sync) - median
        print(f"{'':>8}  steps with a converge: median {np.median(sync):7.3f} ms over {len(sync)}, "
              f"+{extra:.3f} ms each = {extra / args.sync_every / median * 100:+.2f} % per step amortized")
