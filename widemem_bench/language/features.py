"""What a classifier needs from a (question, memory) pair of parses: numeric features.

One implementation of each comparison: ``subject_match`` (is the memory about whom the
question asks), ``type_match`` (does the memory hold a value of the asked type). The
answerability and resolver layers read these; they never compare parses themselves.
"""

from __future__ import annotations

import numpy as np

from widemem_bench.language.parse import Parse, Subject

# NAME is a proper noun NER did not type (common in lowercase chat): it may be any of these.
LOOSE = {"PERSON": {"NAME"}, "ORG": {"NAME", "PLACE"}, "PLACE": {"NAME", "ORG"}, "NAME": {"PERSON", "ORG", "PLACE"},
         "DATE": {"TIME"}, "TIME": {"DATE"}, "MONEY": {"NUMBER"}, "NUMBER": {"MONEY"}}

FEATURE_NAMES: tuple[str, ...] = (
    "q_user", "q_person", "q_relation", "q_other", "q_none",
    "subject_same", "subject_partial", "subject_conflict",
    "slot_typed", "holds_type", "holds_type_loose", "holds_any_value",
    "slot_head_in_memory", "head_and_value", "predicate_same", "noun_overlap",
    "m_values", "q_empty", "m_empty", "frame_answered", "frame_answered_typed",
    "owner_same", "q_head_mentioned",
)


def _owner(s: Subject) -> str:
    """Whose the subject is at the root: "user" for I and "my ...", else the owner or name."""
    return "user" if s.kind == "user" else (s.owner or s.name)


def frame_answers(q: Parse, m: Parse, typed: bool = False) -> bool:
    """Does the memory state the asked frame (same verb and preposition) for a matching
    subject: "which school does my son go to?" against "my son goes to St Mary's"? With
    ``typed``, the stated value must also be of an asked type (NAME counting loosely)."""
    if q.slot is None or not q.slot.frame:
        return False
    want = _core(q.slot.frame)
    expects = set(q.slot.expects) - {"OTHER"}
    loose = set(expects)
    for kind in expects:
        loose |= LOOSE.get(kind, set())
    for t in m.triples:
        if _core(t.frame) != want or subject_match(q.subject, m.clauses[t.clause].subject) == 0.0:
            continue
        if not typed or not expects or t.value_type in loose:
            return True
    return False


def _core(frame: str) -> tuple[str, str]:
    """(verb, last preposition): "move down to" and "move to" are one frame; "be nurse at" ->
    ("be", "at")."""
    words = frame.split()
    if not words:
        return ("", "")
    return (words[0], words[-1] if len(words) > 1 else "")


def subject_match(q: Subject, m: Subject) -> float:
    """1.0: the same identity (name or possession path); 0.5: one side leaves the owner
    unstated ("mum drives a fiesta" for "my mum") or the memory's subject is implicit;
    0.0: different, or either has no subject."""
    if q.kind == "none" or m.kind == "none":
        return 0.0
    if set(q.keys) & set(m.keys):
        return 1.0
    if q.chain and m.chain and q.chain[-1] == m.chain[-1] and "" in (q.owner, m.owner):
        return 0.5
    if q.name and q.name == m.name:
        return 1.0
    return 0.0


def type_match(expects: tuple[str, ...], memory: Parse, loose: bool = False) -> bool:
    """Does the memory hold a value of one of the expected types?"""
    want = set(expects) - {"OTHER"}
    if loose:
        for t in list(want):
            want |= LOOSE.get(t, set())
    # the subject's own name is no answer (NER types lowercase names erratically)
    own = {memory.subject.name, memory.subject.owner} - {""}
    return any(v.type in want and v.text.lower() not in own for v in memory.values)


def pair_features(q: Parse, m: Parse) -> np.ndarray:
    """FEATURE_NAMES, in order, as float32."""
    kinds = ("user", "person", "relation", "other", "none")
    s = subject_match(q.subject, m.subject)
    # "my flight" asked, "booked a flight" stored: grammar cannot tell a thing of the user's
    # from a relative, but a memory that names the asked noun is about it
    mentioned = bool(q.subject.chain) and (q.subject.chain[-1] in m.nouns or q.subject.chain[-1] in m.subject.chain)
    conflict = float(q.subject.kind != "none" and m.subject.kind != "none" and s == 0.0 and not mentioned)
    owner_same = bool(_owner(q.subject)) and _owner(q.subject) == _owner(m.subject)
    expects = q.slot.expects if q.slot is not None else ()
    typed = bool(set(expects) - {"OTHER"})
    head = q.slot.head if q.slot is not None else ""
    head_in = bool(head) and head in m.nouns
    qn, mn = set(q.nouns) - {head}, set(m.nouns)
    overlap = len(qn & mn) / len(qn | mn) if qn | mn else 0.0
    q_verb = q.predicate.split(" ")[0] if q.predicate else ""
    m_verbs = {c.predicate.split(" ")[0] for c in m.clauses if c.predicate}
    row = [
        *(float(q.subject.kind == k) for k in kinds),
        float(s == 1.0), float(s == 0.5), conflict,
        float(typed), float(typed and type_match(expects, m)), float(typed and type_match(expects, m, loose=True)),
        float(bool(m.values)),
        float(head_in), float(head_in and bool(m.values)),
        float(bool(q_verb) and q_verb not in ("be", "do", "have") and q_verb in m_verbs),
        overlap, float(len(m.values)), float(q.empty), float(m.empty),
        float(frame_answers(q, m)), float(frame_answers(q, m, typed=True)),
        float(owner_same), float(mentioned),
    ]
    return np.asarray(row, dtype=np.float32)
