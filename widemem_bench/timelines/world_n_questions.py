"""World N's questions: what a user asks at a minute (answerable, stale probe, slot
missing, other person, unrelated), phrased away from the facts' words and labelled
against the facts valid at that minute.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from widemem_bench.timelines import world_n_vocab as W
from widemem_bench.timelines.world_n_user import _Fact, _User, fill

# Question kinds and their shares (a kind the state cannot serve falls back to answerable).
_KIND_P: tuple[tuple[str, float], ...] = (
    ("answerable", 0.36), ("stale_probe", 0.10), ("hard_negative", 0.26),
    ("other_person", 0.22), ("never_mentioned", 0.06),
)


def _valid(f: _Fact, minute: int) -> bool:
    return f.minute <= minute and (f.valid_to is None or f.valid_to > minute)


def _family(attr: str) -> str:
    """The question slot of a stored attribute: a multi-valued family is asked as a whole
    (``pet``), a detail of a multi-valued value by its own key (``vet:Biscuit``)."""
    fam = attr.split(":")[0]
    return fam if fam in W.MULTI else attr


def _ask_text(u: _User, tpl: str, subject: str, n: str = "", e: str = "") -> str:
    """A question as people type it; ``n`` names a value (a pet), ``e`` the entity whose
    detail is asked (the trip's place, the car's model)."""
    if subject == "user":
        body = fill(tpl, n=n, e=e.lower() if u.chance(0.6) else e)
    else:
        name = u.people.get(subject)
        form = u.pick(W.ASK_OTHER_FORMS) if name else "my {rel}"
        body = fill(tpl, rel=fill(form, rel=subject, n=name or ""), n=n)
    text = f"{u.pick(W.ASK_BEFORE)}{body}"
    if u.chance(0.3):
        text = text[:1].upper() + text[1:]
    if u.chance(0.2):
        text = text.rstrip("?")
    return text


def _entity(valid: list[_Fact], qslot: str) -> str:
    """The user's current value of the entity a detail slot belongs to ("" for no detail)."""
    base = qslot.split(":")[0]
    if base not in W.DETAILS:
        return ""
    ent = W.DETAILS[base].entity
    want = ent if ent in W.SINGLE else f"{ent}:{qslot.split(':')[1]}"
    vals = [f.value for f in valid if f.subject == "user" and f.attribute == want]
    return vals[-1] if vals else ""


def _templates(subject: str, qslot: str) -> tuple[tuple[str, ...], str]:
    """(question templates, detail value name) of a question slot."""
    base = qslot.split(":")[0]
    if base in W.DETAILS:
        return W.DETAILS[base].ask, qslot.split(":")[1] if ":" in qslot else ""
    spec: W.Single | W.Multi = W.SINGLE[base] if base in W.SINGLE else W.MULTI[base]
    return (spec.ask if subject == "user" else spec.ask_other), ""


