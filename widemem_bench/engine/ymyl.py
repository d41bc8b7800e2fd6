"""YMYL ("your money or your life") classification, widemem 2.0.2's regex rule.

Term lists are widemem's (62 strong, 78 weak, over 8 categories). Terms match
as whole words, case-insensitively. Some weak terms can never fire as written
in widemem (the stem "allerg" between word boundaries only matches the bare
stem); they are kept so counts and behaviour stay identical.

The end of the module adds the project's own classifier (widemem's rule plus
the lexicon of ``engine.ymyl_lexicon``), chosen by ``EngineConfig.ymyl_classifier``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from widemem_bench.engine.ymyl_lexicon import lexicon_hits

YMYL_CATEGORIES: tuple[str, ...] = (
    "health", "medical", "financial", "legal", "safety", "insurance", "tax", "pharmaceutical",
)

STRONG_TERMS: dict[str, tuple[str, ...]] = {
    "health": (
        "blood pressure", "cholesterol level", "diabetes diagnosis", "mental health",
        "cancer treatment", "anxiety disorder", "depression diagnosis",
    ),
    "medical": (
        "lab results", "medical condition", "chronic condition", "medical history",
        "treatment plan", "medical emergency",
        # Allergies are tagged strong because of the anaphylaxis risk.
        "allergic to", "allergy", "allergies", "anaphylaxis", "allergic reaction",
    ),
    "financial": (
        "bank account", "savings account", "credit score", "credit card", "mortgage rate",
        "loan payment", "tax return", "retirement fund", "401k", "IRA contribution",
        "pension plan", "capital gains",
    ),
    "legal": (
        "power of attorney", "child custody", "legal action", "court order", "legal counsel",
        "divorce proceedings", "estate planning",
    ),
    "safety": (
        "emergency contact", "next of kin", "blood type", "epipen", "pacemaker", "DNR order",
        "medical alert",
    ),
    "insurance": (
        "insurance policy", "insurance premium", "insurance claim", "health insurance",
        "life insurance", "coverage plan",
    ),
    "tax": (
        "tax return", "tax filing", "W-2", "1099", "IRS audit", "capital gains tax",
        "tax deduction",
    ),
    "pharmaceutical": (
        "side effect", "drug interaction", "contraindication", "over-the-counter",
        "prescription medication",
    ),
}

WEAK_TERMS: dict[str, tuple[str, ...]] = {
    "health": (
        "doctor", "hospital", "diagnosis", "symptom", "allerg", "medication", "prescription",
        "surgery", "disease", "illness", "therapy", "therapist", "depression", "anxiety",
        "diabetes", "cancer",
    ),
    "medical": (
        "clinic", "treatment", "dosage", "vaccine", "chronic", "acute", "ambulance", "nurse",
        "specialist", "referral", "x-ray", "MRI", "scan",
    ),
    "financial": (
        "bank", "savings", "invest", "portfolio", "stock", "bond", "mortgage", "loan", "debt",
        "credit", "salary", "income", "retirement", "pension", "budget", "expense",
    ),
    "legal": (
        "lawyer", "attorney", "lawsuit", "court", "contract", "custody", "divorce", "estate",
        "liability", "compliance", "regulation", "verdict", "settlement",
    ),
    "safety": ("evacuation", "flood", "fire alarm"),
    "insurance": (
        "insurance", "premium", "deductible", "coverage", "claim", "copay", "beneficiary",
    ),
    "tax": ("deduction", "audit", "write-off", "exemption", "filing"),
    "pharmaceutical": ("drug", "pharmaceutical", "dosage", "pharmacist", "prescription"),
}

# Two or more weak hits (occurrences, not distinct terms) in one category read
# as strong.
WEAK_HITS_FOR_STRONG = 2


def _pattern(terms: Sequence[str]) -> re.Pattern[str]:
    # One alternation per category, terms in table order, whole words only.
    return re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b", re.IGNORECASE)


_STRONG_RE = {c: _pattern(t) for c, t in STRONG_TERMS.items()}
_WEAK_RE = {c: _pattern(t) for c, t in WEAK_TERMS.items()}

Strength = Literal["strong", "weak"]


@dataclass(frozen=True)
class YMYLMatch:
    """A YMYL verdict: the category, "strong" or "weak", and the matched text
    pieces (lowercased) that decided it."""

    category: str
    strength: Strength
    terms: tuple[str, ...]

    @property
    def is_strong(self) -> bool:
        return self.strength == "strong"


def validate_categories(categories: Sequence[str], name: str = "categories") -> tuple[str, ...]:
    if isinstance(categories, str):
        raise ValueError(f"{name} must be a sequence of category names, got a string")
    out = tuple(categories)
    for c in out:
        if c not in STRONG_TERMS:
            raise ValueError(f"{name} has unknown YMYL category {c!r}: expected some of {', '.join(YMYL_CATEGORIES)}")
    return out


def classify_ymyl(text: str, categories: Sequence[str] = YMYL_CATEGORIES) -> YMYLMatch | None:
    """widemem's YMYL rule over ``categories`` (in that order).

    Any strong term makes the first category (in order) that has one a strong
    match. Otherwise weak hits are counted per category; the category with
    most hits wins (the earlier one on a tie): 2+ hits is strong, 1 is weak.
    No hit gives None.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    cats = categories if categories is YMYL_CATEGORIES else validate_categories(categories)
    lowered = text.lower()
    for c in cats:
        found = _STRONG_RE[c].findall(lowered)
        if found:
            return YMYLMatch(c, "strong", tuple(found))
    best: tuple[str, list[str]] | None = None
    for c in cats:
        found = _WEAK_RE[c].findall(lowered)
        if found and (best is None or len(found) > len(best[1])):
            best = (c, found)
    if best is None:
        return None
    c, found = best
    strength: Strength = "strong" if len(found) >= WEAK_HITS_FOR_STRONG else "weak"
    return YMYLMatch(c, strength, tuple(found))


