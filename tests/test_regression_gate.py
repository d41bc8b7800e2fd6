"""Regression gate: recompute the headline metrics of the small configuration against
reports/baseline/metrics.json and fail when one got worse beyond its tolerance.

A change that moves them on purpose runs `make golden` and commits the new baseline
with the change (README, "Regression loop").
"""

from __future__ import annotations

import math

import pytest

from widemem_bench import regression


def _baseline(**values: tuple[float, str]) -> dict:
    return {"metrics": {k: {"value": v, "direction": d, "tolerance": 0.01} for k, (v, d) in values.items()}}


def test_compare_respects_direction_and_tolerance() -> None:
    base = _baseline(**{"a/recall_moderate_plus": (0.80, "higher"), "a/false_confidence_hard_negative": (0.10, "lower")})
    assert regression.compare(base, {"a/recall_moderate_plus": 0.795, "a/false_confidence_hard_negative": 0.105}) == []
    # Better in either direction is never a failure (but is reported as a stale baseline).
    better = {"a/recall_moderate_plus": 0.90, "a/false_confidence_hard_negative": 0.02}
    assert regression.compare(base, better) == []
    assert len(regression.improvements(base, better)) == 2
    worse = regression.compare(base, {"a/recall_moderate_plus": 0.78, "a/false_confidence_hard_negative": 0.12})
    assert len(worse) == 2 and "recall_moderate_plus: 0.8000 -> 0.7800" in worse[0]
    assert "missing" in regression.compare(base, {"a/recall_moderate_plus": 0.8})[0]
    assert regression.compare(_baseline(x=(math.nan, "higher")), {"x": 0.5})


def test_directions_come_from_the_metric_registry() -> None:
    assert regression.direction("widemem/recall_moderate_plus") == "higher"
    assert regression.direction("answerability/false_confidence_hard_negative") == "lower"
    assert regression.direction("retrieval/mrr") == "higher"


@pytest.mark.models
def test_headline_metrics_have_not_regressed() -> None:
    baseline = regression.load_baseline()
    assert baseline["config"]["dataset"] == "timelines_small" and baseline["config"]["embedder"] == "minilm-l6"
    current = regression.headline(baseline["config"])
    assert set(current) == set(baseline["metrics"])
    failures = regression.compare(baseline, current)
    assert not failures, "headline metrics regressed (if intended: make golden):\n" + "\n".join(failures)
