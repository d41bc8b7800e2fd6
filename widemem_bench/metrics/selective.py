"""Score quality: AUROC and AURC of answerability, adaptive ECE and Brier score.

``scores`` is any per-question confidence score (top-1 cosine, a margin, a
calibrated probability); higher means "more likely answerable".

AURC (Geifman et al. 2019) is the area under the risk-coverage curve: sort the
questions by score, most confident first; the risk at coverage k/n is the share of
"bad" questions among the top k; AURC is the mean of that risk over k = 1..n.
Two choices of "bad" are registered:

- ``aurc``: bad = not answerable (risk = 1 - answerable). It asks "does the score
  tell stored answers from unstored ones", which is what the confidence band is for.
- ``aurc_top1``: bad = the top-1 memory is not a gold memory (risk = top-1 wrong,
  unanswerable questions always wrong). It asks "when we answer, is it the right
  memory", the selective-retrieval view.

Tied scores are one threshold, so the risk at every position inside a tie block is
the risk at the block's end; the result does not depend on the order of ties.
E-AURC subtracts the AURC of an oracle that ranks every good question first, so 0
is perfect whatever the base rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import digamma
from sklearn.metrics import brier_score_loss, roc_auc_score

from widemem_bench.metrics.confidence import answerable_mask
from widemem_bench.metrics.registry import register


def _scores(scores: Any) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"scores must be a 1-D array, got shape {s.shape}")
    if np.isnan(s).any():
        raise ValueError("scores must not contain NaN")
    return s


def auroc(scores: Any, kinds: Any) -> float:
    """AUROC of answerable vs not answerable given ``scores``; NaN when only one class is present."""
    s = _scores(scores)
    y = answerable_mask(kinds)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, s))


def risk_coverage(scores: Any, good: Any) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, risk) at every k = 1..n, questions sorted by score descending, ties as one block."""
    s = _scores(scores)
    ok = np.asarray(good, dtype=bool)
    n = s.size
    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    errors = np.cumsum(~ok[order])
    k = np.arange(1, n + 1)
    # Last index of each tie block, broadcast back to every member of the block.
    block_end = np.searchsorted(-s_sorted, -s_sorted, side="right") - 1
    risk = errors[block_end] / (block_end + 1)
    return k / n, risk


def aurc(scores: Any, good: Any) -> float:
    """Area under the risk-coverage curve (mean risk over coverages 1/n..1); lower is better."""
    s = _scores(scores)
    if s.size == 0:
        return float("nan")
    _, risk = risk_coverage(s, good)
    return float(risk.mean())


def e_aurc(scores: Any, good: Any) -> float:
    """Excess AURC: AURC minus the AURC of the perfect ranking (good questions first)."""
    ok = np.asarray(good, dtype=bool)
    n = ok.size
    if n == 0:
        return float("nan")
    # The oracle's risk at coverage k/n: no error until every good question is taken.
    k = np.arange(1, n + 1)
    oracle = float((np.maximum(k - int(ok.sum()), 0) / k).mean())
    return aurc(scores, ok) - oracle


def aurc_answerable(scores: Any, kinds: Any) -> float:
    return aurc(scores, answerable_mask(kinds))


def e_aurc_answerable(scores: Any, kinds: Any) -> float:
    return e_aurc(scores, answerable_mask(kinds))


def aurc_top1(scores: Any, top1_correct: Any) -> float:
    return aurc(scores, np.asarray(top1_correct, dtype=bool))


def e_aurc_top1(scores: Any, top1_correct: Any) -> float:
    return e_aurc(scores, np.asarray(top1_correct, dtype=bool))


def _probs(probs: Any) -> np.ndarray:
    p = _scores(probs)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError("probs must lie in [0, 1]")
    return p


