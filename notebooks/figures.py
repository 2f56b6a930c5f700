#!/usr/bin/env python3
"""The README's figures, drawn with the notebooks' helpers from fresh inputs.

Usage: python3 notebooks/figures.py OUT_DIR FIGURE_DIR [RUN_LOG [DIAGNOSTICS_LOG [SWEEP_SUMMARY]]]
(OUT_DIR made by notebooks/make_logs.sh; FIGURE_DIR receives the PNGs; the two
logs default to OUT_DIR/run/log.h5, the sweep to OUT_DIR/sweep/summary.h5). The
README's figures came from out/quickstart/log.h5, the ladder's one-rank run
(scripts/ladder.sh) and out/sweep_wsds/summary.h5 (scripts/sweep_experiment.sh).
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lrkit_logs as lk  # noqa: E402


def main(out, figures, run=None, diagnostics=None, sweep=None):
    os.makedirs(figures, exist_ok=True)
    fig, ax = plt.subplots(figsize=(9, 4))
    for shape in ["linear", "cosine", "1-sqrt", "square", "exp", "geometric"]:
        lk.plot_schedule(ax, os.path.join(out, "schedules", f"wsd_{shape}.h5"), label=f"wsd {shape}")
    lk.plot_schedule(ax, os.path.join(out, "schedules", "wsds.h5"), label="wsds (3 budgets)", color="black", lw=0.8)
    ax.legend(ncol=2, fontsize="small")
    ax.set_title("WSD decay shapes and WSD-S (dotted: checkpoints)")
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "schedules.png"), dpi=90)
    run = run or os.path.join(out, "run", "log.h5")
    diagnostics = diagnostics or run
    lk.run_dashboard(run).savefig(os.path.join(figures, "run.png"), dpi=80)
    report = lk.diagnose(diagnostics, skip=20)
    lk.diagnostics_dashboard(diagnostics, report).savefig(os.path.join(figures, "diagnostics.png"), dpi=80)
    sweep_figure(sweep or os.path.join(out, "sweep", "summary.h5"), figures)


def sweep_figure(summary, figures):
    lk.sweep_dashboard(summary).savefig(os.path.join(figures, "sweeps.png"), dpi=75)


if __name__ == "__main__":
    main(*sys.argv[1:6])
