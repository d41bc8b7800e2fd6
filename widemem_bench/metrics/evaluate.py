"""Compute registered metrics over a per-query table, per group, with bootstrap intervals.

Experiments keep one row per query (embedder, split, kind, user, band, score, ...).
``evaluate`` turns that table into the long-format metric rows of an
``ExperimentResult``: one row per group x metric with value, 95% interval and
direction, so reports and the regression gate never recompute a figure their own way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.metrics.bootstrap import bootstrap_ci
from widemem_bench.metrics.registry import get_metric


def evaluate(
    per_query: pd.DataFrame,
    metric_names: Sequence[str],
    *,
    by: Sequence[str] = (),
    columns: Mapping[str, str] | None = None,
    cluster: str | None = "user_id",
    n_boot: int = 1000,
    seed: int = 0,
    ci: bool = True,
) -> list[dict[str, Any]]:
    """Long-format metric rows for every group of ``by`` (e.g. embedder, split).

    Each metric's declared inputs (``bands``, ``kinds``, ``scores``, ``top1_correct``,
    ``probs``, ``labels``, ``ranks``) are read from the column of the same name, or
    from ``columns[input]`` when given. ``cluster`` names the column to resample by
    (questions of one user are correlated); None or a missing column gives a plain
    row bootstrap. Rows (the column names of ``experiments.context.METRIC_COLUMNS``):
    the ``by`` keys, ``metric``, ``value``, ``ci_lo``, ``ci_hi``, ``direction``,
    ``n`` (rows in the group).
    """
    cols = dict(columns or {})
    missing_by = [c for c in by if c not in per_query.columns]
    if missing_by:
        raise ValueError(f"by names columns not in the table: {missing_by}")
    metrics = [get_metric(name) for name in metric_names]
    for m in metrics:
        absent = [cols.get(i, i) for i in m.inputs if cols.get(i, i) not in per_query.columns]
        if absent:
            raise ValueError(f"metric {m.name!r} needs columns {absent} (map them with columns=)")
    groups = per_query.groupby(list(by), sort=True, dropna=False) if by else [((), per_query)]
    rows: list[dict[str, Any]] = []
    for key, part in groups:
        keys = key if isinstance(key, tuple) else (key,)
        clusters = part[cluster].to_numpy() if cluster and cluster in part.columns else None
        for m in metrics:
            arrays = [part[cols.get(i, i)].to_numpy() for i in m.inputs]
            if ci:
                value, lo, hi = bootstrap_ci(m.name, *arrays, groups=clusters, n_boot=n_boot, seed=seed)
            else:
                value, lo, hi = m(*arrays), float("nan"), float("nan")
            rows.append(
                {
                    **dict(zip(by, keys, strict=True)),
                    "metric": m.name,
                    "value": value,
                    "ci_lo": lo,
                    "ci_hi": hi,
                    "direction": m.direction,
                    "n": len(part),
                }
            )
    return rows


def evaluate_frame(per_query: pd.DataFrame, metric_names: Sequence[str], **options: Any) -> pd.DataFrame:
    """``evaluate`` as a DataFrame."""
    rows = evaluate(per_query, metric_names, **options)
    return pd.DataFrame(rows)


def format_ci(value: float, lo: float, hi: float, *, percent: bool = True, digits: int = 1,
              unit_in_interval: bool = False) -> str:
    """'77.0% [60.1, 91.2]' style text for reports (the one interval formatter); None or NaN
    value reads 'n/a', no interval when lo or hi is missing. `unit_in_interval`:
    '77.0% [60.1%, 91.2%]'."""
    if value is None or not np.isfinite(value):
        return "n/a"
    scale, unit = (100.0, "%") if percent else (1.0, "")
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{value * scale:.{digits}f}{unit}"
    u = unit if unit_in_interval else ""
    return f"{value * scale:.{digits}f}{unit} [{lo * scale:.{digits}f}{u}, {hi * scale:.{digits}f}{u}]"
