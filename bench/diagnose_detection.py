"""How often `lrkit diagnose` finds a lasting jump in the ranks' loss spread: synthetic per-rank CSV logs (a smoothly
falling loss, per-rank noise 0.02, from 60 % of the steps on `factor` times as wide), one column per lrkit build.
A finding counts when a loss_std window ends at most 25 steps before the jump (the shift test weighs the 25 steps
after each step: it may peak a few steps early); one that ends earlier counts as a false window.
Usage: diagnose_detection.py OUT_DIR STEPS SEEDS RANKS,... FACTORS,... LRKIT [BASELINE_LRKIT]"""
import json
import subprocess
import sys

import numpy as np


def write_log(path, ranks, steps, factor, seed):
    rng = np.random.default_rng(seed)
    level = 2.0 + np.exp(-np.arange(steps) / 200.0)
    noise = 0.02 * rng.standard_normal((steps, ranks))
    jump = int(0.6 * steps)
    noise[jump:] += 0.02 * np.sqrt(factor ** 2 - 1) * rng.standard_normal((steps - jump, ranks))
    loss = level[:, None] + noise
    grad_norm = 1.0 + 0.05 * rng.standard_normal((steps, ranks))
    with open(path, "w") as out:
        out.write("step,rank,loss,grad_norm\n")
        for s in range(steps):
            for k in range(ranks):
                out.write(f"{s},{k},{loss[s, k]:.8f},{grad_norm[s, k]:.8f}\n")
    return jump


def count(lrkit, path, jump):
    report = json.loads(subprocess.run([lrkit, "diagnose", path, "--json"], check=True, capture_output=True,
                                       text=True).stdout)
    windows = [w for w in report["windows"] if w["metric"] == "loss_std"]
    return any(w["last_step"] >= jump - 25 for w in windows), sum(w["last_step"] < jump - 25 for w in windows)


def main():
    out_dir, steps, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ranks_list = [int(r) for r in sys.argv[4].split(",")]
    factors = [float(f) for f in sys.argv[5].split(",")]
    builds = sys.argv[6:]
    print("| ranks | spread x | " + " | ".join(f"found ({name})" for name in ("lrkit", "baseline")[:len(builds)]) +
          " | false windows |")
    print("| ---: | ---: | " + " | ".join("---:" for _ in builds) + " | ---: |")
    for ranks in ranks_list:
        for factor in factors:
            found = [0] * len(builds)
            false_windows = 0
            for seed in range(seeds):
                path = f"{out_dir}/r{ranks}_x{factor}_s{seed}.csv"
                jump = write_log(path, ranks, steps, factor, 1000 * ranks + seed)
                for i, lrkit in enumerate(builds):
                    hit, early = count(lrkit, path, jump)
                    found[i] += hit
                    false_windows += early if i == 0 else 0
            print(f"| {ranks} | {factor:g} | " + " | ".join(f"{f}/{seeds}" for f in found) + f" | {false_windows} |")


main()
