"""Scoring as widemem 2.0.2 does it: per-query weights, the weighted sum, the
two-pass similarity boost, topic multipliers and widemem's sort order.

Everything here works on one query's candidates (1-D arrays) and, for the
batched scorer, on a queries x candidates matrix (2-D arrays) where NaN or
-inf marks an absent candidate.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Literal

import numpy as np

QueryKind = Literal["temporal", "factual", "other"]
Weights = tuple[float, float, float]

# Weight mixes (similarity, importance, recency) widemem switches to per query.
TEMPORAL_WEIGHTS: Weights = (0.40, 0.10, 0.50)
FACTUAL_WEIGHTS: Weights = (0.75, 0.10, 0.15)

# Query cues, lowercased. A temporal cue counts anywhere in the query; a
# factual prefix only at its start (the trailing spaces are part of the cue, so
# "whereas" is not "where "). "what " queries of at most SHORT_WHAT_MAX_WORDS
# words are factual too. A multi-hop phrase anywhere vetoes "factual".
TEMPORAL_CUES: tuple[str, ...] = (
    "when ", "what time", "what date", "how long ago", "last time", "recently",
    "before the", "after the", "how recent", "what year", "what month",
)
FACTUAL_PREFIXES: tuple[str, ...] = (
    "where ", "who ", "what is ", "what was ", "what does ", "what did ", "what are ",
    "what were ", "what do ", "how old ", "how much ", "how many ", "which ", "name ",
    "is ", "was ", "does ", "did ", "has ", "have ",
)
MULTI_HOP_CUES: tuple[str, ...] = (
    "relationship between", "how does", "compare", "contrast", "connection between",
    "relate to", "in common",
)
SHORT_WHAT_MAX_WORDS = 10
BOOST_N = 5  # widemem's two-pass boost lifts the 5 most similar candidates of a factual query


def _normalise_query(query: str) -> str:
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    return query.lower().strip()


def classify_query(query: str) -> QueryKind:
    """widemem's query type: "temporal" wins over "factual"; else "other".

    A multi-hop query ("compare", "relationship between", ...) is never
    factual, but a temporal cue still makes it temporal.
    """
    if type(query) is str:
        return _classify_text(query)  # a user asks the same questions again: remembered
    return _classify(query)


@functools.lru_cache(maxsize=4096)
def _classify_text(query: str) -> QueryKind:
    return _classify(query)


def _classify(query: str) -> QueryKind:
    q = _normalise_query(query)
    if any(cue in q for cue in TEMPORAL_CUES):
        return "temporal"
    starts_factual = q.startswith(FACTUAL_PREFIXES)
    short_what = q.startswith("what ") and len(q.split()) <= SHORT_WHAT_MAX_WORDS
    multi_hop = any(cue in q for cue in MULTI_HOP_CUES)
    if (starts_factual or short_what) and not multi_hop:
        return "factual"
    return "other"


def is_similarity_first(query: str) -> bool:
    """True for the queries widemem ranks similarity-first (the factual ones):
    they get the two-pass boost and the mode's fetch multiplier."""
    return classify_query(query) == "factual"


def adapt_weights(query: str, weights: Iterable[float]) -> Weights:
    """The weight mix widemem uses for ``query``: temporal 0.40/0.10/0.50,
    factual 0.75/0.10/0.15, anything else keeps ``weights``."""
    w = tuple(float(x) for x in weights)
    if len(w) != 3:
        raise ValueError(f"weights must have 3 entries (similarity, importance, recency), got {len(w)}")
    return weights_for(classify_query(query), (w[0], w[1], w[2]))


def weights_for(kind: QueryKind, weights: Weights) -> Weights:
    """``adapt_weights`` for a query already classified as ``kind``; ``weights`` are
    3 floats (the engine classifies each query once and reuses the kind)."""
    if kind == "temporal":
        return TEMPORAL_WEIGHTS
    if kind == "factual":
        return FACTUAL_WEIGHTS
    return weights


IMPORTANCE_MAX = 10.0  # widemem's importance scale: 0..10, read as a fraction


def importance01(importance) -> np.ndarray:
    """``clip(importance, 0, 10) / 10`` as float64 (any shape): the importance term."""
    return np.clip(np.asarray(importance, dtype=np.float64), 0.0, IMPORTANCE_MAX) / IMPORTANCE_MAX


