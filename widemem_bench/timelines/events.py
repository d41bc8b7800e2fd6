"""World A's events: each user's fact chains (city, employer, relatives, YMYL facts,
preferences, trivia, frustration) and their ground truth (validity, supersession, the
kind of update each one is).

Every draw goes through the user's own generator in a fixed order; changing the order
of two draws changes the data set (and so needs a new GENERATOR_VERSION).
"""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from widemem_bench.timelines import vocab as V
from widemem_bench.timelines.phrasebook import _article, _cap, _where
from widemem_bench.timelines.user import _Ev, _User


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
    """Every fact chain of one user, drawn in this order (the order is the data set)."""
    rng, name = u.rng, u.name
    # Profile: some users never say their name (a hard negative for "what's my name?").
    if rng.random() < 0.8:
        u.add(u.minute(0, 0.1 * span), "profile", u.utter("name", name=name), "name",
              {}, 8, "user", "name", name)
    _gen_city(u, span)
    _gen_employer(u, span)
    _gen_relatives(u, span)
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


def _gen_city(u: _User, span: float) -> None:
    """The city chain: first city, then moves (some announced only in a frustration message)."""
    rng, name = u.rng, u.name
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


def _gen_employer(u: _User, span: float) -> None:
    """The employer chain (most users have one): first job, then changes."""
    rng = u.rng
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


def _gen_relatives(u: _User, span: float) -> None:
    """Facts about the user's relatives (and the relatives never mentioned: ``strangers``)."""
    rng = u.rng
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
