"""Answerability features of one search: the query and the memories it returned.

Input is what `MemoryEngine.search` hands back: the returned memories in rank order
(final score), each with its raw cosine. widemem bands on the cosine of the rank-1
result only; these features also look at the other results and at the words, to tell
"the answer is stored" from "something about this person is stored".

All features are floats in roughly [-1, 1] or {0, 1}; `FEATURES` fixes their order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from widemem_bench.answerability.text import TextInfo, analyse

FEATURES: tuple[str, ...] = (
    "top1_cosine",        # raw cosine of the rank-1 result (widemem's confidence score)
    "max_cosine",         # best cosine among the returned results
    "margin",             # best minus second-best cosine (0 with one result)
    "top3_mean",          # mean of the three best cosines
    "lexical",            # share of the query's content words found in the best-cosine memory
    "lexical_max",        # the same, best over the returned memories
    "about_relative",     # the query asks about a relative ("my sister"), not the user
    "subject_match",      # the best-cosine memory is about the query's subject
    "topic_fit",          # the best-cosine memory carries a topic the query asks for
    "fit_cosine",         # best cosine among memories matching both subject and topic (0 if none)
    "fit_lexical",        # lexical overlap of that memory (0 if none)
    "any_fit",            # some returned memory matches both subject and topic
    "query_has_topic",    # the query names a topic at all (else topic_fit says little)
    "fit_x_cosine",       # subject_match * topic_fit * max_cosine: the conjunction, scaled
)
N_FEATURES = len(FEATURES)
# Features are computed over at most this many returned memories: widemem's balanced
# mode returns 10, and anything beyond rank 10 rarely holds the answer.
MAX_RESULTS = 10


def _overlap(q: TextInfo, m: TextInfo) -> float:
    if not q.content:
        return 0.0
    return len(q.content & m.content) / len(q.content)


def query_features(query: str, contents: Sequence[str], cosines: Sequence[float]) -> np.ndarray:
    """Feature vector (len `N_FEATURES`, float64) of one query and its returned memories.

    ``contents`` and ``cosines`` are the returned memories in rank order (rank 1 first).
    No memory at all gives cosines of -1 and zero word features.
    """
    out = np.zeros(N_FEATURES, dtype=np.float64)
    n = min(len(contents), MAX_RESULTS)
    q = analyse(query, True)
    out[6] = float(q.subject != "user")
    out[12] = float(bool(q.topics))
    if n == 0:
        out[0:4] = -1.0
        return out
    sims = [float(c) for c in cosines[:n]]
    order = sorted(range(n), key=lambda i: -sims[i])
    best = order[0]
    out[0] = sims[0]
    out[1] = sims[best]
    out[2] = sims[best] - sims[order[1]] if n > 1 else 0.0
    top3 = [sims[i] for i in order[:3]]
    out[3] = sum(top3) / len(top3)
    infos = [analyse(contents[i]) for i in range(n)]
    overlaps = [_overlap(q, m) for m in infos]
    out[4] = overlaps[best]
    out[5] = max(overlaps)
    fit_sim, fit_lex, any_fit = 0.0, 0.0, False
    for i in order:
        m = infos[i]
        # Without a topic word in the query, shared content words stand in for it.
        fits = bool(q.topics & m.topics) if q.topics else overlaps[i] > 0
        if m.subject == q.subject and fits:
            fit_sim, fit_lex, any_fit = sims[i], overlaps[i], True
            break
    b = infos[best]
    out[7] = float(b.subject == q.subject)
    out[8] = float(bool(q.topics & b.topics)) if q.topics else 0.5
    out[9] = fit_sim
    out[10] = fit_lex
    out[11] = float(any_fit)
    out[13] = out[7] * (1.0 if out[8] == 1.0 else 0.0) * out[1]
    return out


def feature_matrix(
    queries: Sequence[str], contents: Sequence[Sequence[str]], cosines: Sequence[Sequence[float]]
) -> np.ndarray:
    """(n_queries, N_FEATURES) for many searches (one `query_features` row each)."""
    x = np.zeros((len(queries), N_FEATURES), dtype=np.float64)
    for i, (q, c, s) in enumerate(zip(queries, contents, cosines, strict=True)):
        x[i] = query_features(q, c, s)
    return x
