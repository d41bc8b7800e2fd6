"""Same frame, new value: whether a fact says its predicate now holds another value than
an older fact of the same subject ("now works in sales" after "works in marketing"),
from the shape of the two predicates alone, knowing no attribute or value.
"""

from __future__ import annotations

import difflib
import re

from widemem_bench.engine.slot_patterns import _MONTHS, _NEGATION, _STOP, _stem

# A fact that says its predicate changed, in general English: a temporal-change adverb
# ("now", "these days") or a verb of change ("switched to", "became"). Without one, two
# facts in the same frame may both hold ("plays chess", "plays the cello").
_CHANGE = re.compile(
    r"\b(?:now|nowadays|these\s+days|currently|at\s+the\s+moment|at\s+present|from\s+now\s+on|"
    r"instead|switched\s+to|changed\s+to|moved\s+on\s+to|became|has\s+become|"
    rf"have\s+become|since\s+(?:{_MONTHS}|last\s+\w+|(?:early|late|mid)[- ]?{_MONTHS}|the\s+move|then))\b",
    re.IGNORECASE,
)
# Words that add a value next to the old one ("now also", "a second", "two more").
_ADDITIVE = re.compile(
    r"\b(?:also|too|another|as\s+well|second|third|more|both|plus|in\s+addition|additionally|extra|"
    r"two|three|four|several|again|newly)\b",
    re.IGNORECASE,
)
_FRAME_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|:")


def frame_tokens(rest: str) -> list[str]:
    """Stemmed lower-case tokens of a predicate, change markers taken out ("now works as X" -> work as x)."""
    toks = [t.lower() for t in _FRAME_TOKEN.findall(_CHANGE.sub(" ", rest.replace("’", "'")))]
    return [t if t in _STOP or t == ":" else _stem(t) for t in toks]


def changed_value(new_rest: str, old_rest: str) -> bool:
    """Whether ``new_rest`` says its frame now holds another value than ``old_rest``.

    Both are predicates of the same subject (the subject cut off). True only when
    the new one carries a change marker, no word that adds a value, and no
    negation, and the two differ in exactly one span: the same frame ("works in
    _", "occupation: _") around it, at least half as long as the span on either side,
    a content word on each side of the span.
    Knows no attribute or value: only the frame's shape.
    """
    if not _CHANGE.search(new_rest) or _ADDITIVE.search(new_rest) or _NEGATION.search(new_rest):
        return False
    if _NEGATION.search(old_rest):
        return False
    a, b = frame_tokens(old_rest), frame_tokens(new_rest)
    if not a or not b:
        return False
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = ops[0]
    frame = a[:i1] + a[i2:]

    def content(toks: list[str]) -> bool:
        return any(t not in _STOP and t != ":" for t in toks)

    # The frame must say something ("works in", "occupation :"), not just "is a", and the
    # value must be at most twice the frame: "gets a serious reaction from X" and
    # "gets chest tightness on stairs" share one light verb, not a frame.
    small = 2 * len(frame) >= max(i2 - i1, j2 - j1)
    return small and content(a[i1:i2]) and content(b[j1:j2]) and (content(frame) or ":" in frame)
