"""The one result format: a long-format metric row (`metric_row`, MTEB / lm-eval style)
and what an experiment returns (`ExperimentResult`). Every experiment, the peer comparison
and `aggregate` use these; `experiments.context` re-exports them for the run layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

# Columns every metric row carries; experiments may add more (e.g. `decay`, `rate`).
METRIC_COLUMNS = ("metric", "value", "ci_lo", "ci_hi", "embedder", "split", "kind", "setting")


def metric_row(
    metric: str,
    value: float,
    ci: tuple[float, float] | None = None,
    *,
    embedder: str | None = None,
    split: str = "all",
    kind: str = "all",
    setting: str = "default",
    **extra: Any,
) -> dict[str, Any]:
    """One long-format metric row (MTEB / lm-eval style); NaN CI when none was computed."""
    lo, hi = ci if ci is not None else (float("nan"), float("nan"))
    row: dict[str, Any] = {
        "metric": metric,
        "value": float(value),
        "ci_lo": float(lo),
        "ci_hi": float(hi),
        "embedder": embedder,
        "split": split,
        "kind": kind,
        "setting": setting,
    }
    row.update(extra)
    return row


@dataclass
class ExperimentResult:
    """What an experiment returns; `records.write_run` turns it into files.

    metrics:   long-format rows (see `metric_row`), one per metric x slice.
    per_query: one row per question (or per scored item) with everything a plot needs.
    tables:    further named tables (e.g. "age_curve"); each is saved as <name>.parquet
               in the run folder and listed in record.json.
    artifacts: files the experiment wrote itself (calibration JSON, markdown fragments).
    """

    metrics: list[dict[str, Any]] = field(default_factory=list)
    per_query: pd.DataFrame | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    artifacts: dict[str, Path] = field(default_factory=dict)
