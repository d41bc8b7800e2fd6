"""A simulated user of world A (and B): its seeded draws and the events it states.

``_Ev`` is one event as generated (an utterance with its fact and ground truth);
``_User`` holds a user's generator, phrasebook and events, and the sampling helpers every
world's generator draws through, so the order of random draws is the same wherever a
helper is called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from widemem_bench.timelines.phrasebook import Phrasebook, _cap


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

