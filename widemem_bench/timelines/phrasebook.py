"""World A's phrasebooks: which utterance, fact and question templates a user draws from.

Train and validation users share templates.py (each split its own families); the sealed
holdout draws from holdout_templates.py. Also the small text helpers the phrasings use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from widemem_bench.timelines import holdout_templates as H
from widemem_bench.timelines import templates as T

# A stated medication names its condition, so "what was I diagnosed with?" is not a
# hard negative for a user who said "I take metformin for type 2 diabetes".
_IMPLIED_BY: dict[str, tuple[str, ...]] = {"condition": ("medication",)}
# Share of events whose stored fact is the full sentence with the user's name.
_FULL_STORED_P = 0.2


def _pools(groups: Mapping[str, tuple[str, ...]], prefix: str) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for key, fams in groups.items():
        splits = T.family_split(f"{prefix}.{key}", len(fams))
        out[key] = {s: [i for i, x in enumerate(splits) if x == s] for s in T.SPLITS}
    return out


@dataclass(frozen=True)
class Phrasebook:
    """The phrasings one user draws from: utterance, fact and question templates with the
    template indices this user may use, and the prefixes of their family names.

    World A's train and validation users share one set of templates (each split its own
    families); the sealed holdout has a book of its own (``holdout_templates``); world B
    has one book per voice (first person, agent notes in third person).
    """

    utterances: Mapping[str, tuple[str, ...]]
    utter_pools: Mapping[str, list[int]]
    facts: Mapping[str, tuple[str, str]]
    questions: Mapping[str, tuple[str, ...]]
    question_pools: Mapping[str, list[int]]
    clauses: Mapping[str, tuple[str, ...]]
    self_attributes: tuple[str, ...]
    other_attributes: tuple[str, ...]
    implied_by: Mapping[str, tuple[str, ...]]
    utter_prefix: str = "u"
    question_prefix: str = "q"
    full_stored_p: float = _FULL_STORED_P
    # Attributes whose values coexist (several pets at once); a new value adds, not replaces.
    multi_valued: tuple[str, ...] = ()
    # Rewordings of the stored text of vocabulary-driven facts (oblique conditions, legal).
    stored_texts: Mapping[str, str] = field(default_factory=dict)
    # Rewordings of what the user says for them (and for oblique allergies).
    said_texts: Mapping[str, str] = field(default_factory=dict)


def _split_book(split: str) -> Phrasebook:
    up, qp = _pools(T.UTTERANCES, "u"), _pools(T.QUESTIONS, "q")
    return Phrasebook(T.UTTERANCES, {k: v[split] for k, v in up.items()}, T.FACTS,
                      T.QUESTIONS, {k: v[split] for k, v in qp.items()}, T.FRUSTRATION_CLAUSES,
                      T.SELF_ATTRIBUTES, T.OTHER_ATTRIBUTES, _IMPLIED_BY)


def _holdout_book() -> Phrasebook:
    # The sealed holdout (generator v3): phrasings of its own on the memory side
    # (utterances, stored facts) and the question side. The families ``family_split``
    # gives to "holdout" in templates.py are retired: nobody draws them.
    utter = {k: list(range(len(v))) for k, v in H.UTTERANCES.items()}
    questions = {k: list(range(len(v))) for k, v in H.QUESTIONS.items()}
    return Phrasebook(H.UTTERANCES, utter, H.FACTS, H.QUESTIONS, questions,
                      H.FRUSTRATION_CLAUSES, T.SELF_ATTRIBUTES, T.OTHER_ATTRIBUTES, _IMPLIED_BY,
                      utter_prefix="uh", question_prefix="qh", stored_texts=H.STORED_TEXTS,
                      said_texts=H.SAID_TEXTS)


BOOKS: dict[str, Phrasebook] = {"train": _split_book("train"),
                                 "validation": _split_book("validation"),
                                 "holdout": _holdout_book()}


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeio" else "a ") + word


def _where(region: str) -> str:
    """A region with the preposition it takes: 'on the East Coast', 'in Texas'."""
    if region in ("down under", "north of the border"):
        return region
    if region.lower().endswith("coast") or region.startswith("the Gulf"):
        return "on " + region
    return "in " + region


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]