def adaptive_ece(probs: Any, labels: Any, *, n_bins: int = 15) -> float:
    """Adaptive (equal-mass) expected calibration error.

    Questions sorted by probability are cut into ``n_bins`` bins of (nearly) equal
    size; ECE = sum over bins of |mean prob - mean label| weighted by bin size.
    Equal mass keeps every bin populated, unlike equal-width bins when the
    probabilities cluster (Nixon et al. 2019).
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    p = _probs(probs)
    y = np.asarray(labels, dtype=float)
    if p.size == 0:
        return float("nan")
    order = np.argsort(p, kind="stable")
    total = 0.0
    for idx in np.array_split(order, min(n_bins, p.size)):
        total += abs(p[idx].mean() - y[idx].mean()) * idx.size
    return total / p.size


def brier(probs: Any, labels: Any) -> float:
    """Brier score: mean squared error of the probability against the 0/1 label."""
    p = _probs(probs)
    if p.size == 0:
        return float("nan")
    return float(brier_score_loss(np.asarray(labels, dtype=int), p))


# --- bootstrap-count (weighted) forms: one value per row of a (replicates x n) count matrix ---


def _tie_blocks(sorted_scores: np.ndarray) -> np.ndarray:
    """Start index of each run of equal scores in a sorted array."""
    return np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def auroc_weighted(counts: np.ndarray, scores: Any, kinds: Any) -> np.ndarray:
    """AUROC per replicate (Mann-Whitney with half credit for ties, as sklearn)."""
    s = _scores(scores)
    y = answerable_mask(kinds)
    order = np.argsort(s, kind="stable")
    starts = _tie_blocks(s[order])
    w = counts[:, order]
    pos = np.add.reduceat(w * y[order], starts, axis=1)
    neg = np.add.reduceat(w * ~y[order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    num = (pos * (below + 0.5 * neg)).sum(axis=1)
    return _safe_div(num, pos.sum(axis=1) * neg.sum(axis=1))


def aurc_weighted(counts: np.ndarray, scores: Any, good: Any) -> np.ndarray:
    """AURC per replicate; copies of one question are ties, as in ``risk_coverage``."""
    s = _scores(scores)
    ok = np.asarray(good, dtype=bool)
    order = np.argsort(-s, kind="stable")
    starts = _tie_blocks(-s[order])
    w = counts[:, order]
    c = np.add.reduceat(w, starts, axis=1)
    e = np.add.reduceat(w * ~ok[order], starts, axis=1)
    risk = _safe_div(np.cumsum(e, axis=1), np.cumsum(c, axis=1))
    return _safe_div(np.nansum(c * risk, axis=1), counts.sum(axis=1))


def e_aurc_weighted(counts: np.ndarray, scores: Any, good: Any) -> np.ndarray:
    ok = np.asarray(good, dtype=bool)
    n = counts.sum(axis=1)
    g = counts @ ok.astype(float)
    # Oracle AURC: sum_{k=g+1..n} (1 - g/k) / n, with harmonic numbers via digamma.
    oracle = _safe_div((n - g) - g * (digamma(n + 1) - digamma(g + 1)), n)
    return aurc_weighted(counts, scores, ok) - oracle


def brier_terms(probs: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    p = _probs(probs)
    err = (p - np.asarray(labels, dtype=float)) ** 2
    return err, np.ones_like(err)


register(
    "auroc",
    auroc,
    weighted=auroc_weighted,
    direction="higher",
    description="AUROC of answerable vs not answerable given the score",
    inputs=("scores", "kinds"),
    min_effect=0.01,
)
register(
    "aurc",
    aurc_answerable,
    weighted=lambda w, s, k: aurc_weighted(w, s, answerable_mask(k)),
    direction="lower",
    description="area under the risk-coverage curve, risk = not answerable",
    inputs=("scores", "kinds"),
)
register(
    "e_aurc",
    e_aurc_answerable,
    weighted=lambda w, s, k: e_aurc_weighted(w, s, answerable_mask(k)),
    direction="lower",
    description="excess AURC over the perfect ranking, risk = not answerable",
    inputs=("scores", "kinds"),
)
register(
    "aurc_top1",
    aurc_top1,
    weighted=aurc_weighted,
    direction="lower",
    description="area under the risk-coverage curve, risk = top-1 memory is not gold",
    inputs=("scores", "top1_correct"),
)
register(
    "e_aurc_top1",
    e_aurc_top1,
    weighted=e_aurc_weighted,
    direction="lower",
    description="excess AURC over the perfect ranking, risk = top-1 memory is not gold",
    inputs=("scores", "top1_correct"),
)
register(
    "adaptive_ece",
    adaptive_ece,
    direction="lower",
    description="expected calibration error of a probability, 15 equal-mass bins",
    inputs=("probs", "labels"),
)
register(
    "brier",
    brier,
    ratio=brier_terms,
    direction="lower",
    description="Brier score of a probability against the 0/1 label",
    inputs=("probs", "labels"),
)
