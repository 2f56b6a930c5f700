"""Readers and plots shared by the lrkit notebooks (lrkit.read_log, h5py for sweep summaries, matplotlib).

Run logs follow the layout in README.md "Training" and "Diagnostics"; schedule
tables are what `lrkit schedule SPEC --out FILE.h5` writes (/schedule/{step,lr,checkpoints}).
Needs h5py and matplotlib (Debian: python3-h5py, python3-matplotlib, seen by /usr/bin/python3).
"""
import os
import sys

import h5py
import matplotlib.pyplot as plt
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def lrkit_binary():
    """The built `lrkit`: $LRKIT, else build/bin/lrkit beside this folder (CMake puts executables in bin/)."""
    return os.environ.get("LRKIT", os.path.join(HERE, "..", "build", "bin", "lrkit"))


def _lrkit_package():
    """The lrkit Python package: installed, or the build's (build/python beside the executable)."""
    try:
        import lrkit
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(lrkit_binary()))), "python"))
        import lrkit
    return lrkit


def open_log(path):
    """A run log read by lrkit.read_log (also while the run is still writing it): .arrays, .attrs, .group_attrs."""
    return _lrkit_package().read_log(path)


def read(log, name):
    """A dataset as a numpy array, or None when the log does not have it."""
    return log.get(name)


def schedule_table(path):
    with h5py.File(path, "r") as f:
        g = f["/schedule"]
        return {"step": g["step"][()], "lr": g["lr"][()], "spec": _text(g.attrs["spec"]),
                "checkpoints": g["checkpoints"][()] if "checkpoints" in g else np.array([])}


def plot_schedule(ax, path, label=None, **style):
    t = schedule_table(path)
    line, = ax.plot(t["step"], t["lr"], label=label or t["spec"], **style)
    for c in t["checkpoints"]:
        ax.axvline(c, color=line.get_color(), lw=0.8, ls=":")
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    return t


def eval_sets(log):
    return log.children("/eval")


def checkpoint_steps(log):
    steps = read(log, "/checkpoints/step")
    return [] if steps is None else list(steps)


def mark_checkpoints(ax, log):
    for i, s in enumerate(checkpoint_steps(log)):
        ax.axvline(s, color="grey", lw=0.8, ls="--", label="checkpoint" if i == 0 else None)


SKIPPED = {1: ("non-finite loss", "black"), 2: ("loss spike", "red"), 3: ("gradient-norm spike", "darkorange")}


def mark_skipped(ax, log, series):
    """Marks, on `series` (a per-step dataset), the updates the trainer skipped (/train/skipped), by kind."""
    if "/train/skipped" not in log:  # a log written before lrkit logged skipped updates
        return
    step, skipped, values = read(log, "/train/step"), read(log, "/train/skipped"), read(log, series)
    for code, (label, color) in SKIPPED.items():
        hit = skipped == code
        if hit.any():
            ax.plot(step[hit], values[hit], "x", color=color, ms=7, mew=1.5, label=f"skipped: {label}")


def tokens_per_second(log):
    tokens, wall = read(log, "/train/tokens"), read(log, "/train/wall_s")
    rate = np.diff(tokens) / np.maximum(np.diff(wall), 1e-9)
    return read(log, "/train/step")[1:], rate


def run_dashboard(path):
    """Train and eval loss, learning rate, gradient norm and tokens/s of one run, checkpoints and skipped updates
    marked."""
    with open_log(path) as log:
        step = read(log, "/train/step")
        fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
        ax = axes[0, 0]
        ax.plot(step, read(log, "/train/loss"), lw=0.8, label="train (mean over workers)")
        for name in eval_sets(log):
            ax.plot(read(log, f"/eval/{name}/step"), read(log, f"/eval/{name}/loss"), "o-", label=f"eval: {name}")
        ax.set_ylabel("loss (nats per byte)")
        mark_checkpoints(ax, log)
        mark_skipped(ax, log, "/train/loss")
        ax.legend()
        axes[0, 1].plot(step, read(log, "/train/lr"))
        axes[0, 1].set_ylabel("learning rate")
        axes[1, 0].semilogy(step, read(log, "/train/grad_norm"), lw=0.8)
        mark_skipped(axes[1, 0], log, "/train/grad_norm")
        axes[1, 0].set_ylabel("gradient l2 norm (before clipping)")
        s, rate = tokens_per_second(log)
        axes[1, 1].plot(s, rate / 1e3, lw=0.8)
        axes[1, 1].set_ylabel("throughput (1000 tokens/s)")
        for ax in axes[1]:
            ax.set_xlabel("step")
        fig.suptitle(f"{path}: {_text(log.attrs['schedule_spec'])}, {_text(log.attrs['world_size'])} worker(s)")
        fig.tight_layout()
        return fig


