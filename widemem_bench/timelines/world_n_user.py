"""World N's simulated user and its facts, and the register noise of what it types
(small talk, lowercase, typos, dropped apostrophes; dated CRM note headers).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from widemem_bench.timelines import world_n_vocab as W

# Chat noise: a typo in a message, a message typed all lowercase, apostrophes dropped.
_TYPO_P = 0.3
_LOWER_P = 0.7
_NO_APOS_P = 0.5
_WORD = re.compile(r"[A-Za-z]{5,}")


@dataclass
class _Fact:
    minute: int
    subject: str
    attribute: str
    value: str
    text: str
    full: str
    family: str
    kind: str
    importance: int
    style: str
    register: str
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
    rng: np.random.Generator
    span: float
    people: dict[str, str] = field(default_factory=dict)  # relation -> name
    facts: list[_Fact] = field(default_factory=list)
    taken: set[int] = field(default_factory=set)

    def pick(self, seq: tuple[Any, ...] | list[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def minute(self, day: float) -> int:
        m = int(day) * 1440 + int(self.rng.integers(7 * 60, 24 * 60))
        while m in self.taken:
            m += 1
        self.taken.add(m)
        return m


# ---------------------------------------------------------------- register noise
def typo(text: str, rng: np.random.Generator, keep: str) -> str:
    """One typo (two letters swapped or one dropped) in a word that is not part of ``keep``."""
    words = [m for m in _WORD.finditer(text) if m.group(0).lower() not in keep.lower()]
    if not words:
        return text
    m = words[int(rng.integers(len(words)))]
    w = m.group(0)
    i = int(rng.integers(1, len(w) - 2))
    bad = w[:i] + w[i + 1] + w[i] + w[i + 2:] if rng.random() < 0.6 else w[:i] + w[i + 1:]
    return text[:m.start()] + bad + text[m.end():]


def chat_noise(u: _User, text: str, keep: str) -> str:
    """A message as people type it: small talk around it, lowercase, typos, emoji."""
    text = f"{u.pick(W.CHAT_BEFORE)}{text}{u.pick(W.CHAT_AFTER)}"
    if u.chance(_NO_APOS_P):
        text = re.sub(r"\b(i|don|can|won|isn|didn|it|that|we)'(m|t|s|re|ll)\b", r"\1\2", text)
    if u.chance(_TYPO_P):
        text = typo(text, u.rng, keep)
    if u.chance(_LOWER_P):
        text = text.lower()
    elif u.chance(0.5):
        text = text[:1].upper() + text[1:]
    return re.sub(r"\s+", " ", text).strip()


def note_noise(u: _User, text: str, day: float, start: dt.datetime) -> str:
    text = f"{u.pick(W.NOTE_BEFORE)}{text[:1].upper() + text[1:]}{u.pick(W.NOTE_AFTER)}"
    if u.chance(0.25):
        text = f"{start + dt.timedelta(days=day):%d/%m} {text}"
    return re.sub(r"\s+", " ", text).strip()


def fill(tpl: str, **kw: str) -> str:
    return tpl.format(**{k: v for k, v in kw.items() if "{" + k + "}" in tpl})