def boost_add(final, top_final, boost):
    """A boosted candidate's score: ``final + top_final * boost`` (widemem's two-pass add)."""
    return final + top_final * float(boost)


def combine(similarity, importance, recency, weights, *, scaled: bool = False):
    """``w_sim * sim + w_imp * clip(importance, 0, 10) / 10 + w_rec * recency``: THE
    weighted sum of every score in the package (engine search, batched scorer, sweeps).

    Inputs broadcast against each other; the result is float64. The sum runs left to
    right as in widemem, so a scalar result equals widemem's float. ``scaled``: the
    importance is already ``importance01`` and the inputs float64 (the engine's hits,
    the batch's matrices); the weights may then be arrays that broadcast (the batch's
    (Q, 1) weight columns).
    """
    if len(weights) != 3:
        raise ValueError(f"weights must have 3 entries (similarity, importance, recency), got {len(weights)}")
    if scaled:
        w_sim, w_imp, w_rec = weights
        imp = importance
    else:
        w_sim, w_imp, w_rec = (float(x) for x in weights)
        similarity = np.asarray(similarity, dtype=np.float64)
        imp = importance01(importance)
        recency = np.asarray(recency, dtype=np.float64)
    return w_sim * similarity + w_imp * imp + w_rec * recency


def _topic_items(topic_weights) -> Iterable[tuple[str, float]]:
    if isinstance(topic_weights, Mapping):
        return topic_weights.items()
    return topic_weights


def topic_multiplier(content: str, topic_weights) -> float:
    """widemem's topic boost: the largest weight among the topics that occur in
    ``content`` (case-insensitive substring), never below 1.0.

    ``topic_weights`` is a mapping or a sequence of ``(topic, weight)`` pairs.
    Because widemem starts from 1.0 and takes the max, a weight below 1 never
    demotes anything; empty weights give 1.0.
    """
    best = 1.0
    if not topic_weights:
        return best
    text = content.lower()
    for topic, weight in _topic_items(topic_weights):
        if str(topic).lower() in text:
            best = max(best, float(weight))
    return best


def _absent(final: np.ndarray, similarity: np.ndarray) -> np.ndarray:
    return ~(np.isfinite(final) & np.isfinite(similarity))


def rank_desc(scores, prior=None) -> np.ndarray:
    """widemem's order: indices by ``scores`` descending, stable.

    Python's ``sort(reverse=True)`` is stable, so ties keep their earlier
    order. After a two-pass boost widemem re-sorts a list that was already
    sorted by the pre-boost score; pass that score as ``prior`` to break ties
    the same way (``prior`` descending, then original index). Absent entries
    (NaN, -inf) go last. Works on 1-D and row-wise on 2-D arrays.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 1 and np.isfinite(s).all():
        # One query without absent entries (every engine search): the same order with
        # less array bookkeeping; lexsort is stable, so ties keep the earlier index.
        if prior is None:
            return np.argsort(-s, kind="stable")
        p1 = np.asarray(prior, dtype=np.float64)
        if p1.shape == s.shape and np.isfinite(p1).all():
            return np.lexsort((-p1, -s))
    key_s = np.where(np.isnan(s), np.inf, -s)
    idx = np.broadcast_to(np.arange(s.shape[-1]), s.shape)
    keys = [idx]
    if prior is not None:
        p = np.asarray(prior, dtype=np.float64)
        keys.append(np.where(np.isnan(p), np.inf, -p))
    keys.append(key_s)
    return np.lexsort(keys, axis=-1)


def two_pass_boost(
    final: np.ndarray, similarity: np.ndarray, boost: float, n: int = BOOST_N
) -> np.ndarray:
    """widemem's two-pass similarity boost, on a copy of ``final``.

    When a query has at least ``n`` candidates, the ``n`` with the highest
    similarity each get ``top_final * boost`` added, where ``top_final`` is the
    highest final score before the boost. Ties in similarity are broken as
    widemem's stable sorts break them: higher final score first, then
    original position. Apply it only to similarity-first (factual) queries.

    ``final`` and ``similarity`` are 1-D (one query) or 2-D (queries x
    candidates); an entry whose final or similarity is NaN/inf is absent, is
    not counted, and is returned unchanged.
    """
    f = np.array(final, dtype=np.float64)
    s = np.asarray(similarity, dtype=np.float64)
    if f.shape != s.shape:
        raise ValueError(f"final and similarity must have the same shape, got {f.shape} and {s.shape}")
    if f.ndim not in (1, 2):
        raise ValueError(f"final must be 1-D or 2-D, got {f.ndim}-D")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if not math.isfinite(float(boost)):
        raise ValueError(f"boost must be finite, got {boost!r}")
    one_d = f.ndim == 1
    if one_d and np.isfinite(f).all() and np.isfinite(s).all():
        # One query without absent entries (every engine search): the general path below
        # gives the same result; this one skips its masks (the engine's hottest call).
        return _boost_finite(f, s, boost, n)
    f2 = f[None, :] if one_d else f
    s2 = s[None, :] if one_d else s
    if f2.shape[1] == 0:
        return f
    absent = _absent(f2, s2)
    present = (~absent).sum(axis=1)
    rows = present >= n
    if rows.any():
        idx = np.broadcast_to(np.arange(f2.shape[1]), f2.shape)
        key_f = np.where(absent, np.inf, -f2)
        key_s = np.where(absent, np.inf, -s2)
        order = np.lexsort((idx, key_f, key_s), axis=-1)[:, :n]
        top_final = np.max(np.where(absent, -np.inf, f2), axis=1)
        r = np.nonzero(rows)[0]
        cols = order[r]
        f2[r[:, None], cols] = boost_add(f2[r[:, None], cols], top_final[r][:, None], boost)
    return f2[0] if one_d else f2


def _boost_finite(f: np.ndarray, s: np.ndarray, boost: float, n: int) -> np.ndarray:
    """``two_pass_boost`` in place on one query's finite scores ``f`` (a copy the caller owns)."""
    if f.size >= n:
        top = np.lexsort((-f, -s))[:n]  # similarity desc, then final desc, then index
        f[top] = boost_add(f[top], f.max(), boost)
    return f


