"""The engine's per-call shortcuts (perf issue 16) give exactly what the general code gives.

Each shortcut is checked bit for bit against the code it stands in for: the 1-D scorer
against ``score_and_rank``, the decay shortcut against ``compute_recency``, the stored
time columns against ``timedelta.total_seconds()``, the direct ``ScoredMemory`` fill
against the dataclass, the default search plans against ``effective_top_k`` / ``fetch_k``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

import numpy as np
import pytest
from _embedders import make_test_embedder

from widemem_bench.engine import EngineConfig, MemoryEngine, RetrievalMode, compute_recency
from widemem_bench.engine.checks import check_importance as _check_importance
from widemem_bench.engine.confidence import resolve_thresholds
from widemem_bench.engine.modes import effective_top_k, fetch_k, search_plan
from widemem_bench.engine.recency import DECAY_FUNCTIONS, decay
from widemem_bench.engine.results import ScoredMemory, _scored
from widemem_bench.engine.scoring import (
    FACTUAL_WEIGHTS,
    TEMPORAL_WEIGHTS,
    classify_query,
    rank_hits,
    score_and_rank,
)
from widemem_bench.engine.store import (
    Change,
    Memory,
    MemoryStore,
    epoch_us,
    from_epoch_us,
    importance01,
    utcnow,
    utcnow_us,
)

T0 = dt.datetime(2024, 1, 1)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit (NaN equal to NaN, -0.0 not equal to 0.0)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_rank_hits_is_score_and_rank(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 14))
    sim = np.round(rng.uniform(-0.2, 1.0, n), int(rng.integers(1, 4)))  # rounding makes ties
    imp = np.round(rng.uniform(0.0, 10.0, n))
    rec = np.round(rng.uniform(0.0, 1.0, n), 2)
    if seed % 7 == 3:
        sim[int(rng.integers(n))] = np.nan  # the general path's absent entries
    if seed % 11 == 5:
        rec[int(rng.integers(n))] = np.inf
    mult = rng.choice([1.0, 1.5, 2.0], n) if seed % 3 == 0 else None
    weights = [(0.5, 0.3, 0.2), TEMPORAL_WEIGHTS, FACTUAL_WEIGHTS][seed % 3]
    imp01 = np.clip(imp, 0.0, 10.0) / 10.0
    for boost in (None, 0.15):
        final, order = rank_hits(sim, imp01, rec, weights, mult, boost)
        ref_final, ref_order = score_and_rank(sim, imp, rec, weights, multiplier=mult,
                                              similarity_first=boost is not None, boost=boost or 0.0)
        assert _same(final, ref_final)
        assert order.tolist() == ref_order.tolist()


def test_decay_is_compute_recency():
    ages = np.array([-3.0, -0.0, 0.0, 0.5, 6.99, 7.0, 29.9, 30.0, 89.0, 90.0, 400.0, 1e9, np.inf, -np.inf, np.nan])
    with np.errstate(invalid="ignore"):  # rate 0 x inf age, in both
        for name in DECAY_FUNCTIONS:
            for rate in (0.0, 0.01, 0.3):
                for sub in (ages, ages[:1], ages[1:2], ages[-1:], ages[:-3]):
                    assert _same(decay(sub, name, rate), compute_recency(sub, name, rate)), (name, rate, sub)


def test_epoch_us_differences_are_total_seconds():
    rng = random.Random(0)
    lo, hi = dt.datetime(1830, 1, 1), dt.datetime(2110, 1, 1)
    span = int((hi - lo).total_seconds() * 1e6)
    for _ in range(2000):
        a = lo + dt.timedelta(microseconds=rng.randrange(span))
        b = lo + dt.timedelta(microseconds=rng.randrange(span))
        ua, ub = epoch_us(a), epoch_us(b)
        assert ua is not None and ub is not None
        assert (ua - ub) / 1e6 == (a - b).total_seconds()
    assert epoch_us(dt.datetime(1700, 1, 1)) is None  # outside the exact range
    assert epoch_us(dt.datetime(2024, 1, 1, tzinfo=dt.UTC)) is None


def test_importance01_is_numpy_clip():
    for v in (-0.0, 0.0, 5e-324, 3.3, 7, 9.999999999, 10.0, 10.5, -1.0, np.inf, -np.inf, np.nan):
        ref = np.clip(np.array([v], dtype=np.float64), 0.0, 10.0) / 10.0
        assert _same(np.array([importance01(v)]), ref), v


def _engine_with_times(**cfg) -> tuple[MemoryEngine, list[dt.datetime]]:
    eng = MemoryEngine(make_test_embedder(), EngineConfig(**cfg))
    times = [dt.datetime(1990, 5, 1, 3, 4, 5, 678901), T0, T0 + dt.timedelta(days=40, microseconds=7),
             T0 + dt.timedelta(days=400, seconds=3), dt.datetime(2090, 1, 1)]
    for i, t in enumerate(times):
        eng.add_fact(f"I like green apple number {i}", "u", importance=float(i) * 2.5, at=t)
    return eng, times


@pytest.mark.parametrize("age_from", ["clock", "insert"])
@pytest.mark.parametrize("decay_function", ["exponential", "step"])
def test_search_recency_is_the_timedelta_formula(age_from, decay_function, monkeypatch):
    import widemem_bench.engine.engine as engine_module
    import widemem_bench.engine.planner as planner_module

    clock = [dt.datetime(2023, 3, 1, 1, 2, 3, 456789)]  # the wall clock: insert times and "now"
    monkeypatch.setattr(planner_module, "utcnow", lambda: clock[0])  # insert times (add)
    monkeypatch.setattr(engine_module, "utcnow", lambda: clock[0])
    monkeypatch.setattr(engine_module, "utcnow_us", lambda: epoch_us(clock[0]))
    eng, _ = _engine_with_times(age_from=age_from, decay_function=decay_function)
    now = T0 + dt.timedelta(days=100, microseconds=1)
    clock[0] = dt.datetime(2024, 7, 9, 10, 11, 12, 131415)
    out = eng.search("green apple", "u", now=now)
    assert len(out) == 5
    for hit in out:
        m = hit.memory
        age_td = (now - m.created_at) if age_from == "clock" else (clock[0] - m.inserted_at)
        expect = compute_recency(np.array([age_td.total_seconds() / 86400.0]), decay_function, 0.01)[0]
        assert hit.recency_score == expect
        assert hit.importance_score == np.clip(m.importance, 0, 10) / 10


def test_search_with_a_time_outside_the_columns_takes_the_memory_path():
    eng, _ = _engine_with_times()
    old = eng.add_fact("I like green apple from long ago", "u", importance=3.0, at=dt.datetime(1700, 1, 1))
    assert eng.store._users["u"].odd == 1
    now = T0 + dt.timedelta(days=3)
    for expect in (6, 5):
        out = eng.search("green apple", "u", now=now)
        assert len(out) == expect
        for hit in out:
            age = (now - hit.memory.created_at).total_seconds() / 86400.0
            assert hit.recency_score == compute_recency(np.array([age]), "exponential", 0.01)[0]
        eng.delete(old.memories[0].id, "u")
        assert eng.store._users["u"].odd == 0


def _check_hits(eng: MemoryEngine, now: dt.datetime) -> dict[str, ScoredMemory]:
    """Every hit's importance and recency are those of the memory the store holds now."""
    hits = eng.search("green apple", "u", now=now, top_k=50)
    assert {h.memory.id for h in hits} == {m.id for m in eng.memories("u")}
    for hit in hits:
        m = eng.get(hit.memory.id, "u")
        assert m == hit.memory
        assert hit.importance_score == importance01(m.importance)
        age = (now - m.created_at).total_seconds() / 86400.0
        assert hit.recency_score == compute_recency(np.array([age]), "exponential", 0.01)[0]
    return {h.memory.id: h for h in hits}


