"""Cluster-bootstrap intervals of rates and of any statistic, and a fast rank-sum AUROC.

Whole clusters (users, conversations) are resampled, because the items of one cluster
share memories. Percentile intervals, seeded; NaN when there is nothing to resample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import rankdata


def rate_ci(
    values: Any, groups: Any, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95,
    within: Any | None = None,
) -> tuple[float, float, float]:
    """(mean, lo, hi) of a 0/1 (or real) array with a percentile cluster bootstrap over ``groups``.

    Whole groups are resampled (one vectorised draw); NaN for an empty array.

    ``within`` (a boolean mask over the same rows): the share of ``within`` rows whose
    value is true, every group of ``groups`` resampled, those without a ``within`` row
    included (the calibration files' figures: a split's users, one kind's questions).
    That draw counts each group's copies as one multinomial vector per replicate (the
    stream the committed calibration files were computed with); replicates that draw
    no ``within`` row are left out.
    """
    if within is not None:
        return _rate_within(values, groups, within, n_boot=n_boot, seed=seed, level=level)
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return math.nan, math.nan, math.nan
    g = np.unique(np.asarray(groups), return_inverse=True)[1]
    num = np.bincount(g, weights=v)
    den = np.bincount(g).astype(np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, num.size, size=(n_boot, num.size))
    reps = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(reps, [tail, 100 - tail])
    return float(v.mean()), float(lo), float(hi)


def _rate_within(values: Any, groups: Any, within: Any, *, n_boot: int, seed: int,
                 level: float) -> tuple[float, float, float]:
    den = np.asarray(within, dtype=bool)
    num = np.asarray(values, dtype=bool) & den
    if not den.any():
        return math.nan, math.nan, math.nan
    u = np.unique(np.asarray(groups).astype(str), return_inverse=True)[1]
    n_u = int(u.max()) + 1
    a = np.bincount(u, weights=num.astype(float), minlength=n_u)
    b = np.bincount(u, weights=den.astype(float), minlength=n_u)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(n_u, np.full(n_u, 1.0 / n_u), size=n_boot).astype(float)
    bs = w @ b
    boot = np.where(bs > 0, (w @ a) / np.maximum(bs, 1e-12), np.nan)
    tail = round(50 * (1 - level), 12)   # 2.5 exactly at level 0.95
    lo, hi = np.nanpercentile(boot, [tail, 100 - tail])
    return float(a.sum() / b.sum()), float(lo), float(hi)


def ratio_ci(num: np.ndarray, den: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    """95% percentile interval of sum(num) / sum(den) over resampled clusters (one entry each)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, num.size, size=(n_boot, num.size))
    d = den[idx].sum(axis=1)
    reps = num[idx].sum(axis=1) / np.where(d > 0, d, 1.0)
    lo, hi = np.percentile(reps, [2.5, 97.5])
    return float(lo), float(hi)


def cluster_percentile_ci(
    fn: Callable[..., float], groups: np.ndarray, n_boot: int, seed: int, *arrays: np.ndarray
) -> tuple[float, float, float]:
    """fn(*arrays) and its 95% percentile interval over resampled whole clusters.

    For statistics without a vectorised form (AUROC, shares at a recall): each replicate
    concatenates the members of the drawn clusters. NaN interval with fewer than 2 clusters.
    """
    value = float(fn(*arrays))
    codes = np.unique(groups, return_inverse=True)[1]
    members = [np.flatnonzero(codes == g) for g in range(codes.max() + 1)]
    if len(members) < 2:
        return value, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        idx = np.concatenate([members[j] for j in rng.integers(0, len(members), len(members))])
        with np.errstate(all="ignore"):
            reps.append(fn(*(a[idx] for a in arrays)))
    arr = np.asarray(reps, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return value, float("nan"), float("nan")
    lo, hi = np.percentile(arr, [2.5, 97.5])
    return value, float(lo), float(hi)


def auroc_ranksum(scores: np.ndarray, y: np.ndarray) -> float:
    """AUROC by the Mann-Whitney rank sum (ties count one half): the same value as
    scikit-learn's, fast enough to recompute for every bootstrap replicate."""
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