# ---------------------------------------------------------------- the project's classifiers
# Not widemem: widemem relies on its extraction LLM's YMYL tag and uses this regex
# only as a fallback, which misses medications and oblique mentions. The engine has
# no LLM by default, so `EngineConfig.ymyl_classifier` can pick a stand-in.
YMYL_CLASSIFIERS: tuple[str, ...] = ("widemem", "lexicon")


def classify_ymyl_lexicon(text: str, categories: Sequence[str] = YMYL_CATEGORIES) -> YMYLMatch | None:
    """widemem's rule, then the project's lexicon (``engine.ymyl_lexicon``).

    A strong widemem match is kept as it is. Otherwise any lexicon hit (a drug
    name, a condition name or a medical usage pattern) in one of ``categories``
    makes the text strong, in the category of its first hit; without one,
    widemem's verdict (weak or None) stands.
    """
    base = classify_ymyl(text, categories)
    if base is not None and base.is_strong:
        return base
    cats = categories if categories is YMYL_CATEGORIES else validate_categories(categories)
    hits = [(c, term) for c, term in lexicon_hits(text) if c in cats]
    if not hits:
        return base
    return YMYLMatch(hits[0][0], "strong", tuple(term for _, term in hits))


_CLASSIFIER_FUNCS: dict[str, Callable[[str, Sequence[str]], YMYLMatch | None]] = {
    "widemem": classify_ymyl,
    "lexicon": classify_ymyl_lexicon,
}


def validate_classifier(name: object, key: str = "ymyl_classifier") -> str:
    name = getattr(name, "value", name)
    if name not in _CLASSIFIER_FUNCS:
        raise ValueError(f"{key} must be one of {', '.join(YMYL_CLASSIFIERS)}, got {name!r}")
    return str(name)


def classify_ymyl_with(text: str, categories: Sequence[str] = YMYL_CATEGORIES,
                       classifier: str = "widemem") -> YMYLMatch | None:
    """The YMYL verdict of ``classifier`` ("widemem" or "lexicon") over ``categories``.

    Memoised: widemem re-classifies every candidate's text at every search, and a
    memory's text never changes, so each (text, categories, classifier) is read once.
    """
    return _classify_cached(text, tuple(categories), validate_classifier(classifier, "classifier"))


@functools.lru_cache(maxsize=1 << 16)
def _classify_cached(text: str, categories: tuple[str, ...], classifier: str) -> YMYLMatch | None:
    return _CLASSIFIER_FUNCS[classifier](text, categories)
