"""Property test: random add / search / pin / delete sequences over several users.

On an in-memory and a SQLite engine driven with the same operations: no search
ever returns another user's memory, no call for one user changes another
user's memories, both backends agree, and a reopened SQLite store gives the
same search results as before closing.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from _embedders import make_test_embedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from widemem_bench.engine import EngineConfig, MemoryEngine

USERS = ("alice", "bob", "carol")
TEXTS = (
    "I live in Paris",
    "I moved to Rome",
    "I work at Acme",
    "I work as a nurse",
    "I am vegan",
    "My sister lives in Oslo",
    "I am allergic to peanuts",
    "I like green tea. I work at Globex",
)
QUERIES = ("where do I live?", "what is my job?", "tell me about my family", "when did I move?")
T0 = dt.datetime(2024, 1, 1)
EMB = make_test_embedder()

op = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(USERS), st.sampled_from(TEXTS), st.integers(0, 300)),
    st.tuples(st.just("pin"), st.sampled_from(USERS), st.sampled_from(TEXTS), st.integers(0, 300)),
    st.tuples(st.just("search"), st.sampled_from(USERS), st.sampled_from(QUERIES), st.integers(0, 400)),
    st.tuples(st.just("delete"), st.sampled_from(USERS), st.sampled_from(USERS), st.integers(0, 50)),
)


def _key(m) -> tuple:
    # inserted_at is the wall clock at insert, so it differs between the two engines.
    return (m.id, m.user_id, m.content, m.importance, m.created_at, m.updated_at, m.ymyl_category)


def _snapshot(engine: MemoryEngine) -> dict[str, list]:
    return {u: [_key(m) for m in engine.memories(u)] for u in USERS}


def _all_searches(engine: MemoryEngine) -> list:
    now = T0 + dt.timedelta(days=365)
    return [
        [(_key(h.memory), round(h.final_score, 12)) for h in engine.search(q, u, now=now)]
        for u in USERS
        for q in QUERIES
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=25), resolver=st.sampled_from(["append", "rule"]))
def test_random_sequences_keep_users_isolated_and_persist(ops, resolver):
    cfg = EngineConfig(resolver=resolver, extractor="rule", candidate_k=3)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        mem_engine = MemoryEngine(EMB, cfg)
        sql_engine = MemoryEngine(EMB, cfg, store_path=path)
        for kind, user, arg, day in ops:
            at = T0 + dt.timedelta(days=day)
            outcomes = []
            for engine in (mem_engine, sql_engine):
                others = {u: m for u, m in _snapshot(engine).items() if u != user}
                if kind == "add":
                    result = engine.add(arg, user, at=at)
                    assert all(m.user_id == user for m in result.memories)
                    outcomes.append([a.kind for a in result.actions])
                elif kind == "pin":
                    result = engine.pin(arg, user, importance=9.0, at=at)
                    assert all(m.user_id == user and m.importance >= 9.0 for m in result.memories)
                    outcomes.append([a.kind for a in result.actions])
                elif kind == "search":
                    hits = engine.search(arg, user, now=at)
                    assert all(h.memory.user_id == user for h in hits)
                    owned = {m.id for m in engine.memories(user)}
                    assert {h.memory.id for h in hits} <= owned
                    outcomes.append([(h.memory.id, round(h.final_score, 12)) for h in hits])
                else:
                    # ``user`` tries to delete one of ``arg``'s memories by id.
                    victims = engine.memories(arg)
                    if victims:
                        target = victims[day % len(victims)]
                        deleted = engine.delete(target.id, user_id=user)
                        assert deleted == (arg == user)
                        if arg != user:
                            others = {u: m for u, m in others.items() if u != arg} | {arg: [_key(v) for v in victims]}
                    outcomes.append(None)
                after = {u: m for u, m in _snapshot(engine).items() if u != user}
                if kind != "delete" or arg == user:
                    assert after == others, "a call for one user changed another user's memories"
            assert outcomes[0] == outcomes[1], "in-memory and SQLite backends disagree"
        before = _all_searches(sql_engine)
        assert before == _all_searches(mem_engine)
        sql_engine.close()
        with MemoryEngine(EMB, cfg, store_path=path) as reopened:
            assert _all_searches(reopened) == before
            assert _snapshot(reopened) == _snapshot(mem_engine)
