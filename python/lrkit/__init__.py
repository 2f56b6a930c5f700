"""lrkit: learning-rate schedules and training dynamics.

The schedules are lrkit's C++ library (the same values as `lrkit schedule`, bit
for bit); ``lrkit.torch`` puts them into PyTorch training loops.

    >>> import lrkit
    >>> s = lrkit.Schedule("wsd(peak=3e-4, warmup=2%, decay=20%)", total_steps=1000)
    >>> s(500), s.values(range(3))
"""
from ._lrkit import (  # noqa: F401
    DecayBranch,
    DecayBranches,
    Hdet,
    HdetConfig,
    HdetState,
    Schedule,
    SpecError,
    SpikeDetector,
    __version__,
    decay_branches,
    families,
    fit_schedule,
    read_series,
    refine_multipliers,
    sample_weights,
    spec_word,
    weight_stats,
)
from .diagnosis import Diagnosis, diagnose  # noqa: F401
from .logs import RunLog, read_log  # noqa: F401

__all__ = ["Schedule", "SpecError", "decay_branches", "DecayBranches", "DecayBranch", "families", "refine_multipliers",
           "read_series", "fit_schedule", "spec_word", "sample_weights", "weight_stats", "read_log", "RunLog",
           "diagnose", "Diagnosis",
           "Hdet", "HdetConfig", "HdetState", "SpikeDetector", "__version__"]
