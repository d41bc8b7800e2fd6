"""Batched scorer: `MemoryEngine.search` for every question at once, over cached similarities.

`prepare` does everything that does not depend on a scoring setting, once:
it builds each user's memory list as an append-only engine would hold it at each
question's time (facts with `at <= asked_at`, identical contents stored once, first
one kept), encodes every text once through the embedder (and so its on-disk cache),
computes the raw cosines exactly as the engine's store does (float32 matrix @ query),
keeps the `fetch_k` nearest candidates per question in the store's order (cosine
descending, ties by insertion), and records importance, age and the gold mask.

`score` then applies one weight / decay / threshold setting to all questions with
numpy only: per-query weights from `engine.scoring.adapt_weights` (called once per
query class, since widemem's adaptation depends only on the class), recency from
`engine.recency.decay` over the age matrix, the weighted sum, the two-pass
boost on factual rows, widemem's ordering (final descending, then pre-boost final,
then candidate position), the band of the top result's raw cosine
(`engine.confidence.band_codes`) and the rank of the first gold memory.

Arrays are (Q, C): Q questions in the input order, C = the largest candidate count;
NaN marks an absent candidate. Units: ages in days, importance 0-10, cosines in [-1, 1].
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import scoring
from widemem_bench.engine.confidence import MODEL_THRESHOLDS, band_codes
from widemem_bench.engine.modes import effective_top_k, fetch_k, preset
from widemem_bench.engine.recency import WIDEMEM_DECAY, decay, validate_decay

CLASSES = ("temporal", "factual", "other")
BOOST_N = scoring.BOOST_N  # the engine's: widemem boosts the 5 most similar candidates
SECONDS_PER_DAY = 86400.0


@dataclass
class Prepared:
    """Setting-independent arrays of one (embedder, data set, mode)."""

    question_ids: np.ndarray     # (Q,) question ids, input order
    user_ids: np.ndarray         # (Q,)
    qclass: np.ndarray           # (Q,) int8 index into CLASSES
    sim: np.ndarray              # (Q, C) raw cosine, store order, NaN = absent
    imp10: np.ndarray            # (Q, C) clip(importance, 0, 10) / 10
    age: np.ndarray              # (Q, C) days between the fact and the question
    mem: np.ndarray              # (Q, C) int index into `memories`, -1 = absent
    gold: np.ndarray             # (Q, C) bool: candidate is a gold memory of the question
    n_gold_stored: np.ndarray    # (Q,) gold memories present at question time (any rank)
    memories: pd.DataFrame       # fact_id, user_id, content, importance, at
    mode: str
    top_k: int
    boost: float
    adapt: bool
    rep_query: dict[int, str] = field(default_factory=dict)  # one query text per class
    # Factual rows with >= BOOST_N candidates: `fast_boost` where the top BOOST_N by
    # cosine are unambiguous (the first columns), `slow_boost` where the engine's
    # `two_pass_boost` must settle a tie at the cut. Rows with fewer are never boosted.
    fast_boost: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    slow_boost: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    @property
    def n_questions(self) -> int:
        return int(self.sim.shape[0])


@dataclass
class Scored:
    """One setting's outcome per question (input order)."""

    top1_mem: np.ndarray    # (Q,) memory index of the top result, -1 when no result
    top1_sim: np.ndarray    # (Q,) its raw cosine (NaN when no result)
    top1_final: np.ndarray  # (Q,) its final score
    band: np.ndarray        # (Q,) int8 band code 3 high .. 0 none
    gold_rank: np.ndarray   # (Q,) 1-based rank of the best gold memory in the returned top_k, inf if absent
    final: np.ndarray | None = None  # (Q, C) final scores in candidate position (keep_final=True)


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _days(delta: np.ndarray) -> np.ndarray:
    return delta.astype("timedelta64[us]").astype(np.float64) / (SECONDS_PER_DAY * 1e6)