def test_columns_follow_updates_pins_and_deletes():
    eng, _ = _engine_with_times(resolver="oracle")
    now = T0 + dt.timedelta(days=10)
    first = eng.memories("u")[0]
    slot = ("user", "fruit")
    eng.add_fact("I like green apple the best", "u", importance=1.0, at=T0, slot=slot)
    eng.add_fact("I like green apple pie", "u", importance=4.0, at=T0)  # the update is not the last row
    _check_hits(eng, now)  # the index is built: the update below is in place
    updated = eng.add_fact("I like green apple the most", "u", importance=8.0, at=T0 + dt.timedelta(days=2),
                           slot=slot)
    assert [a.kind for a in updated.actions] == ["UPDATE"]
    assert _check_hits(eng, now)[updated.memories[0].id].importance_score == 0.8
    pinned = eng.pin("I like green apple number 7", "u", importance=9.5, at=T0).memories[0]
    assert _check_hits(eng, now)[pinned.id].importance_score == 0.95
    assert eng.delete(first.id, "u")
    assert first.id not in _check_hits(eng, now)


def test_scored_is_the_dataclass():
    m = Memory("id", "u", "text", 5.0, T0, T0, T0)
    fast = _scored(m, 0.5, 0.4, 0.3, 0.2)
    slow = ScoredMemory(m, 0.5, 0.4, 0.3, 0.2)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert list(fast.__dict__) == [f.name for f in dataclasses.fields(ScoredMemory)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.final_score = 1.0  # type: ignore[misc]


def test_search_plan_is_effective_top_k_and_fetch_k():
    for mode in RetrievalMode:
        for top_k in (None, 1, 7, 25, 1000, 5000):
            for first in (False, True):
                assert search_plan(mode, top_k, first) == (
                    effective_top_k(mode, top_k), fetch_k(mode, "q", top_k, similarity_first=first))
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="top_k must be a positive int"):
            search_plan(RetrievalMode.FAST, bad, False)  # type: ignore[arg-type]


