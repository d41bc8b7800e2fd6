"""What the store holds: a memory, a logged change, a write, and the clock they are timed by.

Apart from the store so that the engine, the resolvers and the tests build memories
without opening one; ``store.py`` re-exports every name here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from widemem_bench.engine import scoring

Action = Literal["ADD", "UPDATE", "DELETE", "PIN", "NONE"]
LOGGED_ACTIONS = ("ADD", "UPDATE", "DELETE", "PIN", "SUPERSEDE", "UNSUPERSEDE")
# Logged beside the UPDATE that retires a version, so not counted in ``history_count``
# (which seeds new ids): keeping versions leaves every id an add makes unchanged.
UNCOUNTED_ACTIONS = frozenset({"SUPERSEDE"})

# A search scores a user's hits by three columns kept beside the vectors (``_UserIndex``):
# importance / 10 and the created and inserted times as microseconds since 1970 (naive
# UTC), all float64. A time is an exact integer there while under 2**52 us from 1970
# (1827-2112), so a difference of two is exact too, and divided by 1e6 it is the same float
# as ``timedelta.total_seconds()`` (which divides the same integer). A memory with a time
# outside that range, or an aware one, sends its user's searches to the per-memory path.
_EPOCH = dt.datetime(1970, 1, 1)
_US = dt.timedelta(microseconds=1)
EPOCH_US_LIMIT = 2**52


def epoch_us(t: dt.datetime) -> float | None:
    """``t`` (naive UTC) as microseconds since 1970, or None when it cannot be a column
    value (aware, or ``EPOCH_US_LIMIT`` or more away from 1970)."""
    if t.tzinfo is not None:
        return None
    us = (t - _EPOCH) // _US
    return float(us) if -EPOCH_US_LIMIT < us < EPOCH_US_LIMIT else None


def content_hash(content: str) -> str:
    """Hash of the exact fact text (widemem hashes the raw text too), used for dedup."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def utcnow() -> dt.datetime:
    """Wall-clock now as a timezone-naive UTC datetime (the project's time convention).

    ``datetime.now(UTC).replace(tzinfo=None)``: the same clock floored to the
    microsecond, built without the time zone round trip (twice as fast; every add
    reads it twice).
    """
    return _EPOCH + dt.timedelta(microseconds=time.time_ns() // 1000)


def utcnow_us() -> float | None:
    """``epoch_us(utcnow())``, read without building the datetime (a search's clock)."""
    us = time.time_ns() // 1000
    return float(us) if -EPOCH_US_LIMIT < us < EPOCH_US_LIMIT else None


def from_epoch_us(us: float | None) -> dt.datetime:
    """The naive UTC datetime of ``utcnow_us()``'s reading (now, when it was None)."""
    return utcnow() if us is None else _EPOCH + dt.timedelta(microseconds=int(us))


@dataclass(frozen=True)
class Memory:
    """One stored fact.

    ``created_at`` is the fact's time on the experiment clock (the ``at`` given
    to ``add``; kept across UPDATE). ``inserted_at`` is the wall-clock insert
    time, which is what widemem ages memories from (``age_from="insert"``).
    Importance is 0-10.

    A superseded memory (an old version an UPDATE replaced, kept so it can be
    restored) has ``superseded_at`` (experiment clock of the update) and
    ``superseded_by`` (the id of the memory that holds the new content).

    Each version is valid over [``valid_from``, ``valid_to``) (Graphiti's model): from
    when its content was written to the update that retired it (None: still live), so
    the versions of one memory never overlap. ``valid_since`` is the time of the UPDATE
    that wrote a live memory's content (None: never updated, the content dates from
    ``created_at``); it is a field of its own because ``created_at`` is what recency
    scores by and stays widemem's (kept across UPDATE). The store does not keep it in
    a column: it is the last UPDATE's ``at`` in the memory's checksummed history, read
    back on open. A superseded version's ``created_at`` is already its start.
    """

    id: str
    user_id: str
    content: str
    importance: float
    created_at: dt.datetime
    inserted_at: dt.datetime
    updated_at: dt.datetime
    ymyl_category: str | None = None
    slot: tuple[str, str] | None = None
    content_hash: str = ""
    superseded_at: dt.datetime | None = None
    superseded_by: str | None = None
    valid_since: dt.datetime | None = None

    def replace(self, **changes: object) -> Memory:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @property
    def superseded(self) -> bool:
        return self.superseded_at is not None

    @property
    def valid_from(self) -> dt.datetime:
        """When this version's content became true: its last UPDATE, else ``created_at``."""
        return self.created_at if self.valid_since is None else self.valid_since

    @property
    def valid_to(self) -> dt.datetime | None:
        """When an update retired this version (None: still live)."""
        return self.superseded_at


@dataclass(frozen=True)
class HistoryEntry:
    """One logged change. ``at`` is on the experiment clock; ``logged_at`` is wall clock."""

    memory_id: str
    user_id: str
    action: str
    old_content: str | None
    new_content: str | None
    at: dt.datetime
    logged_at: dt.datetime


@dataclass(frozen=True)
class Change:
    """One write inside a transaction.

    kind ADD inserts ``memory`` with ``vector``; UPDATE / PIN replace the stored
    row of ``memory.id`` (vector optional: None keeps the stored one); DELETE
    removes ``memory.id``. SUPERSEDE inserts ``memory``, an old version with
    ``superseded_at`` / ``superseded_by`` set (vector None: the current vector of
    ``superseded_by`` at that point of the batch, so it goes before that memory's
    UPDATE); UNSUPERSEDE puts a superseded memory back among the live ones (``memory``
    with both fields None; its row moves to the end, as a new insert would).
    Each change is logged in history with ``old_content`` (SUPERSEDE: the retired
    content, with the content that replaced it as ``new_content``).
    """

    kind: Literal["ADD", "UPDATE", "DELETE", "PIN", "SUPERSEDE", "UNSUPERSEDE"]
    memory: Memory
    vector: np.ndarray | None = None
    old_content: str | None = None
    at: dt.datetime = field(default_factory=utcnow)


def importance01(importance: float) -> float:
    """``np.clip(importance, 0, 10) / 10``, the importance term of a score, as one float
    (in range it is the plain division numpy does; anything else goes through numpy)."""
    return float(scoring.importance01(float(importance)))  # the one formula
