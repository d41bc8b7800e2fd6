"""Fit the ``structure`` resolver's frame table on development data only.

    widemem-bench resolver_fit                 # make resolver-fit
    widemem-bench resolver_fit check=true      # refit in memory, compare

Development sets (issue 26): world A train + validation, world C (every split) and
world N train. Never world A's or world N's holdout, never world B.

Per user, every fact's claims (``structure.claims``) that hold its gold value:

- a superseding pair (the gold ``supersedes`` link, a single-valued attribute) whose
  value-holding claims share an owner gives a frame pair that supersedes;
- two facts valid at once whose claims share an owner and a frame with values that
  differ make that frame coexist (several values at a time), and a frame pair coexist.

A frame is multi-valued when it coexists at least ``MIN_COUNT`` times and in at least a
third of the times it is seen with two values (coexisting or superseded); a frame pair
is equivalent when it supersedes at least ``MIN_COUNT`` times and more often than it
coexists. Equivalent pairs link frames into classes (``FrameTable.frame_class``).
A one-word subject whose facts are the user's by gold (a note's "Cust.", a chat opener
the parser reads as a noun) is a user alias.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from widemem_bench.engine.pins import write_pinned
from widemem_bench.engine.structure import (
    MIN_SEEN,
    TABLE_PATH,
    Claim,
    FrameTable,
    claims,
    value_words,
)
from widemem_bench.language import parse_many

DEV_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timelines", ("train", "validation")),
    ("world_c", ()),
    ("world_n", ("train",)),
)
MIN_COUNT = 2
# A one-word subject is an alias of the user when development facts under it are the user's
# in at least ALIAS_SHARE of at least ALIAS_MIN cases.
ALIAS_MIN = 5
ALIAS_SHARE = 0.9


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _load(name: str, splits: Sequence[str]) -> pd.DataFrame | None:
    from widemem_bench.timelines.materialize import load_from_config, read_config

    try:
        cfg = read_config(name)
    except (FileNotFoundError, ValueError):
        return None
    ev = load_from_config(cfg).events
    ev = ev[ev["fact_stripped"].notna()]
    if splits:
        ev = ev[ev["split"].isin(list(splits))]
    return ev


def _holding(cs: Sequence[Claim], value: Any) -> list[Claim]:
    want = value_words(str(value)) if value is not None else frozenset()
    return [c for c in cs if want and c.words & want]


def _differ(a: Claim, b: Claim) -> bool:
    return not (a.words <= b.words or b.words <= a.words)


def alias_counts(ev: pd.DataFrame) -> tuple[Counter[str], Counter[str], set[str]]:
    """(times a one-word owner's fact is the user's by gold, times it is seen at all, the
    nouns the user possesses: "my manager")."""
    texts = [_clean(str(t)) for t in ev["fact_stripped"]]
    parses = dict(zip(texts, parse_many(texts), strict=True))
    user: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    owned: set[str] = set()
    for t, subj, name in zip(texts, ev["subject"], ev["user_name"], strict=True):
        names = frozenset({str(name).lower()}) if isinstance(name, str) else frozenset()
        p = parses[t]
        propn = {tok.text.lower() for tok in p.tokens if tok.pos == "PROPN" or tok.ent.endswith("PERSON")}
        cs = claims(p, names)
        owned |= {c.frame.split(":")[0] for c in cs if c.owner == "user"} - {""}
        for o in {c.owner for c in cs}:
            if o != "user" and ">" not in o and o not in propn:  # a name is someone, never an alias
                seen[o] += 1
                user[o] += int(subj == "user")
    return user, seen, owned


def counts(ev: pd.DataFrame, aliases: frozenset[str] = frozenset(), nouns: frozenset[str] = frozenset()
           ) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """(supersede, coexist) counts over unordered frame pairs ((f, f) for one frame)."""
    texts = [_clean(str(t)) for t in ev["fact_stripped"]]
    parses = dict(zip(texts, parse_many(texts), strict=True))
    sup: Counter[tuple[str, str]] = Counter()
    coex: Counter[tuple[str, str]] = Counter()
    for _, u in ev.groupby("user_id", sort=True):
        names = aliases | frozenset(str(n).lower() for n in u["user_name"].dropna().unique())
        rows: list[tuple[dict[str, Any], list[Claim]]] = []
        recs: list[dict[str, Any]] = u.sort_values(["at", "fact_id"], kind="stable").to_dict("records")  # type: ignore[assignment]
        for r in recs:
            held = _holding(claims(parses[_clean(r["fact_stripped"])], names, nouns), r["value"])
            rows.append((r, held))
        by_id = {str(r["fact_id"]): held for r, held in rows}
        for r, held in rows:
            old_id = r["supersedes"]
            if _missing(old_id) or bool(r["multi_valued"]) or str(old_id) not in by_id:
                continue
            for n in held:
                for o in by_id[str(old_id)]:
                    if n.owner == o.owner and _differ(n, o):
                        sup[_key(n.frame, o.frame)] += 1
        for j, (rj, hj) in enumerate(rows):
            for ri, hi in rows[:j]:
                vt = ri["valid_to"]
                if not _missing(vt) and vt <= rj["valid_from"]:
                    continue  # not true at once
                for a in hj:
                    for b in hi:
                        if a.owner == b.owner and _differ(a, b):
                            coex[_key(a.frame, b.frame)] += 1
    return sup, coex


def _missing(x: Any) -> bool:
    return x is None or bool(pd.isna(x))


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def fit(sets: Sequence[tuple[str, Sequence[str]]] = DEV_SETS) -> FrameTable:
    sup: Counter[tuple[str, str]] = Counter()
    coex: Counter[tuple[str, str]] = Counter()
    used = []
    loaded = []
    for name, splits in sets:
        ev = _load(name, splits)
        if ev is None:
            print(f"structure_fit: data set {name!r} is not configured; skipped", file=sys.stderr)
            continue
        loaded.append(ev)
        used.append(f"{name}/{'+'.join(splits) or 'all'}")
    user: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    owned: set[str] = set()
    for ev in loaded:
        u, n, o = alias_counts(ev)
        user.update(u)
        seen.update(n)
        owned |= o
    users_own = frozenset(o for o, n in seen.items() if n >= ALIAS_MIN and user[o] >= ALIAS_SHARE * n)
    nouns = users_own & owned  # "Manager: Priya" is the user's manager, not the user
    aliases = users_own - owned  # "Cust. moved to Leeds" is the user
    for ev in loaded:
        s, c = counts(ev, aliases, nouns)
        sup.update(s)
        coex.update(c)
    frames = {f for k in (*sup, *coex) for f in k}
    self_sup = {f: sup[(f, f)] for f in frames}
    self_coex = {f: coex[(f, f)] for f in frames}
    multi = {f for f in frames if self_coex[f] >= MIN_COUNT and 2 * self_coex[f] >= self_sup[f]}
    single = {f for f in frames if self_sup[f] >= MIN_COUNT and f not in multi}
    equiv = {k for k, n in sup.items() if k[0] != k[1] and n >= MIN_COUNT and n > coex[k]
             and not (set(k) & multi)}
    pairs = {k: (sup[k], coex[k]) for k in set(sup) | set(coex)
             if sup[k] + coex[k] >= MIN_SEEN and (sup[k] or k[0] == k[1])}  # the pairs same_frame can ask
    table = FrameTable(frozenset(equiv), frozenset(multi), frozenset(single), tuple(used), pairs=pairs,
                       user_aliases=aliases, user_nouns=nouns)
    return FrameTable.from_json(table.to_json())


def tool(cfg: dict[str, Any]) -> int:
    """Refit the frame table; write it, or (`check`) compare it with the committed one."""
    table = fit()
    if cfg["check"]:
        ok = TABLE_PATH.is_file() and TABLE_PATH.read_text("utf-8") == table.to_json() + "\n"
        print("structure frame table: " + ("up to date" if ok else "differs from a refit"))
        return 0 if ok else 1
    write_pinned(TABLE_PATH, table.to_json() + "\n")  # the table and its sha256 pin, together
    print(f"wrote {TABLE_PATH} ({len(table.equiv)} frame pairs, {len(table.multi)} multi-valued, "
          f"{len(table.single)} single-valued frames; sets {', '.join(table.sets)})")
    return 0

