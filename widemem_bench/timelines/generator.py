"""Seeded generator of synthetic user timelines with known ground truth.

One ``numpy.random.Generator(PCG64(...))`` per user, seeded from ``(seed, user index)``,
so user ``u0007`` is the same whatever ``n_users`` is (a small set is a prefix of a big
one) and nothing depends on ``hash()`` or on set order.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.timelines import holdout_templates as H
from widemem_bench.timelines import templates as T
from widemem_bench.timelines import vocab as V

# 1: issue 4. 2: event columns multi_valued / update_kind (issue 13). 3: the sealed
# holdout (holdout_templates.py); train and validation rows are unchanged since 1.
# 4: a question about the user's name is answerable when a stored full-form fact names
# the user ("Oliver lives in Dublin"), not a hard negative / other-person question (the
# random draws are unchanged: only those labels, and the holdout's oblique utterances).
GENERATOR_VERSION = "4"

DEFAULT_START = dt.datetime(2025, 1, 6)

EVENT_KINDS: tuple[str, ...] = (
    "profile", "move", "job", "relation", "ymyl", "preference", "trivial", "restatement",
    "frustration",
)
QUESTION_KINDS: tuple[str, ...] = (
    "answerable", "stale_probe", "never_mentioned", "hard_negative", "other_person", "broad",
    "frustration",
)
GOLD_ACTIONS: tuple[str, ...] = ("reassure", "recover_and_pin", "apologize_and_ask")

# Mix of base question kinds (quiet-frustration rephrases come on top, inside the budget).
_KIND_P: tuple[tuple[str, float], ...] = (
    ("answerable", 0.36), ("stale_probe", 0.13), ("never_mentioned", 0.10),
    ("hard_negative", 0.15), ("other_person", 0.09), ("broad", 0.05), ("frustration", 0.12),
)
# A stated medication names its condition, so "what was I diagnosed with?" is not a
# hard negative for a user who said "I take metformin for type 2 diabetes".
_IMPLIED_BY: dict[str, tuple[str, ...]] = {"condition": ("medication",)}
# Slot questions with at most this many words and a single slot are short factual
# lookups: the "fast" retrieval mode is the right one for them.
_FAST_MAX_WORDS = 8
_FULL_STORED_P = 0.2

# Splits of users: a fixed 20-position pattern (14/3/3) shuffled once per seed, so that
# every prefix of 20 users has exact proportions.
_USER_PATTERN = ("train",) * 14 + ("validation",) * 3 + ("holdout",) * 3


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


@dataclass
class _Ev:
    minute: int
    seq: int
    kind: str
    utterance: str
    family: str
    fact_full: str | None
    fact_stripped: str | None
    importance: int | None
    ymyl_category: str | None
    ymyl_strength: str | None
    subject: str | None
    attribute: str | None
    value: str | None
    oblique: bool
    role: str  # "canonical" starts a value of its slot, "restate" repeats it, "none"
    gold_action: str | None = None
    fact_id: str = ""
    valid_to: int | None = None
    supersedes: str | None = None
    multi: bool = False
    # Multi-valued slots only: the coexisting value this one replaces (a correction).
    replaces: _Ev | None = None
    update_kind: str | None = None
    # The extractor kept the full sentence with the user's name (set by _finalise_events).
    stored_full: bool = False


@dataclass
class _User:
    idx: int
    uid: str
    split: str
    name: str
    rng: np.random.Generator
    span_min: int
    book: Phrasebook
    events: list[_Ev] = field(default_factory=list)
    relatives: list[str] = field(default_factory=list)
    strangers: list[str] = field(default_factory=list)  # relatives never mentioned

    # -- sampling helpers
    def pick(self, seq: tuple[Any, ...] | list[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def minute(self, lo: float, hi: float) -> int:
        """A minute inside [lo, hi] days, at a waking hour (08:00-23:00)."""
        lo_d, hi_d = int(np.floor(lo)), max(int(np.floor(hi)), int(np.floor(lo)))
        day = int(self.rng.integers(lo_d, hi_d + 1))
        return day * 1440 + int(self.rng.integers(8 * 60, 23 * 60))

    def utter(self, key: str, **fields: str) -> tuple[str, str]:
        pool = self.book.utter_pools[key]
        i = self.pick(pool)
        return (_cap(self.book.utterances[key][i].format(**fields)),
                f"{self.book.utter_prefix}.{key}.{i}")

    def add(self, minute: int, kind: str, utter: tuple[str, str], fact_key: str | None,
            fields: dict[str, str], importance: int | None, subject: str | None,
            attribute: str | None, value: str | None, *, ymyl: tuple[str, str] | None = None,
            oblique: bool = False, role: str = "canonical", gold_action: str | None = None,
            replaces: _Ev | None = None) -> _Ev:
        full = stripped = None
        if fact_key is not None:
            f_full, f_str = self.book.facts[fact_key]
            fields = {"name": self.name, **fields}
            full, stripped = f_full.format(**fields), f_str.format(**fields)
        ev = _Ev(minute, len(self.events), kind, utter[0], utter[1], full, stripped, importance,
                 ymyl[0] if ymyl else None, ymyl[1] if ymyl else None, subject, attribute, value,
                 oblique, role, gold_action, multi=attribute in self.book.multi_valued,
                 replaces=replaces)
        self.events.append(ev)
        return ev


# ---------------------------------------------------------------- events
def _change_days(u: _User, n: int, lo: float, hi: float) -> list[float]:
    """n distinct sorted change days in [lo, hi], at least a week apart where possible."""
    if n <= 0 or hi <= lo:
        return []  # a span too short for a change
    days = sorted(float(x) for x in u.rng.uniform(lo, hi, size=n))
    for i in range(1, len(days)):
        days[i] = max(days[i], days[i - 1] + 7.0)
    return [d for d in days if d <= hi]


def _chain_windows(starts: list[float], span: float) -> list[tuple[float, float]]:
    """Validity window (in days) of each value of a chain, with a day of margin."""
    ends = [*starts[1:], span]
    return [(s + 1.0, e - 1.0) for s, e in zip(starts, ends, strict=True)]


def _restate(u: _User, window: tuple[float, float], p: float) -> int | None:
    lo, hi = window
    if hi - lo < 2.0 or u.rng.random() >= p:
        return None
    return u.minute(lo, hi)


def _gen_events(u: _User, span: float) -> None:
    rng, name = u.rng, u.name
    # Profile: some users never say their name (a hard negative for "what's my name?").
    if rng.random() < 0.8:
        u.add(u.minute(0, 0.1 * span), "profile", u.utter("name", name=name), "name",
              {}, 8, "user", "name", name)

    # City chain: first city, then moves (some announced only in a frustration message).
    city_idx = [int(i) for i in rng.permutation(len(V.CITIES))[:4]]
    n_moves = int(rng.choice(4, p=[0.25, 0.4, 0.25, 0.1]))
    starts = [float(rng.uniform(0, 0.08 * span)), *_change_days(u, n_moves, 0.12 * span, 0.92 * span)]
    windows = _chain_windows(starts, span)
    for k, day in enumerate(starts):
        city, regions = V.CITIES[city_idx[k]]
        f = {"city": city, "old_city": V.CITIES[city_idx[k - 1]][0] if k else ""}
        m = u.minute(day, day)
        if k == 0:
            u.add(m, "move", u.utter("city_first", name=name, **f), "city", f, 8, "user", "city", city)
        elif rng.random() < 0.12:
            clause = u.pick(u.book.clauses["city"]).format(**f)
            u.add(m, "frustration", u.utter("frustration_fact", clause=clause), "city", f, 8,
                  "user", "city", city, gold_action="recover_and_pin")
        else:
            u.add(m, "move", u.utter("move", name=name, **f), "city", f, 8, "user", "city", city)
        # Oblique restatement: shares few words with the city ("settled on the East Coast").
        mm = _restate(u, windows[k], 0.45 if k else 0.2)
        if mm is not None:
            fo = {**f, "where": _where(u.pick(regions))}
            u.add(mm, "restatement", u.utter("move_oblique", **fo), "city_oblique", fo, 7,
                  "user", "city", city, oblique=True, role="restate")
        mm = _restate(u, windows[k], 0.3)
        if mm is not None:
            u.add(mm, "restatement", u.utter("city_restate", **f), "city", f, 8,
                  "user", "city", city, role="restate")

    # Employer chain.
    if rng.random() < 0.88:
        emp_idx = [int(i) for i in rng.permutation(len(V.EMPLOYERS))[:3]]
        n_jobs = int(rng.choice(3, p=[0.5, 0.38, 0.12]))
        starts = [float(rng.uniform(0, 0.1 * span)), *_change_days(u, n_jobs, 0.15 * span, 0.9 * span)]
        windows = _chain_windows(starts, span)
        for k, day in enumerate(starts):
            role = u.pick(V.ROLES)
            f = {"employer": V.EMPLOYERS[emp_idx[k]], "a_role": _article(role),
                 "old_employer": V.EMPLOYERS[emp_idx[k - 1]] if k else ""}
            key = "job_first" if k == 0 else "job"
            u.add(u.minute(day, day), "job", u.utter(key, **f), "employer", f, 7,
                  "user", "employer", f["employer"])
            mm = _restate(u, windows[k], 0.3)
            if mm is not None:
                u.add(mm, "restatement", u.utter("job_restate", **f), "employer", f, 7,
                      "user", "employer", f["employer"], role="restate")

    # Relationship facts about other people.
    n_rel = int(rng.choice([1, 1, 2, 2, 3]))
    rels = [V.RELATIVES[int(i)] for i in rng.permutation(len(V.RELATIVES))[:n_rel]]
    u.relatives = rels
    u.strangers = [V.RELATIVES[int(i)] for i in rng.permutation(len(V.RELATIVES))
                   if V.RELATIVES[int(i)] not in rels][:2]
    for rel in rels:
        attrs = [a for a, p in (("city", 0.7), ("name", 0.5), ("employer", 0.4), ("allergy", 0.25))
                 if rng.random() < p] or ["city"]
        for attr in attrs:
            day = float(rng.uniform(0, 0.85 * span))
            if attr == "city":
                cities = [V.CITIES[int(i)][0] for i in rng.permutation(len(V.CITIES))[:2]]
                moves = [day] + (_change_days(u, 1, day + 20, 0.95 * span) if rng.random() < 0.15 else [])
                for k, d in enumerate(moves):
                    f = {"rel": rel, "city": cities[k]}
                    u.add(u.minute(d, d), "relation", u.utter("rel_city", **f), "rel_city", f, 5,
                          rel, "city", cities[k])
            elif attr == "name":
                names = (V.FEMALE_NAMES if rel in V.FEMALE_RELATIVES else V.MALE_NAMES
                         if rel in V.MALE_RELATIVES else V.FEMALE_NAMES + V.MALE_NAMES + V.NEUTRAL_NAMES)
                f = {"rel": rel, "rname": u.pick(names)}
                u.add(u.minute(day, day), "relation", u.utter("rel_name", **f), "rel_name", f, 5,
                      rel, "name", f["rname"])
            elif attr == "employer":
                f = {"rel": rel, "employer": u.pick(V.EMPLOYERS)}
                u.add(u.minute(day, day), "relation", u.utter("rel_employer", **f), "rel_employer",
                      f, 4, rel, "employer", f["employer"])
            else:
                f = {"rel": rel, "allergen": u.pick(V.ALLERGENS)[0]}
                u.add(u.minute(day, day), "relation", u.utter("rel_allergy", **f), "rel_allergy",
                      f, 7, rel, "allergy", f["allergen"], ymyl=("health", "strong"))

    _gen_ymyl(u, span)
    _gen_preferences(u, span)

    # Trivial facts: one each at most, never restated (decay-survival needs quiet ones).
    for attr, vocab, imp in (("lunch", V.LUNCHES, 1), ("weather", V.WEATHER, 1),
                             ("film", V.FILMS, 2), ("book", V.BOOKS, 3)):
        if rng.random() < (0.8 if attr != "book" else 0.5):
            key = {"lunch": "lunch", "weather": "w", "film": "film", "book": "book"}[attr]
            f = {key: u.pick(vocab)}
            u.add(u.minute(0, 0.95 * span), "trivial", u.utter(attr, **f), attr, f, imp,
                  "user", attr, f[key])

    # Vague frustration: nothing extractable, so the gold action is to apologise and ask.
    if rng.random() < 0.2:
        u.add(u.minute(0.1 * span, span - 1), "frustration", u.utter("frustration_vague"), None,
              {}, None, "user", None, None, role="none", gold_action="apologize_and_ask")


def _gen_ymyl(u: _User, span: float) -> None:
    rng = u.rng
    if rng.random() < 0.5:
        allergen, severe = u.pick(V.ALLERGENS)
        imp = 10 if severe else 8
        day = float(rng.uniform(0, 0.8 * span))
        obl = [o for o in V.ALLERGY_OBLIQUE if o[0] == allergen]
        if obl and rng.random() < 0.5:
            f = {"allergen": allergen}
            said = u.book.said_texts.get(obl[0][1], obl[0][1])
            u.add(u.minute(day, day), "ymyl",
                  (_cap(said) + ".", f"{u.book.utter_prefix}.allergy_oblique.{allergen}"),
                  "allergy_oblique", f, imp, "user", "allergy", allergen,
                  ymyl=("health", "strong"), oblique=True)
        else:
            f = {"allergen": allergen}
            u.add(u.minute(day, day), "ymyl", u.utter("allergy", **f), "allergy", f, imp,
                  "user", "allergy", allergen, ymyl=("health", "strong"))
    if rng.random() < 0.4:
        med_idx = [int(i) for i in rng.permutation(len(V.MEDICATIONS))]
        med, cond = V.MEDICATIONS[med_idx[0]]
        same = [i for i in med_idx[1:] if V.MEDICATIONS[i][1] == cond]
        day = float(rng.uniform(0, 0.6 * span))
        f = {"med": med, "cond": cond}
        u.add(u.minute(day, day), "ymyl", u.utter("medication", **f), "medication", f, 8,
              "user", "medication", med, ymyl=("pharmaceutical", "strong"))
        if same and rng.random() < 0.4:
            # A switch to another drug for the same condition.
            med2 = V.MEDICATIONS[same[0]][0]
            switch = _change_days(u, 1, day + 20, 0.95 * span)
            d2 = switch[0] if switch else None
        else:
            d2 = None
        if d2 is not None:
            f2 = {"med": med2, "cond": cond, "old_med": med}
            u.add(u.minute(d2, d2), "ymyl", u.utter("med_switch", **f2), "medication", f2, 8,
                  "user", "medication", med2, ymyl=("pharmaceutical", "strong"))
    if rng.random() < 0.4:
        day = float(rng.uniform(0, 0.85 * span))
        if rng.random() < 0.4:
            value, said, stored = u.pick(V.CONDITION_OBLIQUE)
            i = V.CONDITION_OBLIQUE.index((value, said, stored))
            said = u.book.said_texts.get(said, said)
            ev = u.add(u.minute(day, day), "ymyl",
                       (_cap(said) + ".", f"{u.book.utter_prefix}.condition_oblique.{i}"),
                       None, {}, 8, "user", "condition", value, ymyl=("health", "strong"),
                       oblique=True)
            stored = u.book.stored_texts.get(stored, stored)
            ev.fact_full, ev.fact_stripped = f"{u.name} {stored}", stored
        else:
            f = {"cond": u.pick(V.CONDITIONS)}
            u.add(u.minute(day, day), "ymyl", u.utter("condition", **f), "condition", f, 8,
                  "user", "condition", f["cond"], ymyl=("health", "strong"))
    for attr, vocab, key, imp, cat, strength, p_on, p_change in (
        ("doctor", V.DOCTORS, "doc", 6, "medical", "weak", 0.4, 0.15),
        ("bank", V.BANKS, "bank", 7, "financial", "strong", 0.45, 0.1),
        ("insurance", V.INSURERS, "ins", 7, "insurance", "strong", 0.4, 0.2),
    ):
        if rng.random() >= p_on:
            continue
        idx = [int(i) for i in rng.permutation(len(vocab))[:2]]
        day = float(rng.uniform(0, 0.7 * span))
        starts = [day] + (_change_days(u, 1, day + 20, 0.95 * span) if rng.random() < p_change else [])
        for k, d in enumerate(starts):
            f = {key: vocab[idx[k]]}
            u.add(u.minute(d, d), "ymyl", u.utter(attr, **f), attr, f, imp, "user", attr,
                  vocab[idx[k]], ymyl=(cat, strength))
    if rng.random() < 0.25:
        value, plain, plain_fact, obl, obl_fact = u.pick(V.LEGAL)
        i = [x[0] for x in V.LEGAL].index(value)
        day = float(rng.uniform(0, 0.85 * span))
        oblique = bool(rng.random() < 0.4)
        said, stored = (obl, obl_fact) if oblique else (plain, plain_fact)
        said = u.book.said_texts.get(said, said)
        fam = f"{u.book.utter_prefix}.legal_{'oblique' if oblique else 'plain'}.{i}"
        ev = u.add(u.minute(day, day), "ymyl", (_cap(said) + ".", fam), None, {}, 8,
                   "user", "legal", value, ymyl=("legal", "strong"), oblique=oblique)
        stored = u.book.stored_texts.get(stored, stored)
        ev.fact_full, ev.fact_stripped = f"{u.name} {stored}", stored


def _gen_preferences(u: _User, span: float) -> None:
    rng = u.rng
    for attr, chains, key, imp, p_on, p_change in (
        ("diet", V.DIET_CHAINS, "diet", 7, 0.6, 0.5),
        ("drink", V.DRINK_CHAINS, "drink", 4, 0.5, 0.4),
        ("exercise", V.EXERCISE_CHAINS, "ex", 5, 0.5, 0.4),
    ):
        if rng.random() >= p_on:
            continue
        chain = u.pick(chains)
        day = float(rng.uniform(0, 0.5 * span))
        starts = [day] + (_change_days(u, 1, day + 20, 0.95 * span) if rng.random() < p_change else [])
        windows = _chain_windows(starts, span)
        for k, d in enumerate(starts):
            f = {key: chain[k], f"old_{key}": chain[k - 1] if k else ""}
            u.add(u.minute(d, d), "preference", u.utter(f"{attr}_{'change' if k else 'first'}", **f),
                  attr, f, imp, "user", attr, chain[k])
            if attr == "diet":
                mm = _restate(u, windows[k], 0.3)
                if mm is not None:
                    u.add(mm, "restatement", u.utter("diet_restate", **f), "diet", f, imp,
                          "user", "diet", chain[k], role="restate")


def _frustration_reassure(u: _User) -> None:
    """A frustrated restatement of a fact the user did state and that still holds."""
    if u.rng.random() >= 0.25:
        return
    clauses = u.book.clauses
    canon = [e for e in u.events if e.role == "canonical" and e.subject == "user"
             and e.attribute in clauses]
    if not canon:
        return
    ev = u.pick(canon)
    if ev.multi:  # only a correction of this very value ends it
        later = [e.minute for e in u.events if e.replaces is ev]
    else:
        later = [e.minute for e in u.events if e.role == "canonical" and e.subject == ev.subject
                 and e.attribute == ev.attribute and e.minute > ev.minute]
    hi = (min(later) if later else u.span_min) - 1440
    if hi - ev.minute < 2 * 1440:
        return
    m = u.minute(ev.minute / 1440 + 1, hi / 1440)
    val = ev.value or ""
    # every placeholder of a clause names the restated value ({city}, {allergen}, ...)
    clause = u.pick(clauses[str(ev.attribute)]).format_map(_Every(val))
    new = u.add(m, "frustration", u.utter("frustration_fact", clause=clause), None, {},
                ev.importance, ev.subject, ev.attribute, ev.value, ymyl=None, role="restate",
                gold_action="reassure")
    new.fact_full, new.fact_stripped = ev.fact_full, ev.fact_stripped
    new.ymyl_category, new.ymyl_strength = ev.ymyl_category, ev.ymyl_strength


class _Every(dict):  # type: ignore[type-arg]
    """A format mapping that gives one value for every key."""

    def __init__(self, value: str) -> None:
        super().__init__()
        self.value = value

    def __missing__(self, key: str) -> str:
        return self.value


def _finalise_events(u: _User, start: dt.datetime) -> list[dict[str, Any]]:
    u.events.sort(key=lambda e: (e.minute, e.seq))
    for j, e in enumerate(u.events):
        e.fact_id = f"{u.uid}-f{j:03d}"
    slots: dict[tuple[str, str], list[_Ev]] = {}
    for e in u.events:
        if e.attribute is not None and e.subject is not None and e.role != "none":
            slots.setdefault((e.subject, e.attribute), []).append(e)
    for evs in slots.values():
        canon = [e for e in evs if e.role == "canonical"]
        if any(e.multi for e in evs):
            # Values coexist; only an explicit correction ends one (and supersedes it).
            for e in canon:
                if e.replaces is not None:
                    e.replaces.valid_to = e.minute
                    e.supersedes = e.replaces.fact_id
            for e in evs:
                if e.role == "restate":
                    src = [c for c in canon if c.value == e.value and c.minute <= e.minute]
                    e.valid_to = src[-1].valid_to if src else None
        else:
            for prev, nxt in itertools.pairwise(canon):
                prev.valid_to = nxt.minute
                nxt.supersedes = prev.fact_id
            for e in evs:
                if e.role == "restate":
                    later = [c.minute for c in canon if c.minute > e.minute]
                    e.valid_to = min(later) if later else None
        # What an update is to the memory already holding this slot (the resolver's gold):
        # "new" (nothing current), "coexists" (added beside current values of a multi-valued
        # attribute: no contradiction), "supersedes" (replaces a current value: a direct
        # contradiction) or "restates" (repeats a current value).
        for e in evs:
            if e.fact_stripped is None:
                continue
            if e.role == "restate":
                e.update_kind = "restates"
            elif e.supersedes is not None:
                e.update_kind = "supersedes"
            elif any(c is not e and c.minute < e.minute and (c.valid_to is None or c.valid_to > e.minute)
                     for c in canon):
                e.update_kind = "coexists"
            else:
                e.update_kind = "new"
    # What a widemem-like extractor keeps: mostly the subject-stripped fact, sometimes the
    # full sentence with the user's name (llama-style extractors do both).
    full_p = u.rng.random(len(u.events)) < u.book.full_stored_p
    rows = []
    for e, full in zip(u.events, full_p, strict=True):
        stored = e.fact_full if full else e.fact_stripped
        e.stored_full = bool(full) and e.fact_full is not None
        rows.append({
            "fact_id": e.fact_id, "user_id": u.uid, "split": u.split, "user_name": u.name,
            "at": start + dt.timedelta(minutes=e.minute), "event_kind": e.kind,
            "utterance": e.utterance, "utterance_family": e.family,
            "fact_full": e.fact_full, "fact_stripped": e.fact_stripped, "fact_stored": stored,
            "importance": e.importance, "ymyl_category": e.ymyl_category,
            "ymyl_strength": e.ymyl_strength, "subject": e.subject, "attribute": e.attribute,
            "value": e.value,
            "valid_from": start + dt.timedelta(minutes=e.minute) if e.fact_stripped else None,
            "valid_to": start + dt.timedelta(minutes=e.valid_to) if e.valid_to is not None else None,
            "supersedes": e.supersedes, "oblique": e.oblique,
            "restatement": e.role == "restate", "gold_action": e.gold_action,
            "multi_valued": e.multi, "update_kind": e.update_kind,
        })
    return rows


# ---------------------------------------------------------------- questions
@dataclass
class _State:
    """Facts of one user as seen at one minute."""

    valid: dict[tuple[str, str], list[_Ev]]   # slot -> valid facts, canonical first
    stated: set[tuple[str, str]]             # slots with any fact up to now
    stale: dict[tuple[str, str], list[_Ev]]  # slot -> superseded canonical facts


def _state(u: _User, minute: int) -> _State:
    valid: dict[tuple[str, str], list[_Ev]] = {}
    stated: set[tuple[str, str]] = set()
    stale: dict[tuple[str, str], list[_Ev]] = {}
    for e in u.events:
        if e.fact_stripped is None or e.subject is None or e.attribute is None or e.minute > minute:
            continue
        slot = (e.subject, e.attribute)
        stated.add(slot)
        if e.valid_to is None or minute < e.valid_to:
            valid.setdefault(slot, []).append(e)
        elif e.role == "canonical":
            stale.setdefault(slot, []).append(e)
    for evs in valid.values():
        evs.sort(key=lambda e: (e.role != "canonical", e.minute, e.seq))
    # a slot is stale-probe material only while it has a current value
    return _State(valid, stated, {s: v for s, v in stale.items() if s in valid})


def _negatives(u: _User, st: _State) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(hard negatives, other-person slots) never stated as of the state's minute.

    Other-person: the attribute is currently stored for a relative, or the question is
    about the user and a relative has it. A relative asked about when only the user has
    the attribute ("where does my sister live?" with only the user's own city) is a hard
    negative, as in widemem's own example.
    """
    hard: list[tuple[str, str]] = []
    other: list[tuple[str, str]] = []
    people = [*u.relatives, *u.strangers]
    book = u.book
    for attr in book.self_attributes:
        if ("user", attr) in st.stated or any(("user", a) in st.stated for a in book.implied_by.get(attr, ())):
            continue
        if any(s != "user" and a == attr for (s, a) in st.valid):
            other.append(("user", attr))
        else:
            hard.append(("user", attr))
    for rel in people:
        for attr in book.other_attributes:
            if (rel, attr) in st.stated:
                continue
            if any(s not in ("user", rel) and a == attr for (s, a) in st.valid):
                other.append((rel, attr))
            else:
                hard.append((rel, attr))
    return hard, other