def build_memories(events: pd.DataFrame, text_col: str = "fact_stripped") -> tuple[pd.DataFrame, dict[Any, int]]:
    """Per user, the append-only store: chronological, identical contents kept once.

    Returns (memories, fact_to_memory): every event's fact_id maps to the memory that
    holds its content (the first fact with that content), so a gold fact that was a
    verbatim restatement still points at a stored memory.
    """
    ev = events.loc[:, ["fact_id", "user_id", "at", text_col, "importance"]].copy()
    ev["content"] = ev[text_col].fillna("").map(_clean)
    ev = ev[ev["content"] != ""]
    ev["_row"] = np.arange(len(ev))
    ev = ev.sort_values(["user_id", "at", "_row"], kind="stable")
    first = ~ev.duplicated(["user_id", "content"], keep="first")
    mems = ev[first].reset_index(drop=True)
    index = {(u, c): i for i, (u, c) in enumerate(zip(mems["user_id"], mems["content"], strict=True))}
    fact_to_memory = {f: index[(u, c)] for f, u, c in zip(ev["fact_id"], ev["user_id"], ev["content"], strict=True)}
    return mems[["fact_id", "user_id", "content", "importance", "at"]], fact_to_memory


def prepare(
    events: pd.DataFrame,
    questions: pd.DataFrame,
    embedder: Any,
    *,
    mode: str = "balanced",
    text_col: str = "fact_stripped",
    adapt: bool = True,
    age_from: str = "clock",
) -> Prepared:
    """Embed once and lay out every question's candidates (see the module docstring)."""
    if mode not in ("fast", "balanced", "deep"):
        raise ValueError(f"mode: unknown retrieval mode {mode!r} (expected fast, balanced or deep)")
    if age_from not in ("clock", "insert"):
        raise ValueError(f"age_from: expected 'clock' or 'insert', got {age_from!r}")
    mems, fact_to_mem = build_memories(events, text_col)
    texts = questions["text"].map(str).tolist()
    mvec = np.asarray(embedder.encode(mems["content"].tolist(), kind="passage"), dtype=np.float32)
    qvec = np.asarray(embedder.encode(texts, kind="query"), dtype=np.float32)

    qclass = np.array([CLASSES.index(scoring.classify_query(t)) for t in texts], dtype=np.int8)
    sim_first = (qclass == CLASSES.index("factual")) if adapt else np.zeros(len(texts), bool)
    k_fetch = {True: fetch_k(mode, "x", similarity_first=True),
               False: fetch_k(mode, "x", similarity_first=False)}
    m_user = mems["user_id"].to_numpy()
    m_at = mems["at"].to_numpy(dtype="datetime64[us]")
    m_imp = scoring.importance01(mems["importance"].to_numpy(dtype=np.float64))
    lists: dict[Any, list[int]] = {}
    for i, u in enumerate(m_user):
        lists.setdefault(u, []).append(i)
    by_user = {u: np.asarray(ix, dtype=np.int64) for u, ix in lists.items()}

    q_user = questions["user_id"].to_numpy()
    q_at = questions["asked_at"].to_numpy(dtype="datetime64[us]")
    golds = questions["gold_fact_ids"].tolist() if "gold_fact_ids" in questions else [[]] * len(texts)

    rows: list[np.ndarray] = []
    srows: list[np.ndarray] = []
    n_gold_stored = np.zeros(len(texts), dtype=np.int64)
    for q in range(len(texts)):
        ix = by_user.get(q_user[q], np.zeros(0, np.int64))
        ix = ix[m_at[ix] <= q_at[q]]
        r, sr = nearest(mvec, ix, qvec[q], k_fetch[bool(sim_first[q])])
        rows.append(r)
        srows.append(sr)
        g = {fact_to_mem[f] for f in (golds[q] if golds[q] is not None else []) if f in fact_to_mem}
        n_gold_stored[q] = len(g.intersection(ix.tolist()))
        golds[q] = g
    mem, sim = candidate_matrix(rows, srows)
    present = mem >= 0
    safe = np.where(present, mem, 0)
    imp10 = np.where(present, m_imp[safe], np.nan)
    if age_from == "clock":
        age = np.where(present, _days(q_at[:, None] - m_at[safe]), np.nan)
    else:  # widemem ages from insert time: a fast ingest leaves every memory ~0 days old
        age = np.where(present, 0.0, np.nan)
    gold = np.zeros_like(present)
    for q, g in enumerate(golds):
        if g:
            gold[q] = present[q] & np.isin(mem[q], list(g))

    fast, slow = boost_rows(sim, present, sim_first)
    return Prepared(
        question_ids=questions["question_id"].to_numpy(), user_ids=q_user, qclass=qclass,
        sim=sim, imp10=imp10, age=age, mem=mem, gold=gold, n_gold_stored=n_gold_stored,
        memories=mems, mode=mode, top_k=effective_top_k(mode), boost=preset(mode).similarity_boost,
        adapt=adapt, rep_query=representative_queries(texts, qclass), fast_boost=fast, slow_boost=slow,
    )


