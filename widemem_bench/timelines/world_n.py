"""World N: a natural-register DEVELOPMENT world (issues 25 and 26).

Memories as they reach a memory layer in the wild: chat messages typed by the user
(lowercase, abbreviations, small talk around the fact, a few typos, emoji) and terse
third-person CRM-style agent notes ("Cust. moved to Bristol w/ partner Sam"), about the
user and about named relatives, friends and colleagues. Written blind to the methods it
measures (answerability, resolvers, slots, extractors, calibration) and to world B; no
world A or world C template is reused (``world_n_vocab``). Same events and questions
schema as world A (``generator.EVENT_COLUMNS`` / ``QUESTION_COLUMNS``).

Ground truth as world C: a single-valued attribute is one slot per subject
(``home_city``), a multi-valued one one slot per value (``pet:Biscuit``, coexisting), a
detail of an entity its own slot (``flight_time``, ``vet:Biscuit``). Updates come in three
styles (plain ~40%, marked ~30%, oblique ~30%, ``oblique=True``); a medication's dose
changes inside its slot. ``utterance_family`` is ``n.<attribute>.<style>.<register>.<i>``.

Questions, by kind: ``answerable`` / ``stale_probe`` (a slot stored, phrased away from the
fact's words), ``hard_negative`` = slot missing (the entity is stored, the asked detail
never is: the flight is booked, its time never said), ``other_person`` (a relative's
attribute that only someone else has stored), ``never_mentioned`` (unrelated).
"""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.timelines import world_n_vocab as W
from widemem_bench.timelines.generator import (
    EVENT_COLUMNS,
    QUESTION_COLUMNS,
    normalise_events,
    normalise_questions,
    user_splits,
)

# The user and its register noise, and the questions, live beside this module
# (world_n_user, world_n_questions); the noise functions are re-exported here.
from widemem_bench.timelines.world_n_questions import _questions
from widemem_bench.timelines.world_n_user import _Fact, _User, chat_noise, fill, note_noise, typo

__all__ = ["REGISTERS", "UPDATE_STYLES", "WORLD_N_VERSION", "chat_noise", "generate_tables", "note_noise",
           "typo"]

# 1: first version.
WORLD_N_VERSION = "1"
UPDATE_STYLES: tuple[str, ...] = ("plain", "marked", "oblique")
_STYLE_P = (0.4, 0.3, 0.3)
REGISTERS: tuple[str, ...] = ("chat", "rel", "note")
# A statement about the user is a CRM note with this probability, else a chat message.
_NOTE_USER_P = 0.32
_NOTE_OTHER_P = 0.45
_RESTATE_P = 0.3
_END_P = 0.12
_DOSE_CHANGE_P = 0.45
# A random stream of its own per user: (seed, user index, world tag), apart from A's and C's.
_STREAM = 14
# Canonical third-person form of each fact (``fact_full``), per attribute family.
_FULL: dict[str, str] = {
    "home_city": "{S} lives in {v}", "employer": "{S} works at {v}", "job": "{S} works as a {v}",
    "partner": "{S}'s partner is {v}", "car": "{S} drives a {v}", "phone": "{S}'s phone number is {v}",
    "manager": "{S}'s manager is {v}", "visa": "{S}'s immigration status is {v}",
    "bank": "{S} banks with {v}", "trip": "{S} has a trip booked to {v}", "gp": "{S} is registered at {v}",
    "pet": "{S} has a pet called {v}", "child": "{S} has a child called {v}",
    "allergy": "{S} is allergic to {v}", "medication": "{S} takes {v}", "language": "{S} speaks {v}",
}


# ---------------------------------------------------------------- statements
def _who(u: _User, subject: str, register: str) -> str:
    """How a note or a third-person chat names the subject."""
    if subject == "user":
        return fill(u.pick(W.NOTE_USER), name=u.name)
    n = u.people[subject]
    if register == "note":
        return fill(u.pick(W.NOTE_OTHER), rel=subject, n=n)
    r = u.pick(W.REL_CHAT[subject])
    return fill(u.pick(W.REL_CHAT_FORMS), r=r, n=n, r_bare=subject)


def _pools(spec: W.Single | W.Multi, subject: str) -> list[tuple[str, dict[str, tuple[str, ...]]]]:
    if subject == "user":
        return [("chat", spec.chat), ("note", spec.note)]
    return [("rel", spec.rel), ("note", spec.note)]


