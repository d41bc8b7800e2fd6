"""Recency factor of a memory from its age, as widemem 2.0.2 computes it.

Ages are in days (float). A negative age (a memory stamped after ``now``, which
happens when clocks disagree) counts as age 0, as in widemem. The factor is in
[0, 1]; 1.0 means "as fresh as possible".
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np

# widemem 2.0.2's decay, defined once (engine.config re-exports it): exp(-0.01 * days).
WIDEMEM_DECAY: tuple[str, float] = ("exponential", 0.01)

DECAY_FUNCTIONS: tuple[str, ...] = ("exponential", "linear", "step", "none")

# widemem's step schedule: (upper bound in days, exclusive; factor). Older than
# the last bound gets STEP_FLOOR. Bounds are strict (< 7, < 30, < 90): a memory
# exactly 7 days old already reads 0.7.
STEP_SCHEDULE: tuple[tuple[float, float], ...] = ((7.0, 1.0), (30.0, 0.7), (90.0, 0.4))
STEP_FLOOR = 0.1


def validate_decay(decay_function: str, decay_rate: float) -> tuple[str, float]:
    """Check a decay setting; returns (function name, rate as float)."""
    name = str(getattr(decay_function, "value", decay_function))
    if name not in DECAY_FUNCTIONS:
        raise ValueError(
            f"decay_function must be one of {', '.join(DECAY_FUNCTIONS)}, got {decay_function!r}"
        )
    try:
        rate = float(decay_rate)
    except (TypeError, ValueError):
        raise ValueError(f"decay_rate must be a number, got {decay_rate!r}") from None
    if not math.isfinite(rate) or rate < 0:
        raise ValueError(f"decay_rate must be finite and >= 0, got {decay_rate!r}")
    return name, rate


def _scalar(age: float, name: str, rate: float) -> float:
    # One formula: a scalar is a one-element array (the engine and the batch score arrays).
    if math.isnan(age):
        raise ValueError("age_days must not be NaN")
    return float(_array(np.array([age], dtype=np.float64), name, rate)[0])


def _array(age: np.ndarray, name: str, rate: float) -> np.ndarray:
    # NaN ages stay NaN: in batched scoring they mark absent candidates.
    nan = np.isnan(age)
    a = np.where(age < 0.0, 0.0, age)
    if name == "none":
        out = np.ones_like(a)
    elif name == "exponential":
        out = decay(a, name, rate)  # the one exponential (the engine's and the batch's call)
    elif name == "linear":
        out = np.maximum(1.0 - rate * a, 0.0)
    else:
        out = np.full_like(a, STEP_FLOOR)
        # Walk the schedule from the widest bound inwards so the narrowest wins.
        for bound, factor in reversed(STEP_SCHEDULE):
            out = np.where(a < bound, factor, out)
    if nan.any():
        out = np.where(nan, np.nan, out)
    return out


@overload
def compute_recency(age_days: float, decay_function: str, decay_rate: float = ...) -> float: ...
@overload
def compute_recency(
    age_days: np.ndarray, decay_function: str, decay_rate: float = ...
) -> np.ndarray: ...


def compute_recency(
    age_days: float | np.ndarray, decay_function: str, decay_rate: float = WIDEMEM_DECAY[1]
) -> float | np.ndarray:
    """Recency factor in [0, 1] for an age in days.

    - exponential: ``exp(-rate * days)`` (half-life ``ln 2 / rate``, ~69.3 days at 0.01)
    - linear: ``max(1 - rate * days, 0)``
    - step: under 7 days 1.0, under 30 days 0.7, under 90 days 0.4, else 0.1
    - none: 1.0

    A Python or numpy scalar gives a ``float``; an array gives a float64 array
    of the same shape (NaN entries stay NaN). ``decay_rate`` is ignored by
    ``step`` and ``none`` but must still be finite and >= 0.
    """
    name, rate = validate_decay(decay_function, decay_rate)
    if isinstance(age_days, np.ndarray) and age_days.ndim > 0:
        return _array(age_days.astype(np.float64, copy=False), name, rate)
    if isinstance(age_days, (list, tuple)):
        return _array(np.asarray(age_days, dtype=np.float64), name, rate)
    try:
        age = float(age_days)
    except (TypeError, ValueError):
        raise ValueError(f"age_days must be a number or an array, got {age_days!r}") from None
    return _scalar(age, name, rate)


def decay(age_days: np.ndarray, name: str, rate: float) -> np.ndarray:
    """``compute_recency`` of a float64 age array for a setting ``validate_decay`` has
    already accepted (``EngineConfig`` checks it once; a search need not again)."""
    if name == "exponential":
        # _array's exponential in two steps: NaN passes through maximum and exp as it
        # passes through its where, and a -0.0 age gives exp(0.0) either way.
        return np.exp(-rate * np.maximum(age_days, 0.0))
    return _array(age_days, name, rate)


def half_life_days(decay_rate: float) -> float:
    """Age in days at which exponential recency falls to 0.5 (inf for rate 0)."""
    _, rate = validate_decay("exponential", decay_rate)
    return math.inf if rate == 0 else math.log(2.0) / rate
