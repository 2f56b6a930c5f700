"""Run logs (``DIR/log.h5``) as NumPy arrays and pandas DataFrames.

A log that is still being written, and one whose writer was killed, open too
(read-only in SWMR mode; ``RunLog.open_for_writing`` says so). Per-rank CSV and
JSON-lines logs (a DispersionHook's ``ranks.jsonl``, another trainer's export)
and Weights & Biases runs, one per rank, read into the same layout, as
`lrkit diagnose` reads them.
"""
import glob
import os
import warnings

__all__ = ["RunLog", "read_log"]


class RunLog:
    """Every dataset of a run log by path, its attributes, and a DataFrame per group.

    ``log.arrays["/train/loss"]`` is a NumPy array; ``log.frame("train")`` is a
    pandas DataFrame of the group's per-step series (matrices such as
    ``/ranks/loss`` [step, rank] become columns ``loss_0``, ``loss_1``, ...; a group
    logged against /train/step, as /ranks and /diagnostics are, gets its column
    ``step`` first, so that ``log.frame("ranks").to_csv(index=False)`` is a table
    `lrkit diagnose` reads back; events logged at some steps, NAME_step beside NAME
    as ``/diagnostics/cos_matrix``, stay in ``arrays``);
    ``log.frame("eval/heldout")`` is an evaluation set's;
    ``log.config`` holds every effective configuration value (``/config``) as text,
    the newest session's; ``log.sessions`` lists every session (its start and each resume).
    """

    def __init__(self, path, arrays, attrs, group_attrs, open_for_writing=False):
        self.path = path
        self.arrays = arrays
        self.attrs = attrs
        self.group_attrs = group_attrs
        # Marked open for writing: a run writes it, or was killed. Its last
        # flush may be under way or cut short, some series a few rows ahead.
        self.open_for_writing = open_for_writing

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __contains__(self, name):
        """A dataset or a group (of datasets or attributes) at this path."""
        name = "/" + name.strip("/")
        return name in self.arrays or name in self.group_attrs or any(n.startswith(name + "/") for n in self.arrays)

    def get(self, name, default=None):
        """The dataset at `name` as a NumPy array, or `default`."""
        return self.arrays.get("/" + name.strip("/"), default)

    def children(self, group):
        """The names directly below a group: log.children("/eval") lists the evaluation sets."""
        prefix = "/" + group.strip("/") + "/"
        return sorted({n[len(prefix):].split("/", 1)[0] for n in list(self.arrays) + list(self.group_attrs)
                       if n.startswith(prefix)})

    @property
    def config(self):
        return dict(self.group_attrs.get("/config", {}))

    @property
    def files(self):
        """What each data and evaluation file held when the newest session started, by the name its setting gives it
        ("data.path", "data.sources NAME", "eval.sets NAME"): "4404412 bytes, sampled crc32:3ae717f0", the CRC-32 of the
        size (8 bytes, little-endian) and of 64 blocks of 4 KiB spread over the file (the whole file up to 256 KiB).
        Runs trained on the same corpus agree here wherever it lay. Logs written before lrkit recorded it have none."""
        return dict(self.group_attrs.get("/files", {}))

    @property
    def sessions(self):
        """Every session that wrote the log, oldest first: its start, then each resume. Each is its /sessions/<i>
        attributes as text (kind, step, checkpoint, device, threads, command_line, started_utc, and changed: the
        settings it changed against the session before) with "index". Logs written before lrkit recorded sessions
        have none."""
        found = [dict(attrs, index=int(name.rpartition("/")[2])) for name, attrs in self.group_attrs.items()
                 if name.rpartition("/")[0] == "/sessions" and name.rpartition("/")[2].isdigit()]
        return sorted(found, key=lambda session: session["index"])

    def session_of(self, step):
        """The session that wrote the rows of `step`: a resume from an earlier checkpoint rewrites the rows from its
        step on, so the newest session that started at or before it. KeyError where no recorded session did."""
        started = [session for session in self.sessions if int(session["step"]) <= step]
        if not started:
            raise KeyError(f"run log '{self.path}' records no session that started at or before step {step}")
        return started[-1]

    def groups(self):
        return sorted({name.rsplit("/", 1)[0].lstrip("/") for name in self.arrays if name.count("/") >= 2})

    def step_column(self, name):
        """The step column a series is logged against: its own NAME_step beside an event
        series (/diagnostics/cos_matrix), its group's step (/eval/heldout/step), else /train/step."""
        name = "/" + name.strip("/")
        group = name.rsplit("/", 1)[0]
        if name.endswith("_step"):
            return name
        if name + "_step" in self.arrays:
            return name + "_step"
        if group != "/train" and group + "/step" in self.arrays:
            return group + "/step"
        return "/train/step"

    def frame(self, group):
        import pandas

        prefix = "/" + group.strip("/") + "/"
        series = {name: values for name, values in self.arrays.items()
                  if name.startswith(prefix) and "/" not in name[len(prefix):] and values.ndim in (1, 2)}
        if not series:
            raise KeyError(f"run log '{self.path}' has no series under {prefix}; its groups: {', '.join(self.groups())}")
        # One step column's series: events beside per-step series (/diagnostics/cos_matrix) stay in .arrays.
        steps = {self.step_column(name) for name in series}
        step = prefix + "step" if prefix + "step" in steps else "/train/step" if "/train/step" in steps else min(steps)
        series = {name: values for name, values in series.items() if self.step_column(name) == step}
        lengths = sorted({len(v) for v in series.values()})
        if self.open_for_writing:
            # The rows every series of the step column has, across groups: frames of one log line up.
            whole = min(len(v) for name, v in self.arrays.items() if v.ndim and self.step_column(name) == step)
            if lengths[-1] > whole:
                warnings.warn(f"run log '{self.path}' is open for writing (a run writes it, or was killed): the {whole} "
                              f"rows every series of {step} has; the rest are a flush under way or cut short",
                              stacklevel=2)
                series = {name: values[:whole] for name, values in series.items()}
        elif len(lengths) != 1:
            raise ValueError(f"run log '{self.path}': the series under {prefix} have different lengths {lengths} "
                             "(lrkit log repair cuts the rows of a flush a kill cut short); read them from .arrays")
        columns = {}
        # Logged against another group's step (/ranks, /diagnostics: /train/step): the steps of its rows, where the
        # log has them.
        if step not in series and step in self.arrays:
            rows = len(next(iter(series.values())))
            if len(self.arrays[step]) < rows:
                raise ValueError(f"run log '{self.path}': {step} has {len(self.arrays[step])} rows, the series under "
                                 f"{prefix} {rows}; read them from .arrays")
            columns["step"] = self.arrays[step][:rows]
        for name, values in series.items():
            column = name[len(prefix):]
            if values.ndim == 1:
                columns[column] = values
            elif values.ndim == 2:
                for j in range(values.shape[1]):
                    columns[f"{column}_{j}"] = values[:, j]
        return pandas.DataFrame(columns)


