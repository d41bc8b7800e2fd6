"""The `MemoryAdapter` protocol: what a memory system must offer to be benchmarked.

A memory system is driven through the timelines with two calls:

- ``add_fact(text, user_id, at)``: store one already-extracted fact of ``user_id``,
  stated at timeline time ``at`` (a datetime; the system may ignore it);
- ``search(query, user_id, top_k)``: the user's memories for ``query``, best first, as
  a ``Recall`` (ranked ``(content, score)`` pairs plus an optional confidence band
  "high" | "moderate" | "low" | "none"), or simply a sequence of ``(content, score)``
  pairs (no band). ``score`` is the number the system would let a user threshold
  (raw cosine for widemem, mem0 and the engine); per-model thresholds are certified
  on it (`peers.evaluate`). A ``search`` that also takes a keyword ``now`` gets the timeline clock.

Optional: ``name`` (the label in errors and reports) and ``close()``; an ``add_fact``
that also takes a keyword ``importance`` gets the timeline's gold importance (0-10, what
widemem's extraction LLM would assign).

`GuardedAdapter` wraps any adapter for the driver: an adapter that raises, returns a
malformed result, or returns one user's memory to another user gets a one-line
``AdapterError`` naming the adapter and the call; a cross-user leak is a ``LeakError``
and fails the run.
"""

from __future__ import annotations

import datetime as dt
import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

BANDS = ("high", "moderate", "low", "none")


class AdapterError(ValueError):
    """An adapter call failed or answered something the protocol does not allow."""


class LeakError(AdapterError):
    """An adapter returned a memory stored only for another user."""


@dataclass(frozen=True)
class Recall:
    """What one search answered: ranked (content, score) pairs, best first, and a band."""

    hits: tuple[tuple[str, float], ...]
    band: str | None = None

    @property
    def contents(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.hits)

    @property
    def scores(self) -> tuple[float, ...]:
        return tuple(s for _, s in self.hits)


@runtime_checkable
class MemoryAdapter(Protocol):
    """See the module docstring."""

    def add_fact(self, text: str, user_id: str, at: dt.datetime | None) -> Any: ...

    def search(self, query: str, user_id: str, top_k: int) -> Recall | Sequence[tuple[str, float]]: ...


def _key(text: str) -> str:
    # Systems may collapse runs of whitespace; a memory is the same memory either way.
    return " ".join(str(text).split())


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _takes(method: Any, keyword: str) -> bool:
    try:
        return keyword in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


class GuardedAdapter:
    """Checks every call of ``inner`` against the protocol and for cross-user leaks.

    Remembers which users stored each text; a search of user u that returns a text
    stored only by other users is a leak. A text nobody stored (a system that rewrites
    facts) is allowed and simply never counts as a gold hit.
    """

    def __init__(self, inner: Any, name: str | None = None) -> None:
        for method in ("add_fact", "search"):
            if not callable(getattr(inner, method, None)):
                label = name or type(inner).__name__
                raise AdapterError(f"adapter {label!r}: has no {method}() method (see MemoryAdapter)")
        self.inner = inner
        self.name = str(name or getattr(inner, "name", None) or type(inner).__name__)
        self._owners: dict[str, set[str]] = {}
        self._takes_now = _takes(inner.search, "now")
        self._takes_importance = _takes(inner.add_fact, "importance")

    def _fail(self, call: str, what: str, exc: type[AdapterError] = AdapterError) -> AdapterError:
        return exc(f"adapter {self.name!r}: {call}: {what}")

    def add_fact(self, text: str, user_id: str, at: dt.datetime | None = None, importance: float = 5.0) -> None:
        call = f"add_fact(user_id={user_id!r}, text={_short(text)!r})"
        try:
            if self._takes_importance:
                self.inner.add_fact(text, user_id, at, importance=importance)
            else:
                self.inner.add_fact(text, user_id, at)
        except Exception as exc:  # any failure of the system under test, named
            raise self._fail(call, f"raised {type(exc).__name__}: {exc}") from exc
        self._owners.setdefault(_key(text), set()).add(str(user_id))

    def search(self, query: str, user_id: str, top_k: int, now: dt.datetime | None = None) -> Recall:
        call = f"search(user_id={user_id!r}, query={_short(query)!r}, top_k={top_k})"
        try:
            if self._takes_now:
                raw = self.inner.search(query, user_id, top_k, now=now)
            else:
                raw = self.inner.search(query, user_id, top_k)
        except Exception as exc:
            raise self._fail(call, f"raised {type(exc).__name__}: {exc}") from exc
        recall = self._validate(call, raw, top_k)
        for content in recall.contents:
            owners = self._owners.get(_key(content))
            if owners and str(user_id) not in owners:
                others = ", ".join(sorted(owners)[:3])
                raise self._fail(call, f"returned {_short(content)!r}, stored only for user(s) {others}: "
                                 "cross-user leak", LeakError)
        return recall

    def _validate(self, call: str, raw: Any, top_k: int) -> Recall:
        band = None
        hits = raw
        if isinstance(raw, Recall):
            band, hits = raw.band, raw.hits
        if band is not None and band not in BANDS:
            raise self._fail(call, f"band {band!r} is not one of {', '.join(BANDS)} or None")
        if isinstance(hits, (str, bytes)) or not isinstance(hits, Sequence):
            raise self._fail(call, f"returned {type(raw).__name__}, expected a Recall or (content, score) pairs")
        out: list[tuple[str, float]] = []
        for i, pair in enumerate(hits):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise self._fail(call, f"result {i} is {pair!r}, expected a (content, score) pair")
            content, score = pair
            if not isinstance(content, str) or not content.strip():
                raise self._fail(call, f"result {i} has content {content!r}, expected a non-empty string")
            try:
                value = float(score)
            except (TypeError, ValueError):
                raise self._fail(call, f"result {i} has score {score!r}, expected a number") from None
            if isinstance(score, bool) or not math.isfinite(value):
                raise self._fail(call, f"result {i} has score {score!r}, expected a finite number")
            out.append((content, value))
        if len(out) > top_k:
            raise self._fail(call, f"returned {len(out)} results for top_k={top_k}")
        return Recall(tuple(out), band)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:
                raise self._fail("close()", f"raised {type(exc).__name__}: {exc}") from exc
