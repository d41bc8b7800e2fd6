"""Metric registry (name, direction, description) and bootstrap confidence intervals.

Importing the package registers every metric. Typical use::

    from widemem_bench.metrics import compute, with_ci
    compute("recall_moderate_plus", bands, kinds)
    with_ci("false_confidence_hard_negative", bands, kinds, groups=user_ids, seed=0)
"""

from widemem_bench.metrics.bootstrap import bootstrap_ci, bootstrap_replicates, with_ci
from widemem_bench.metrics.confidence import (
    ANSWERABLE,
    BAND_NAMES,
    NEGATIVE_KINDS,
    answerable_mask,
    band_precision,
    band_share,
    band_share_table,
    false_confidence,
    recall_at_band,
    recall_at_band_top1,
)
from widemem_bench.metrics.evaluate import evaluate, evaluate_frame, format_ci
from widemem_bench.metrics.forgetting import per_total, share
from widemem_bench.metrics.ranking import gold_ranks, gold_ranks_from_sets, hit_at_k, mrr
from widemem_bench.metrics.registry import (
    METRICS,
    Metric,
    compute,
    get_metric,
    metric_table,
    register,
)
from widemem_bench.metrics.selective import (
    adaptive_ece,
    aurc,
    auroc,
    brier,
    e_aurc,
    risk_coverage,
)

__all__ = [
    "ANSWERABLE",
    "BAND_NAMES",
    "METRICS",
    "NEGATIVE_KINDS",
    "Metric",
    "adaptive_ece",
    "answerable_mask",
    "aurc",
    "auroc",
    "band_precision",
    "band_share",
    "band_share_table",
    "bootstrap_ci",
    "bootstrap_replicates",
    "brier",
    "compute",
    "e_aurc",
    "evaluate",
    "evaluate_frame",
    "false_confidence",
    "format_ci",
    "get_metric",
    "gold_ranks",
    "gold_ranks_from_sets",
    "hit_at_k",
    "metric_table",
    "mrr",
    "per_total",
    "recall_at_band",
    "recall_at_band_top1",
    "register",
    "risk_coverage",
    "share",
    "with_ci",
]
