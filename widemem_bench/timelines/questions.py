"""World A's questions: what a user asks at a minute, labelled against the facts the
timeline holds at that minute (answerable, stale, never mentioned, hard negative, other
person, broad, frustration), in sessions, with quiet-frustration rephrases.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from widemem_bench.timelines.phrasebook import _cap
from widemem_bench.timelines.user import _Ev, _User

# Mix of base question kinds (quiet-frustration rephrases come on top, inside the budget).
_KIND_P: tuple[tuple[str, float], ...] = (
    ("answerable", 0.36), ("stale_probe", 0.13), ("never_mentioned", 0.10),
    ("hard_negative", 0.15), ("other_person", 0.09), ("broad", 0.05), ("frustration", 0.12),
)
# Slot questions with at most this many words and a single slot are short factual
# lookups: the "fast" retrieval mode is the right one for them.
_FAST_MAX_WORDS = 8


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