def diagnose(path, **options):
    """lrkit.diagnose(PATH, **options): the report of `lrkit diagnose PATH --json` as a dict (print() it for the text)."""
    return _lrkit_package().diagnose(path, **options)


def logged_steps(ranks):
    """The steps (rows of a [step, rank] array) that log a per-rank field: all but those where every rank's value is
    NaN, which is how read_log gives a field logged at some steps only (a gradient norm every k steps). Drawn over
    those steps, its lines join the logged values (drawn over every step, each stood alone between NaN and no line
    was drawn); a rank's own NaN still breaks its line."""
    return ~np.all(np.isnan(np.asarray(ranks, dtype=float)), axis=1)


def diagnostics_dashboard(path, report=None):
    """Per-rank traces, dispersion and consistency over time with the flagged windows shaded and the resumes marked."""
    with open_log(path) as log:
        step = read(log, "/train/step")
        fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
        for name, ax, unit in (("loss", axes[0, 0], "local loss (nats per byte)"),
                               ("grad_norm", axes[0, 1], "local gradient norm")):
            ranks = read(log, f"/ranks/{name}")
            if ranks is None:  # a per-rank log of the loss alone
                ax.text(0.5, 0.5, f"no {name} logged", ha="center", va="center", transform=ax.transAxes)
                continue
            logged = logged_steps(ranks) if name == "grad_norm" else slice(None)
            for k in range(ranks.shape[1]):
                ax.plot(step[logged], ranks[logged, k], lw=0.6, label=f"rank {k}")
            ax.set_ylabel(unit)
            ax.set_yscale("log")
        axes[0, 0].legend(ncol=2, fontsize="small")
        ax = axes[1, 0]
        for name, field in (("loss_std", "loss"), ("grad_norm_std", "grad_norm")):
            values = read(log, f"/diagnostics/{name}")
            if values is not None:
                logged = logged_steps(read(log, "/ranks/grad_norm")) if field == "grad_norm" else slice(None)
                ax.plot(step[logged], values[logged], lw=0.8, label=name.replace("_", " "))
        ax.set_ylabel("std across workers")
        ax.set_yscale("log")
        ax.legend()
        ax = axes[1, 1]
        cos = read(log, "/ranks/cos_to_mean")
        if cos is not None:
            logged = logged_steps(cos)  # a mean of SMOOTH logged steps
            for k in range(cos.shape[1]):
                ax.plot(step[logged], smooth(cos[logged, k]), lw=0.8, label=f"cos(g_{k}, g_bar)")
        pairwise = read(log, "/diagnostics/cos_pairwise")
        if pairwise is not None and not np.all(np.isnan(pairwise)):
            ax.plot(step, smooth(pairwise), lw=1.2, color="black", label="mean pairwise cosine C")
        ax.set_ylabel(f"cosine (mean of {SMOOTH} steps)")
        ax.legend(ncol=2, fontsize="small")
        for ax in axes[1]:
            ax.set_xlabel("step")
        if report:
            for w in report["windows"]:
                for ax in axes.flat:
                    if w.get("test") == "shift":  # a lasting shift: the line where it starts
                        ax.axvline(w["first_step"], color="red", ls="--", lw=1)
                    else:
                        ax.axvspan(w["first_step"], w["last_step"] + 1, color="red", alpha=0.15)
            for i, resume in enumerate(report.get("resumes") or []):  # where a session went on: a shift may be its
                for ax in axes.flat:
                    ax.axvline(resume["step"], color="grey", ls=":", lw=1, label="resumed" if i == 0 and ax is axes[1, 0] else None)
            if report.get("resumes"):
                axes[1, 0].legend()
        fig.suptitle(f"{path}: worker dispersion" + (f"\nverdict: {report['verdict']}" if report else ""))
        fig.tight_layout()
        return fig


SMOOTH = 10


def smooth(x, width=SMOOTH):
    """Trailing mean over `width` steps (shorter at the start)."""
    x = np.asarray(x, dtype=float)
    sums = np.cumsum(np.insert(x, 0, 0.0))
    start = np.maximum(np.arange(1, len(x) + 1) - width, 0)
    return (sums[1:] - sums[start]) / (np.arange(1, len(x) + 1) - start)


def logs_cos_matrix(path):
    """Whether the log holds pairwise cosine matrices (lrkit train's diagnostics.matrix_every)."""
    with open_log(path) as log:
        steps = read(log, "/diagnostics/cos_matrix_step")
        return steps is not None and len(steps) > 0