def _text(value):
    """An attribute's text. Bytes that are not UTF-8 (a file named in Latin-1, in data.path or a command line) come
    back as Python gives such file names (os.fsdecode): `open()` takes the str and reaches the same file."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def open_hdf5(path):
    """An HDF5 file opened for reading, and whether it is marked open for writing: only SWMR readers open a file
    a writer holds or left marked when killed. Raises OSError when neither way opens it."""
    import h5py

    # h5py raises RuntimeError, not OSError, for a file with HDF5's signature and a damaged superblock.
    try:
        return h5py.File(path, "r"), False
    except (OSError, RuntimeError):
        pass
    try:
        return h5py.File(path, "r", swmr=True), True
    except (OSError, RuntimeError) as e:
        raise OSError(str(e)) from None


def read_log(*paths, columns=None):
    """Reads a run log, or a run directory's (its log.h5, as `lrkit train --out DIR` writes it); raises
    FileNotFoundError or ValueError naming the file.

    A per-rank log, as `lrkit diagnose` reads it (a CSV or JSON-lines file with the fields step, rank, loss and
    optionally grad_norm and cos_to_mean, or one such file per rank: several paths, ranks in the order given, or a
    glob such as "logs/rank*.csv", ranks in natural order; `columns` maps other names as lrkit.diagnose's does), or
    Weights & Biases runs, one per rank (the directory above them, their run directories or .wandb files; see the
    README), or TensorBoard runs (a directory's event files: a run per rank below it, or one run with a tag per rank
    or add_scalars' runs below it; see `lrkit diagnose --help`), reads into a run log's layout: /train/step,
    /ranks/{loss,grad_norm,cos_to_mean} [step, rank], /train/loss (the mean over ranks, the loss of the global batch
    where ranks take equal batches) and
    /diagnostics/{loss_std,loss_cv,loss_range,loss_outlier_rank,grad_norm_std,grad_norm_cv} as lrkit train logs them;
    a log of the loss alone (no grad_norm) has no /ranks/grad_norm and no /diagnostics/grad_norm_*. Its
    ``.sessions`` are empty (lrkit.diagnose's report lists the resumes a DispersionHook's JSON lines mark). A step
    that lacks some rank's row is left out with a warning."""
    if not paths:
        raise TypeError("read_log() needs a log: a run log, a run directory, or per-rank CSV / JSON-lines files")
    from .diagnosis import file_names, is_pattern

    names = file_names(paths)
    if len(names) > 1 or is_pattern(names[0]) or _is_rank_log(names[0]):
        return _read_rank_logs(names, columns)
    if columns is not None:
        raise ValueError(f"read_log: columns name the fields of a CSV / JSON-lines log; '{names[0]}' is read as an "
                         "HDF5 run log")
    return _read_run_log(names[0])


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _is_rank_log(path):
    """A CSV / JSON-lines per-rank log by its name, as `lrkit diagnose` tells them (an HDF5 file so named is HDF5); a
    W&B run log (.wandb) or a TensorBoard event file (a name holding "tfevents"), or a directory without a run log
    that holds W&B runs (a run's directory, or one above) or TensorBoard runs (its own event files, or its runs' at
    any depth)."""
    if os.path.isdir(path) and not os.path.exists(os.path.join(path, "log.h5")):
        return any(glob.glob(os.path.join(glob.escape(path), *parts, "*.wandb"))
                   for parts in ((), ("*",), ("wandb", "*"))) or \
            _holds_event_files(path)
    name = os.path.basename(path)
    if not (name.endswith((".csv", ".jsonl", ".json", ".wandb")) or "tfevents" in name) or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(8) != _HDF5_SIGNATURE


def _holds_event_files(directory):
    """Whether TensorBoard event files lie below `directory` at any depth, where lrkit's reader looks for them: links
    followed, each directory once (a link back up is not walked round)."""
    seen = set()
    for top, subdirectories, names in os.walk(directory, followlinks=True):
        try:
            info = os.stat(top)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in seen:
            subdirectories[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        if any("tfevents" in name for name in names):
            return True
    return False


def _read_rank_logs(paths, columns):
    from ._lrkit import _read_rank_logs as read
    from .diagnosis import _in_python_words, column_mapping, require_logs

    require_logs(paths)
    try:
        read_back = read(paths, column_mapping(columns))
    except ValueError as error:
        raise ValueError(_in_python_words(str(error), paths)) from None
    for warning in read_back["warnings"]:
        warnings.warn(_in_python_words(warning, paths), stacklevel=3)
    arrays = {"/train/step": read_back["step"], "/train/loss": read_back["loss"].mean(axis=1),
              "/ranks/loss": read_back["loss"]}
    for name in ("grad_norm", "cos_to_mean"):  # each absent where the log has none
        if read_back[name] is not None:
            arrays["/ranks/" + name] = read_back[name]
    arrays.update({"/diagnostics/" + name: values for name, values in read_back["dispersion"].items()})
    return RunLog(paths[0] if len(paths) == 1 else ", ".join(paths), arrays, {}, {})


def _read_run_log(path):
    import h5py

    from ._lrkit import _bytes_short_of_allocated_end

    if os.path.isdir(path) and os.path.exists(os.path.join(path, "log.h5")):
        path = os.path.join(path, "log.h5")
    if os.path.isdir(path):  # HDF5's own words for a folder span lines and name errno 21
        raise FileNotFoundError(f"'{path}' is a folder without a run log (log.h5): give a run directory or its log")
    if not os.path.exists(path):
        raise FileNotFoundError(f"run log '{path}' does not exist")
    if not os.path.isfile(path):  # HDF5 would wait on a pipe for a writer
        raise ValueError(f"'{path}' is not a regular file (a device or pipe may never end)")
    repair = f"; if a full disk cut it short, `lrkit log repair {path}` extends it"
    # A write a full disk refused leaves the file short of the end HDF5 had allocated. HDF5 1.10 refuses it as
    # truncated; 1.14's SWMR reader opens it and reads what is there, so the check is made here for both.
    missing = _bytes_short_of_allocated_end(path)
    if missing:
        raise ValueError(f"'{path}' is not a readable HDF5 run log (truncated file: it ends {missing} bytes before the "
                         f"end HDF5 had allocated){repair}")
    try:
        handle, open_for_writing = open_hdf5(path)
    except OSError as e:
        fix = repair if "truncated file" in str(e) else ""
        raise ValueError(f"'{path}' is not a readable HDF5 run log ({e}){fix}") from None
    arrays, group_attrs = {}, {}
    with handle as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                arrays["/" + name] = obj[()]
            elif len(obj.attrs):
                group_attrs["/" + name] = {k: _text(v) for k, v in obj.attrs.items()}
        f.visititems(visit)
        attrs = {k: _text(v) for k, v in f.attrs.items()}
    return RunLog(path, arrays, attrs, group_attrs, open_for_writing)