def _name_memories(u: _User, minute: int) -> list[_Ev]:
    """Memories stored by ``minute`` that name the user: full-form facts kept with the
    name ("Oliver lives in Dublin"). They answer "what's my name?" even when the user
    never stated it as a fact of its own; a store of subject-stripped facts does not.
    Facts still valid come first; a superseded one ("Oliver lives in Dublin" after a move)
    still names the user truly, so it counts too."""
    pat = re.compile(rf"(?<!\w){re.escape(u.name)}(?!\w)")
    named = [e for e in u.events
             if e.stored_full and e.minute <= minute and e.fact_full is not None
             and e.fact_full != e.fact_stripped and pat.search(e.fact_full)]
    return sorted(named, key=lambda e: e.valid_to is not None and e.valid_to <= minute)


def _slot_question(u: _User, slot: tuple[str, str], exclude: tuple[int, ...] = ()) -> tuple[str, str, int] | None:
    subject, attr = slot
    key = f"{attr}.{'self' if subject == 'user' else 'other'}"
    pool = [i for i in u.book.question_pools[key] if i not in exclude]
    if not pool:
        return None
    i = u.pick(pool)
    return (u.book.questions[key][i].format(rel=subject, name=u.name),
            f"{u.book.question_prefix}.{key}.{i}", i)