def _pool(u: _User, pools: dict[str, tuple[str, ...]], style: str) -> tuple[tuple[str, ...], str]:
    """(templates, style written) of one register for a style; empty when it has none."""
    if style in ("state", "add"):
        return pools.get("state") or pools.get("add") or (), style
    if style == "restate":
        if pools.get("restate") and u.chance(0.5):
            return pools["restate"], style
        return pools.get("state") or pools.get("add") or (), style
    if style == "end":
        return pools.get("end") or (), style
    if pools.get(style):
        return pools[style], style
    return pools.get("plain") or pools.get("state") or (), "plain"


def _say(u: _User, day: float, subject: str, attr: str, family: str, value: str, style: str,
         fields: dict[str, str], *, kind: str, importance: int, role: str, multi: bool,
         start: dt.datetime, spec: W.Single | W.Multi | None = None,
         detail: W.Detail | None = None) -> _Fact:
    """One statement: register chosen, template filled, register noise applied."""
    if detail is not None:
        register = "note" if u.chance(_NOTE_USER_P) else "chat"
        pool = detail.note if register == "note" else detail.chat
    else:
        assert spec is not None
        options = _pools(spec, subject)
        if u.chance(_NOTE_USER_P if subject == "user" else _NOTE_OTHER_P):
            options.reverse()
        register, pool = "", ()
        for reg, pools in options:
            tpls, written = _pool(u, pools, style)
            if tpls:
                register, pool, style = reg, tpls, written
                break
    i = int(u.rng.integers(len(pool)))
    who = _who(u, subject, register) if register != "chat" else ""
    text = fill(pool[i], R=who, **fields)
    minute = u.minute(day)
    if register == "note":
        text = note_noise(u, text, day, start)
    else:
        text = chat_noise(u, text, fields.get("v", ""))
    subj_full = u.name if subject == "user" else f"{u.name}'s {subject} {u.people[subject]}"
    full = (_FULL[family].format(S=subj_full, v=value) if family in _FULL
            else f"{subj_full}'s {family.replace('_', ' ')} is {value}")
    fact = _Fact(minute, subject, attr, value, text, full, f"n.{family}.{style}.{register}.{i}",
                 kind if subject == "user" else "relation", importance, style, register, role, multi)
    u.facts.append(fact)
    return fact


def _days(u: _User, n: int, lo: float, hi: float) -> list[float]:
    if n <= 0 or hi <= lo:
        return []
    days = sorted(float(x) for x in u.rng.uniform(lo, hi, size=n))
    for k in range(1, len(days)):
        days[k] = max(days[k], days[k - 1] + 6.0)
    return [d for d in days if d <= hi]


def _single(u: _User, subject: str, attr: str, t0: float, start: dt.datetime) -> tuple[str, float]:
    """A single-valued chain; returns (last value, day it was set)."""
    spec = W.SINGLE[attr]
    changes = spec.changes if subject == "user" else (0.7, 0.3)
    n = 1 + int(u.rng.choice(len(changes), p=changes))
    pool = [v for v in spec.values if v not in u.people.values() and v != u.name]
    vals = [pool[int(k)] for k in u.rng.permutation(len(pool))[:n]]
    starts = [t0, *_days(u, len(vals) - 1, max(t0 + 10, 0.15 * u.span), 0.92 * u.span)]
    vals = vals[:len(starts)]
    for k, (val, day) in enumerate(zip(vals, starts, strict=True)):
        style = "state" if not k else UPDATE_STYLES[int(u.rng.choice(3, p=_STYLE_P))]
        fields = {"v": val, "old": vals[k - 1] if k else ""}
        _say(u, day, subject, attr, attr, val, style, fields, kind=spec.kind,
             importance=spec.importance, role="canonical", multi=False, start=start, spec=spec)
        end = starts[k + 1] if k + 1 < len(starts) else u.span
        if end - day > 4 and u.chance(_RESTATE_P):
            _say(u, float(u.rng.uniform(day + 1, end - 1)), subject, attr, attr, val, "restate",
                 fields, kind="restatement", importance=spec.importance, role="restate",
                 multi=False, start=start, spec=spec)
    return vals[-1], starts[len(vals) - 1]


