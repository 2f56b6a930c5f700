"""`lrkit diagnose` from Python: the silent-inconsistency report on an lrkit run log (or its run directory), a
DispersionHook's log, per-rank CSV / JSON-lines logs of any trainer, or Weights & Biases runs of every rank, as the
command gives it (the same C++ code), for a notebook or a pip-installed lrkit, which has no command line.

    >>> report = lrkit.diagnose("out/run")
    >>> report["verdict"], [w["first_step"] for w in report["windows"]]
    >>> print(report)  # the text `lrkit diagnose out/run` prints
"""
import glob
import json
import os
import re
import warnings

from ._lrkit import _diagnose

__all__ = ["Diagnosis", "diagnose"]


class Diagnosis(dict):
    """The report as `lrkit diagnose --json` gives it (verdict, windows, outliers, spikes, non_finite, resumes,
    dispersion, loss, thresholds, notes); ``str()`` and ``.text`` are the text report the command prints."""

    def __init__(self, report, text):
        super().__init__(report)
        self.text = text

    def __str__(self):
        return self.text


def diagnose(*logs, columns=None, window=None, jump_z=None, shift_z=None, spike_z=None, grad_spike_z=None,
             outlier_z=None, skip=None):
    """The report on one log (a run log, a run directory, a per-rank CSV or JSON-lines file) or on one file per rank
    (several paths, ranks in the order given, or a glob such as "logs/rank*.csv", ranks in natural order: rank10
    after rank9), or on W&B runs, one per rank (the directory above them, "wandb"; each run's rank its config's
    "rank", as `lrkit diagnose --help` says), or on TensorBoard runs (a directory above a run per rank, rank_0,
    ..., at any depth; or one run with a tag per rank, loss_0, ..., or add_scalars' runs below it). `columns` names
    the fields in the file
    ({"loss": "train/loss"}, whose names may hold a comma, or "loss=train/loss,step=global_step"); the thresholds
    are the command's options (None: its defaults). A step
    missing some rank's row is skipped with a warning; an empty CSV value is NaN, as pandas writes one, unless every
    rank's is empty at its step; gradient norms logged at some steps only are tested over those steps; a log without
    gradient norms is diagnosed on the loss alone, with a warning. Raises FileNotFoundError for a missing path or a
    glob that matches nothing, and ValueError naming the file, line or option for anything else wrong."""
    if not logs:
        raise TypeError("diagnose() needs a log: a run log, a run directory, or per-rank CSV / JSON-lines files")
    paths = file_names(logs)
    require_logs(paths)
    try:
        report, text, read_warnings = _diagnose(paths, column_mapping(columns), window, jump_z, shift_z, spike_z,
                                                grad_spike_z, outlier_z, skip)
    except ValueError as error:
        raise ValueError(_in_python_words(str(error), paths)) from None
    for warning in read_warnings:
        warnings.warn(_in_python_words(warning, paths), stacklevel=2)
    return Diagnosis(json.loads(report), text)


def file_names(paths):
    """The paths as str, bytes ones as os.fsdecode gives them (a name that is not UTF-8 keeps its bytes as surrogates,
    which the C++ reader takes back): the checks, the reader and the messages then see one kind of name."""
    return [os.fsdecode(os.fspath(path)) for path in paths]


def is_pattern(path):
    """A glob the C++ reader expands (lrkit diagnose's rule): glob characters, and no file of that very name."""
    return any(c in path for c in "*?[") and not os.path.exists(path)


def require_logs(paths):
    """Raises FileNotFoundError for a path that does not exist or a glob that matches nothing."""
    for path in paths:
        if is_pattern(path):
            if not glob.glob(path):
                raise FileNotFoundError(f"no file matches '{path}'")
        elif not os.path.exists(path):
            raise FileNotFoundError(f"log '{path}' does not exist")


def column_mapping(columns):
    """`columns` as the reader takes it: {"loss": "train/loss"} as its (field, name) pairs (a name may hold a comma),
    "loss=train/loss,step=global_step" as it is, None as "" (none)."""
    if columns is None or isinstance(columns, str):
        return columns or ""
    if not isinstance(columns, dict):
        raise TypeError("columns must be a dict of fields to the file's names, {'loss': 'train/loss'}, or a str "
                        f"'loss=train/loss,step=global_step' (got an object of type {type(columns).__name__})")
    for field, name in columns.items():
        if not isinstance(field, str) or not isinstance(name, str):
            raise TypeError(f"columns: a field and the file's name for it are str (got {field!r:.40}: {name!r:.40})")
    return list(columns.items())


_OPTIONS = "columns|window|skip|jump-z|shift-z|spike-z|grad-spike-z|outlier-z"


def _in_python_words(message, paths=()):
    """The command's message with its options as this function takes them: "option --jump-z" is jump_z here,
    "--skip 5" skip=5 and "--columns grad_norm=NAME" columns='grad_norm=NAME'. Only where they stand as options (at the
    start, or after a space or a bracket), and never inside the `paths` given (a folder 'run --skip 5' was named as
    'run skip=5', which does not exist): a path such as 'runs/--skip/ranks.csv' is quoted as it is."""
    def keyword(match):
        return match.group(1).replace("-", "_")

    # Set aside while the options are rewritten: each path that holds an option's "--" (longest first: a run
    # directory's log.h5 holds its path), and no other, since only those could be rewritten.
    kept = sorted({path for path in paths if "--" in path}, key=len, reverse=True)
    for index, path in enumerate(kept):
        message = message.replace(path, f"\0{index}\0")
    option = r"(?<![^\s(])(?:option )?--"
    message = re.sub(option + r"columns ([^\s)=]+=[^\s);]*)", r"columns='\1'", message)
    message = re.sub(option + rf"({_OPTIONS}) (-?\d+)", lambda m: f"{keyword(m)}={m.group(2)}", message)
    message = re.sub(option + rf"({_OPTIONS})\b", keyword, message)
    return re.sub("\0(\\d+)\0", lambda m: kept[int(m.group(1))], message)
