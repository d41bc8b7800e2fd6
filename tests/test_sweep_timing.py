"""1,000 weight/decay settings over the default timelines, warm cache, in under 60 s (slow)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from widemem_bench.engine import batch
from widemem_bench.experiments.sweep_weights import simplex_grid
from widemem_bench.timelines.loading import load_dataset


def thousand_settings() -> list[dict]:
    """231 simplex points (step 0.05) x decay settings, cut to exactly 1,000."""
    decays = [("exponential", 0.005), ("exponential", 0.01), ("exponential", 0.02),
              ("linear", 0.005), ("step", 0.0)]
    grid = simplex_grid(0.05)
    out = [{"weights": tuple(w), "decay_function": f, "decay_rate": r} for f, r in decays for w in grid]
    return out[:1000]


@pytest.mark.slow
@pytest.mark.models
def test_thousand_settings_under_a_minute():
    from widemem_bench.embedders import load_embedder

    tl, _ = load_dataset({"name": "timelines", "n_users": 300, "seed": 0, "span_days": 365,
                          "questions_per_user": 40}, {})
    emb = load_embedder("minilm-l6")
    prep = batch.prepare(tl.events, tl.questions, emb)  # encodes through the cache
    settings = thousand_settings()
    assert len(settings) == 1000
    t0 = time.perf_counter()
    hits = [float(np.mean(np.isfinite(s.gold_rank) & (s.gold_rank == 1)))
            for _, s in batch.sweep(prep, settings, (0.6, 0.3, 0.2))]
    elapsed = time.perf_counter() - t0
    print(f"1000 settings x {prep.n_questions} questions: {elapsed:.1f} s")
    assert len(hits) == 1000 and len(set(hits)) > 10
    assert elapsed < 60