def _multi_values(u: _User, family: str, n: int) -> list[tuple[str, dict[str, str]]]:
    """(slot key, fields) of ``n`` distinct values of a multi-valued family."""
    if family == "pet":
        names = [W.PET_NAMES[int(k)] for k in u.rng.permutation(len(W.PET_NAMES))[:n]]
        return [(nm, {"v": nm, "kind": u.pick(W.PET_KINDS)}) for nm in names]
    if family == "child":
        names = [W.KID_NAMES[int(k)] for k in u.rng.permutation(len(W.KID_NAMES))[:n]]
        return [(nm, {"v": nm}) for nm in names]
    if family == "medication":
        meds = [W.MEDICATIONS[int(k)] for k in u.rng.permutation(len(W.MEDICATIONS))[:n]]
        return [(med, {"med": med, "doses": "|".join(doses)}) for med, doses in meds]
    pool = {"allergy": W.ALLERGIES, "language": W.LANGUAGES}[family]
    return [(pool[int(k)], {"v": pool[int(k)]}) for k in u.rng.permutation(len(pool))[:n]]


def _multi(u: _User, subject: str, family: str, n: int, lo: float,
           start: dt.datetime) -> list[tuple[str, float]]:
    """Values of a multi-valued family, each its own slot; returns (key, day) of each."""
    spec = W.MULTI[family]
    out = []
    for key, f in _multi_values(u, family, n):
        day = float(u.rng.uniform(lo, 0.85 * u.span))
        attr = f"{family}:{key}"
        kw: dict[str, Any] = dict(kind="profile" if subject == "user" else "relation",
                                  importance=spec.importance, multi=True, start=start, spec=spec)
        if family == "medication":
            doses = f["doses"].split("|")
            k0 = int(u.rng.integers(len(doses)))
            value = f"{key} {doses[k0]}"
            fields = {"v": value, "med": key, "dose": doses[k0]}
            _say(u, day, subject, attr, family, value, "add", fields, role="canonical", **kw)
            if subject == "user" and u.span - day > 30 and u.chance(_DOSE_CHANGE_P):
                k1 = (k0 + 1) % len(doses)
                d1 = float(u.rng.uniform(day + 14, u.span - 3))
                style = UPDATE_STYLES[int(u.rng.choice(3, p=_STYLE_P))]
                new = f"{key} {doses[k1]}"
                _say(u, d1, subject, attr, family, new, style,
                     {"v": new, "old": value, "med": key, "dose": doses[k1], "odose": doses[k0]},
                     role="canonical", **kw)
                value = new
        else:
            value = key
            fields = {"v": key, "kind": f.get("kind", "")}
            _say(u, day, subject, attr, family, value, "add", fields, role="canonical", **kw)
        pools = spec.note if subject != "user" else spec.chat
        if pools.get("end") and u.span - day > 30 and u.chance(_END_P):
            end = float(u.rng.uniform(day + 20, u.span - 1))
            _say(u, end, subject, attr, family, "ended", "end",
                 {"v": value, "med": key, "kind": f.get("kind", "")}, role="end", **kw)
        elif u.span - day > 6 and u.chance(_RESTATE_P * 0.6):
            _say(u, float(u.rng.uniform(day + 1, min(u.span - 1, day + 60))), subject, attr,
                 family, value, "restate", {"v": value, "med": key, "kind": f.get("kind", "")},
                 role="restate", **{**kw, "kind": "restatement"})
        out.append((key, day))
    return out


def _details(u: _User, entity: str, key: str, day: float, start: dt.datetime) -> None:
    """Details of one stored entity of the user, each stored with its own probability."""
    for dname, d in W.DETAILS.items():
        if d.entity != entity or not u.chance(d.p) or u.span - day < 3:
            continue
        attr = dname if entity in W.SINGLE else f"{dname}:{key}"
        val = u.pick(d.values)
        fields = {"v": val, "n": key}
        _say(u, float(u.rng.uniform(day + 1, u.span - 1)), "user", attr, dname, val, "state",
             fields, kind="profile", importance=4, role="canonical", multi=False, start=start,
             detail=d)


