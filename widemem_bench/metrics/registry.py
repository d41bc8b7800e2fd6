"""Metric registry: every metric has a name, a direction and a one-line description.

In the spirit of ann-benchmarks / MTEB, experiments never hard-code how a figure
is computed: they look it up by name here, so reports, regression gates and
bootstrap intervals all agree on the definition and on which way is better.

A metric is a plain function of numpy arrays that share their first axis (one
row per question), plus keyword parameters. A metric that is a ratio of two
per-question sums may also give ``ratio``: a function returning the numerator
and denominator terms per question, which lets the bootstrap resample all
replicates at once instead of calling the metric 1000 times. Other metrics may
give ``weighted``: the metric for a (replicates x questions) matrix of bootstrap
counts at once (a question drawn twice weighs 2), which must equal the metric on
the resampled rows.

``min_effect`` is the smallest change of a metric that matters (absolute, in the
metric's units): the regression gate fails only on a change beyond it whose
paired bootstrap interval excludes 0 (``widemem_bench.regression``). None: the
metric is not gated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

Direction = Literal["higher", "lower"]
MetricFn = Callable[..., float]
RatioFn = Callable[..., tuple[np.ndarray, np.ndarray]]
WeightedFn = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Metric:
    """One registered metric.

    ``params`` are fixed keyword arguments baked into this entry (e.g. ``k=5`` for
    ``hit@5``), so one function can back several named metrics.
    """

    name: str
    direction: Direction
    description: str
    fn: MetricFn
    inputs: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    ratio: RatioFn | None = None
    weighted: WeightedFn | None = None
    min_effect: float | None = None

    def __call__(self, *arrays: Any, **params: Any) -> float:
        return float(self.fn(*arrays, **{**self.params, **params}))

    def ratio_terms(self, *arrays: Any, **params: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """Per-question (numerator, denominator) terms, or None for non-ratio metrics."""
        if self.ratio is None:
            return None
        num, den = self.ratio(*arrays, **{**self.params, **params})
        return np.asarray(num, dtype=float), np.asarray(den, dtype=float)

    def weighted_values(self, counts: np.ndarray, *arrays: Any, **params: Any) -> np.ndarray | None:
        """The metric for each row of bootstrap ``counts`` (replicates x questions), or None."""
        if self.weighted is None:
            return None
        return np.asarray(self.weighted(counts, *arrays, **{**self.params, **params}), dtype=float)

    def better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than ``b`` under this metric's direction."""
        return a > b if self.direction == "higher" else a < b


METRICS: dict[str, Metric] = {}


def register(
    name: str,
    fn: MetricFn,
    *,
    direction: Direction,
    description: str,
    inputs: tuple[str, ...],
    ratio: RatioFn | None = None,
    weighted: WeightedFn | None = None,
    min_effect: float | None = None,
    **params: Any,
) -> Metric:
    """Add a metric to the registry; a name may be registered only once."""
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', got {direction!r} for metric {name!r}")
    if name in METRICS:
        raise ValueError(f"metric {name!r} is already registered")
    if min_effect is not None and not (min_effect > 0):
        raise ValueError(f"min_effect must be > 0 or None, got {min_effect!r} for metric {name!r}")
    metric = Metric(name, direction, description, fn, inputs, dict(params), ratio, weighted, min_effect)
    METRICS[name] = metric
    return metric


def get_metric(name: str) -> Metric:
    """Look a metric up by name; unknown names list the known ones."""
    try:
        return METRICS[name]
    except KeyError:
        known = ", ".join(sorted(METRICS))
        raise ValueError(f"unknown metric {name!r}; known metrics: {known}") from None


def compute(name: str, *arrays: Any, **params: Any) -> float:
    """Compute a registered metric by name."""
    return get_metric(name)(*arrays, **params)


def metric_table() -> pd.DataFrame:
    """The registry as a table (name, direction, inputs, description), for docs and reports."""
    rows = [
        {
            "name": m.name,
            "direction": m.direction,
            "inputs": ", ".join(m.inputs),
            "description": m.description,
            "min_effect": m.min_effect,
        }
        for m in METRICS.values()
    ]
    return pd.DataFrame(rows, columns=["name", "direction", "inputs", "description", "min_effect"])
