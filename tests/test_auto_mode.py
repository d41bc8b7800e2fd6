"""auto_mode: hand-made queries per mode, and the engine accepting mode="auto"."""

from __future__ import annotations

import datetime as dt

import pytest
from _embedders import make_test_embedder

from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.engine.modes import RetrievalMode, auto_mode, fetch_k, resolve_mode


@pytest.mark.parametrize(
    ("query", "mode"),
    [
        ("where do I live?", "fast"),
        ("what's my bank?", "fast"),
        ("Which meds am I on right now?", "fast"),
        ("tell me everything about me", "deep"),
        ("Can you give me an OVERVIEW of my life as you know it?", "deep"),
        ("paint me a picture of who I am from what you know", "deep"),
        ("what's my background, according to you?", "deep"),
        ("I told you this already! Where do I work?", "balanced"),
        ("Don't you remember? what's my diet", "balanced"),
        ("if I ended up in the ER, what drugs am I on?", "balanced"),
        ("you know my name, right? what is it?", "balanced"),  # two sentences
        ("remind me what medical condition I told you about", "balanced"),
    ],
)
def test_auto_mode_hand_made(query: str, mode: str) -> None:
    assert auto_mode(query) is RetrievalMode(mode)


def test_auto_mode_rejects_non_string() -> None:
    with pytest.raises(ValueError, match="query"):
        auto_mode(None)  # type: ignore[arg-type]


def test_resolve_and_fetch_follow_the_chosen_mode() -> None:
    assert resolve_mode("auto", "where do I live?") is RetrievalMode.FAST
    assert resolve_mode("auto", "summarize everything you remember about me") is RetrievalMode.DEEP
    # a short factual lookup fetches 10*3 candidates instead of balanced's 25*4
    assert fetch_k(resolve_mode("auto", "where do I live?"), "where do I live?") == 30
    assert fetch_k("balanced", "where do I live?") == 100


def test_engine_search_accepts_auto() -> None:
    eng = MemoryEngine(make_test_embedder(), EngineConfig())
    t0 = dt.datetime(2025, 1, 1)
    for i, fact in enumerate(["lives in Boston", "works at Acme", "is vegetarian", "has a dog"]):
        eng.add_fact(fact, "u1", importance=5.0, at=t0 + dt.timedelta(days=i))
    now = t0 + dt.timedelta(days=10)
    fast = eng.search("where do I live?", "u1", mode="auto", now=now)
    assert fast.mode is RetrievalMode.FAST
    deep = eng.search("tell me everything about me", "u1", mode="auto", now=now)
    assert deep.mode is RetrievalMode.DEEP
    assert len(deep) == 4
