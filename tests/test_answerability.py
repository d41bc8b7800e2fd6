"""Answerability scorer: text analysis, features, the JSON model, the engine hook, speed."""

from __future__ import annotations

import gc
import json
import time

import numpy as np
import pytest

from widemem_bench.answerability import (
    FEATURES,
    N_FEATURES,
    AnswerabilityModel,
    Scorer,
    assess_confidence,
    fit_model,
    query_features,
    set_scorer,
)
from widemem_bench.answerability.text import analyse
from widemem_bench.calibration import fit_thresholds
from widemem_bench.calibration.caps import apply_cap, cap_threshold
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig
from widemem_bench.harness import build_engine

F = {name: i for i, name in enumerate(FEATURES)}


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("where does my sister live?", "sister"),
        ("what's my best friend's job?", "best friend"),
        ("where am I living these days?", "user"),
        ("what's my go-to drink?", "user"),
        ("what colour is my bicycle?", "other"),
        ("what is my mom called?", "mother"),
    ],
)
def test_query_subject(text: str, subject: str) -> None:
    assert analyse(text, True).subject == subject


@pytest.mark.parametrize(
    ("text", "subject"),
    [("sister lives in Denver", "sister"), ("lives in Boston", "user"), ("uncle's name is Mason", "uncle"),
     ("works at her father's firm", "user"), ("Alice's father lives in Atlanta", "father")],
)
def test_memory_subject(text: str, subject: str) -> None:
    assert analyse(text).subject == subject


def test_intent_and_topics() -> None:
    assert analyse("where does my sister live?", True).intent == "where"
    assert analyse("how much do I pay for rent?", True).intent == "how_much"
    assert "place" in analyse("lives in Boston").topics
    # A specific topic word wins over a generic verb ("live") in a query.
    assert analyse("which illness do I live with?", True).topics == {"condition"}
    # No topic word: the question word says what kind of fact would answer.
    assert analyse("who do I call?", True).topics >= {"name"}


def test_features_tell_subject_mismatch_from_a_match() -> None:
    mems = ["lives in Boston", "works as a nurse at Bosch"]
    mine = query_features("where do I live?", mems, [0.55, 0.20])
    sister = query_features("where does my sister live?", mems, [0.50, 0.18])
    assert mine.shape == (N_FEATURES,) and mine.dtype == np.float64
    assert mine[F["subject_match"]] == 1 and mine[F["any_fit"]] == 1
    assert mine[F["fit_cosine"]] == pytest.approx(0.55)
    assert sister[F["about_relative"]] == 1 and sister[F["subject_match"]] == 0
    assert sister[F["any_fit"]] == 0 and sister[F["fit_cosine"]] == 0


def test_features_of_an_empty_search_and_ranks() -> None:
    empty = query_features("where do I live?", [], [])
    assert empty[F["top1_cosine"]] == -1 and empty[F["max_cosine"]] == -1 and empty[F["any_fit"]] == 0
    # top1 is the rank-1 result's cosine; max / margin look at all results.
    f = query_features("what do I drink?", ["watched Dune", "usually drinks chai"], [0.3, 0.6])
    assert f[F["top1_cosine"]] == pytest.approx(0.3)
    assert f[F["max_cosine"]] == pytest.approx(0.6)
    assert f[F["margin"]] == pytest.approx(0.3)
    assert f[F["lexical"]] == 1.0  # "drink" matches "drinks" after stemming


def _toy_model() -> AnswerabilityModel:
    coef = np.zeros(N_FEATURES)
    coef[F["any_fit"]] = 3.0
    coef[F["fit_cosine"]] = 4.0
    return AnswerabilityModel(FEATURES, (0.0,) * N_FEATURES, (1.0,) * N_FEATURES, tuple(coef), -2.0, 1.0, 0.0)


def test_model_json_round_trip_and_fast_path_agree() -> None:
    m = _toy_model()
    again = AnswerabilityModel.from_dict(json.loads(json.dumps(m.to_dict())))
    x = np.random.default_rng(0).normal(size=(20, N_FEATURES))
    assert np.allclose(m.predict_proba(x), again.predict_proba(x))
    assert [m.prob_one(r) for r in x] == pytest.approx(list(m.predict_proba(x)))
    bad = {**m.to_dict(), "features": list(FEATURES[::-1])}
    with pytest.raises(ValueError, match="features"):
        AnswerabilityModel.from_dict(bad)
    with pytest.raises(ValueError, match="missing keys"):
        AnswerabilityModel.from_dict({"features": list(FEATURES)})


def test_fit_model_learns_and_gives_out_of_fold_probabilities() -> None:
    rng = np.random.default_rng(1)
    n = 600
    y = rng.random(n) < 0.5
    x = rng.normal(size=(n, N_FEATURES))
    x[:, F["fit_cosine"]] += 2.0 * y  # one informative feature
    groups = np.repeat(np.arange(60), 10)
    model, oof = fit_model(x, y, groups, seed=0)
    assert oof.shape == (n,) and ((oof >= 0) & (oof <= 1)).all()
    assert model.platt_a > 0
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(y, oof) > 0.85
    assert int(np.argmax(np.abs(model.coef))) == F["fit_cosine"]
    with pytest.raises(ValueError, match="both"):
        fit_model(x, np.ones(n, bool), groups)


