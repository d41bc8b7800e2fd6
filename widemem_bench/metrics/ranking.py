"""Retrieval metrics of the gold memory: rank of gold, hit@k, MRR.

Everything works on a rank array: the 1-based rank of the first gold memory per
query, ``inf`` when no gold memory was retrieved. ``gold_ranks`` builds it from a
(queries x k) matrix of ranked ids without a Python loop per query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from widemem_bench.metrics.registry import register


def gold_ranks(ranked_ids: Any, gold: Any) -> np.ndarray:
    """1-based rank of the first gold id in each row of ``ranked_ids``; inf when absent.

    ``ranked_ids`` is a (queries x k) array (pad short rows with any id that is never
    gold, e.g. -1 or None). ``gold`` is either one id per query (1-D, length = queries)
    or a (queries x g) array of gold ids padded the same way (several gold memories,
    e.g. two facts that both answer the question).
    """
    ranked = np.asarray(ranked_ids)
    if ranked.ndim != 2:
        raise ValueError(f"ranked_ids must be 2-D (queries x k), got shape {ranked.shape}")
    g = np.asarray(gold)
    if g.ndim == 1:
        g = g[:, None]
    if g.ndim != 2 or g.shape[0] != ranked.shape[0]:
        raise ValueError(f"gold must have one row per query ({ranked.shape[0]}), got shape {np.asarray(gold).shape}")
    # (queries, k, g) comparison; None padding never equals a real id.
    match = (ranked[:, :, None] == g[:, None, :]).any(axis=2)
    found = match.any(axis=1)
    ranks = np.full(ranked.shape[0], np.inf)
    ranks[found] = match[found].argmax(axis=1) + 1
    return ranks


def gold_ranks_from_sets(ranked_ids: Sequence[Sequence[Any]], gold: Sequence[Any]) -> np.ndarray:
    """``gold_ranks`` for ragged Python lists: rows of ranked ids and a gold id or set per query."""
    if len(ranked_ids) != len(gold):
        raise ValueError(f"gold must have one entry per query ({len(ranked_ids)}), got {len(gold)}")
    ranks = np.full(len(ranked_ids), np.inf)
    for i, (row, g) in enumerate(zip(ranked_ids, gold, strict=True)):
        wanted = set(g) if isinstance(g, set | frozenset | list | tuple) else {g}
        for pos, item in enumerate(row):
            if item in wanted:
                ranks[i] = pos + 1
                break
    return ranks


def _ranks(ranks: Any) -> np.ndarray:
    r = np.asarray(ranks, dtype=float)
    if r.ndim != 1:
        raise ValueError(f"ranks must be a 1-D array, got shape {r.shape}")
    if r.size and np.nanmin(r) < 1:
        raise ValueError("ranks must be 1-based (>= 1) or inf for absent")
    return r


def hit_terms(ranks: Any, *, k: int) -> tuple[np.ndarray, np.ndarray]:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    r = _ranks(ranks)
    return (r <= k).astype(float), np.ones_like(r)


def hit_at_k(ranks: Any, *, k: int) -> float:
    """Share of queries with a gold memory in the top ``k``."""
    num, den = hit_terms(ranks, k=k)
    return float(num.mean()) if den.size else float("nan")


def mrr_terms(ranks: Any, *, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    r = _ranks(ranks)
    rr = 1.0 / r  # 1/inf = 0: an absent gold memory scores 0
    if k is not None:
        rr = np.where(r <= k, rr, 0.0)
    return rr, np.ones_like(r)


def mrr(ranks: Any, *, k: int | None = None) -> float:
    """Mean reciprocal rank of the first gold memory (0 when absent, or beyond ``k`` if given)."""
    num, den = mrr_terms(ranks, k=k)
    return float(num.mean()) if den.size else float("nan")


for _k in (1, 3, 5, 10):
    register(
        f"hit@{_k}",
        hit_at_k,
        ratio=hit_terms,
        direction="higher",
        description=f"share of queries with a gold memory in the top {_k}",
        inputs=("ranks",),
        k=_k,
        min_effect=0.02 if _k == 1 else None,
    )
register(
    "mrr",
    mrr,
    ratio=mrr_terms,
    direction="higher",
    description="mean reciprocal rank of the first gold memory (0 when not retrieved)",
    inputs=("ranks",),
    min_effect=0.02,
)
register(
    "mrr@10",
    mrr,
    ratio=mrr_terms,
    direction="higher",
    description="mean reciprocal rank of the first gold memory, 0 beyond rank 10",
    inputs=("ranks",),
    k=10,
)
