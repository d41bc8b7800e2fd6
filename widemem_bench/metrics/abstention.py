"""Abstention at a fixed recall: how much of the unanswerable set a recall-matched cut-off lets through."""

from __future__ import annotations

import numpy as np


def adversarial_share_at_recall(scores: np.ndarray, y: np.ndarray, recall: float = 0.9) -> float:
    """Share of unanswerable questions scoring at or above the cut-off that keeps `recall` of
    the answerable ones (the widest MODERATE band a user wanting that recall could set)."""
    if y.all() or not y.any():
        return float("nan")
    cut = np.quantile(scores[y], 1.0 - recall, method="lower")
    return float(np.mean(scores[~y] >= cut))


def heldout_share_at_recall(
    scores: np.ndarray, y: np.ndarray, groups: np.ndarray, recall: float = 0.9
) -> tuple[float, float]:
    """(recall on 1-4, cat. 5 share) at MODERATE or above when each conversation's cut-off is
    set at `recall` on the OTHER conversations: the recall-matched band as a user would ship it."""
    passed = np.zeros(len(scores), dtype=bool)
    for g in np.unique(groups):
        test = groups == g
        train_pos = scores[~test & y]
        if train_pos.size == 0:
            return float("nan"), float("nan")
        passed[test] = scores[test] >= np.quantile(train_pos, 1.0 - recall, method="lower")
    return float(passed[y].mean()) if y.any() else float("nan"), float(passed[~y].mean()) if (~y).any() else float("nan")