def _gold_mode(kind: str, text: str) -> str:
    if kind == "broad":
        return "deep"
    if kind != "frustration" and len(text.split()) <= _FAST_MAX_WORDS:
        return "fast"
    return "balanced"


def _ids(evs: list[_Ev]) -> list[str]:
    return [e.fact_id for e in evs]


def _make_question(u: _User, kind: str, minute: int) -> dict[str, Any] | None:
    """One question of ``kind`` at ``minute``, or None when the state does not allow it."""
    st = _state(u, minute)
    q: dict[str, Any] = {"kind": kind, "minute": minute, "subject": None, "attribute": None,
                         "gold": [], "stale": [], "distractors": [], "gold_value": None,
                         "gold_action": None}
    if kind in ("answerable", "stale_probe"):
        cands = [s for s in st.valid if (s in st.stale) == (kind == "stale_probe")]
        if not cands:
            return None
        slot = u.pick(sorted(cands))
        tq = _slot_question(u, slot)
        if tq is None:
            return None
        q.update(subject=slot[0], attribute=slot[1], text=tq[0], family=tq[1], fam_idx=tq[2],
                 gold=_ids(st.valid[slot]), stale=_ids(st.stale.get(slot, [])),
                 gold_value=st.valid[slot][0].value)
        return q
    if kind in ("hard_negative", "other_person"):
        hard, other = _negatives(u, st)
        cands = hard if kind == "hard_negative" else other
        if not cands:
            return None
        slot = u.pick(cands)
        tq = _slot_question(u, slot)
        if tq is None:
            return None
        q.update(subject=slot[0], attribute=slot[1], text=tq[0], family=tq[1], fam_idx=tq[2])
        named = _name_memories(u, minute) if slot == ("user", "name") else []
        if named:  # the name is in the store after all: answerable, gold = those memories
            q.update(kind="answerable", gold=_ids(named), gold_value=u.name)
            return q
        dis = [e for s, evs in sorted(st.valid.items()) if s[1] == slot[1] for e in evs]
        q.update(distractors=_ids(dis))
        return q
    if kind in ("never_mentioned", "broad"):
        i = u.pick(u.book.question_pools[kind])
        q.update(text=u.book.questions[kind][i].format(name=u.name),
                 family=f"{u.book.question_prefix}.{kind}.{i}", fam_idx=i)
        if kind == "broad":
            gold = sorted((e for evs in st.valid.values() for e in evs
                           if e.importance is not None and e.importance >= 4),
                          key=lambda e: (e.minute, e.seq))
            if not gold:
                return None
            q.update(subject="user", gold=_ids(gold))
        return q
    if kind == "frustration":
        # Mostly about a stored slot (the memory has it: reassure); sometimes about a slot
        # never stated (nothing to recover: apologise and ask).
        if u.rng.random() < 0.7:
            base = _make_question(u, "answerable", minute) or _make_question(u, "stale_probe", minute)
            action = "reassure"
        else:
            base = _make_question(u, "hard_negative", minute)
            action = "apologize_and_ask"
        if base is None:
            return None
        if base["gold"]:  # a name question whose answer a stored full-form fact holds
            action = "reassure"
        i = u.pick(u.book.question_pools["frustration"])
        prefix = u.book.questions["frustration"][i].format(name=u.name)
        base.update(kind="frustration", gold_action=action,
                    text=f"{prefix} {_cap(base['text'])}",
                    family=f"{u.book.question_prefix}.frustration.{i}+{base['family']}")
        return base
    raise ValueError(f"kind: unknown question kind {kind!r}")


