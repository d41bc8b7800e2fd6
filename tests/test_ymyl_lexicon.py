"""The lexicon YMYL classifier (EngineConfig.ymyl_classifier="lexicon") on hand-made cases."""

from __future__ import annotations

import datetime as dt

import pytest
from _embedders import make_test_embedder

from widemem_bench.engine import EngineConfig, MemoryEngine, classify_ymyl, compute_recency
from widemem_bench.engine.ymyl import YMYL_CATEGORIES, classify_ymyl_lexicon, classify_ymyl_with
from widemem_bench.engine.ymyl_lexicon import is_condition_name, is_drug_name, lexicon_hits

T0 = dt.datetime(2025, 1, 1, 9)

MEDICAL = (
    ("takes metformin for type 2 diabetes", "pharmaceutical"),
    ("uses an albuterol inhaler", "pharmaceutical"),
    ("has irregular blood sugar levels", "health"),
)
EVERYDAY = ("likes green tea", "works as a barista", "went running on Sunday")


@pytest.mark.parametrize(("text", "category"), MEDICAL)
def test_lexicon_flags_medical_facts_that_widemem_misses(text, category):
    m = classify_ymyl_lexicon(text)
    assert m is not None and m.is_strong and m.category == category
    # The reason the lexicon exists: widemem's rule reads none of these as strong.
    w = classify_ymyl(text)
    assert w is None or not w.is_strong


@pytest.mark.parametrize("text", EVERYDAY)
def test_lexicon_leaves_everyday_facts_alone(text):
    assert classify_ymyl_lexicon(text) is None
    assert lexicon_hits(text) == []


def test_lexicon_keeps_widemems_verdicts_and_avoids_word_traps():
    # A strong widemem match is returned unchanged; a weak one stays weak without a lexicon hit.
    assert classify_ymyl_lexicon("allergic to peanuts") == classify_ymyl("allergic to peanuts")
    weak = classify_ymyl_lexicon("saw the doctor")
    assert weak is not None and weak.strength == "weak"
    for text in ("works at a lithium battery plant", "keeps bee hives", "drives an MG roadster",
                 "owns 3 units downtown", "sister Allegra lives in Rome"):
        assert classify_ymyl_lexicon(text) is None, text
    m = classify_ymyl_lexicon("takes lithium for bipolar disorder")
    assert m is not None and m.is_strong and {"lithium", "bipolar disorder"} <= set(m.terms)
    assert classify_ymyl_lexicon("has Crohn\u2019s disease") is not None  # curly apostrophe


def test_lexicon_respects_the_configured_categories():
    # Without the pharmaceutical and health categories the drug hit does not count.
    only_money = ("financial", "legal")
    assert classify_ymyl_lexicon("takes metformin", only_money) is None
    m = classify_ymyl_lexicon("takes metformin", YMYL_CATEGORIES)
    assert m is not None and m.category == "pharmaceutical"


def test_name_lookups():
    assert is_drug_name("Metformin") and is_drug_name("Lipitor") and not is_drug_name("green tea")
    assert is_condition_name("asthma") and is_condition_name("migraines") and not is_condition_name("jazz")


def test_classifier_choice_and_its_errors():
    assert EngineConfig().ymyl_classifier == "widemem"
    assert EngineConfig(ymyl_classifier="lexicon").ymyl_classifier == "lexicon"
    assert EngineConfig.from_dict({"ymyl_classifier": "lexicon"}).to_dict()["ymyl_classifier"] == "lexicon"
    with pytest.raises(ValueError, match="ymyl_classifier must be one of widemem, lexicon, got 'llm'") as err:
        EngineConfig(ymyl_classifier="llm")
    assert "\n" not in str(err.value)
    assert classify_ymyl_with("takes metformin", classifier="widemem") is None
    assert classify_ymyl_with("takes metformin", classifier="lexicon") is not None
    with pytest.raises(ValueError, match="classifier must be one of"):
        classify_ymyl_with("takes metformin", classifier="regex")


@pytest.mark.parametrize(("classifier", "protected"), [("lexicon", True), ("widemem", False)])
def test_engine_keeps_a_60_day_old_medication_fresh_with_the_lexicon(classifier, protected):
    eng = MemoryEngine(make_test_embedder(),
                       EngineConfig(ymyl_enabled=True, ymyl_classifier=classifier))
    med = eng.add_fact("takes metformin for type 2 diabetes", "u", importance=5, at=T0).memories[0]
    tea = eng.add_fact("likes green tea", "u", importance=2, at=T0).memories[0]
    hits = {h.memory.id: h for h in eng.search("what do I take and drink?", "u",
                                                now=T0 + dt.timedelta(days=60))}
    decayed = compute_recency(60.0, "exponential", 0.01)
    assert hits[tea.id].recency_score == pytest.approx(decayed)
    assert tea.importance == 2.0
    if protected:
        assert hits[med.id].recency_score == 1.0 and med.importance == 8.0
        assert med.ymyl_category == "pharmaceutical"
    else:
        assert hits[med.id].recency_score == pytest.approx(decayed) and med.importance == 5.0