def _question(u: _User, kind: str, minute: int) -> dict[str, Any] | None:
    seen = [f for f in u.facts if f.minute <= minute]
    valid = [f for f in seen if _valid(f, minute) and f.value != "ended"]
    q: dict[str, Any] = {"kind": kind, "subject": "user", "attribute": None, "gold": [], "stale": [],
                         "distractors": [], "gold_value": None}
    if kind in ("answerable", "stale_probe"):
        slots = sorted({(f.subject, _family(f.attribute)) for f in valid})
        cands = []
        for s, a in slots:
            tpls, _ = _templates(s, a)
            if not tpls:
                continue
            stale = [f for f in seen if f.subject == s and _family(f.attribute) == a
                     and f.valid_to is not None and f.valid_to <= minute and f.role == "canonical"]
            if bool(stale) == (kind == "stale_probe"):
                cands.append((s, a, stale))
        if not cands:
            return None
        s, a, stale = cands[int(u.rng.integers(len(cands)))]
        gold = [f for f in valid if f.subject == s and _family(f.attribute) == a]
        tpls, n = _templates(s, a)
        i = int(u.rng.integers(len(tpls)))
        ent = _entity(valid, a)
        others = [f for f in valid if f.subject != s and _family(f.attribute) == a]
        q.update(subject=s, attribute=a, gold=gold, stale=stale, distractors=others,
                 gold_value=gold[0].value, text=_ask_text(u, tpls[i], s, n, ent),
                 family=f"n.q.{'self' if s == 'user' else 'other'}.{a.split(':')[0]}.{i}")
        return q
    if kind == "hard_negative":
        ever = {(f.subject, f.attribute) for f in u.facts}
        hard = []
        for f in valid:
            if f.subject != "user" or f.role == "restate":
                continue
            fam = f.attribute.split(":")[0]
            key = f.attribute.split(":")[1] if ":" in f.attribute else f.value
            for dname, d in W.DETAILS.items():
                slot = dname if fam in W.SINGLE else f"{dname}:{key}"
                if d.entity == fam and ("user", slot) not in ever:
                    hard.append((slot, key, f))
        if not hard:
            return None
        slot, key, owner = hard[int(u.rng.integers(len(hard)))]
        tpls = W.DETAILS[slot.split(":")[0]].ask
        i = int(u.rng.integers(len(tpls)))
        q.update(attribute=slot, distractors=[owner], text=_ask_text(u, tpls[i], "user", key, owner.value),
                 family=f"n.q.slot_missing.{slot.split(':')[0]}.{i}")
        return q
    if kind == "other_person":
        have = sorted({a for f in valid if (a := _family(f.attribute)) in W.SINGLE or a in W.MULTI})
        ever = {(f.subject, _family(f.attribute)) for f in u.facts}
        rels = list(u.people) + [r for r in W.RELATIONS if r not in u.people][:3]
        pairs = [(r, a) for r in rels for a in have
                 if (r, a) not in ever and _templates(r, a)[0]
                 and not (r in ("wife", "husband", "partner") and "partner" in have)]
        if not pairs:
            return None
        r, a = pairs[int(u.rng.integers(len(pairs)))]
        tpls, _ = _templates(r, a)
        i = int(u.rng.integers(len(tpls)))
        q.update(subject=r, attribute=a, text=_ask_text(u, tpls[i], r),
                 distractors=[f for f in valid if _family(f.attribute) == a],
                 family=f"n.q.other_person.{a}.{i}")
        return q
    i = int(u.rng.integers(len(W.UNRELATED)))
    q.update(text=_ask_text(u, W.UNRELATED[i], "user"), family=f"n.q.unrelated.{i}")
    return q


def _questions(u: _User, n: int, start: dt.datetime) -> list[dict[str, Any]]:
    kinds, p = zip(*_KIND_P, strict=True)
    out: list[dict[str, Any]] = []
    for j in range(n):
        minute = int(u.rng.uniform(0.2, 1.0) * u.span * 1440)
        kind = kinds[int(u.rng.choice(len(kinds), p=np.asarray(p)))]
        q = (_question(u, kind, minute) or _question(u, "answerable", minute)
             or _question(u, "never_mentioned", minute))
        assert q is not None
        out.append({
            "question_id": f"{u.uid}-q{j:03d}", "user_id": u.uid, "split": u.split,
            "asked_at": start + dt.timedelta(minutes=minute), "session_id": f"{u.uid}-s{j:03d}",
            "text": q["text"], "kind": q["kind"], "subject": q["subject"], "attribute": q["attribute"],
            "gold_fact_ids": [f.fact_id for f in q["gold"]],
            "stale_fact_ids": [f.fact_id for f in q["stale"]],
            "distractor_fact_ids": [f.fact_id for f in q["distractors"]],
            "gold_value": q["gold_value"], "template_family": q["family"], "gold_mode": "fast",
            "gold_action": None, "rephrase_of": None, "quiet_frustration": False,
        })
    return out
