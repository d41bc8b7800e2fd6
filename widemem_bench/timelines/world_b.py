"""World B: a second, independently designed world for evaluation only (issue 13).

Same schema, splits, question kinds and ground-truth rules as world A (the timelines of
``generator.py``), so loaders, the batch scorer and every experiment run on it unchanged,
but its own people, places, employers, drugs and conditions (``world_b_vocab``), its own
phrasings (``world_b_templates``) and attributes world A never has: vehicles, schools,
travel plans, partners' jobs, and multi-valued pets, children, languages, hobbies and
allergies whose values coexist. Half the people speak in first person; the other half
appear in an agent's third-person notes, where questions name them ("where is Oona
based now?").

Labels for resolvers: ``multi_valued`` marks attributes whose values coexist, and
``update_kind`` says what each fact is to the memory already holding its slot: ``new``,
``coexists`` (another pet: not a contradiction), ``supersedes`` (a changed job, a
corrected allergy: the earlier fact is now false; ``supersedes`` names it) or
``restates``.

Nothing is fitted on world B, and no word list or constant in method code may come
from it: it measures how numbers fitted on world A transfer.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.timelines import world_b_templates as BT
from widemem_bench.timelines import world_b_vocab as BV
from widemem_bench.timelines.events import (
    _chain_windows,
    _change_days,
    _finalise_events,
    _frustration_reassure,
    _restate,
)
from widemem_bench.timelines.generator import (
    EVENT_COLUMNS,
    QUESTION_COLUMNS,
    normalise_events,
    normalise_questions,
    user_splits,
)
from widemem_bench.timelines.phrasebook import Phrasebook, _article
from widemem_bench.timelines.questions import _gen_questions
from widemem_bench.timelines.user import _Ev, _User

WORLD_B_VERSION = "2"

MULTI_VALUED: tuple[str, ...] = ("pet", "child", "language", "hobby", "allergy")
# Attributes world A has no notion of (checked by tests/test_world_b.py against world A).
NEW_ATTRIBUTES: tuple[str, ...] = (
    "occupation", "vehicle", "school", "travel", "pet", "child", "language", "hobby",
)
# A stated medication names its condition (as in world A's ground truth).
_IMPLIED_BY: dict[str, tuple[str, ...]] = {"condition": ("medication",)}
_THIRD_PERSON_P = 0.5


def _attrs(questions: dict[str, tuple[str, ...]], suffix: str) -> tuple[str, ...]:
    return tuple(k.split(".")[0] for k in questions if k.endswith(suffix))


def _book(voice: str) -> Phrasebook:
    utter = BT.UTTERANCES_1 if voice == "1" else BT.UTTERANCES_3
    questions = BT.QUESTIONS_1 if voice == "1" else BT.QUESTIONS_3
    return Phrasebook(
        utter, {k: list(range(len(v))) for k, v in utter.items()}, BT.FACTS,
        questions, {k: list(range(len(v))) for k, v in questions.items()},
        BT.CLAUSES_1 if voice == "1" else BT.CLAUSES_3,
        _attrs(questions, ".self"), _attrs(questions, ".other"), _IMPLIED_BY,
        utter_prefix=f"b{voice}u", question_prefix=f"b{voice}q",
        # notes about a named person keep the name more often than a chat's extractor does
        full_stored_p=0.2 if voice == "1" else 0.5,
        multi_valued=MULTI_VALUED,
    )


BOOKS: dict[str, Phrasebook] = {"first": _book("1"), "third": _book("3")}


def _chain(u: _User, p_first: float, n_changes: tuple[int, ...], lo: float, span: float) -> list[float]:
    """Start days of a single-valued chain (empty when the attribute is never stated)."""
    if u.rng.random() >= p_first:
        return []
    n = int(u.pick(n_changes))
    first = float(u.rng.uniform(0, lo * span))
    return [first, *_change_days(u, n, first + 20, 0.93 * span)]


def _gen_single(u: _User, span: float) -> None:
    rng, nm = u.rng, {"name": u.name}
    # City: some moves are told by region only ("packed up Kraków, new life in Tasmania").
    idx = [int(i) for i in rng.permutation(len(BV.CITIES))[:4]]
    starts = _chain(u, 0.92, (0, 1, 1, 2), 0.08, span)
    windows = _chain_windows(starts, span) if starts else []
    for k, day in enumerate(starts):
        city, region = BV.CITIES[idx[k]]
        f = {**nm, "city": city, "region": region, "old_city": BV.CITIES[idx[k - 1]][0] if k else ""}
        m = u.minute(day, day)
        if k == 0:
            u.add(m, "move", u.utter("city_first", **f), "city", f, 8, "user", "city", city)
        elif rng.random() < 0.35:
            u.add(m, "move", u.utter("city_move_oblique", **f), "city_region", f, 8, "user", "city",
                  city, oblique=True)
        elif rng.random() < 0.15:
            # the move is only ever told inside a complaint: the message carries a new fact
            clause = u.pick(u.book.clauses["city"]).format(city=city)
            u.add(m, "frustration", u.utter("frustration_fact", clause=clause, **nm), "city", f, 8,
                  "user", "city", city, gold_action="recover_and_pin")
        else:
            u.add(m, "move", u.utter("city_move", **f), "city", f, 8, "user", "city", city)
        mm = _restate(u, windows[k], 0.3)
        if mm is not None:
            u.add(mm, "restatement", u.utter("city_restate", **f), "city", f, 8, "user", "city", city,
                  role="restate")

    # Occupation: a change may be told without the job's name ("riding the ambulance now").
    idx = [int(i) for i in rng.permutation(len(BV.OCCUPATIONS))[:3]]
    for k, day in enumerate(_chain(u, 0.85, (0, 0, 1, 1, 2), 0.1, span)):
        job, phrase = BV.OCCUPATIONS[idx[k]]
        f = {**nm, "job": job, "a_job": _article(job), "job_phrase": phrase,
             "employer": u.pick(BV.EMPLOYERS)}
        m = u.minute(day, day)
        if k and rng.random() < 0.4:
            u.add(m, "job", u.utter("job_change_oblique", **f), "occupation_oblique", f, 7,
                  "user", "occupation", job, oblique=True)
        else:
            u.add(m, "job", u.utter("job_first" if k == 0 else "job_change", **f), "occupation", f, 7,
                  "user", "occupation", job)

    # Vehicle: "finally traded the Subaru for a Kia Niro EV".
    idx = [int(i) for i in rng.permutation(len(BV.VEHICLES))[:3]]
    for k, day in enumerate(_chain(u, 0.6, (0, 1, 1), 0.3, span)):
        vehicle, _short = BV.VEHICLES[idx[k]]
        f = {**nm, "vehicle": vehicle, "a_vehicle": _article(vehicle),
             "old_short": BV.VEHICLES[idx[k - 1]][1] if k else ""}
        oblique = bool(k and rng.random() < 0.6)
        key = "vehicle_first" if k == 0 else ("vehicle_change_oblique" if oblique else "vehicle_change")
        u.add(u.minute(day, day), "profile", u.utter(key, **f), "vehicle", f, 5, "user", "vehicle",
              vehicle, oblique=oblique)

    idx = [int(i) for i in rng.permutation(len(BV.SCHOOLS))[:2]]
    for k, day in enumerate(_chain(u, 0.35, (0, 0, 1), 0.4, span)):
        school, course = BV.SCHOOLS[idx[k]]
        f = {**nm, "school": school, "course": course}
        u.add(u.minute(day, day), "profile", u.utter("school_first" if k == 0 else "school_change", **f),
              "school", f, 6, "user", "school", school)

    idx = [int(i) for i in rng.permutation(len(BV.DESTINATIONS))[:3]]
    for k, day in enumerate(_chain(u, 0.5, (0, 1, 1), 0.5, span)):
        f = {**nm, "dest": BV.DESTINATIONS[idx[k]], "month": u.pick(BV.MONTHS),
             "old_dest": BV.DESTINATIONS[idx[k - 1]] if k else ""}
        u.add(u.minute(day, day), "preference", u.utter("travel_plan" if k == 0 else "travel_change", **f),
              "travel", f, 5, "user", "travel", f["dest"])


def _gen_multi(u: _User, span: float) -> None:
    """Pets, children, languages, hobbies, allergies: values that coexist."""
    rng, nm = u.rng, {"name": u.name}

    def days(n: int) -> list[float]:
        return sorted(float(x) for x in rng.uniform(0, 0.85 * span, size=n))

    if rng.random() < 0.55:
        kinds = [int(i) for i in rng.permutation(len(BV.PET_KINDS))]
        names = [int(i) for i in rng.permutation(len(BV.PET_NAMES))]
        for k, day in enumerate(days(int(rng.choice([1, 2, 2, 3])))):
            kind = BV.PET_KINDS[kinds[k]]
            f = {**nm, "pet_kind": kind, "a_pet_kind": _article(kind), "pet": BV.PET_NAMES[names[k]]}
            u.add(u.minute(day, day), "profile", u.utter("pet_add" if k == 0 else "pet_add_more", **f),
                  "pet", f, 6, "user", "pet", f"{kind} {f['pet']}")
    if rng.random() < 0.45:
        names = [int(i) for i in rng.permutation(len(BV.KIN_NAMES))]
        for k, day in enumerate(days(int(rng.choice([1, 1, 2, 3])))):
            f = {**nm, "child": u.pick(BV.CHILD_KINDS), "kid": BV.KIN_NAMES[names[k]],
                 "age": str(int(rng.integers(1, 18)))}
            u.add(u.minute(day, day), "profile", u.utter("child", **f), "child", f, 8, "user", "child",
                  f"{f['child']} {f['kid']}")
    if rng.random() < 0.5:
        langs = [int(i) for i in rng.permutation(len(BV.LANGUAGES))]
        for k, day in enumerate(days(int(rng.choice([1, 2, 2, 3])))):
            f = {**nm, "lang": BV.LANGUAGES[langs[k]]}
            u.add(u.minute(day, day), "profile", u.utter("language", **f), "language", f, 5,
                  "user", "language", f["lang"])
    # Hobbies and allergies: values coexist, and now and then one is replaced (a direct
    # contradiction of that one value only; the others stay true).
    for attr, p_on, sizes, p_swap in (("hobby", 0.6, (1, 2, 2, 3), 0.35), ("allergy", 0.45, (1, 1, 2), 0.25)):
        if rng.random() >= p_on:
            continue
        vocab: tuple[Any, ...] = BV.HOBBIES if attr == "hobby" else BV.ALLERGENS
        order = [int(i) for i in rng.permutation(len(vocab))]
        stated = []
        n = int(rng.choice(sizes))
        for k, day in enumerate(days(n)):
            stated.append((day, _multi_fact(u, attr, vocab[order[k]], None, day)))
        if rng.random() < p_swap:
            day0, old = stated[int(rng.integers(len(stated)))]
            when = _change_days(u, 1, day0 + 20, 0.95 * span)
            if when:
                _multi_fact(u, attr, vocab[order[n]], old, when[0])


def _multi_fact(u: _User, attr: str, item: Any, old: _Ev | None, day: float) -> _Ev:
    """Add one hobby or allergy; with ``old``, it replaces that one value (a correction)."""
    nm = {"name": u.name}
    m = u.minute(day, day)
    if attr == "hobby":
        f = {**nm, "hobby": item, "old_hobby": old.value or "" if old is not None else ""}
        key = "hobby_add" if old is None else "hobby_swap"
        return u.add(m, "preference", u.utter(key, **f), "hobby", f, 4, "user", "hobby", item,
                     replaces=old)
    allergen, severe = item
    f = {**nm, "allergen": allergen, "old_allergen": old.value or "" if old is not None else ""}
    key = "allergy" if old is None else "allergy_correction"
    return u.add(m, "ymyl", u.utter(key, **f), "allergy", f, 10 if severe else 8, "user", "allergy",
                 allergen, ymyl=("health", "strong"), replaces=old)


def _gen_health(u: _User, span: float) -> None:
    rng, nm = u.rng, {"name": u.name}
    if rng.random() < 0.35:
        order = [int(i) for i in rng.permutation(len(BV.MEDICATIONS))]
        med, cond = BV.MEDICATIONS[order[0]]
        day = float(rng.uniform(0, 0.6 * span))
        f = {**nm, "med": med, "cond": cond}
        u.add(u.minute(day, day), "ymyl", u.utter("medication", **f), "medication", f, 8,
              "user", "medication", med, ymyl=("pharmaceutical", "strong"))
        same = [i for i in order[1:] if BV.MEDICATIONS[i][1] == cond]
        if same and rng.random() < 0.4:
            when = _change_days(u, 1, day + 20, 0.95 * span)
            if when:
                f2 = {**nm, "med": BV.MEDICATIONS[same[0]][0], "cond": cond, "old_med": med}
                u.add(u.minute(when[0], when[0]), "ymyl", u.utter("med_switch", **f2), "medication", f2,
                      8, "user", "medication", f2["med"], ymyl=("pharmaceutical", "strong"))
    if rng.random() < 0.3:
        day = float(rng.uniform(0, 0.85 * span))
        f = {**nm, "cond": u.pick(BV.CONDITIONS)}
        u.add(u.minute(day, day), "ymyl", u.utter("condition", **f), "condition", f, 8,
              "user", "condition", f["cond"], ymyl=("health", "strong"))


def _gen_people(u: _User, span: float) -> None:
    rng, nm = u.rng, {"name": u.name}
    people: list[str] = []
    if rng.random() < 0.6:
        partner = u.pick(BV.PARTNERS)
        people.append(partner)
        idx = [int(i) for i in rng.permutation(len(BV.OCCUPATIONS))[:2]]
        for k, day in enumerate(_chain(u, 0.8, (0, 0, 1), 0.7, span)):
            job = BV.OCCUPATIONS[idx[k]][0]
            f = {**nm, "rel": partner, "job": job, "a_job": _article(job)}
            key = "partner_job" if k == 0 else "partner_job_change"
            u.add(u.minute(day, day), "relation", u.utter(key, **f), "partner_job", f, 5,
                  partner, "occupation", job)
        if rng.random() < 0.6:
            day = float(rng.uniform(0, 0.85 * span))
            f = {**nm, "rel": partner, "rname": u.pick(BV.KIN_NAMES)}
            u.add(u.minute(day, day), "relation", u.utter("rel_name", **f), "rel_name", f, 5,
                  partner, "name", f["rname"])
    kin = [BV.KIN[int(i)] for i in rng.permutation(len(BV.KIN))]
    for rel in kin[:int(rng.choice([0, 1, 1, 2]))]:
        people.append(rel)
        attrs = [a for a, p in (("city", 0.75), ("name", 0.45)) if rng.random() < p] or ["city"]
        for attr in attrs:
            day = float(rng.uniform(0, 0.85 * span))
            if attr == "city":
                f = {**nm, "rel": rel, "city": u.pick(BV.CITIES)[0]}
                u.add(u.minute(day, day), "relation", u.utter("kin_city", **f), "kin_city", f, 5,
                      rel, "city", f["city"])
            else:
                f = {**nm, "rel": rel, "rname": u.pick(BV.KIN_NAMES)}
                u.add(u.minute(day, day), "relation", u.utter("rel_name", **f), "rel_name", f, 5,
                      rel, "name", f["rname"])
    u.relatives = people
    # people never mentioned, asked about all the same: hard negatives ("what's my aunt called?")
    unmentioned = [p for p in (*kin, u.pick(BV.PARTNERS)) if p not in people]
    u.strangers = [unmentioned[int(i)] for i in rng.permutation(len(unmentioned))[:2]]


def _gen_events(u: _User, span: float) -> None:
    if u.book is BOOKS["first"] and u.rng.random() < 0.75:
        u.add(u.minute(0, 0.1 * span), "profile", u.utter("name", name=u.name), "name", {}, 8,
              "user", "name", u.name)
    _gen_single(u, span)
    _gen_multi(u, span)
    _gen_health(u, span)
    _gen_people(u, span)
    for attr, vocab, imp, p in (("dinner", BV.DINNERS, 1, 0.8), ("podcast", BV.PODCASTS, 2, 0.5)):
        if u.rng.random() < p:
            f = {"name": u.name, attr: u.pick(vocab)}
            u.add(u.minute(0, 0.95 * span), "trivial", u.utter(attr, **f), attr, f, imp, "user",
                  attr, f[attr])
    if u.rng.random() < 0.2:
        u.add(u.minute(0.1 * span, span - 1), "frustration", u.utter("frustration_vague", name=u.name),
              None, {}, None, "user", None, None, role="none", gold_action="apologize_and_ask")


def generate_tables(n_users: int, seed: int, span_days: int, start: dt.datetime,
                    questions_per_user: int, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """World B's events and questions, in world A's columns (``EVENT_COLUMNS``, ...)."""
    splits = user_splits(n_users, seed)
    ev_rows: list[dict[str, Any]] = []
    q_rows: list[dict[str, Any]] = []
    it: Any = range(n_users)
    if progress:
        from tqdm import tqdm
        it = tqdm(it, desc="world_b", unit="user")
    for i in it:
        # a stream of its own: user u0007 of world B shares nothing with world A's u0007
        rng = np.random.Generator(np.random.PCG64([seed, i, 0xB]))
        name = BV.PEOPLE[int(rng.integers(len(BV.PEOPLE)))]
        voice = "third" if rng.random() < _THIRD_PERSON_P else "first"
        u = _User(i, f"u{i:04d}", splits[i], name, rng, span_days * 1440, BOOKS[voice])
        _gen_events(u, float(span_days))
        _frustration_reassure(u)
        ev_rows.extend(_finalise_events(u, start))
        q_rows.extend(_gen_questions(u, questions_per_user, start))
    events = pd.DataFrame(ev_rows, columns=list(EVENT_COLUMNS))
    questions = pd.DataFrame(q_rows, columns=list(QUESTION_COLUMNS))
    return normalise_events(events), normalise_questions(questions)


__all__ = ["BOOKS", "MULTI_VALUED", "NEW_ATTRIBUTES", "WORLD_B_VERSION", "generate_tables"]
