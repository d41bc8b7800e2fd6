"""Policy modules of the reference engine, pinned to widemem 2.0.2's values.

Pure Python + numpy, no models: the whole file runs in a few seconds.
tests/test_engine_policy_widemem.py additionally checks the same functions
against widemem itself when it is installed.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widemem_bench.engine.confidence import (
    BAND_CODES,
    DEFAULT_THRESHOLDS,
    ENV_VARS,
    Confidence,
    UncertaintyMode,
    band_codes,
    build_uncertainty_guidance,
    confidence_from_similarity,
    model_key,
    resolve_thresholds,
    thresholds_for_model,
)
from widemem_bench.engine.config import EngineConfig
from widemem_bench.engine.frustration import (
    FRUSTRATION_PHRASES,
    build_frustration_response,
    detect_frustration,
    extract_fact,
)
from widemem_bench.engine.modes import (
    RETRIEVAL_MODE_PRESETS,
    ModePreset,
    RetrievalMode,
    auto_mode,
    effective_top_k,
    fetch_k,
    resolve_mode,
    route_indices,
    route_tier,
    validate_mode,
)
from widemem_bench.engine.recency import compute_recency, half_life_days
from widemem_bench.engine.scoring import (
    FACTUAL_WEIGHTS,
    TEMPORAL_WEIGHTS,
    adapt_weights,
    classify_query,
    combine,
    rank_desc,
    score_and_rank,
    topic_multiplier,
    two_pass_boost,
)
from widemem_bench.engine.ymyl import STRONG_TERMS, WEAK_TERMS, YMYL_CATEGORIES, classify_ymyl
from widemem_bench.harness import calibrated_thresholds


@pytest.fixture(autouse=True)
def _no_env_thresholds(monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


# ---------------------------------------------------------------- recency
@pytest.mark.parametrize(
    ("age", "expected"),
    [(0, 1.0), (6.999, 1.0), (7, 0.7), (29.999, 0.7), (30, 0.4), (89.999, 0.4), (90, 0.1), (1000, 0.1), (-5, 1.0)],
)
def test_step_decay_boundaries(age, expected):
    assert compute_recency(age, "step") == expected
    assert compute_recency(np.array([age, age]), "step").tolist() == [expected, expected]


def test_exponential_half_life_about_69_days():
    assert half_life_days(0.01) == pytest.approx(69.3147, abs=1e-3)
    assert compute_recency(math.log(2) / 0.01, "exponential", 0.01) == pytest.approx(0.5)
    assert compute_recency(69.0, "exponential") == pytest.approx(0.5016, abs=1e-4)
    assert compute_recency(0.0, "exponential") == 1.0
    assert compute_recency(-3.0, "exponential") == 1.0  # future-stamped memories count as new


def test_linear_and_none():
    assert compute_recency(50, "linear", 0.01) == pytest.approx(0.5)
    assert compute_recency(100, "linear", 0.01) == 0.0
    assert compute_recency(250, "linear", 0.01) == 0.0
    assert compute_recency(10_000, "none") == 1.0


def test_recency_vectorised_matches_scalar_and_keeps_nan():
    ages = np.array([-1.0, 0.0, 3.5, 7.0, 45.0, 200.0, np.nan])
    for fn in ("exponential", "linear", "step", "none"):
        arr = compute_recency(ages, fn, 0.02)
        assert isinstance(arr, np.ndarray) and arr.shape == ages.shape
        assert np.isnan(arr[-1])
        for a, r in zip(ages[:-1], arr[:-1], strict=True):
            assert r == pytest.approx(compute_recency(float(a), fn, 0.02), rel=1e-12)
    assert isinstance(compute_recency(np.float64(3.0), "step"), float)


def test_recency_bad_input():
    with pytest.raises(ValueError, match="decay_function"):
        compute_recency(1.0, "cubic")
    with pytest.raises(ValueError, match="decay_rate"):
        compute_recency(1.0, "exponential", -0.1)
    with pytest.raises(ValueError, match="age_days"):
        compute_recency(float("nan"), "exponential")


# ---------------------------------------------------------------- per-query weights
@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("When did I move to Boston?", "temporal"),
        ("what year did I graduate", "temporal"),
        ("Have I been to Paris recently?", "temporal"),  # temporal beats the factual prefix
        ("Compare my jobs before the move", "temporal"),  # temporal beats multi-hop
        ("Where do I live?", "factual"),
        ("  WHO is my dentist", "factual"),  # stripped and lowercased
        ("what is my sister's name", "factual"),
        ("how many cats do I have", "factual"),
        ("what color is my car", "factual"),  # short "what " query
        ("what sort of food did my sister like to eat", "factual"),  # 10 words
        ("what sort of food did my sister like to eat there", "other"),  # 11 words
        ("what kind of music and movies and books and games do I like the most", "other"),  # 14 words
        ("what's my doctor's name?", "other"),  # "what's" is not "what "
        ("What is the relationship between my job and my hobby", "other"),  # multi-hop veto
        ("how does my diet relate to my health", "other"),
        ("Do I like jazz?", "other"),  # "do " is not a factual prefix
        ("tell me about my family", "other"),
        ("where", "other"),  # the prefix needs its trailing space
    ],
)
def test_classify_query(query, kind):
    assert classify_query(query) == kind


def test_adapt_weights_values():
    w = (0.5, 0.3, 0.2)
    assert adapt_weights("when did I start my job", w) == TEMPORAL_WEIGHTS == (0.40, 0.10, 0.50)
    assert adapt_weights("where do I work", w) == FACTUAL_WEIGHTS == (0.75, 0.10, 0.15)
    assert adapt_weights("what is the connection between my jobs", w) == w
    assert adapt_weights("I like hiking a lot", (0.6, 0.2, 0.2)) == (0.6, 0.2, 0.2)
    # a long "what " query is factual only through an explicit prefix ("what are ")
    assert adapt_weights("what kind of music and films and books do you think I like", w) == w
    assert adapt_weights("what are all the places and people and things I saw last summer", w) == FACTUAL_WEIGHTS
    with pytest.raises(ValueError, match="query"):
        classify_query(None)  # type: ignore[arg-type]


def test_combine_and_importance_clamp():
    out = combine([0.8, 0.2], [7.0, 15.0], [1.0, 0.5], (0.5, 0.3, 0.2))
    assert out.tolist() == pytest.approx([0.5 * 0.8 + 0.3 * 0.7 + 0.2, 0.5 * 0.2 + 0.3 * 1.0 + 0.1])
    assert float(combine(0.5, -4.0, 0.0, (0.5, 0.3, 0.2))) == pytest.approx(0.25)
    grid = combine(np.ones((2, 1)), np.array([[0.0, 10.0, 5.0]]), 1.0, (0.5, 0.3, 0.2))
    assert grid.shape == (2, 3)


def test_topic_multiplier_max_and_never_below_one():
    tw = (("health", 2.0), ("Work", 1.5), ("junk", 0.2))
    assert topic_multiplier("my health at work", tw) == 2.0
    assert topic_multiplier("WORKS at Acme", tw) == 1.5  # substring, case-insensitive
    assert topic_multiplier("junk mail", tw) == 1.0  # weights below 1 never demote
    assert topic_multiplier("nothing", tw) == 1.0
    assert topic_multiplier("health", {}) == 1.0
    assert topic_multiplier("health", {"health": 3.0}) == 3.0


# ---------------------------------------------------------------- two-pass boost
def test_two_pass_boost_worked_example():
    # final sorted: c0 (0.9) > c1 > ... ; top-5 by similarity are c1..c5.
    final = np.array([0.90, 0.80, 0.70, 0.60, 0.50, 0.40, 0.30])
    sim = np.array([0.10, 0.90, 0.80, 0.70, 0.60, 0.50, 0.05])
    out = two_pass_boost(final, sim, 0.15)
    expected = final.copy()
    expected[1:6] += 0.90 * 0.15
    assert out.tolist() == pytest.approx(expected.tolist())
    assert final[1] == 0.80  # input untouched
    assert rank_desc(out, prior=final).tolist() == [1, 0, 2, 3, 4, 5, 6]  # 0.935 > 0.9 > 0.835


def test_two_pass_boost_needs_five_candidates():
    final = np.array([0.9, 0.8, 0.7, 0.6])
    assert two_pass_boost(final, final, 0.2).tolist() == final.tolist()


def test_two_pass_boost_similarity_ties_prefer_higher_final_then_position():
    # six candidates with equal similarity: the boost goes to the 5 best by final,
    # and among equal finals to the earlier positions.
    final = np.array([0.1, 0.5, 0.5, 0.3, 0.4, 0.2])
    sim = np.full(6, 0.7)
    out = two_pass_boost(final, sim, 0.1)
    assert (out - final > 0).tolist() == [False, True, True, True, True, True]
    final2 = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    out2 = two_pass_boost(final2, sim, 0.1)
    assert (out2 - final2 > 0).tolist() == [True, True, True, True, True, False]


def test_rank_after_boost_breaks_ties_by_pre_boost_score():
    # c0 is boosted from 0.5 to exactly 0.75 and ties c1 (0.75, not boosted):
    # widemem re-sorts a list already sorted by the pre-boost score, so c1 stays ahead.
    final = np.array([0.5, 0.75, 1.0, 0.25, 0.125, 0.0625])
    sim = np.array([0.9, 0.0, 0.8, 0.7, 0.6, 0.5])
    boosted = two_pass_boost(final, sim, 0.25)
    assert boosted[0] == boosted[1] == 0.75
    assert rank_desc(boosted, prior=final).tolist() == [2, 1, 0, 3, 4, 5]
    assert rank_desc(boosted).tolist() == [2, 0, 1, 3, 4, 5]  # without the prior: position order
    # the same through score_and_rank: final = similarity (weights 1/0/0) x exact multipliers
    sim2 = np.array([0.5, 0.03125, 0.25, 0.125, 0.0625, 0.0625])
    mult = np.array([1.0, 24.0, 4.0, 2.0, 2.0, 1.0])
    out, order = score_and_rank(sim2, 0.0, 0.0, (1.0, 0.0, 0.0), multiplier=mult, similarity_first=True, boost=0.25)
    assert out.tolist() == [0.75, 0.75, 1.25, 0.5, 0.375, 0.3125]
    assert order.tolist() == [2, 1, 0, 3, 4, 5]


def test_rank_desc_is_stable_and_puts_absent_last():
    assert rank_desc([0.5, 0.7, 0.5, np.nan, -np.inf, 0.7]).tolist() == [1, 5, 0, 2, 3, 4]


_cand = st.floats(min_value=-0.2, max_value=1.0, allow_nan=False).map(lambda x: round(x, 2))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.tuples(_cand, _cand, st.booleans()), min_size=0, max_size=9), min_size=1, max_size=6
    ),
    boost=st.sampled_from([0.10, 0.15, 0.20]),
)
def test_two_pass_boost_2d_agrees_with_1d(rows, boost):
    width = max(len(r) for r in rows) or 1
    final = np.full((len(rows), width), np.nan)
    sim = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        for j, (f, s, absent) in enumerate(r):
            if not absent:
                final[i, j] = f
                sim[i, j] = s
            else:
                final[i, j] = -np.inf
    out2 = two_pass_boost(final, sim, boost)
    for i in range(len(rows)):
        keep = np.isfinite(final[i]) & np.isfinite(sim[i])
        out1 = two_pass_boost(final[i][keep], sim[i][keep], boost)
        np.testing.assert_array_equal(out2[i][keep], out1)
        np.testing.assert_array_equal(out2[i][~keep], final[i][~keep])  # absent untouched
        # and the 1-D result equals a plain-Python replay of widemem's sorts
        np.testing.assert_array_equal(out1, _widemem_replay(final[i][keep], sim[i][keep], boost))


def _widemem_replay(final, sim, boost):
    # Plain-Python replay of widemem's sorts over [position, final, similarity] rows.
    rows = [[j, float(f), float(s)] for j, (f, s) in enumerate(zip(final, sim, strict=True))]
    scored = sorted(rows, key=lambda r: r[1], reverse=True)
    if len(scored) >= 5:
        top = {int(r[0]) for r in sorted(scored, key=lambda r: r[2], reverse=True)[:5]}
        top_final = scored[0][1]
        for r in scored:
            if int(r[0]) in top:
                r[1] += top_final * boost
    return np.array([r[1] for r in rows])


def test_score_and_rank_plain_and_similarity_first():
    sim = np.array([0.2, 0.9, 0.5, 0.4, 0.3, 0.1])
    imp = np.array([10.0, 1.0, 5.0, 5.0, 5.0, 9.0])
    rec = np.ones(6)
    final, order = score_and_rank(sim, imp, rec, (0.2, 0.6, 0.2))
    assert order[0] == 0 and np.all(np.diff(final[order]) <= 0)
    _, order_b = score_and_rank(sim, imp, rec, FACTUAL_WEIGHTS, similarity_first=True, boost=0.15)
    assert order_b[0] == 1
    mult = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 3.0])
    f3, o3 = score_and_rank(sim, imp, rec, (0.2, 0.6, 0.2), multiplier=mult)
    assert o3[0] == 5 and f3[5] == pytest.approx(3 * final[5])


# ---------------------------------------------------------------- modes
def test_retrieval_presets_are_widemems():
    assert RETRIEVAL_MODE_PRESETS[RetrievalMode.FAST] == ModePreset(10, 3, 0.10, False)
    assert RETRIEVAL_MODE_PRESETS[RetrievalMode.BALANCED] == ModePreset(25, 4, 0.15, True)
    assert RETRIEVAL_MODE_PRESETS[RetrievalMode.DEEP] == ModePreset(50, 5, 0.20, True)
    assert RETRIEVAL_MODE_PRESETS["balanced"]["similarity_boost"] == 0.15  # type: ignore[index]
    assert RetrievalMode.BALANCED.value == "balanced"


def test_fetch_k_and_top_k():
    assert fetch_k("balanced", "where do I live") == 100  # factual: 25 * 4
    assert fetch_k("deep", "where do I live") == 250
    assert fetch_k("balanced", "when did I move") == 75  # non-factual: 25 * 3
    assert fetch_k("fast", "tell me everything") == 30
    assert fetch_k("balanced", "where do I live", top_k=5) == 20
    assert fetch_k("balanced", "where do I live", similarity_first=False) == 75
    assert effective_top_k("deep", 5000) == 1000
    with pytest.raises(ValueError, match="top_k"):
        effective_top_k("fast", 0)


def test_validate_mode():
    assert validate_mode("fast") is RetrievalMode.FAST
    assert validate_mode(RetrievalMode.DEEP) is RetrievalMode.DEEP
    assert validate_mode("auto") == "auto"
    # auto_mode's own cases live in tests/test_auto_mode.py
    assert auto_mode("where do I live") is RetrievalMode.FAST
    assert resolve_mode("auto", "where do I live") is RetrievalMode.FAST
    for bad in ("Fast", "turbo", "", None, 3):
        with pytest.raises(ValueError, match="unknown mode"):
            validate_mode(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "tier"),
    [
        ("Tell me about my sister", "theme"),
        ("give me an overview of my week please", "theme"),
        ("Where do I live and who do I live with these days", "fact"),
        ("island trips I took with my family this year", "fact"),  # "is" prefix, no word boundary
        ("my favourite food", "fact"),  # <= 4 words
        ("list the places I traveled to with my family", "summary"),
    ],
)
def test_route_tier(query, tier):
    assert route_tier(query) == tier


def test_route_indices():
    facts_only = ["fact"] * 4
    for pref in ("fact", "summary", "theme"):
        assert route_indices(facts_only, pref) == [0, 1, 2, 3]  # only facts: nothing changes
    mixed = ["fact", "theme", "summary", "fact", "theme", "theme"]
    assert route_indices(mixed, "theme") == [1, 4, 5]
    assert route_indices(mixed, "summary") == [2, 1, 4, 5]
    assert route_indices(mixed, "fact") == [0, 3, 2]


# ---------------------------------------------------------------- confidence
def test_threshold_table_minilm_vs_others():
    assert thresholds_for_model("all-MiniLM-L6-v2") == (0.60, 0.30, 0.20)
    assert thresholds_for_model("sentence-transformers/all-MiniLM-L6-v2") == (0.60, 0.30, 0.20)
    assert thresholds_for_model("/models/ALL-MINILM-L6-V2") == (0.60, 0.30, 0.20)
    assert thresholds_for_model("model") == DEFAULT_THRESHOLDS == (0.60, 0.50, 0.30)
    assert thresholds_for_model("BAAI/bge-small-en-v1.5") == (0.60, 0.50, 0.30)
    assert thresholds_for_model("paraphrase-MiniLM-L6-v2") == (0.60, 0.50, 0.30)
    assert model_key(None) == ""


@pytest.mark.parametrize(
    ("sim", "minilm", "other"),
    [(0.61, "high", "high"), (0.60, "high", "high"), (0.55, "moderate", "moderate"), (0.45, "moderate", "low"),
     (0.30, "moderate", "low"), (0.25, "low", "none"), (0.20, "low", "none"), (0.19, "none", "none")],
)
def test_band_cutoffs(sim, minilm, other):
    assert confidence_from_similarity(sim, resolve_thresholds("all-MiniLM-L6-v2")).value == minilm
    assert confidence_from_similarity(sim, resolve_thresholds("text-embedding-3-small")).value == other


def test_band_codes_vectorised():
    t = (0.6, 0.3, 0.2)
    sims = np.array([[0.9, 0.6, 0.59, 0.3], [0.25, 0.2, 0.1, np.nan]])
    codes = band_codes(sims, t)
    assert codes.dtype == np.int8
    assert codes.tolist() == [[3, 3, 2, 2], [1, 1, 0, 0]]
    for s, c in zip(sims.ravel(), codes.ravel(), strict=True):
        assert BAND_CODES[confidence_from_similarity(float(s), t)] == c
    assert confidence_from_similarity(None, t) is Confidence.NONE


def test_env_overrides_read_at_every_call(monkeypatch):
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_MODERATE", "0.4")
    assert resolve_thresholds("all-MiniLM-L6-v2") == (0.60, 0.40, 0.20)
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_HIGH", "0.8")
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_LOW", "0.1")
    assert resolve_thresholds("other") == (0.80, 0.40, 0.10)
    # an explicit setting is not replaced by the environment
    assert resolve_thresholds("other", (0.7, 0.5, 0.3)) == (0.7, 0.5, 0.3)
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_LOW", "abc")
    with pytest.raises(ValueError, match="WIDEMEM_CONFIDENCE_LOW"):
        resolve_thresholds("other")
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_LOW", "0.5")
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_MODERATE", "0.45")
    with pytest.raises(ValueError, match="out of order"):
        resolve_thresholds("other")


def test_resolve_thresholds_rejects_bad_override():
    with pytest.raises(ValueError, match="out of order"):
        resolve_thresholds("m", (0.3, 0.5, 0.2))
    with pytest.raises(ValueError, match="thresholds"):
        resolve_thresholds("m", "fancy")
    assert resolve_thresholds("m", (0.5, 0.5, 0.5)) == (0.5, 0.5, 0.5)  # equal bounds allowed


def test_resolve_thresholds_calibrated(monkeypatch):
    import widemem_bench.calibration as calibration

    asked = []

    def fake(name):
        asked.append(name)
        return SimpleNamespace(thresholds=(0.7, 0.4, 0.25))

    monkeypatch.setattr(calibration, "load_calibration", fake)
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_HIGH", "0.9")  # ignored for a calibrated table
    table = calibrated_thresholds  # harness/ reads the file; the engine's resolver is handed it
    assert resolve_thresholds("all-MiniLM-L6-v2", "calibrated", embedder_name="minilm-l6",
                              calibrated=table) == (0.7, 0.4, 0.25)
    assert asked == ["minilm-l6"]
    monkeypatch.undo()
    with pytest.raises(ValueError, match="no calibration file"):
        resolve_thresholds("x", "calibrated", embedder_name="no-such-embedder", calibrated=table)
    with pytest.raises(ValueError, match="thresholds_in_force"):
        resolve_thresholds("x", "calibrated", embedder_name="minilm-l6")


def _results(*contents):
    return [SimpleNamespace(memory=SimpleNamespace(content=c)) for c in contents]


GUIDANCE = {
    ("moderate", "strict"): "hedge",
    ("moderate", "helpful"): "answer",
    ("moderate", "creative"): "answer",
    ("low", "strict"): "refuse",
    ("low", "helpful"): "hedge",
    ("low", "creative"): "offer_guess",
    ("none", "strict"): "refuse",
    ("none", "helpful"): "refuse",
    ("none", "creative"): "offer_guess",
}


@pytest.mark.parametrize(("cell", "action"), sorted(GUIDANCE.items()))
def test_guidance_table(cell, action):
    band, mode = cell
    res = _results("x" * 100, "lives in Boston", "works at Acme", "a fourth one")
    g = build_uncertainty_guidance(Confidence(band), UncertaintyMode(mode), res)
    assert g is not None and g["action"] == action and isinstance(g["message"], str) and g["message"]
    if band == "low" and mode in ("helpful", "creative"):
        assert set(g) == {"action", "message", "related"}
        assert g["related"] == ["x" * 80, "lives in Boston", "works at Acme"]
    else:
        assert set(g) == {"action", "message"}


def test_guidance_high_is_none_and_bad_values():
    for mode in UncertaintyMode:
        assert build_uncertainty_guidance(Confidence.HIGH, mode, _results("a")) is None
    assert build_uncertainty_guidance("low", "helpful", [])["related"] == []  # type: ignore[index]
    with pytest.raises(ValueError, match="mode"):
        build_uncertainty_guidance("low", "lenient", [])
    with pytest.raises(ValueError, match="confidence"):
        build_uncertainty_guidance("medium", "strict", [])


# ---------------------------------------------------------------- frustration
def test_fourteen_phrases():
    assert len(FRUSTRATION_PHRASES) == 14 == len(set(FRUSTRATION_PHRASES))
    for p in FRUSTRATION_PHRASES:
        assert detect_frustration(f"Hey, {p.upper()} something!")
    assert not detect_frustration("Where do I live?")


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("I told you I moved to Boston!", "I moved to Boston"),
        ("You forgot I live in San Francisco", "live in San Francisco"),
        ("I told you my blood type is O negative!", "my blood type is O negative"),
        ("Remember I'm allergic to peanuts?", "I'm allergic to peanuts"),
        ("I mentioned that my sister is a nurse.", "my sister is a nurse"),
        ("i specifically said no meetings on Friday", "no meetings on Friday"),
        ("I told you that!", None),  # vague
        ("I told you about it", None),  # too short
        ("you forgot", None),
    ],
)
def test_extract_fact(message, fact):
    assert extract_fact(message) == fact


def test_frustration_actions():
    assert build_frustration_response("Where do I live?", "none", "helpful") is None
    r = build_frustration_response("I told you I moved to Boston!", Confidence.HIGH, "helpful")
    assert r is not None and r["action"] == "reassure" and r["pin_fact"] is None
    r = build_frustration_response("I told you I moved to Boston!", Confidence.MODERATE, "strict")
    assert r is not None and r["action"] == "recover_and_pin"  # MODERATE does not reassure
    assert r["pin_fact"] == "I moved to Boston" and r["pin_importance"] == 9.0
    r = build_frustration_response("You forgot I live in San Francisco", "none", "creative")
    assert r is not None and r["pin_fact"] == "live in San Francisco"
    r = build_frustration_response("Ugh, I told you this before!", "low", "helpful")
    assert r is not None and r["action"] == "apologize_and_ask" and r["pin_fact"] is None
    assert set(r) == {"action", "message", "pin_fact"}


# ---------------------------------------------------------------- YMYL
def test_term_counts():
    assert sum(len(v) for v in STRONG_TERMS.values()) == 62
    assert sum(len(v) for v in WEAK_TERMS.values()) == 78
    assert tuple(STRONG_TERMS) == tuple(WEAK_TERMS) == YMYL_CATEGORIES


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("allergic to peanuts", "medical"),
        ("My blood pressure is 140/90", "health"),
        ("keeps an EpiPen in her bag", "safety"),
        ("filed my tax return late", "financial"),  # financial comes before tax
        ("has a W-2 from Acme", "tax"),
        ("my credit card ends in 4242", "financial"),
        ("watch for the drug interaction with ibuprofen", "pharmaceutical"),
        ("saw the doctor at the hospital", "health"),  # two weak hits -> strong
        ("my lawyer went to court", "legal"),
    ],
)
def test_ymyl_strong(text, category):
    m = classify_ymyl(text)
    assert m is not None and m.category == category and m.strength == "strong" and m.is_strong


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I saw my doctor today", "health"),
        ("opened a bank account", "financial"),  # strong
        ("my premium went up", "insurance"),
        ("the pharmacist was kind", "pharmaceutical"),
        ("I hired a lawyer", "legal"),
    ],
)
def test_ymyl_weak_or_strong(text, category):
    m = classify_ymyl(text)
    assert m is not None and m.category == category
    expected = "strong" if "account" in text else "weak"
    assert m.strength == expected


def test_ymyl_none_and_word_boundaries():
    assert classify_ymyl("bankrupt joke about a doctorate") is None
    assert classify_ymyl("likes jazz and hiking") is None
    assert classify_ymyl("allergic") is None  # the weak stem "allerg" needs a word boundary
    m = classify_ymyl("doctor")
    assert m is not None and m.terms == ("doctor",)
    # weak tie between categories: the earlier category wins
    m = classify_ymyl("a loan from the lawyer")
    assert m is not None and m.category == "financial" and m.strength == "weak"
    with pytest.raises(ValueError, match="categories"):
        classify_ymyl("doctor", categories=("wellness",))


# ---------------------------------------------------------------- config
def test_config_defaults_are_widemems():
    c = EngineConfig()
    assert c.weights == (0.5, 0.3, 0.2)
    assert (c.decay_function, c.decay_rate) == ("exponential", 0.01)
    assert c.adapt_weights and c.two_pass_boost
    assert c.thresholds is None and c.confidence == "similarity"
    assert not c.ymyl_enabled
    assert (c.ymyl_importance_floor, c.ymyl_decay_immunity, c.ymyl_contradiction_threshold) == (8.0, True, 0.6)
    assert (c.resolver, c.candidate_k, c.similarity_floor, c.extractor) == ("append", 5, None, "verbatim")
    assert c.default_mode == "balanced" and c.topic_weights == () and c.age_from == "clock"
    assert c.max_text_chars == 50_000 and c.uncertainty_mode == "helpful"


def test_config_normalises_lists():
    c = EngineConfig.from_dict(
        {"weights": [0.6, 0.2, 0.2], "thresholds": [0.7, 0.4, 0.2], "topic_weights": [["health", 2]]}
    )
    assert c.weights == (0.6, 0.2, 0.2) and c.thresholds == (0.7, 0.4, 0.2)
    assert c.topic_weights == (("health", 2.0),)
    assert EngineConfig(topic_weights={"work": 1.5}).topic_weights == (("work", 1.5),)  # type: ignore[arg-type]
    assert EngineConfig(thresholds="calibrated").thresholds == "calibrated"
    assert hash(c) == hash(EngineConfig.from_dict(c.to_dict()))


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"weights": (0.5, 0.3, 0.3)}, "weights must sum to 1"),
        ({"weights": (0.5, 0.5)}, "weights"),
        ({"weights": (1.2, -0.2, 0.0)}, r"weights\[0\]"),
        ({"thresholds": (0.3, 0.5, 0.2)}, "thresholds out of order"),
        ({"thresholds": (0.6, 0.3, -0.1)}, "thresholds low"),
        ({"thresholds": "auto"}, "thresholds"),
        ({"decay_function": "cubic"}, "decay_function"),
        ({"decay_rate": -1}, "decay_rate"),
        ({"resolver": "magic"}, "resolver"),
        ({"extractor": "gpt"}, "extractor"),
        ({"candidate_k": 0}, "candidate_k"),
        ({"similarity_floor": 1.5}, "similarity_floor"),
        ({"default_mode": "turbo"}, "default_mode"),
        ({"age_from": "event"}, "age_from"),
        ({"confidence": "vibes"}, "confidence"),
        ({"adapt_weights": "yes"}, "adapt_weights"),
        ({"topic_weights": (("a", -1.0),)}, "topic_weights"),
        ({"ymyl_importance_floor": 11}, "ymyl_importance_floor"),
        ({"llm_timeout": 0}, "llm_timeout"),
    ],
)
def test_config_validation_errors(kwargs, key):
    with pytest.raises(ValueError, match=key) as err:
        EngineConfig(**kwargs)
    assert "\n" not in str(err.value)


def test_config_weights_tolerance_and_unknown_key():
    EngineConfig(weights=(0.5, 0.3, 0.2 + 5e-7))
    with pytest.raises(ValueError, match="unknown EngineConfig key 'wieghts'"):
        EngineConfig.from_dict({"wieghts": [0.5, 0.3, 0.2]})
    with pytest.raises(ValueError, match="unknown EngineConfig key"):
        EngineConfig().replace(decay="step")
    assert EngineConfig().replace(decay_function="step").decay_function == "step"
    assert "llm_api_key" not in repr(EngineConfig(llm_api_key="secret"))


def test_one_query_fast_path_equals_the_general_path() -> None:
    """score_and_rank on one query (the engine's call, a 1-D fast path) must give exactly
    the final scores and order of the same query as a one-row batch (the general path),
    on tie-heavy inputs: ties are where a wrong tie-break would show."""
    from widemem_bench.engine import scoring

    rng = np.random.default_rng(7)
    for _ in range(3000):
        n = int(rng.integers(0, 30))
        sim = np.round(rng.random(n), 1)
        imp = rng.integers(0, 11, n).astype(float)
        rec = np.round(rng.random(n), 1)
        for first in (True, False):
            f1, o1 = scoring.score_and_rank(sim, imp, rec, (0.75, 0.1, 0.15), similarity_first=first)
            f2, o2 = scoring.score_and_rank(
                sim[None], imp[None], rec[None], (0.75, 0.1, 0.15), similarity_first=first
            )
            assert np.array_equal(f1, f2[0]) and np.array_equal(o1, o2[0])
