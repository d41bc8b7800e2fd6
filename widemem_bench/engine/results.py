"""What the engine returns: search hits (`ScoredMemory`, `SearchResult`) and what an add did
(`AddResult`, `YMYLConflict`). Plain data; `engine.py` fills them in."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from .confidence import Confidence
from .modes import RetrievalMode
from .resolvers import Action
from .store import Memory


@dataclass(frozen=True)
class ScoredMemory:
    """One search hit. ``raw_similarity_score`` is the plain cosine of query and memory."""

    memory: Memory
    raw_similarity_score: float
    final_score: float
    recency_score: float = 1.0
    importance_score: float = 0.0

    # The memory's validity interval (``search(include_superseded=True)`` returns old
    # versions too, after the live ones): [valid_from, valid_to), valid_to None while
    # it is live (``Memory.valid_from``).
    @property
    def valid_from(self) -> dt.datetime:
        return self.memory.valid_from

    @property
    def superseded(self) -> bool:
        return self.memory.superseded_at is not None

    @property
    def valid_to(self) -> dt.datetime | None:
        return self.memory.superseded_at

    @property
    def superseded_by(self) -> str | None:
        return self.memory.superseded_by


_new_object = object.__new__


def _scored(memory: Memory, raw: float, final: float, recency: float, importance: float) -> ScoredMemory:
    """``ScoredMemory(memory, raw, final, recency, importance)``, filled in directly: the
    frozen dataclass ``__init__`` (one ``object.__setattr__`` per field) took a third of
    a search's Python time for its 25 hits. Same object (a test keeps the fields in step)."""
    hit = _new_object(ScoredMemory)
    hit.__dict__.update(memory=memory, raw_similarity_score=raw, final_score=final,
                        recency_score=recency, importance_score=importance)
    return hit


class SearchResult(Sequence[ScoredMemory]):
    """The ranked hits plus widemem's verdict on them.

    ``confidence`` is the band of the top hit's raw cosine (NONE when empty);
    ``has_relevant`` is ``confidence != NONE``; ``weights`` are the
    (similarity, importance, recency) weights actually used for this query.
    """

    def __init__(
        self,
        results: Sequence[ScoredMemory],
        confidence: Confidence,
        mode: RetrievalMode,
        weights: tuple[float, float, float],
        thresholds: tuple[float, float, float],
        query_kind: str,
    ) -> None:
        self.results: tuple[ScoredMemory, ...] = tuple(results)
        self.confidence = confidence
        self.mode = mode
        self.weights = weights
        self.thresholds = thresholds
        self.query_kind = query_kind

    @property
    def has_relevant(self) -> bool:
        return self.confidence != Confidence.NONE

    @overload
    def __getitem__(self, index: int) -> ScoredMemory: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ScoredMemory]: ...
    def __getitem__(self, index: int | slice) -> ScoredMemory | Sequence[ScoredMemory]:
        return self.results[index]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[ScoredMemory]:
        return iter(self.results)

    def __repr__(self) -> str:
        # The top hits themselves, so a REPL user sees what came back, not just how many.
        top = ", ".join(
            f"{h.memory.content[:40]!r}@{h.raw_similarity_score:.3f}" for h in self.results[:3]
        )
        more = f", +{len(self) - 3} more" if len(self) > 3 else ""
        return (
            f"SearchResult(n={len(self)}, confidence={self.confidence.value}, "
            f"mode={self.mode.value}, weights={self.weights}, top=[{top}{more}])"
        )


@dataclass(frozen=True)
class YMYLConflict:
    """A strong-YMYL fact close (cosine >= ymyl_contradiction_threshold) to an existing memory.

    widemem sends these pairs to an LLM contradiction detector and returns its
    clarification questions to the caller; here the pairs themselves are returned.
    """

    fact: str
    memory_id: str
    memory_content: str
    similarity: float


@dataclass
class AddResult:
    """What one ``add`` / ``add_fact`` / ``pin`` did."""

    memories: list[Memory] = field(default_factory=list)  # added or updated, final state
    actions: list[Action] = field(default_factory=list)  # as executed (after dedup)
    conflicts: list[YMYLConflict] = field(default_factory=list)
    # The versions its UPDATEs retired (kept, superseded; ``MemoryEngine.unsupersede``).
    superseded: list[Memory] = field(default_factory=list)

