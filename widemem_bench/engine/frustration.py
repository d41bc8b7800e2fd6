"""Frustration handling as in widemem 2.0.2: detect a user complaining that
something was forgotten, pull the restated fact out of the message, and say
whether to reassure, pin the fact, or ask again."""

from __future__ import annotations

import re
from typing import Any

from widemem_bench.engine.confidence import (
    Confidence,
    UncertaintyMode,
    as_confidence,
    as_uncertainty_mode,
)

# widemem's 14 cues, matched as lowercase substrings of the message.
FRUSTRATION_PHRASES: tuple[str, ...] = (
    "i told you", "i already said", "remember when i", "i mentioned",
    "you forgot", "you should know", "we talked about", "i said before",
    "don't you remember", "how could you forget", "i literally told",
    "we discussed", "you should remember", "i specifically said",
)

PIN_IMPORTANCE = 9.0
# A pulled-out fact must be longer than this, so "I told you that!" pins nothing.
MIN_FACT_CHARS = 8
VAGUE_PHRASES: frozenset[str] = frozenset({
    "something", "something important", "that", "this", "it", "stuff", "things",
    "that thing", "about that", "about it", "this already", "that already",
    "this before", "that before",
})

# Lead-ins tried in this order; the fact is what follows, up to one optional
# closing . ! or ? at the end of the message. The lead-in may sit anywhere in
# the message. Whatever is skipped between lead-in and fact ("that", "I",
# "said") differs per family, which decides "I moved to Boston" (kept "I")
# versus "live in San Francisco" (dropped "I").
_TAIL = r"(.+?)[.!?]?$"
_FACT_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(lead + _TAIL, re.IGNORECASE)
    for lead in (
        r"(?:i\s+told\s+you|i\s+already\s+said|i\s+mentioned)\s+(?:that\s+)?",
        r"remember\s+(?:that\s+)?(?:i\s+)?(?:said\s+)?(?:that\s+)?",
        r"(?:you\s+forgot|don'?t\s+you\s+remember)\s+(?:that\s+)?(?:i\s+)?",
        r"(?:i\s+specifically\s+said|i\s+literally\s+told\s+you)\s+(?:that\s+)?",
    )
)


def _check_text(message: Any) -> str:
    if not isinstance(message, str):
        raise ValueError(f"message must be a string, got {type(message).__name__}")
    return message


def detect_frustration(message: str) -> bool:
    """True when the message contains one of the 14 phrases (any case)."""
    text = _check_text(message).lower()
    return any(phrase in text for phrase in FRUSTRATION_PHRASES)


def extract_fact(message: str) -> str | None:
    """The fact a frustrated user restates, or None.

    "I told you I moved to Boston!" gives "I moved to Boston"; "You forgot I
    live in San Francisco" gives "live in San Francisco". The first lead-in
    family that matches decides; its fact must be over 8 characters and not a
    vague phrase such as "that" or "this before", else the next family is tried.
    """
    text = _check_text(message).strip()
    for pattern in _FACT_PATTERNS:
        m = pattern.search(text)
        if m is None:
            continue
        fact = m.group(1).strip().rstrip("!.?")
        if len(fact) > MIN_FACT_CHARS and fact.lower() not in VAGUE_PHRASES:
            return fact
    return None


_MESSAGES = {
    "reassure": "I think I have something on this; let me look it up.",
    "recover_and_pin": "Sorry, I missed that. I am saving it now with high importance.",
    "apologize_and_ask": "Sorry, I cannot find that. Could you tell me once more? I will keep it this time.",
}


def build_frustration_response(
    message: str, confidence: Confidence | str, mode: UncertaintyMode | str
) -> dict[str, Any] | None:
    """widemem's response plan for a frustrated message.

    None without a frustration phrase. Otherwise a dict with ``action``,
    ``message`` and ``pin_fact``:
    - HIGH confidence: ``reassure`` (``pin_fact`` None). MODERATE is not
      enough: it only says something about the same person is stored.
    - a fact can be pulled out: ``recover_and_pin`` with ``pin_fact`` and
      ``pin_importance`` 9.0.
    - else ``apologize_and_ask`` (``pin_fact`` None).
    ``mode`` is validated but, as in widemem, does not change the plan.
    """
    band = as_confidence(confidence)
    as_uncertainty_mode(mode)
    if not detect_frustration(message):
        return None
    if band == Confidence.HIGH:
        return {"action": "reassure", "message": _MESSAGES["reassure"], "pin_fact": None}
    fact = extract_fact(message)
    if fact:
        return {
            "action": "recover_and_pin",
            "message": _MESSAGES["recover_and_pin"],
            "pin_fact": fact,
            "pin_importance": PIN_IMPORTANCE,
        }
    return {"action": "apologize_and_ask", "message": _MESSAGES["apologize_and_ask"], "pin_fact": None}