def test_search_modes_resolve_as_before():
    eng, _ = _engine_with_times()

    class Name(str):
        pass

    assert eng.search("green apple", "u", mode="deep", now=T0).mode is RetrievalMode.DEEP
    assert eng.search("green apple", "u", mode=RetrievalMode.FAST, now=T0).mode is RetrievalMode.FAST
    assert eng.search("green apple", "u", mode=Name("fast"), now=T0).mode is RetrievalMode.FAST
    assert eng.search("green apple", "u", mode="auto", now=T0).mode is RetrievalMode.FAST
    with pytest.raises(ValueError, match=r"unknown mode 'turbo': expected one of fast, balanced, deep, auto"):
        eng.search("green apple", "u", mode="turbo")
    with pytest.raises(ValueError, match="unknown mode"):
        eng.search("green apple", "u", mode=["fast"])  # type: ignore[arg-type]


def test_classify_query_cache_keeps_errors():
    assert classify_query("where do I work") == classify_query("where do I work") == "factual"
    with pytest.raises(ValueError, match="query must be a string"):
        classify_query(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query must be a string"):
        classify_query(["where"])  # type: ignore[arg-type]


def test_env_thresholds_are_not_kept_when_bad(monkeypatch):
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_LOW", "abc")
    for _ in range(2):  # a failure is never cached
        with pytest.raises(ValueError, match="WIDEMEM_CONFIDENCE_LOW must be a number, got 'abc'"):
            resolve_thresholds("all-MiniLM-L6-v2")
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_LOW", "0.1")
    assert resolve_thresholds("all-MiniLM-L6-v2") == (0.6, 0.3, 0.1)
    monkeypatch.delenv("WIDEMEM_CONFIDENCE_LOW")
    assert resolve_thresholds("all-MiniLM-L6-v2") == (0.6, 0.3, 0.2)


def test_importance_check_keeps_its_rules():
    assert _check_importance(5) == 5.0 and _check_importance(np.float64(2.5)) == 2.5
    for bad, msg in ((True, "expected a number"), ("5", "expected a number"), (11.0, "must be in 0-10"),
                     (float("nan"), "must be in 0-10")):
        with pytest.raises(ValueError, match=msg):
            _check_importance(bad)


@pytest.mark.parametrize(("vector", "message"), [
    ([np.nan] + [0.0] * 3, "vector: vector contains NaN or inf"),
    ([np.inf] + [0.0] * 3, "vector: vector contains NaN or inf"),
    ([2.0, 0.0, 0.0, 0.0], "vector: vector norm 2 is not 1"),
    ([1e30, 0.0, 0.0, 0.0], "vector: vector norm 1e[+]30 is not 1"),
])
def test_store_refuses_bad_vectors_with_the_same_messages(vector, message):
    store = MemoryStore(dim=4)
    m = Memory("id", "u", "text", 5.0, T0, T0, T0)
    with pytest.raises(ValueError, match=message):
        store.apply([Change("ADD", m, np.array(vector, dtype=np.float32))])
    store.apply([Change("ADD", m, np.zeros(4, dtype=np.float32))])  # tfidf's "no known term"
    assert len(store) == 1


def test_utcnow_is_naive_wall_clock():
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    now, now_us = utcnow(), utcnow_us()
    after = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert now.tzinfo is None and before <= now <= after
    assert now_us is not None and epoch_us(before) <= now_us <= epoch_us(after)  # type: ignore[operator]
    assert from_epoch_us(now_us) == from_epoch_us(now_us) and epoch_us(from_epoch_us(now_us)) == now_us