def test_cap_threshold_certifies_a_false_confidence_rate() -> None:
    scores = np.linspace(0, 1, 200)
    kind = np.ones(200, bool)
    cap = cap_threshold(scores, kind, 0.10, 0.1)
    assert cap["certified"]
    reach = (scores >= cap["threshold"]).mean()
    assert reach <= 0.10 and cap["upper_bound"] >= cap["rate"]
    # Nothing certifiable with two questions: the cap says so.
    assert not cap_threshold(np.array([0.2, 0.9]), np.ones(2, bool), 0.10, 0.1)["certified"]


def test_apply_cap_raises_moderate_only_when_needed() -> None:
    rng = np.random.default_rng(2)
    kinds = np.array(["answerable"] * 300 + ["hard_negative"] * 300)
    scores = np.r_[rng.uniform(0.4, 1.0, 300), rng.uniform(0.0, 0.7, 300)]
    y = kinds == "answerable"
    fit = fit_thresholds(scores, y, targets={"moderate": 0.6})
    capped, caps = apply_cap(fit, scores, y, kinds, {"hard_negative": 0.05})
    assert capped.bands["moderate"].threshold >= caps["hard_negative"]["threshold"]
    assert capped.bands["high"].threshold >= capped.bands["moderate"].threshold
    hn_rate = float(np.mean(scores[~y] >= capped.bands["moderate"].threshold))
    assert hn_rate <= 0.05
    loose, _ = apply_cap(fit, scores, y, kinds, {"hard_negative": 0.9})
    assert loose.bands["moderate"].threshold == fit.bands["moderate"].threshold


@pytest.fixture
def hash_scorer():
    set_scorer(Scorer("hash-test", _toy_model(), (0.9, 0.5, 0.2)))
    yield
    set_scorer(None, "hash-test")


def test_engine_uses_the_scorer_for_bands(hash_scorer) -> None:
    emb = load_embedder("hash-test", cache=False)
    eng = build_engine(emb, EngineConfig(confidence="answerability_v1"))
    eng.add_fact("lives in Boston", "u1")
    eng.add_fact("works as a nurse at Bosch", "u1")
    mine = eng.search("where do I live?", "u1")
    sister = eng.search("where does my sister live?", "u1")
    order = ["none", "low", "moderate", "high"]
    assert order.index(mine.confidence.value) > order.index(sister.confidence.value)
    assert sister.confidence.value in ("none", "low")
    # The same band the scorer gives outside the engine.
    assert assess_confidence("where do I live?", list(mine), embedder="hash-test") == mine.confidence.value


def test_missing_model_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"embedder= .*or model_id="):
        assess_confidence("q", [])
    from widemem_bench.answerability.scorer import load_scorer

    with pytest.raises(ValueError, match="no calibration file"):
        load_scorer("hash-test", directory=tmp_path)


def test_latency_well_under_a_millisecond(hash_scorer) -> None:
    """Features + probability of one search with 10 results; measured, not assumed."""
    from widemem_bench.answerability import load_scorer

    scorer = load_scorer("hash-test")
    rng = np.random.default_rng(3)
    mems = [f"memory number {i} lives in City{i} and works at Firm{i}" for i in range(400)]
    queries = [f"where does my {w} live number {i}?" for i, w in enumerate(["sister", "son", "boss", "x"] * 50)]
    sims = rng.uniform(-0.1, 0.9, size=(len(queries), 10)).tolist()
    picks = [[mems[(7 * q + j) % 400] for j in range(10)] for q in range(len(queries))]
    timings = []
    # CPU time of this process, not wall time: on the shared 2-core machine wall time also
    # counts the waits for a core behind other people's jobs (a fresh-clone run at load 10
    # measured 2.7 ms cold by the wall clock), which says nothing about this code's cost.
    # The garbage collector is off while timing, as timeit does: late in the suite the heap
    # holds models and frames, and a cyclic collection over it (1.1 ms CPU per query in a
    # fresh-clone `make test`, 0.17 ms alone) is the suite's cost, not this code's.
    gc.disable()
    try:
        for _ in range(2):  # first pass: every text analysed for the first time; second: cached
            t = time.process_time()
            for q, c, s in zip(queries, picks, sims, strict=True):
                scorer.band(scorer.probability(q, c, s))
            timings.append((time.process_time() - t) / len(queries) * 1e6)
    finally:
        gc.enable()
    print(f"answerability: {timings[0]:.1f} us CPU per query cold, {timings[1]:.1f} us warm")
    assert timings[0] < 1000 and timings[1] < 250


def test_committed_scorer_found_by_model_id_tells_subjects_apart() -> None:
    """The committed minilm-l6 scorer (no model load: the cosines are given)."""
    from types import SimpleNamespace

    def results(pairs):
        return [SimpleNamespace(memory=SimpleNamespace(content=c), raw_similarity_score=s) for c, s in pairs]

    stored = results([("lives in Boston", 0.62), ("works as a nurse at Bosch", 0.21)])
    order = ["none", "low", "moderate", "high"]
    mine = assess_confidence("where do I live these days?", stored, model_id="all-MiniLM-L6-v2")
    sister = assess_confidence("where does my sister live these days?", stored, model_id="all-MiniLM-L6-v2")
    assert order.index(mine) >= order.index("moderate") > order.index(sister)
    assert assess_confidence("where do I live?", [], embedder="minilm-l6") in ("none", "low")
