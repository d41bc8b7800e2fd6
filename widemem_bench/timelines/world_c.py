"""World C: a DEVELOPMENT world for the contradiction resolvers (issue 13).

World B is sealed, so nothing may be developed against it; world C is a third world
to develop and tune on. It was written blind to world B (no file of it read) and does
not reuse world A's vocabulary or phrasings (``world_c_vocab``). Same events schema as
world A (``generator.EVENT_COLUMNS``), so every experiment that reads timelines reads it.

What it stresses: single-valued attributes updated in three styles (plain restatement
with no change word ~40%, marked ~30%, oblique ~30%, ``oblique=True``), multi-valued
attributes whose values coexist, the same attribute for other people, look-alike
values across attributes, same-value rewordings (merges) and named pets.

Gold slots: a single-valued attribute is one slot per subject (``home_city``); a
multi-valued one is one slot per value (``pet:Otto``), because a slot holds one true
value at a time: a second pet is a new slot, never an update of the first. The style of
each statement is in ``utterance_family``: ``c.<attribute>.<style>.<template>``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.timelines import world_c_vocab as W
from widemem_bench.timelines.generator import (
    EVENT_COLUMNS,
    QUESTION_COLUMNS,
    normalise_events,
    normalise_questions,
    user_splits,
)

# 1: first version.
WORLD_C_VERSION = "1"
# Shares of the three styles of a single-valued update (a style without templates for
# an attribute falls back to plain).
UPDATE_STYLES: tuple[str, ...] = ("plain", "marked", "oblique")
_STYLE_P = (0.4, 0.3, 0.3)
# Who a note about the user is written as: "I ...", bare extractor form ("lives in X"),
# the user's name, "User ...", "the user ...". Third person = the last three.
VOICES: tuple[str, ...] = ("first", "bare", "named", "User", "the user")
THIRD_PERSON: tuple[str, ...] = ("named", "User", "the user")
_VOICE_P = (0.3, 0.3, 0.26, 0.07, 0.07)
_RESTATE_P = 0.35
_MULTI_RESTATE_P = 0.25
_END_P = 0.15
# A random stream of its own per user: (seed, user index, world tag), apart from world A's.
_STREAM = 3
_VERB = re.compile(r"\[([^|\]]*)\|([^\]]*)\]")


@dataclass
class _Fact:
    minute: int
    subject: str
    attribute: str
    value: str
    text: str
    full: str
    utterance: str
    family: str
    kind: str
    importance: int
    oblique: bool
    role: str  # "canonical" (a new value), "restate" (the current one again), "end"
    multi: bool
    fact_id: str = ""
    valid_to: int | None = None
    supersedes: str | None = None
    update_kind: str | None = None


@dataclass
class _User:
    uid: str
    split: str
    name: str
    pron: str
    rng: np.random.Generator
    span: float
    facts: list[_Fact] = field(default_factory=list)
    taken: set[int] = field(default_factory=set)

    def pick(self, seq: tuple[Any, ...] | list[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def minute(self, day: float) -> int:
        """A free minute of ``day`` at a waking hour: one statement per minute per user."""
        m = int(day) * 1440 + int(self.rng.integers(8 * 60, 23 * 60))
        while m in self.taken:
            m += 1
        self.taken.add(m)
        return m


def article(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def render(tpl: str, subj: str, poss: str, first: bool, fields: dict[str, str],
           cap: bool = True) -> str:
    """One template in one voice; whitespace tidied, first letter capitalised if ``cap``."""
    text = _VERB.sub(lambda m: m.group(1) if first else m.group(2), tpl)
    text = text.format(S=subj, P=poss, **fields)
    text = re.sub(r"\s+", " ", text).replace(" ,", ",").replace(" ;", ";").strip(" ,;")
    return text[:1].upper() + text[1:] if cap else text


def _voices(u: _User, subject: str, attr: str) -> tuple[tuple[str, str, bool], tuple[str, str, bool], bool]:
    """(stored voice, utterance voice, capitalise stored text) for a fact about ``subject``."""
    if subject != "user":
        rel = subject
        who = u.pick((f"my {rel}", f"{u.pron} {rel}", f"{u.name}'s {rel}", f"the user's {rel}",
                      f"User's {rel}"))
        return (who, f"{who}'s", False), (f"my {rel}", f"my {rel}'s", False), True
    p = np.asarray(_VOICE_P)
    if attr == "name":  # "Marisol's name is Marisol" says nothing
        p = p * np.array([1, 1, 0, 1, 1])
    voice = VOICES[int(u.rng.choice(len(VOICES), p=p / p.sum()))]
    said = ("I", "my", True)
    stored = {"first": said, "bare": ("", "", False), "named": (u.name, f"{u.name}'s", False),
              "User": ("User", "User's", False), "the user": ("the user", "the user's", False)}[voice]
    return stored, said, voice != "bare"


def _state(u: _User, day: float, subject: str, attr: str, value: str, fields: dict[str, str],
           style: str, templates: tuple[str, ...], *, kind: str, importance: int,
           role: str, multi: bool) -> _Fact:
    i = int(u.rng.integers(len(templates)))
    stored, said, cap = _voices(u, subject, attr)
    f = {"name": u.name, **fields}
    text = render(templates[i], *stored, f, cap)
    full_who = (u.name, f"{u.name}'s", False) if subject == "user" else (
        f"{u.name}'s {subject}", f"{u.name}'s {subject}'s", False)
    if attr == "name":
        full_who = ("User", "User's", False)
    said_text = render(templates[i], *said, f)
    utter = f"{u.pick(W.CHAT_OPENERS)}{said_text[:1].lower() + said_text[1:]}{u.pick(W.CHAT_CLOSERS)}"
    fact = _Fact(u.minute(day), subject, attr if not multi else f"{attr}:{value}", value, text,
                 render(templates[i], *full_who, f), utter[:1].upper() + utter[1:],
                 f"c.{attr}.{style}.{i}", kind if subject == "user" else "relation", importance,
                 style == "oblique", role, multi)
    u.facts.append(fact)
    return fact


def _days(u: _User, n: int, lo: float, hi: float) -> list[float]:
    """n sorted days in [lo, hi], a week apart (fewer if the span is too short)."""
    if n <= 0 or hi <= lo:
        return []
    days = sorted(float(x) for x in u.rng.uniform(lo, hi, size=n))
    for k in range(1, len(days)):
        days[k] = max(days[k], days[k - 1] + 7.0)
    return [d for d in days if d <= hi]


def _chain_values(u: _User, attr: str, n: int, prefer: list[str]) -> list[str]:
    spec = W.SINGLE[attr]
    if attr == "relationship":  # single -> dating -> engaged -> married, in order
        lo = int(u.rng.integers(0, len(spec.values) - n + 1))
        return list(spec.values[lo:lo + n])
    vals = [spec.values[int(k)] for k in u.rng.permutation(len(spec.values))]
    if prefer and u.rng.random() < 0.4:  # another subject's chain reuses the user's values
        first = u.pick(prefer)
        vals = [first, *[v for v in vals if v != first]]
    if attr == "name":
        vals = [u.name]
    return vals[:n]


def _single(u: _User, subject: str, attr: str, changes: tuple[float, ...], t0: float,
            prefer: list[str]) -> list[str]:
    """One single-valued chain: a first value, its changes, restatements between them."""
    spec = W.SINGLE[attr]
    n = 1 + int(u.rng.choice(len(changes), p=changes))
    vals = _chain_values(u, attr, min(n, len(spec.values)), prefer)
    starts = [t0, *_days(u, len(vals) - 1, max(t0 + 10, 0.12 * u.span), 0.95 * u.span)]
    vals = vals[:len(starts)]
    for k, (val, day) in enumerate(zip(vals, starts, strict=True)):
        fields = {"v": val, "a_v": article(val), "old": vals[k - 1] if k else "",
                  "a_old": article(vals[k - 1]) if k else "", "kind": ""}
        style = "plain"
        if k:
            style = UPDATE_STYLES[int(u.rng.choice(3, p=_STYLE_P))]
            if not getattr(spec, style):
                style = "plain"
        pool = getattr(spec, style)
        if k and style == "plain":  # a plain update: a plain template, no {old} in it
            pool = tuple(t for t in pool if "{old}" not in t)
        _state(u, day, subject, attr, val, fields, style, pool, kind=spec.kind,
               importance=spec.importance, role="canonical", multi=False)
        end = starts[k + 1] if k + 1 < len(starts) else u.span
        if end - day > 3 and u.rng.random() < _RESTATE_P:
            again = spec.restate if u.rng.random() < 0.6 else tuple(
                t for t in spec.plain if "{old}" not in t)
            _state(u, float(u.rng.uniform(day + 1, end - 1)), subject, attr, val, fields,
                   "restate", again, kind="restatement", importance=spec.importance,
                   role="restate", multi=False)
    return vals


def _multi(u: _User, subject: str, attr: str, n_values: int, lo: float) -> None:
    """Values of a multi-valued attribute: each its own slot, some ended explicitly."""
    spec = W.MULTI[attr]
    vals = [spec.values[int(k)] for k in u.rng.permutation(len(spec.values))
            if spec.values[int(k)][0] != u.name][:n_values]
    for val, kind in vals:
        day = float(u.rng.uniform(lo, 0.9 * u.span))
        fields = {"v": val, "a_v": article(val), "kind": kind, "old": "", "a_old": ""}
        _state(u, day, subject, attr, val, fields, "add", spec.add, kind="preference",
               importance=spec.importance, role="canonical", multi=True)
        end = u.span
        if spec.end and u.span - day > 20 and u.rng.random() < _END_P:
            end = float(u.rng.uniform(day + 10, u.span - 1))
            _state(u, end, subject, attr, val, fields, "end", spec.end, kind="preference",
                   importance=spec.importance, role="end", multi=True)
        if end - day > 3 and u.rng.random() < _MULTI_RESTATE_P:
            _state(u, float(u.rng.uniform(day + 1, end - 1)), subject, attr, val, fields,
                   "restate", spec.restate, kind="restatement", importance=spec.importance,
                   role="restate", multi=True)


def _gen_user(u: _User) -> None:
    mine: dict[str, list[str]] = {}
    for attr, spec in W.SINGLE.items():
        if u.rng.random() < spec.p_user:
            mine[attr] = _single(u, "user", attr, spec.changes,
                                 float(u.rng.uniform(0, 0.1 * u.span)), [])
    for attr, mspec in W.MULTI.items():
        if u.rng.random() < mspec.p_user:
            _multi(u, "user", attr, int(u.pick((1, 1, 2, 2, 3))), 0.0)
    n_rel = int(u.pick((1, 1, 2, 2, 3)))
    for k in u.rng.permutation(len(W.RELATIVES))[:n_rel]:
        rel = W.RELATIVES[int(k)]
        for attr, p in W.RELATIVE_ATTRS:
            if u.rng.random() >= p:
                continue
            t0 = float(u.rng.uniform(0, 0.7 * u.span))
            if attr in W.MULTI:
                _multi(u, rel, attr, int(u.pick((1, 1, 2))), t0)
            else:
                _single(u, rel, attr, (0.75, 0.25), t0, mine.get(attr, []))


def _finalise(u: _User) -> None:
    """fact ids, valid_to / supersedes / update_kind from each slot's statements."""
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
        family = f.attribute.split(":")[0]
        if f.role == "restate":
            f.update_kind = "restates"
        elif f.supersedes is not None:
            f.update_kind = "supersedes"
        elif f.multi and any(
                g is not f and g.subject == f.subject and g.attribute.split(":")[0] == family
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
            "utterance": f.utterance, "utterance_family": f.family, "fact_full": f.full,
            "fact_stripped": f.text, "fact_stored": f.text, "importance": f.importance,
            "ymyl_category": None, "ymyl_strength": None, "subject": f.subject,
            "attribute": f.attribute, "value": "ended" if f.role == "end" else f.value,
            "valid_from": at,
            "valid_to": start + dt.timedelta(minutes=f.valid_to) if f.valid_to is not None else None,
            "supersedes": f.supersedes, "oblique": f.oblique, "restatement": f.role == "restate",
            "gold_action": None, "multi_valued": f.multi, "update_kind": f.update_kind,
        })
    return rows