def cos_matrix_heatmap(path, index=-1):
    """The pairwise cosine matrix (from gradient sketches) logged at one step."""
    with open_log(path) as log:
        steps, flat = read(log, "/diagnostics/cos_matrix_step"), read(log, "/diagnostics/cos_matrix")
        if steps is None or len(steps) == 0:
            raise ValueError(f"{path} logged no pairwise matrix (set diagnostics.matrix_every)")
        n = int(round(np.sqrt(flat.shape[1])))
        fig, ax = plt.subplots(figsize=(4.5, 4))
        image = ax.imshow(flat[index].reshape(n, n), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_xlabel("rank")
        ax.set_ylabel("rank")
        ax.set_title(f"cos(g_i, g_j) at step {int(steps[index])}")
        fig.colorbar(image, ax=ax, label="cosine")
        fig.tight_layout()
        return fig


def hdet_dashboard(path, *others):
    """HDET from a run log: the base rate against the schedule (and other runs' rates),
    every replica's rate, the window losses, and the meta-update's Delta and velocity;
    dotted lines mark the syncs."""
    with open_log(path) as log:
        if "/hdet" not in log:
            raise ValueError(f"{path} is not an HDET run (hdet.enabled = false)")
        step = read(log, "/train/step")
        base, scale = read(log, "/hdet/lr/base"), read(log, "/hdet/lr/scale")
        rates, windows = read(log, "/hdet/lr/replica"), read(log, "/hdet/window_loss")
        delta, velocity = read(log, "/hdet/lr/delta"), read(log, "/hdet/lr/velocity")
        sync_every = int(log.group_attrs["/hdet"]["sync_every"])
        replicas = rates.shape[1]
        fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
        ax = axes[0, 0]
        ax.plot(step, read(log, "/train/lr"), label="base rate (HDET)", color="black")
        ax.plot(step, base / scale, ls="--", color="grey", label="the schedule alone")
        for other in others:
            with open_log(other) as o:
                ax.plot(read(o, "/train/step"), read(o, "/train/lr"), lw=0.8, label=f"{other}")
        ax.set_ylabel("learning rate")
        ax.set_yscale("log")
        ax.legend(fontsize="small")
        ax = axes[0, 1]
        for r in range(replicas):
            ax.plot(step, rates[:, r], lw=0.6)
        ax.set_ylabel(f"learning rate of each of {replicas} replicas")
        ax = axes[1, 0]
        for r in range(replicas):
            ax.plot(step, windows[:, r], lw=0.6)
        ax.set_ylabel("window mean loss per replica (nats per byte)")
        ax = axes[1, 1]
        ax.plot(step, delta, label="Delta (relative to the base)")
        ax.plot(step, velocity, label="velocity")
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_ylabel("meta-update")
        ax.legend(fontsize="small")
        for ax in axes.flat:
            for s in range(sync_every, len(step) + 1, sync_every):
                ax.axvline(s, color="grey", lw=0.3, ls=":")
        for ax in axes[1]:
            ax.set_xlabel("step")
        fig.suptitle(f"{path}: HDET, {replicas} replicas ({log.group_attrs['/hdet']['mode']}), "
                     f"sync every {sync_every} steps; final correction x{scale[-1]:.3f}")
        fig.tight_layout()
        return fig


def sweep_summary(path):
    """`lrkit sweep`'s OUT/summary.h5 as plain arrays: one entry per (schedule, budget, peak, seed) result.
    A loss of +inf marks a run that diverged (a non-finite loss), NaN a result the sweep has not got."""
    with h5py.File(path, "r") as f:
        r, sch = f["/results"], f["/schedules"]
        out = {name: r[name][()] for name in ("schedule", "budget", "peak", "seed", "step", "compute", "loss")}
        out["runs"] = [_text(x) for x in r.attrs["runs"]]
        out["names"] = [_text(x) for x in sch.attrs["names"]]
        out["modes"] = [_text(x) for x in sch.attrs["modes"]]
        for name in ("trained_steps", "separate_steps", "wall_s"):
            out[name] = sch[name][()]
        # Summaries written before planned_steps existed counted the plan as trained_steps.
        out["planned_steps"] = sch["planned_steps"][()] if "planned_steps" in sch else out["trained_steps"]
        out["metric"] = _text(f.attrs["metric"])
        out["run_dir"] = os.path.join(os.path.dirname(os.path.abspath(path)), "runs")
        return out


def sweep_best(summary):
    """{(schedule index, budget): (mean loss over seeds at the best peak, that peak, min, max over seeds)}.
    The mean is +inf where every peak diverged in some seed."""
    s = summary
    best = {}
    for k in range(len(s["names"])):
        for b in np.unique(s["budget"]):
            chosen = None
            for p in np.unique(s["peak"]):
                pick = (s["schedule"] == k) & (s["budget"] == b) & ((s["peak"] == p) | (np.isnan(s["peak"]) & np.isnan(p)))
                losses = s["loss"][pick]
                if losses.size == 0 or np.all(np.isnan(losses)):
                    continue
                mean = np.nanmean(losses)
                if chosen is None or mean < chosen[0]:
                    chosen = (mean, p, np.nanmin(losses), np.nanmax(losses))
            if chosen is not None:
                best[(k, int(b))] = chosen
    return best


def sweep_table(summary):
    """A markdown table: the metric's loss per budget and schedule (best peak), and the best schedule."""
    s, best = summary, sweep_best(summary)
    budgets = [int(b) for b in np.unique(s["budget"])]
    lines = ["| budget | " + " | ".join(s["names"]) + " | best |", "| ---: |" + " ---: |" * len(s["names"]) + " --- |"]
    for b in budgets:
        cells = [best.get((k, b), (np.nan,))[0] for k in range(len(s["names"]))]
        winner = s["names"][int(np.nanargmin(cells))] if np.any(np.isfinite(cells)) else "-"
        lines.append(f"| {b} | " + " | ".join("diverged" if c == np.inf else f"{c:.4f}" for c in cells) + f" | {winner} |")
    return "\n".join(lines)


def sweep_dashboard(path):
    """Loss against budget per schedule (best peak; bars: the spread over seeds), loss against the
    optimizer steps actually trained to reach each result, and the compute each schedule's mode spent."""
    s = sweep_summary(path)
    best = sweep_best(s)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    ax = axes[0]
    for k, name in enumerate(s["names"]):
        budgets = sorted(b for (kk, b) in best if kk == k and np.isfinite(best[(kk, b)][0]))  # diverged: no point
        mean = [best[(k, b)][0] for b in budgets]
        low = [best[(k, b)][0] - best[(k, b)][2] for b in budgets]
        high = [best[(k, b)][3] - best[(k, b)][0] for b in budgets]
        ax.errorbar(budgets, mean, yerr=[low, high], marker="o", capsize=3, label=f"{name} ({s['modes'][k]})")
    ax.set_xscale("log")
    ax.set_xlabel("budget (optimizer steps)")
    ax.set_ylabel(f"{s['metric']} loss (nats per byte)")
    ax.legend(fontsize="small")
    ax.set_title("loss per budget, best peak")
    ax = axes[1]
    for k, name in enumerate(s["names"]):
        pick = s["schedule"] == k
        ax.plot(s["compute"][pick], s["loss"][pick], "o", label=name)
    ax.set_xlabel("optimizer steps into the run when the result was read")
    ax.set_ylabel(f"{s['metric']} loss (nats per byte)")
    ax.set_title("loss against steps trained")
    ax.legend(fontsize="small")
    ax = axes[2]
    x = np.arange(len(s["names"]))
    ax.bar(x - 0.2, s["separate_steps"], width=0.4, label="separate runs would train", color="lightgrey")
    ax.bar(x + 0.2, s["planned_steps"], width=0.4, label="this mode plans", color="lightblue")
    ax.bar(x + 0.2, s["trained_steps"], width=0.4, label="of which trained (diverged runs stop early)")
    for i, (p, sep) in enumerate(zip(s["planned_steps"], s["separate_steps"])):
        ax.text(i + 0.2, p, f"{p / sep:.2f}x", ha="center", va="bottom", fontsize="small")
    ax.set_xticks(x, [f"{n}\n{m}" for n, m in zip(s["names"], s["modes"])])
    ax.set_ylabel("optimizer steps (all peaks and seeds)")
    ax.set_title("compute per schedule")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def sweep_learning_rates(path, budget=None):
    """Every schedule's learning rate over its run(s) for one budget (default: the largest), read from
    the run logs; a branch's log starts at its fork, so its main run's log is drawn up to there."""
    s = sweep_summary(path)
    budget = int(budget or np.max(s["budget"]))
    fig, ax = plt.subplots(figsize=(8, 4))
    for k, name in enumerate(s["names"]):
        pick = np.flatnonzero((s["schedule"] == k) & (s["budget"] == budget))
        if pick.size == 0:
            continue
        i = pick[0]
        run = s["runs"][i]
        with open_log(os.path.join(s["run_dir"], run, "log.h5")) as log:
            step, lr = read(log, "/train/step"), read(log, "/train/lr")
            branched = log.attrs.get("branched_from", "")
        if branched:  # <sweep out>/runs/<main run>/checkpoints/step_N.pt, found beside this run
            main = os.path.join(s["run_dir"], os.path.basename(os.path.dirname(os.path.dirname(branched))), "log.h5")
            with open_log(main) as log:
                head = read(log, "/train/step") < step[0]
                step = np.concatenate([read(log, "/train/step")[head], step])
                lr = np.concatenate([read(log, "/train/lr")[head], lr])
        line, = ax.plot(step, lr, label=f"{name} ({run})")
        ax.axvline(s["step"][i], color=line.get_color(), lw=0.8, ls=":")
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    ax.set_title(f"schedules at budget {budget} (dotted: where the loss is read)")
    ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def _text(value):
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)  # as lrkit.read_log
