"""Shared pieces of a timeline replay through `MemoryEngine`: pre-encoded vectors, users, times."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


class MemoEmbedder:
    """An embedder whose vectors were computed once in one batch.

    The replay encodes one fact per `add`; encoding every text up front (one
    batched call, through the embedder's own cache) and serving rows from a dict
    keeps a replay of hundreds of users at numpy speed with identical vectors.
    """

    def __init__(self, base: Any, texts: Iterable[str], kinds: Sequence[str] = ("passage", "query")) -> None:
        self.base = base
        self.name = base.name
        self.model_id = base.model_id
        self.dim = int(base.dim)
        self.fingerprint = getattr(base, "fingerprint", "?")
        uniq = sorted({" ".join(str(t).split()) for t in texts if t is not None and str(t).strip()})
        self._rows: dict[tuple[str, str], np.ndarray] = {}
        for kind in kinds:
            vecs = np.asarray(base.encode(uniq, kind=kind), dtype=np.float32) if uniq else np.zeros((0, self.dim))
            for t, v in zip(uniq, vecs, strict=True):
                self._rows[(kind, t)] = v

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: list[int] = []
        for i, t in enumerate(texts):
            row = self._rows.get((kind, " ".join(str(t).split())))
            if row is None:
                missing.append(i)
            else:
                out[i] = row
        if missing:
            vecs = np.asarray(self.base.encode([texts[i] for i in missing], kind=kind), dtype=np.float32)
            for i, v in zip(missing, vecs, strict=True):
                out[i] = v
                self._rows[(kind, " ".join(str(texts[i]).split()))] = v
        return out


def pick_users(events: pd.DataFrame, n_users: int | None) -> list[str]:
    """The first `n_users` user ids in sorted order (all of them for None)."""
    users = sorted(events["user_id"].unique())
    return users if n_users is None else users[: int(n_users)]


def clean(text: Any) -> str:
    """Whitespace-normalised text, as the engine stores content."""
    return " ".join(str(text).split())


def ts(x: Any) -> dt.datetime | None:
    """A pandas / numpy timestamp as a naive datetime (None for missing)."""
    return None if x is None or pd.isna(x) else pd.Timestamp(x).to_pydatetime()


@dataclass(frozen=True)
class GoldFact:
    """One gold fact of a timeline: whose, which attribute, its value and validity span."""

    subject: str
    attribute: str
    value: str
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    oblique: bool
    fact_id: str = ""
    multi: bool = False  # the gold's own flag: its attribute holds several values at once (pets, medications)

    def valid_at(self, t: dt.datetime) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)


# Why a false update's old fact was still true (issue 26: "every multi-valued coexistence case keeps
# all its facts" is the count of "coexisting", and "never across subjects" of "other_person").
CAUSES = ("coexisting", "other_person", "other_attribute", "unknown")


def _family(attribute: str) -> str:
    """"medication:amlodipine" -> "medication": worlds C and N name each coexisting value's entity."""
    return attribute.split(":")[0]


def false_update_cause(old: list[GoldFact], new: list[GoldFact], t: dt.datetime) -> str:
    """Why a false update's old memory was still true, over the old facts still true at ``t`` that the
    new fact does not restate (same person, attribute and value): "coexisting", one of them holds a
    value of an attribute the gold marks several-valued (``multi``: a second pet, a second medication)
    of the new fact's person and attribute family; "other_person", none is about the new fact's
    person; "other_attribute", the same person, another attribute; "unknown", the new fact has no
    gold, nothing was lost, or the gold holds two values of one slot at once (a one-valued attribute,
    or one entity's attribute such as "medication:sertraline": a generator's slip, not the resolver's)."""
    said = {(n.subject, n.attribute, n.value) for n in new}
    lost = [g for g in old if g.valid_at(t) and (g.subject, g.attribute, g.value) not in said]
    if not new or not lost:
        return "unknown"
    slots = {(n.subject, n.attribute) for n in new}
    families = {(n.subject, _family(n.attribute)) for n in new}
    # one entity's attribute ("medication:sertraline") with two values true at once is the gold's slip
    # (world N restates a dose before its change), as is any one-valued attribute with two values
    slip = [g for g in lost if (g.subject, g.attribute) in slots and (not g.multi or ":" in g.attribute)]
    if any(g.multi and (g.subject, _family(g.attribute)) in families for g in lost if g not in slip):
        return "coexisting"
    if slip:
        return "unknown"
    if not any(g.subject in {n.subject for n in new} for g in lost):
        return "other_person"
    return "other_attribute"