def _valid(f: _Fact, minute: int) -> bool:
    return f.minute <= minute and (f.valid_to is None or f.valid_to > minute)


def _questions(u: _User, n: int, start: dt.datetime) -> list[dict[str, Any]]:
    """Dated questions about the user's single-valued attributes: the gold facts are the
    ones true when asked, the stale ones those superseded by then; a few ask about an
    attribute never mentioned (no gold fact)."""
    out: list[dict[str, Any]] = []
    for j in range(n):
        minute = int(u.rng.uniform(0.1, 1.0) * u.span * 1440)
        stated = sorted({f.attribute for f in u.facts if f.subject == "user" and not f.multi
                         and f.minute <= minute})
        unstated = [a for a in W.SINGLE if a not in stated]
        never = not stated or (bool(unstated) and u.rng.random() < 0.15)
        attr = u.pick(unstated) if never else u.pick(stated)
        slot = [f for f in u.facts if f.subject == "user" and f.attribute == attr]
        gold = [f for f in slot if _valid(f, minute) and f.role != "end"]
        stale = [f for f in slot if f.valid_to is not None and f.valid_to <= minute
                 and f.role == "canonical"]
        others = [f for f in u.facts if f.subject != "user" and f.attribute == attr
                  and _valid(f, minute)]
        i = int(u.rng.integers(len(W.SINGLE[attr].ask)))
        out.append({
            "question_id": f"{u.uid}-q{j:03d}", "user_id": u.uid, "split": u.split,
            "asked_at": start + dt.timedelta(minutes=minute), "session_id": f"{u.uid}-s{j:03d}",
            "text": render(W.SINGLE[attr].ask[i], "", "", False, {"name": u.name}),
            "kind": "never_mentioned" if never else ("stale_probe" if stale else "answerable"),
            "subject": "user", "attribute": attr, "gold_fact_ids": [f.fact_id for f in gold],
            "stale_fact_ids": [f.fact_id for f in stale],
            "distractor_fact_ids": [f.fact_id for f in others],
            "gold_value": gold[0].value if gold else None, "template_family": f"c.q.{attr}.{i}",
            "gold_mode": "fast", "gold_action": None, "rephrase_of": None,
            "quiet_frustration": False,
        })
    return out


def generate_tables(n_users: int, seed: int, span_days: int, start: dt.datetime,
                    questions_per_user: int, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(events, questions) of world C; same signature and columns as world A's."""
    splits = user_splits(n_users, seed)
    ev_rows: list[dict[str, Any]] = []
    q_rows: list[dict[str, Any]] = []
    it: Any = range(n_users)
    if progress:
        from tqdm import tqdm
        it = tqdm(it, desc="world C", unit="user")
    for i in it:
        rng = np.random.Generator(np.random.PCG64([seed, i, _STREAM]))
        female = rng.random() < 0.5
        name = str((W.FEMALE if female else W.MALE)[int(rng.integers(16))])
        u = _User(f"u{i:04d}", splits[i], name, "her" if female else "his", rng, float(span_days))
        _gen_user(u)
        _finalise(u)
        ev_rows.extend(_rows(u, start))
        q_rows.extend(_questions(u, questions_per_user, start))
    events = pd.DataFrame(ev_rows, columns=list(EVENT_COLUMNS))
    questions = pd.DataFrame(q_rows, columns=list(QUESTION_COLUMNS))
    return normalise_events(events), normalise_questions(questions)
