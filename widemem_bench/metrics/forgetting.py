"""Metrics of what a memory forgets: stale facts that survive, false updates, YMYL reach.

Each is a ratio of per-row terms (so the bootstrap and the regression gate resample
users in one vectorised step):

- ``stale_survival``: per stale probe, 1 when a stale memory of the slot is in the
  top k or outranks the current one (``experiments.contradiction.probe_outcomes``);
- ``false_update_rate``: per user, false UPDATE / DELETE actions over facts ingested;
- ``ymyl_survival``: per strong-YMYL target question, 1 when its fact is in reach
  (top k) after N quiet days (``experiments.ymyl_decay``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from widemem_bench.metrics.registry import register


def share_terms(values: Any) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=float)
    return v, np.ones_like(v)


def count_terms(counts: Any, totals: Any) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(counts, dtype=float), np.asarray(totals, dtype=float)


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    d = float(den.sum())
    return float(num.sum()) / d if d > 0 else float("nan")


def share(values: Any) -> float:
    return _ratio(*share_terms(values))


def per_total(counts: Any, totals: Any) -> float:
    return _ratio(*count_terms(counts, totals))


register(
    "stale_survival",
    share,
    ratio=share_terms,
    direction="lower",
    description="share of stale probes where a stale memory is in the top k or outranks the current one",
    inputs=("survival",),
    min_effect=0.03,
)
register(
    "false_update_rate",
    per_total,
    ratio=count_terms,
    direction="lower",
    description="UPDATE / DELETE actions whose old memory was not contradicted, per fact ingested",
    inputs=("false_updates", "facts"),
    min_effect=0.005,
)
register(
    "ymyl_survival",
    share,
    ratio=share_terms,
    direction="higher",
    description="share of strong-YMYL facts still in reach (top k) of their question after N quiet days",
    inputs=("in_reach",),
    min_effect=0.03,
)
