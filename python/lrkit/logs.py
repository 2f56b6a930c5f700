"""Run logs (``DIR/log.h5``) as NumPy arrays and pandas DataFrames.

A log that is still being written, and one whose writer was killed, open too:
the file is opened read-only in SWMR mode.
"""
import os

__all__ = ["RunLog", "read_log"]


class RunLog:
    """Every dataset of a run log by path, its attributes, and a DataFrame per group.

    ``log.arrays["/train/loss"]`` is a NumPy array; ``log.frame("train")`` is a
    pandas DataFrame of the group's per-step series (matrices such as
    ``/ranks/loss`` [step, rank] become columns ``loss_0``, ``loss_1``, ...);
    ``log.config`` holds every effective configuration value (``/config``) as text.
    """

    def __init__(self, path, arrays, attrs, group_attrs):
        self.path = path
        self.arrays = arrays
        self.attrs = attrs
        self.group_attrs = group_attrs

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

    def groups(self):
        return sorted({name.rsplit("/", 1)[0].lstrip("/") for name in self.arrays if name.count("/") >= 2})

    def frame(self, group):
        import pandas

        prefix = "/" + group.strip("/") + "/"
        columns = {}
        for name, values in self.arrays.items():
            if not name.startswith(prefix) or "/" in name[len(prefix):]:
                continue
            column = name[len(prefix):]
            if values.ndim == 1:
                columns[column] = values
            elif values.ndim == 2:
                for j in range(values.shape[1]):
                    columns[f"{column}_{j}"] = values[:, j]
        if not columns:
            raise KeyError(f"run log '{self.path}' has no series under {prefix}")
        lengths = {len(v) for v in columns.values()}
        if len(lengths) != 1:
            raise ValueError(f"run log '{self.path}': the series under {prefix} have different lengths {sorted(lengths)} "
                             "(a flush under way, or cut short by a kill: lrkit log repair cuts its rows once no run writes the log); "
                             "read them from .arrays")
        return pandas.DataFrame(columns)


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def read_log(path):
    """Reads a run log; raises FileNotFoundError or ValueError naming the file."""
    import h5py

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"run log '{path}' does not exist")
    try:
        handle = h5py.File(path, "r", swmr=True)
    except OSError as e:
        raise ValueError(f"'{path}' is not a readable HDF5 run log ({e})") from None
    arrays, group_attrs = {}, {}
    with handle as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                arrays["/" + name] = obj[()]
            elif len(obj.attrs):
                group_attrs["/" + name] = {k: _text(v) for k, v in obj.attrs.items()}
        f.visititems(visit)
        attrs = {k: _text(v) for k, v in f.attrs.items()}
    return RunLog(path, arrays, attrs, group_attrs)