def _gen_user(u: _User, start: dt.datetime) -> None:
    rels = [r for r in W.RELATIONS]
    n_people = int(u.pick((1, 2, 2, 3, 3, 4)))
    has_partner = u.chance(W.SINGLE["partner"].p_user)
    if has_partner:
        rels = [r for r in rels if r not in ("wife", "husband", "partner")]
    for k in u.rng.permutation(len(rels))[:n_people]:
        rel = rels[int(k)]
        pool = (W.OTHER_F if rel in W.FEMALE_RELATIONS else W.OTHER_M if rel in W.MALE_RELATIONS
                else W.OTHER_NAMES)
        free = [n for n in pool if n not in u.people.values()]
        u.people[rel] = u.pick(free)
    for attr, spec in W.SINGLE.items():
        if (has_partner if attr == "partner" else u.chance(spec.p_user)):
            val, day = _single(u, "user", attr, float(u.rng.uniform(0, 0.3 * u.span)), start)
            _details(u, attr, val, day, start)
    for family, mspec in W.MULTI.items():
        if u.chance(mspec.p_user):
            for key, day in _multi(u, "user", family, int(u.pick((1, 1, 2, 2, 3))), 0.0, start):
                _details(u, family, key, day, start)
    for rel in u.people:
        for attr, spec in W.SINGLE.items():
            if spec.rel and u.chance(spec.p_rel):
                _single(u, rel, attr, float(u.rng.uniform(0, 0.6 * u.span)), start)
        for family, mspec in W.MULTI.items():
            if mspec.rel and u.chance(mspec.p_rel):
                _multi(u, rel, family, int(u.pick((1, 1, 2))), 0.0, start)


def _finalise(u: _User) -> None:
    """Fact ids; valid_to / supersedes / update_kind from each slot's statements."""
    u.facts.sort(key=lambda f: f.minute)
    for j, f in enumerate(u.facts):
        f.fact_id = f"{u.uid}-f{j:03d}"
    slots: dict[tuple[str, str], list[_Fact]] = {}
    for f in u.facts:
        slots.setdefault((f.subject, f.attribute), []).append(f)
    for facts in slots.values():
        heads = [f for f in facts if f.role in ("canonical", "end")]
        for prev, nxt in itertools.pairwise(heads):
            prev.valid_to = nxt.minute
            nxt.supersedes = prev.fact_id
        for f in facts:
            if f.role == "restate":
                later = [h.minute for h in heads if h.minute > f.minute]
                f.valid_to = min(later) if later else None
    for f in u.facts:
        fam = f.attribute.split(":")[0]
        if f.role == "restate":
            f.update_kind = "restates"
        elif f.supersedes is not None:
            f.update_kind = "supersedes"
        elif f.multi and any(
                g is not f and g.subject == f.subject and g.attribute.split(":")[0] == fam
                and g.role == "canonical" and g.minute < f.minute
                and (g.valid_to is None or g.valid_to > f.minute) for g in u.facts):
            f.update_kind = "coexists"
        else:
            f.update_kind = "new"


def _rows(u: _User, start: dt.datetime) -> list[dict[str, Any]]:
    rows = []
    for f in u.facts:
        at = start + dt.timedelta(minutes=f.minute)
        rows.append({
            "fact_id": f.fact_id, "user_id": u.uid, "split": u.split, "user_name": u.name,
            "at": at, "event_kind": "restatement" if f.role == "restate" else f.kind,
            "utterance": f.text, "utterance_family": f.family, "fact_full": f.full,
            "fact_stripped": f.text, "fact_stored": f.text, "importance": f.importance,
            "ymyl_category": None, "ymyl_strength": None, "subject": f.subject,
            "attribute": f.attribute, "value": f.value, "valid_from": at,
            "valid_to": start + dt.timedelta(minutes=f.valid_to) if f.valid_to is not None else None,
            "supersedes": f.supersedes, "oblique": f.style == "oblique",
            "restatement": f.role == "restate", "gold_action": None, "multi_valued": f.multi,
            "update_kind": f.update_kind,
        })
    return rows


def generate_tables(n_users: int, seed: int, span_days: int, start: dt.datetime,
                    questions_per_user: int, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(events, questions) of world N; same signature and columns as world A's."""
    splits = user_splits(n_users, seed)
    ev_rows: list[dict[str, Any]] = []
    q_rows: list[dict[str, Any]] = []
    it: Any = range(n_users)
    if progress:
        from tqdm import tqdm
        it = tqdm(it, desc="world N", unit="user")
    for i in it:
        rng = np.random.Generator(np.random.PCG64([seed, i, _STREAM]))
        pool = W.FEMALE if rng.random() < 0.5 else W.MALE
        u = _User(f"u{i:04d}", splits[i], str(pool[int(rng.integers(len(pool)))]), rng, float(span_days))
        _gen_user(u, start)
        _finalise(u)
        ev_rows.extend(_rows(u, start))
        q_rows.extend(_questions(u, questions_per_user, start))
    events = pd.DataFrame(ev_rows, columns=list(EVENT_COLUMNS))
    questions = pd.DataFrame(q_rows, columns=list(QUESTION_COLUMNS))
    return normalise_events(events), normalise_questions(questions)