# The candidate search shared by `prepare` and every other layout of questions over a
# store (ymyl_decay's aged targets): one copy of the store's arithmetic and tie rules.
def nearest(mvec: np.ndarray, ix: np.ndarray, qvec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(memory indices, cosines) of the `k` nearest of `ix`, in the store's order.

    Same arithmetic as MemoryStore.similarities (float32 (n, d) @ (d,)), cosine
    descending, ties by position (insertion order).
    """
    if not len(ix):
        return ix, np.zeros(0, np.float32)
    sims = np.ascontiguousarray(mvec[ix]) @ qvec
    order = np.argsort(-sims, kind="stable")[:k]
    return ix[order], sims[order]


def candidate_matrix(rows: Sequence[np.ndarray], srows: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(mem, sim) (Q, C) from per-question candidate lists; -1 / NaN mark an absent candidate."""
    width = max((len(r) for r in rows), default=0)
    mem = np.full((len(rows), max(width, 1)), -1, dtype=np.int64)
    for q, r in enumerate(rows):
        mem[q, : len(r)] = r
    sim = np.full(mem.shape, np.nan, dtype=np.float64)
    for q, sr in enumerate(srows):
        sim[q, : len(sr)] = sr
    return mem, sim


def boost_rows(sim: np.ndarray, present: np.ndarray, sim_first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fast, slow) rows of the two-pass boost (see `Prepared`).

    The top BOOST_N by similarity are the first BOOST_N columns unless the cosine at
    the cut ties with the next one; only such rows need the engine's full tie rules.
    """
    npres = present.sum(axis=1)
    if sim.shape[1] > BOOST_N:
        tie = np.isclose(sim[:, BOOST_N - 1], sim[:, BOOST_N], rtol=0, atol=0) & (npres > BOOST_N)
    else:
        tie = np.zeros(sim.shape[0], bool)
    return sim_first & (npres >= BOOST_N) & ~tie, sim_first & (npres >= BOOST_N) & tie


def representative_queries(texts: Sequence[str], qclass: np.ndarray) -> dict[int, str]:
    """One query text per class present: `adapt_weights` depends only on the class."""
    return {c: texts[int(np.argmax(qclass == c))] for c in range(3) if (qclass == c).any()}


def query_weights(prep: Prepared, weights: Sequence[float]) -> np.ndarray:
    """(Q, 3) weights per question: `adapt_weights` once per query class, then gathered."""
    w = tuple(float(x) for x in weights)
    table = np.empty((3, 3), dtype=np.float64)
    for c in range(3):
        if prep.adapt and c in prep.rep_query:
            table[c] = scoring.weights_for(CLASSES[c], (w[0], w[1], w[2]))  # type: ignore[arg-type]
        else:
            table[c] = w
    return table[prep.qclass]


def recency_matrix(prep: Prepared, decay_function: str, decay_rate: float) -> np.ndarray:
    """compute_recency over the (Q, C) age matrix (NaN stays NaN). Reusable across weights."""
    return np.asarray(decay(prep.age, *validate_decay(decay_function, decay_rate)), dtype=np.float64)


def _first_best(primary: np.ndarray, secondary: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, the column that sorts first under (primary desc, secondary desc, column asc).

    argmax already gives the first column among equal maxima; only rows where the maximum
    is shared (rare: exact float ties) need the secondary key.
    """
    p = np.where(mask, primary, -np.inf)
    j = p.argmax(axis=1)
    rows = np.arange(p.shape[0])
    top = p[rows, j]
    tied = np.count_nonzero(p == top[:, None], axis=1) > 1
    if tied.any():
        t = np.nonzero(tied)[0]
        best = p[t] == top[t, None]
        s = np.where(best, secondary[t], -np.inf)
        best &= s == s.max(axis=1, keepdims=True)
        j[t] = np.argmax(best, axis=1)
    return j


def _rank_of(final: np.ndarray, prior: np.ndarray, j: np.ndarray, present: np.ndarray) -> np.ndarray:
    """1-based position of column j[r] in row r under widemem's order (absent never counts)."""
    rows = np.arange(final.shape[0])
    fj = final[rows, j][:, None]
    with np.errstate(invalid="ignore"):
        rank = np.count_nonzero(final > fj, axis=1) + 1  # NaN (absent) compares False
        tied = np.count_nonzero(final == fj, axis=1) > 1
    if tied.any():
        t = np.nonzero(tied)[0]
        f, pr, jt = final[t], prior[t], j[t][:, None]
        pj = pr[np.arange(len(t)), j[t]][:, None]
        cols = np.arange(final.shape[1])[None, :]
        eq = present[t] & (f == fj[t])
        rank[t] += np.count_nonzero(eq & ((pr > pj) | ((pr == pj) & (cols < jt))), axis=1)
    return rank.astype(np.float64)


def score(
    prep: Prepared,
    weights: Sequence[float],
    decay_function: str = WIDEMEM_DECAY[0],
    decay_rate: float = WIDEMEM_DECAY[1],
    thresholds: Sequence[float] = MODEL_THRESHOLDS["all-minilm-l6-v2"],
    *,
    recency: np.ndarray | None = None,
    two_pass: bool = True,
    keep_final: bool = False,
) -> Scored:
    """One setting over all questions; numpy only (see the module docstring)."""
    rec = recency_matrix(prep, decay_function, decay_rate) if recency is None else recency
    w = query_weights(prep, weights)
    # The engine's weighted sum, with a weight column per row.
    prior = scoring.combine(prep.sim, prep.imp10, rec, (w[:, 0:1], w[:, 1:2], w[:, 2:3]), scaled=True)
    final = prior
    present = prep.mem >= 0
    if two_pass and prep.adapt:
        fast, slow = prep.fast_boost, prep.slow_boost
        if fast.any() or slow.any():
            final = prior.copy()
        if fast.any():
            top = np.nanmax(np.where(present[fast], prior[fast], -np.inf), axis=1)
            final[fast, :BOOST_N] = scoring.boost_add(final[fast, :BOOST_N], top[:, None], prep.boost)
        if slow.any():
            final[slow] = scoring.two_pass_boost(prior[slow], prep.sim[slow], prep.boost, BOOST_N)
    has = present.any(axis=1)
    rows = np.arange(prep.n_questions)
    j = _first_best(final, prior, present)
    top1_mem = np.where(has, prep.mem[rows, j], -1)
    top1_sim = np.where(has, prep.sim[rows, j], np.nan)
    top1_final = np.where(has, final[rows, j], np.nan)
    band = band_codes(top1_sim, tuple(thresholds))  # type: ignore[arg-type]
    band[~has] = 0
    # Rank of the best-placed gold memory = 1 + how many candidates sort before it.
    has_g = prep.gold.any(axis=1)
    rank = _rank_of(final, prior, _first_best(final, prior, prep.gold), present)
    rank[~has_g | (rank > prep.top_k)] = np.inf
    return Scored(top1_mem=top1_mem, top1_sim=top1_sim, top1_final=top1_final, band=band,
                  gold_rank=rank, final=final if keep_final else None)


def sweep(
    prep: Prepared,
    settings: Iterable[dict[str, Any]],
    thresholds: Sequence[float],
) -> Iterable[tuple[dict[str, Any], Scored]]:
    """Score many settings ({weights, decay_function, decay_rate}); recency reused per decay."""
    cache: dict[tuple[str, float], np.ndarray] = {}
    for s in settings:
        key = (str(s["decay_function"]), float(s["decay_rate"]))
        if key not in cache:
            if len(cache) > 8:  # bound memory: one (Q, C) float64 matrix per decay setting
                cache.clear()
            cache[key] = recency_matrix(prep, *key)
        yield s, score(prep, s["weights"], key[0], key[1], thresholds, recency=cache[key])
