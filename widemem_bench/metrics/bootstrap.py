"""Percentile bootstrap confidence intervals for any registered metric.

Rows (questions) are resampled with replacement. With ``groups`` (e.g. the user
id), whole groups are resampled instead: a cluster bootstrap, because the
questions of one user share memories and an embedder's quirks and are not
independent, so row resampling would give intervals that are too narrow.

Ratio metrics (recall, false confidence, precision, hit@k, MRR, Brier) are
resampled in one vectorised step from their per-row numerator and denominator
terms; AUROC and AURC take a matrix of bootstrap counts at once; the rest
(adaptive ECE) is recomputed per replicate. Replicates where
the metric is undefined (e.g. no hard negative drawn) are dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from widemem_bench.metrics.registry import Metric, get_metric

# Rows of the (replicates x items) index matrix drawn at once; bounds memory for big splits.
_CHUNK_CELLS = 4_000_000


def _as_arrays(arrays: tuple[Any, ...]) -> list[np.ndarray]:
    out = [np.asarray(a) for a in arrays]
    if not out:
        raise ValueError("at least one array is needed to bootstrap a metric")
    n = out[0].shape[0]
    for i, a in enumerate(out):
        if a.shape[0] != n:
            raise ValueError(f"array {i} has {a.shape[0]} rows, expected {n} like array 0")
    return out


def _replicates_ratio(
    num: np.ndarray, den: np.ndarray, codes: np.ndarray | None, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    if codes is not None:
        n_groups = int(codes.max()) + 1
        num = np.bincount(codes, weights=num, minlength=n_groups)
        den = np.bincount(codes, weights=den, minlength=n_groups)
    m = num.size
    per_chunk = max(1, _CHUNK_CELLS // max(m, 1))
    out = np.empty(n_boot)
    for start in range(0, n_boot, per_chunk):
        stop = min(n_boot, start + per_chunk)
        idx = rng.integers(0, m, size=(stop - start, m))
        tn = num[idx].sum(axis=1)
        td = den[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = np.where(td > 0, tn / np.where(td > 0, td, 1.0), np.nan)
    return out


def _replicates_weighted(
    metric: Metric,
    arrays: list[np.ndarray],
    codes: np.ndarray | None,
    n_boot: int,
    rng: np.random.Generator,
    params: dict[str, Any],
) -> np.ndarray:
    n = arrays[0].shape[0]
    units = int(codes.max()) + 1 if codes is not None else n
    per_chunk = max(1, _CHUNK_CELLS // max(n, 1))
    out = np.empty(n_boot)
    for start in range(0, n_boot, per_chunk):
        stop = min(n_boot, start + per_chunk)
        # Draw `units` with replacement per replicate, then count the draws (one bincount for all rows).
        reps = stop - start
        draws = rng.integers(0, units, size=(reps, units)) + (np.arange(reps) * units)[:, None]
        counts = np.bincount(draws.ravel(), minlength=reps * units).reshape(reps, units).astype(float)
        if codes is not None:
            counts = counts[:, codes]  # every question of a drawn user weighs that user's count
        values = metric.weighted_values(counts, *arrays, **params)
        assert values is not None
        out[start:stop] = values
    return out


def _replicates_loop(
    metric: Metric,
    arrays: list[np.ndarray],
    codes: np.ndarray | None,
    n_boot: int,
    rng: np.random.Generator,
    params: dict[str, Any],
) -> np.ndarray:
    n = arrays[0].shape[0]
    members: list[np.ndarray] = []
    if codes is not None:
        order = np.argsort(codes, kind="stable")
        members = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1)
    out = np.empty(n_boot)
    idx: np.ndarray
    for b in range(n_boot):
        if codes is None:
            idx = np.asarray(rng.integers(0, n, size=n))
        else:
            picks = rng.integers(0, len(members), size=len(members))
            idx = np.concatenate([members[g] for g in picks])
        try:
            out[b] = metric(*(a[idx] for a in arrays), **params)
        except ValueError:
            out[b] = np.nan
    return out


def bootstrap_replicates(
    metric_name: str,
    *arrays: Any,
    groups: Any = None,
    n_boot: int = 1000,
    seed: int = 0,
    **params: Any,
) -> np.ndarray:
    """The ``n_boot`` bootstrap values of a metric (NaN where undefined), reproducible from ``seed``."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    metric = get_metric(metric_name)
    arrs = _as_arrays(arrays)
    codes = None
    if groups is not None:
        g = np.asarray(groups)
        if g.shape[0] != arrs[0].shape[0]:
            raise ValueError(f"groups has {g.shape[0]} rows, expected {arrs[0].shape[0]}")
        codes = np.unique(g, return_inverse=True)[1].astype(np.intp)
    rng = np.random.default_rng(seed)
    terms = metric.ratio_terms(*arrs, **params)
    if terms is not None:
        return _replicates_ratio(terms[0], terms[1], codes, n_boot, rng)
    if metric.weighted is not None:
        return _replicates_weighted(metric, arrs, codes, n_boot, rng, params)
    return _replicates_loop(metric, arrs, codes, n_boot, rng, params)


def bootstrap_ci(
    metric_name: str,
    *arrays: Any,
    groups: Any = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    **params: Any,
) -> tuple[float, float, float]:
    """(value, lo, hi): the metric on all rows and its percentile bootstrap interval at ``level``."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    _as_arrays(arrays)  # a row-count mismatch is named before the metric trips over it
    value = get_metric(metric_name)(*arrays, **params)
    if np.isnan(value):
        return value, float("nan"), float("nan")
    reps = bootstrap_replicates(metric_name, *arrays, groups=groups, n_boot=n_boot, seed=seed, **params)
    reps = reps[~np.isnan(reps)]
    if reps.size == 0:
        return value, float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(reps, [tail, 100 - tail])
    return value, float(lo), float(hi)


def with_ci(
    metric_name: str,
    *arrays: Any,
    groups: Any = None,
    seed: int = 0,
    n_boot: int = 1000,
    **params: Any,
) -> tuple[float, float, float]:
    """(value, lo, hi) with a 95% percentile bootstrap interval; ``groups`` = cluster bootstrap."""
    return bootstrap_ci(metric_name, *arrays, groups=groups, n_boot=n_boot, seed=seed, **params)
