"""The batched scorer reproduces MemoryEngine.search (top-1 id, final scores, band, gold rank)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig, MemoryEngine, batch, two_pass_boost
from widemem_bench.engine.scoring import combine

T0 = dt.datetime(2025, 1, 1)
FACTS = [
    "lives in Boston", "works at Acme as a nurse", "sister lives in Denver", "allergic to peanuts",
    "had pasta for lunch", "likes jazz", "is vegetarian", "is vegan now", "moved to Seattle",
    "drives a blue car", "saw Dune at the cinema", "takes metformin daily", "has a dog named Rex",
    "plays tennis on Sundays", "lives in Boston",  # a verbatim restatement: stored once
]
QUESTIONS = [
    "where do I live?", "who do I work for?", "where does my sister live?", "what am I allergic to?",
    "when did I move?", "tell me everything about me", "what's my doctor's name?",
    "what did I eat for lunch recently?", "do I have pets?", "which car do I drive?",
    "what is my favourite sport", "compare my diet now and before",
]


def make_timeline(n_users: int = 6, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ev, qs = [], []
    for u in range(n_users):
        k = int(rng.integers(4, len(FACTS) + 1))
        days = np.sort(rng.uniform(0, 300, size=k))
        for i in range(k):
            # Two users get clashing importances so ranking is not similarity alone.
            ev.append({"fact_id": f"u{u}f{i}", "user_id": f"u{u}", "at": T0 + dt.timedelta(days=float(days[i])),
                       "fact_stripped": FACTS[i], "importance": float(rng.integers(1, 11))})
        for j, text in enumerate(QUESTIONS):
            gold = [f"u{u}f{i}" for i in range(k) if FACTS[i].split()[0] in text] or []
            qs.append({"question_id": f"u{u}q{j}", "user_id": f"u{u}", "text": text,
                       "asked_at": T0 + dt.timedelta(days=float(rng.uniform(0, 330))),
                       "kind": "answerable" if gold else "never_mentioned", "gold_fact_ids": gold})
    return pd.DataFrame(ev), pd.DataFrame(qs)


def engine_answers(events, questions, embedder, cfg: EngineConfig, mode: str):
    """Replay each user chronologically through the engine, searching at question times."""
    out = {}
    for u in sorted(events.user_id.unique()):
        eng = MemoryEngine(embedder, cfg)
        fact_mem: dict[str, str] = {}
        e = events[events.user_id == u].sort_values("at", kind="stable")
        q = questions[questions.user_id == u].sort_values("asked_at", kind="stable")
        items = [(r.at, 0, r) for r in e.itertuples()] + [(r.asked_at, 1, r) for r in q.itertuples()]
        for _, is_q, r in sorted(items, key=lambda x: (x[0], x[1])):
            if not is_q:
                res = eng.add_fact(r.fact_stripped, u, importance=r.importance, at=r.at)
                for a in res.actions:
                    fact_mem[r.fact_id] = a.target_id
            else:
                out[r.question_id] = (eng.search(r.text, u, mode=mode, now=r.asked_at), fact_mem.copy())
        eng.close()
    return out


@pytest.fixture(scope="module")
def data():
    return make_timeline()


@pytest.fixture(scope="module")
def emb():
    return load_embedder("hash-test", cache=False)


@pytest.mark.parametrize(
    ("weights", "decay", "rate", "mode"),
    [((0.5, 0.3, 0.2), "exponential", 0.01, "balanced"),
     ((0.2, 0.6, 0.2), "step", 0.0, "fast"),
     ((0.4, 0.1, 0.5), "linear", 0.004, "deep")],
)
def test_batch_equals_engine(data, emb, weights, decay, rate, mode):
    events, questions = data
    cfg = EngineConfig(weights=weights, decay_function=decay, decay_rate=rate)
    ref = engine_answers(events, questions, emb, cfg, mode)
    prep = batch.prepare(events, questions, emb, mode=mode)
    th = (0.6, 0.5, 0.3)  # hash-test is not MiniLM: widemem's fallback table
    got = batch.score(prep, weights, decay, rate, th, keep_final=True)
    mem_fact = prep.memories["fact_id"].to_numpy()
    assert got.final is not None
    for qi, qid in enumerate(prep.question_ids):
        res, fact_mem = ref[qid]
        assert int(got.band[qi]) == {"high": 3, "moderate": 2, "low": 1, "none": 0}[str(res.confidence.value).lower()]
        if not len(res):
            assert got.top1_mem[qi] == -1
            continue
        # Top-1 is the same memory (engine ids map back to the fact that created them).
        top_fact = mem_fact[got.top1_mem[qi]]
        assert fact_mem[top_fact] == res[0].memory.id
        assert got.top1_final[qi] == pytest.approx(res[0].final_score, abs=1e-9)
        assert got.top1_sim[qi] == pytest.approx(res[0].raw_similarity_score, abs=1e-6)
        # Same final score for every returned memory.
        present = prep.mem[qi] >= 0
        by_id = {fact_mem[mem_fact[m]]: f for m, f in zip(prep.mem[qi][present], got.final[qi][present], strict=True)}
        for sm in res:
            assert by_id[sm.memory.id] == pytest.approx(sm.final_score, abs=1e-9)
        # Gold rank agrees with the engine's list.
        gold_ids = {fact_mem[f] for f in questions.set_index("question_id").loc[qid, "gold_fact_ids"] if f in fact_mem}
        ranks = [i + 1 for i, sm in enumerate(res) if sm.memory.id in gold_ids]
        assert got.gold_rank[qi] == (ranks[0] if ranks else np.inf)


def test_fast_boost_equals_engine_boost():
    rng = np.random.default_rng(1)
    sim = np.sort(rng.random((200, 12)), axis=1)[:, ::-1].copy()
    sim[:50, 8:] = np.nan
    final = sim * 0.5 + rng.random(sim.shape) * 0.5
    final[np.isnan(sim)] = np.nan
    ref = two_pass_boost(final, sim, 0.15, 5)
    top = np.nanmax(final, axis=1)
    fast = final.copy()
    fast[:, :5] += (top * 0.15)[:, None]
    np.testing.assert_array_equal(np.nan_to_num(fast, nan=-9), np.nan_to_num(ref, nan=-9))


def test_inline_sum_equals_combine():
    rng = np.random.default_rng(2)
    s, i, r = rng.random(50), rng.random(50) * 12, rng.random(50)
    w = (0.37, 0.41, 0.22)
    imp10 = np.clip(i, 0, 10) / 10
    np.testing.assert_array_equal(w[0] * s + w[1] * imp10 + w[2] * r, combine(s, i, r, w))


def test_recency_reused_across_weights(data, emb):
    events, questions = data
    prep = batch.prepare(events, questions, emb)
    rec = batch.recency_matrix(prep, "exponential", 0.02)
    a = batch.score(prep, (0.6, 0.2, 0.2), "exponential", 0.02, (0.6, 0.5, 0.3), recency=rec)
    b = batch.score(prep, (0.6, 0.2, 0.2), "exponential", 0.02, (0.6, 0.5, 0.3))
    np.testing.assert_array_equal(a.top1_mem, b.top1_mem)
    np.testing.assert_array_equal(a.gold_rank, b.gold_rank)


def test_batch_equals_engine_on_hash_test_timelines(emb):
    from widemem_bench import timelines

    tl = timelines.generate(4, seed=1)
    events = tl.events[tl.events["fact_stripped"].fillna("").str.strip() != ""]
    questions = tl.questions
    cfg = EngineConfig()
    ref = engine_answers(events, questions, emb, cfg, "balanced")
    prep = batch.prepare(events, questions, emb)
    got = batch.score(prep, cfg.weights, cfg.decay_function, cfg.decay_rate, (0.6, 0.5, 0.3),
                      keep_final=True)
    mem_fact = prep.memories["fact_id"].to_numpy()
    n_checked = 0
    for qi, qid in enumerate(prep.question_ids):
        res, fact_mem = ref[qid]
        assert int(got.band[qi]) == {"high": 3, "moderate": 2, "low": 1, "none": 0}[str(res.confidence.value).lower()]
        if len(res):
            assert fact_mem[mem_fact[got.top1_mem[qi]]] == res[0].memory.id
            assert got.top1_final[qi] == pytest.approx(res[0].final_score, abs=1e-9)
            n_checked += 1
    assert n_checked > 100
