"""Quiet frustration: a user re-asking the same question in other words.

widemem only hears frustration that is spoken ("I told you ..."). A user who
instead rephrases a question two or three times in one session is just as
frustrated. This detector flags a query when an earlier query of the same
session, at most ``window_minutes`` earlier, has a cosine of at least
``threshold`` with it. Pure numpy over the query vectors the engine already
computes: no model call of its own.

Thresholds depend on the embedder (cosines of paraphrases differ per model),
so ``REPHRASE_THRESHOLDS`` holds one per registry name; ``fit_threshold``
picks one from labelled queries (the best F1 on a training split).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# Per embedder registry name: the threshold fitted on the timelines' train users
# (`widemem-bench frustration`, table `rephrase_threshold`).
REPHRASE_THRESHOLDS: Mapping[str, float] = {
    "minilm-l6": 0.537,
}
# For an embedder with no fitted value: MiniLM's, the project's default model.
DEFAULT_THRESHOLD = 0.537
# Rephrases in the timelines come minutes apart; an hour keeps a session's
# unrelated asks from much later out of the comparison.
DEFAULT_WINDOW_MINUTES = 60.0


def threshold_for(embedder_name: str) -> float:
    """The rephrase threshold of an embedder (``DEFAULT_THRESHOLD`` if none was fitted)."""
    return float(REPHRASE_THRESHOLDS.get(embedder_name, DEFAULT_THRESHOLD))


def _check_inputs(
    vectors: Any, sessions: Sequence[Any], minutes: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"vectors: expected a 2-D (queries, dim) array, got shape {v.shape}")
    s = np.asarray(sessions, dtype=object)
    t = np.asarray(minutes, dtype=np.float64)
    if s.shape != (v.shape[0],) or t.shape != (v.shape[0],):
        raise ValueError(
            f"sessions/minutes: expected {v.shape[0]} entries each, got {s.shape} and {t.shape}"
        )
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    # Unit rows by contract; re-normalising makes the cosine exact for any caller.
    v = v / np.where(norms > 0, norms, 1.0)
    return v, s, t


def prior_similarity(
    vectors: Any,
    sessions: Sequence[Any],
    minutes: Any,
    window_minutes: float = DEFAULT_WINDOW_MINUTES,
) -> np.ndarray:
    """Per query, the largest cosine with an earlier query of its session within the window.

    ``minutes`` is each query's time in minutes (any origin); "earlier" means a
    strictly smaller time, or the same time and an earlier position. Queries
    with no such predecessor get -inf.
    """
    if not window_minutes > 0:
        raise ValueError(f"window_minutes: must be > 0, got {window_minutes!r}")
    v, s, t = _check_inputs(vectors, sessions, minutes)
    out = np.full(v.shape[0], -np.inf)
    groups: dict[Any, list[int]] = {}
    for i, sid in enumerate(s):
        groups.setdefault(sid, []).append(i)
    for idx in groups.values():
        if len(idx) < 2:
            continue
        ix = np.asarray(idx)
        ix = ix[np.lexsort((ix, t[ix]))]  # time order, ties by position
        sim = v[ix] @ v[ix].T
        dt_min = t[ix][:, None] - t[ix][None, :]
        # Row i sees columns j < i (earlier in time order) no further back than the window.
        earlier = np.tril(np.ones((len(ix), len(ix)), dtype=bool), k=-1)
        ok = earlier & (dt_min <= window_minutes)
        best = np.where(ok, sim, -np.inf).max(axis=1)
        out[ix] = best
    return out


@dataclass(frozen=True)
class RephraseDetector:
    """Flags queries that re-ask an earlier query of the same session.

    ``threshold`` is a cosine in [-1, 1]; ``window_minutes`` how far back a
    session is searched; ``min_repeats`` how many re-asks a session needs
    before it counts as quietly frustrated (``frustrated_sessions``).
    """

    threshold: float = DEFAULT_THRESHOLD
    window_minutes: float = DEFAULT_WINDOW_MINUTES
    min_repeats: int = 1

    def __post_init__(self) -> None:
        if not -1.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold: must be a cosine in [-1, 1], got {self.threshold!r}")
        if not self.window_minutes > 0:
            raise ValueError(f"window_minutes: must be > 0, got {self.window_minutes!r}")
        if isinstance(self.min_repeats, bool) or not isinstance(self.min_repeats, int) or self.min_repeats < 1:
            raise ValueError(f"min_repeats: must be an int >= 1, got {self.min_repeats!r}")

    @classmethod
    def for_embedder(cls, embedder_name: str, **options: Any) -> RephraseDetector:
        return cls(threshold=threshold_for(embedder_name), **options)

    def flags(self, vectors: Any, sessions: Sequence[Any], minutes: Any) -> np.ndarray:
        """Bool per query: it rephrases (or repeats) an earlier query of its session."""
        return prior_similarity(vectors, sessions, minutes, self.window_minutes) >= self.threshold

    def frustrated_sessions(self, vectors: Any, sessions: Sequence[Any], minutes: Any) -> set[Any]:
        """Sessions with at least ``min_repeats`` flagged queries."""
        f = self.flags(vectors, sessions, minutes)
        counts: dict[Any, int] = {}
        for sid, hit in zip(sessions, f, strict=True):
            counts[sid] = counts.get(sid, 0) + int(hit)
        return {sid for sid, n in counts.items() if n >= self.min_repeats}


def fit_threshold(scores: Any, labels: Any) -> float:
    """The threshold with the best F1 of ``scores >= threshold`` against bool ``labels``.

    Candidates are the distinct finite scores; ties in F1 go to the higher
    threshold (fewer false alarms). Without any positive label, returns +inf
    (flag nothing).
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if s.shape != y.shape:
        raise ValueError(f"labels: expected shape {s.shape} like scores, got {y.shape}")
    cands = np.unique(s[np.isfinite(s)])
    if not y.any() or cands.size == 0:
        return float("inf")
    pred = s[None, :] >= cands[:, None]
    tp = (pred & y).sum(axis=1)
    fp = (pred & ~y).sum(axis=1)
    fn = (~pred & y).sum(axis=1)
    f1 = 2 * tp / np.maximum(2 * tp + fp + fn, 1)
    best = np.flatnonzero(f1 == f1.max())[-1]
    return float(cands[best])


def precision_recall(pred: Any, labels: Any) -> tuple[float, float]:
    """(precision, recall) of bool predictions; NaN where undefined."""
    p = np.asarray(pred, dtype=bool)
    y = np.asarray(labels, dtype=bool)
    tp = float((p & y).sum())
    prec = tp / p.sum() if p.any() else float("nan")
    rec = tp / y.sum() if y.any() else float("nan")
    return prec, rec