def score_and_rank(
    similarity,
    importance,
    recency,
    weights,
    *,
    multiplier=None,
    similarity_first: bool = False,
    boost: float = 0.15,
    n: int = BOOST_N,
) -> tuple[np.ndarray, np.ndarray]:
    """One pass of widemem's ``score_and_rank`` over arrays.

    Returns ``(final, order)``: the final scores in candidate position (after
    the topic ``multiplier`` and, when ``similarity_first``, the two-pass
    boost) and the ranking indices in widemem's order. ``multiplier`` is a
    per-candidate factor (topic weights), applied before the boost as in
    widemem.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    final = combine(sim, importance, recency, weights)
    if multiplier is not None:
        final = final * np.asarray(multiplier, dtype=np.float64)
    final = np.broadcast_to(final, np.broadcast_shapes(final.shape, sim.shape)).copy()
    if not similarity_first:
        return final, rank_desc(final)
    boosted = two_pass_boost(final, np.broadcast_to(sim, final.shape), boost, n)
    return boosted, rank_desc(boosted, prior=final)


def rank_hits(
    similarity: np.ndarray,
    importance01: np.ndarray,
    recency: np.ndarray,
    weights: Weights,
    multiplier: np.ndarray | None = None,
    boost: float | None = None,
    n: int = BOOST_N,
) -> tuple[np.ndarray, np.ndarray]:
    """``score_and_rank`` for one query's hits, as the engine's search calls it.

    Takes float64 1-D arrays of equal length, ``importance01`` already
    ``clip(importance, 0, 10) / 10``, and ``boost`` None for no two-pass boost.
    Same arithmetic and order as ``score_and_rank`` (its general path when an
    entry is not finite); it only skips the argument checks and broadcasting,
    which cost more than the scoring itself on a user's few hits.
    """
    final = combine(similarity, importance01, recency, weights, scaled=True)
    if multiplier is not None:
        final = final * multiplier
    # Any NaN / inf among the inputs makes the sum non-finite: the general path
    # handles absent entries (weights are >= 0, so 0 * inf is NaN, not 0).
    if not math.isfinite(final.sum()):
        if boost is None:
            return final, rank_desc(final)
        boosted = two_pass_boost(final, similarity, boost, n)
        return boosted, rank_desc(boosted, prior=final)
    if boost is None:
        return final, np.argsort(-final, kind="stable")
    after = _boost_finite(final.copy(), similarity, boost, n)
    return after, np.lexsort((-final, -after))