def _gen_questions(u: _User, n: int, start: dt.datetime) -> list[dict[str, Any]]:
    rng = u.rng
    first = min(14 * 1440, u.span_min // 10)
    n_sessions = max(1, round(n * 0.6))
    # Sessions start at waking hours; a session's asks are 10 minutes apart.
    sess_start = sorted(u.minute(first / 1440, u.span_min / 1440 - 1) for _ in range(n_sessions))
    sess_count = [0] * n_sessions
    kinds = [k for k, _ in _KIND_P]
    probs = np.array([p for _, p in _KIND_P])
    probs = probs / probs.sum()

    out: list[dict[str, Any]] = []

    def place(kind: str) -> dict[str, Any] | None:
        for _ in range(12):
            s = int(rng.integers(n_sessions))
            # 10 minutes between asks leaves room for up to 3 rephrases 2 minutes apart.
            minute = sess_start[s] + 10 * sess_count[s]
            q = _make_question(u, kind, minute)
            if q is not None:
                sess_count[s] += 1
                q["session"] = s
                return q
        return None

    # Quiet frustration: one question re-asked 1-3 more times in the same session.
    if rng.random() < 0.35 and n >= 4:
        repeats = int(rng.integers(1, 4))
        q0 = place(str(rng.choice(["answerable", "stale_probe"])))
        if q0 is not None:
            q0["rephrase_group"] = True
            out.append(q0)
            used: tuple[int, ...] = (q0["fam_idx"],)
            for r in range(1, repeats + 1):
                tq = _slot_question(u, (q0["subject"], q0["attribute"]), exclude=used)
                if tq is None:
                    break
                used = (*used, tq[2])
                minute = q0["minute"] + 2 * r
                st = _state(u, minute)
                slot = (q0["subject"], q0["attribute"])
                rq = {**q0, "text": tq[0], "family": tq[1], "fam_idx": tq[2], "minute": minute,
                      "gold": _ids(st.valid.get(slot, [])), "stale": _ids(st.stale.get(slot, [])),
                      "rephrase_of": q0, "rephrase_group": False}
                # a change landing inside the session would turn the kind; keep labels honest
                rq["kind"] = "stale_probe" if rq["stale"] else "answerable"
                out.append(rq)
    while len(out) < n:
        kind = str(rng.choice(kinds, p=probs))
        q = place(kind) or place("never_mentioned")
        if q is None:
            # Every session is saturated with nothing feasible: never_mentioned always fits,
            # so this only happens for a degenerate span; stop rather than loop.
            break
        out.append(q)

    out.sort(key=lambda q: (q["minute"], q["text"]))
    ids = {id(q): f"{u.uid}-q{j:03d}" for j, q in enumerate(out)}
    sess_ids = {s: f"{u.uid}-s{k:02d}" for k, s in enumerate(sorted({q["session"] for q in out},
                                                                      key=lambda s: sess_start[s]))}
    rows = []
    for q in out:
        parent = q.get("rephrase_of")
        rows.append({
            "question_id": ids[id(q)], "user_id": u.uid, "split": u.split,
            "asked_at": start + dt.timedelta(minutes=q["minute"]),
            "session_id": sess_ids[q["session"]], "text": q["text"], "kind": q["kind"],
            "subject": q["subject"], "attribute": q["attribute"],
            "gold_fact_ids": list(q["gold"]), "stale_fact_ids": list(q["stale"]),
            "distractor_fact_ids": list(q["distractors"]), "gold_value": q["gold_value"],
            "template_family": q["family"], "gold_mode": _gold_mode(q["kind"], q["text"]),
            "gold_action": q["gold_action"],
            "rephrase_of": ids[id(parent)] if parent is not None else None,
            "quiet_frustration": parent is not None,
        })
    return rows


# ---------------------------------------------------------------- entry point
EVENT_COLUMNS: tuple[str, ...] = (
    "fact_id", "user_id", "split", "user_name", "at", "event_kind", "utterance",
    "utterance_family", "fact_full", "fact_stripped", "fact_stored", "importance", "ymyl_category",
    "ymyl_strength", "subject", "attribute", "value", "valid_from", "valid_to", "supersedes",
    "oblique", "restatement", "gold_action", "multi_valued", "update_kind",
)
QUESTION_COLUMNS: tuple[str, ...] = (
    "question_id", "user_id", "split", "asked_at", "session_id", "text", "kind", "subject",
    "attribute", "gold_fact_ids", "stale_fact_ids", "distractor_fact_ids", "gold_value",
    "template_family", "gold_mode", "gold_action", "rephrase_of", "quiet_frustration",
)


def user_splits(n_users: int, seed: int) -> list[str]:
    """Split of each user index: a 14/3/3 pattern of 20 shuffled once per seed."""
    perm = np.random.Generator(np.random.PCG64(seed)).permutation(len(_USER_PATTERN))
    return [_USER_PATTERN[int(perm[i % len(perm)])] for i in range(n_users)]


def generate_tables(n_users: int, seed: int, span_days: int, start: dt.datetime,
                    questions_per_user: int, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    splits = user_splits(n_users, seed)
    ev_rows: list[dict[str, Any]] = []
    q_rows: list[dict[str, Any]] = []
    it: Any = range(n_users)
    if progress:
        from tqdm import tqdm
        it = tqdm(it, desc="timelines", unit="user")
    for i in it:
        rng = np.random.Generator(np.random.PCG64([seed, i]))
        name = V.FIRST_NAMES[int(rng.integers(len(V.FIRST_NAMES)))]
        u = _User(i, f"u{i:04d}", splits[i], name, rng, span_days * 1440, BOOKS[splits[i]])
        _gen_events(u, float(span_days))
        _frustration_reassure(u)
        ev_rows.extend(_finalise_events(u, start))
        q_rows.extend(_gen_questions(u, questions_per_user, start))
    events = pd.DataFrame(ev_rows, columns=list(EVENT_COLUMNS))
    questions = pd.DataFrame(q_rows, columns=list(QUESTION_COLUMNS))
    return normalise_events(events), normalise_questions(questions)


def normalise_events(df: pd.DataFrame) -> pd.DataFrame:
    """Fixed dtypes and row order, shared by ``generate`` and ``load`` (round trips equal)."""
    df = df.sort_values("fact_id", kind="stable").reset_index(drop=True)
    for c in ("at", "valid_from", "valid_to"):
        df[c] = pd.to_datetime(df[c]).astype("datetime64[us]")
    df["importance"] = df["importance"].astype("Int64")
    for c in ("oblique", "restatement", "multi_valued"):
        df[c] = df[c].astype(bool)
    for c in EVENT_COLUMNS:
        if c not in ("at", "valid_from", "valid_to", "importance", "oblique", "restatement",
                     "multi_valued"):
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def normalise_questions(df: pd.DataFrame) -> pd.DataFrame:
    df = df.sort_values("question_id", kind="stable").reset_index(drop=True)
    df["asked_at"] = pd.to_datetime(df["asked_at"]).astype("datetime64[us]")
    df["quiet_frustration"] = df["quiet_frustration"].astype(bool)
    for c in ("gold_fact_ids", "stale_fact_ids", "distractor_fact_ids"):
        df[c] = [[str(x) for x in v] for v in df[c]]
    for c in QUESTION_COLUMNS:
        if c not in ("asked_at", "quiet_frustration", "gold_fact_ids", "stale_fact_ids",
                     "distractor_fact_ids"):
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def quiet_days(events: pd.DataFrame, until: dt.datetime | pd.Timestamp | None = None) -> pd.Series:
    """Days each fact stays unmentioned: from its ``at`` to the next event of the same user
    stating the same (subject, attribute, value), or to ``until`` (default: the last event's
    day + 1) when it is never stated again. Rows without a fact get NaN. Float days."""
    has = events["fact_stripped"].notna()
    ev = events.loc[has, ["user_id", "subject", "attribute", "value", "at"]]
    nxt = ev.groupby(["user_id", "subject", "attribute", "value"], dropna=False)["at"].shift(-1)
    end = pd.Timestamp(until) if until is not None else events["at"].max().normalize() + pd.Timedelta(days=1)
    days = (nxt.fillna(end) - ev["at"]).dt.total_seconds() / 86400.0
    return days.reindex(events.index)
