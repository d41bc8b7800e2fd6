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
# A note's heading that names whom it is about ("Sis. Patience Boateng: member since 2015",
# "Client Harpreet Sandhu: ..."): two or more capitalised words before the first colon. It is
# the note's subject, not a predicate frame: two notes under one heading share a name, not a
# frame ("... : daughter in youth choir" is not retired by "... : member since 2015"). A
# one-word label ("Occupation: nurse") or a lower-case one ("shift pattern: nights") stays a frame.
_NAME_HEADING = re.compile(r"^\s*(?P<h>(?:[A-Z][\w'.-]*\s+)+[A-Z][\w'.-]*)\s*:\s*")


def _heading(rest: str) -> tuple[str, str]:
    """(the name heading, lower-cased, or "", the text after it)."""
    m = _NAME_HEADING.match(rest)
    return (" ".join(m.group("h").lower().split()), rest[m.end():]) if m else ("", rest)


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
    (new_head, new_pred), (old_head, old_pred) = _heading(new_rest), _heading(old_rest)
    if new_head or old_head:
        if new_head != old_head:  # two notes about differently named people, or one not headed
            return False
        new_rest, old_rest = new_pred, old_pred  # the frame is read after the shared heading
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
