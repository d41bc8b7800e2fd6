"""The seed's worked example with all-MiniLM-L6-v2 (widemem's default embedder and thresholds)."""

from __future__ import annotations

import pytest

from widemem_bench.engine import Confidence, MemoryEngine

pytestmark = pytest.mark.models

FACTS = ("live in San Francisco", "work as a data engineer", "allergic to peanuts")


@pytest.fixture(scope="module")
def minilm():
    from widemem_bench.embedders import load_embedder

    return load_embedder("minilm-l6", cache=False)


def test_seed_example(minilm):
    assert minilm.model_id == "all-MiniLM-L6-v2"
    engine = MemoryEngine(minilm)
    for fact in FACTS:
        engine.add_fact(fact, "seed-user", importance=7)

    doctor = engine.search("what's my doctor's name?", "seed-user")
    assert doctor.confidence == Confidence.NONE and not doctor.has_relevant
    assert doctor.thresholds == (0.60, 0.30, 0.20)  # widemem's MiniLM row

    home = engine.search("where do I live?", "seed-user")
    assert home.confidence == Confidence.MODERATE and home.has_relevant
    assert home[0].memory.content == "live in San Francisco"
    # the verdict comes from the top result's raw cosine, between MODERATE and HIGH
    assert 0.30 <= home[0].raw_similarity_score < 0.60
    assert len(home) == 3  # search never filters by confidence
