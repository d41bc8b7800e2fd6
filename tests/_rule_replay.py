"""Replay facts through the engine with the `rule` resolver (shared by the resolver tests)."""

from __future__ import annotations

import datetime as dt

from _embedders import make_test_embedder

from widemem_bench.engine import EngineConfig, MemoryEngine


def replay_rule(*facts: str, k: int = 5, t0: dt.datetime) -> tuple[list[str], list[str]]:
    """(stored contents, action kinds) after adding ``facts`` one a day from ``t0`` for user "u"."""
    eng = MemoryEngine(make_test_embedder(), EngineConfig(resolver="rule", candidate_k=k))
    kinds = []
    for day, fact in enumerate(facts):
        res = eng.add_fact(fact, "u", at=t0 + dt.timedelta(days=day))
        kinds.extend(a.kind for a in res.actions)
    stored = sorted(m.content for m in eng.memories("u"))
    eng.close()
    return stored, kinds
