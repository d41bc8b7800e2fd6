"""MemoryEngine: widemem 2.0.2's add / search / pin / delete / history, without any LLM by default.

``add`` = extract facts (``config.extractor``) -> YMYL floor (if enabled) ->
candidates (the ``candidate_k`` nearest memories of the same user, optional
``similarity_floor``) -> resolver (``config.resolver``) -> one committed write.

``search`` follows widemem's ``_search_ranked``: per-query weights, fetch_k
from the mode preset, recency / importance / topic weights, the two-pass boost
for factual queries, sort, truncate to top_k, then the confidence band of the
top result's raw cosine. Every memory is a fact-tier memory, so widemem's
hierarchy routing never changes the list and is not applied.

Time: ``at`` (on add) and ``now`` (on search) are naive UTC datetimes on the
experiment's clock; by default recency is ``now - created_at``
(``age_from="clock"``). ``age_from="insert"`` reproduces widemem, which ages
from the wall-clock insert time, so that a fast ingest reads ~0 days old.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import importlib
import math
import numbers
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, overload

import numpy as np

from . import scoring
from .confidence import (
    CALIBRATED,
    Confidence,
    confidence_from_similarity,
    resolve_thresholds,
    validate_thresholds,
)
from .config import EngineConfig
from .extractors import Fact, make_extractor
from .llm import ChatClient
from .modes import RETRIEVAL_MODE_PRESETS, RetrievalMode, resolve_mode, search_plan
from .recency import decay
from .resolvers import Action, AppendResolver, make_resolver
from .slots import NameEvidence
from .store import (
    Change,
    HistoryEntry,
    Hits,
    Memory,
    MemoryStore,
    OnDamage,
    content_hash,
    epoch_us,
    from_epoch_us,
    utcnow,
    utcnow_us,
)
from .ymyl import classify_ymyl_with

__all__ = [
    "AddResult",
    "HistoryEntry",
    "Memory",
    "MemoryEngine",
    "ScoredMemory",
    "SearchResult",
    "YMYLConflict",
]

SECONDS_PER_DAY = 86400.0
# Concrete modes by name (a member hashes as its name): resolve_mode's answer for them.
_CONCRETE_MODES: dict[str, RetrievalMode] = {m.value: m for m in RetrievalMode}

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _serialised(
    method: Callable[Concatenate[MemoryEngine, _P], _R],
) -> Callable[Concatenate[MemoryEngine, _P], _R]:
    """Run the method under the engine's lock: an add plans against the store and then
    writes, so two threads interleaving there lost or duplicated memories (issue 17)."""

    @functools.wraps(method)
    def locked(self: MemoryEngine, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


@dataclass(frozen=True)
class ScoredMemory:
    """One search hit. ``raw_similarity_score`` is the plain cosine of query and memory."""

    memory: Memory
    raw_similarity_score: float
    final_score: float
    recency_score: float = 1.0
    importance_score: float = 0.0

    # The memory's validity interval (``search(include_superseded=True)`` returns old
    # versions too): [valid_from, valid_to), valid_to None while it is live.
    @property
    def valid_from(self) -> dt.datetime:
        return self.memory.created_at

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
        return (
            f"SearchResult(n={len(self)}, confidence={self.confidence.value}, "
            f"mode={self.mode.value}, weights={self.weights})"
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


def _check_text(value: object, name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name}: must not be empty or whitespace")
    if len(value) > limit:
        raise ValueError(f"{name}: {len(value)} characters is over max_text_chars={limit}")
    return value


def _check_user(user_id: object) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError(f"user_id: expected a non-empty string, got {user_id!r}")
    return user_id


def _check_importance(value: object, name: str = "importance") -> float:
    # A plain float or int skips the numbers.Real check (an ABC isinstance, the slowest
    # line of an add); bool and every other type still go through it.
    if value.__class__ is not float and value.__class__ is not int and (
        isinstance(value, bool) or not isinstance(value, numbers.Real)
    ):
        raise ValueError(f"{name}: expected a number in 0-10, got {value!r}")
    v = float(value)  # type: ignore[arg-type]
    if not math.isfinite(v) or not 0.0 <= v <= 10.0:
        raise ValueError(f"{name}: must be in 0-10, got {value!r}")
    return v


def _check_time(value: object, name: str) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        raise ValueError(f"{name}: expected a datetime or None, got {type(value).__name__}")
    if value.tzinfo is not None:
        # The project's convention is naive UTC; convert aware datetimes rather than refuse them.
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _check_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return value


def _check_slot(slot: object) -> tuple[str, str] | None:
    if slot is None:
        return None
    if (
        not isinstance(slot, (tuple, list))
        or len(slot) != 2
        or not all(isinstance(s, str) and s for s in slot)
    ):
        raise ValueError(f"slot: expected a (subject, attribute) pair of strings, got {slot!r}")
    return (slot[0], slot[1])


class MemoryEngine:
    """The reference memory engine (widemem 2.0.2 behaviour with ``EngineConfig()``).

    ``embedder`` follows the project's Embedder protocol (``model_id`` selects
    widemem's default thresholds). ``store_path=None`` keeps everything in
    memory; a path opens or creates a SQLite store bound to this embedder.
    ``on_damage="quarantine"`` opens a store with damaged rows, leaving them out of
    every read and listing them in ``engine.store.damaged`` (default: refuse the store).
    """

    def __init__(
        self,
        embedder: Any,
        config: EngineConfig | None = None,
        store_path: str | Path | None = None,
        *,
        llm_transport: Any = None,
        on_damage: OnDamage = "error",
    ) -> None:
        self.embedder = embedder
        self.config = config if config is not None else EngineConfig()
        if not isinstance(self.config, EngineConfig):
            raise ValueError(f"config: expected an EngineConfig, got {type(config).__name__}")
        cfg = self.config
        client = None
        if cfg.extractor == "llm" or cfg.resolver == "llm":
            if not cfg.llm_url or not cfg.llm_model:
                raise ValueError("llm_url: extractor/resolver 'llm' needs llm_url and llm_model")
            client = ChatClient(
                cfg.llm_url,
                cfg.llm_model,
                api_key=cfg.llm_api_key,
                timeout=cfg.llm_timeout,
                transport=llm_transport,
            )
        self.extractor = make_extractor(cfg.extractor, client)
        self.resolver = make_resolver(cfg.resolver, client)
        binding = legacy = None
        if store_path is not None:
            binding = f"{getattr(embedder, 'name', '?')}:{getattr(embedder, 'fingerprint', '?')}"
            if getattr(embedder, "weights_sha256", None):  # how schema-1 stores were bound
                legacy = f"{getattr(embedder, 'name', '?')}:{embedder.weights_sha256}"
        self.store = MemoryStore(store_path, dim=int(embedder.dim), embedder=binding, legacy_embedder=legacy,
                                 on_damage=on_damage)
        self._calibrated: tuple[float, float, float] | None = None
        self._names: dict[str, NameEvidence] = {}  # user -> names they go by (the rule resolver reads them)
        # One engine may be shared by threads: each public call runs alone (re-entrant,
        # so pin -> add-style planning nests). The embedder runs inside the lock too.
        self._lock = threading.RLock()

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------- reads
    @_serialised
    def memories(self, user_id: str, include_superseded: bool = False) -> list[Memory]:
        """The live memories of ``user_id`` in insertion order (with ``include_superseded``,
        then the versions updates retired, in the order they were retired)."""
        return self.store.memories(_check_user(user_id), _check_flag(include_superseded, "include_superseded"))

    def get(self, memory_id: str, user_id: str | None = None) -> Memory | None:
        return self.store.get(memory_id, user_id)

    @_serialised
    def history(self, memory_id: str, user_id: str | None = None) -> list[HistoryEntry]:
        """ADD / UPDATE / DELETE / PIN entries of one memory, oldest first; with
        ``user_id``, only that user's (as ``get`` and ``delete`` scope by user). Without
        it, any user's: a caller serving several users passes ``user_id``."""
        return self.store.history(memory_id, None if user_id is None else _check_user(user_id))

    # -------------------------------------------------------------- writes
    @_serialised
    def add(self, text: str, user_id: str, at: dt.datetime | None = None) -> AddResult:
        """Extract facts from ``text`` and resolve them against the user's memories."""
        text = _check_text(text, "text", self.config.max_text_chars)
        user_id = _check_user(user_id)
        when = _check_time(at, "at")
        facts = self.extractor.extract(text)
        changes, result = self._plan(facts, user_id, when)
        self.store.apply(changes)
        self._warm(result)
        return result

    def _warm(self, result: AddResult) -> None:
        """Answerability v3 reads each memory's parse: parse it once, at add time, not at every search."""
        if self.config.confidence not in ("answerability_v3", "answerability_v4") or not result.memories:
            return
        try:
            warm = importlib.import_module("widemem_bench.answerability.v3").warm
        except ImportError:
            return  # the search that needs the scorer says so in one line (`_answerability`)
        warm([m.content for m in result.memories])

    @_serialised
    def add_fact(
        self,
        content: str,
        user_id: str,
        importance: float = 5.0,
        at: dt.datetime | None = None,
        slot: tuple[str, str] | None = None,
    ) -> AddResult:
        """Store one already-extracted fact (through conflict resolution).

        ``slot`` is the gold (subject, attribute), read only by the oracle resolver.
        """
        content = _check_text(content, "content", self.config.max_text_chars)
        user_id = _check_user(user_id)
        imp = _check_importance(importance)
        when = _check_time(at, "at")
        fact = Fact(" ".join(content.split()), imp, _check_slot(slot))
        changes, result = self._plan([fact], user_id, when)
        self.store.apply(changes)
        self._warm(result)
        return result

    @_serialised
    def pin(
        self, text: str, user_id: str, importance: float = 9.0, at: dt.datetime | None = None
    ) -> AddResult:
        """The normal ``add`` pipeline, then each memory it added or updated is raised
        to at least ``importance`` (logged as PIN), all in one transaction.

        As in widemem, a fact that was already stored verbatim is deduplicated and
        therefore not raised; pin is an importance boost, not a decay exemption.
        """
        text = _check_text(text, "text", self.config.max_text_chars)
        user_id = _check_user(user_id)
        imp = _check_importance(importance)
        when = _check_time(at, "at")
        facts = self.extractor.extract(text)
        changes, result = self._plan(facts, user_id, when)
        stamp = when or utcnow()
        pinned: list[Memory] = []
        for memory in result.memories:
            if memory.importance < imp:
                raised = memory.replace(importance=imp, updated_at=stamp)
                changes.append(Change("PIN", raised, None, memory.content, stamp))
                memory = raised
            pinned.append(memory)
        result.memories = pinned
        self.store.apply(changes)
        return result

    @_serialised
    def delete(
        self, memory_id: str, user_id: str | None = None, at: dt.datetime | None = None
    ) -> bool:
        """Delete one memory (logged at ``at``, default wall clock). With ``user_id``,
        only that user's memory is touched.

        Returns False when no such memory exists (or it belongs to another user).
        """
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError(f"memory_id: expected a non-empty string, got {memory_id!r}")
        when = _check_time(at, "at")
        memory = self.store.get(memory_id, user_id)
        if memory is None:
            return False
        self.store.apply([Change("DELETE", memory, None, memory.content, when or utcnow())])
        return True

    @_serialised
    def unsupersede(
        self, memory_id: str, user_id: str | None = None, at: dt.datetime | None = None
    ) -> Memory:
        """Undo an update: the superseded memory ``memory_id`` is live again (searched,
        a conflict candidate), logged as UNSUPERSEDE at ``at`` (default wall clock). The
        memory that superseded it stays as it is. Returns the restored memory.

        A one-line ValueError when ``memory_id`` is unknown (or, with ``user_id``,
        another user's), is not superseded, or holds content a live memory holds.
        """
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError(f"memory_id: expected a non-empty string, got {memory_id!r}")
        when = _check_time(at, "at")
        memory = self.store.get(memory_id, None if user_id is None else _check_user(user_id))
        if memory is None:
            owner = "" if user_id is None else f" for user {user_id!r}"
            raise ValueError(f"memory_id: {memory_id!r} not found{owner}")
        if memory.superseded_at is None:
            raise ValueError(f"memory_id: {memory_id} is not superseded")
        stamp = when or utcnow()
        restored = memory.replace(superseded_at=None, superseded_by=None, updated_at=stamp)
        self.store.apply([Change("UNSUPERSEDE", restored, None, None, stamp)])
        return restored

    # ------------------------------------------------------------ planning
    def _ymyl(self, fact: Fact) -> tuple[Fact, str | None, bool]:
        """(fact with the YMYL importance floor, category, strong?) when YMYL is on."""
        if not self.config.ymyl_enabled:
            return fact, None, False
        match = classify_ymyl_with(fact.content, self.config.ymyl_categories, self.config.ymyl_classifier)
        if match is None or match.strength != "strong":
            # A weak match changes nothing in widemem 2.0.2.
            return fact, None, False
        floor = float(self.config.ymyl_importance_floor)
        return Fact(fact.content, max(fact.importance, floor), fact.slot), match.category, True

    def _new_id(self, user_id: str, content: str, n: int) -> str:
        # Deterministic ids (no uuid4): the store's history length never shrinks, so
        # (user, content, history position) is unique and a rerun gives the same ids.
        seed = f"{user_id}\x00{content}\x00{self.store.history_count + n}"
        return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:20]

    def _retire(self, target: Memory, at: dt.datetime, versions: dict[str, tuple[int, dt.datetime, dt.datetime]],
                replaced_by: str) -> Memory:
        """The version of ``target`` an UPDATE at ``at`` replaces, as a superseded memory.

        Its validity starts when that content was written: the last UPDATE of
        ``target`` (staged in this add, or in its history), else its creation.
        ``versions`` holds this add's staged updates: (count, clock, wall) per memory."""
        staged = versions.get(target.id)
        if staged is not None:
            pending, start, wall = staged
        else:
            pending, start, wall = 0, target.created_at, target.inserted_at
            for entry in reversed(self.store.history(target.id)):
                if entry.action == "UPDATE":
                    start, wall = entry.at, entry.logged_at
                    break
        return target.replace(id=self.store.version_id(target.id, pending), created_at=start, inserted_at=wall,
                              superseded_at=at, superseded_by=replaced_by)

    def _plan(
        self, raw_facts: Sequence[Fact], user_id: str, at: dt.datetime | None
    ) -> tuple[list[Change], AddResult]:
        """Decide every write of one add; nothing is written here."""
        cfg = self.config
        wall = utcnow()
        stamp = at or wall  # one clock reading: the fact's time is its insert time
        result = AddResult()
        facts, hashes, categories, strong = self._distinct_facts(raw_facts)
        if not facts:
            return [], result

        vectors = self._encode([f.content for f in facts], "passage")
        nearest = [self.store.search(user_id, v, cfg.candidate_k) for v in vectors]
        floor = cfg.similarity_floor
        candidates = nearest if floor is None else [
            [(m, s) for m, s in near if s >= floor] for near in nearest
        ]
        for i, fact in enumerate(facts):
            if strong[i]:
                result.conflicts.extend(
                    YMYLConflict(fact.content, m.id, m.content, s)
                    for m, s in nearest[i]
                    if s >= cfg.ymyl_contradiction_threshold
                )

        if any(candidates) and type(self.resolver) is not AppendResolver:
            if getattr(self.resolver, "reads_user_names", False):
                names = self._user_names(user_id, facts)
                actions = list(self.resolver.decide(facts, candidates, user_names=names))  # type: ignore[call-arg]
            else:
                actions = list(self.resolver.decide(facts, candidates))
        else:
            # widemem adds everything without asking the resolver when nothing is near
            # (and the append resolver answers ADD for every fact anyway).
            actions = [Action("ADD", i) for i in range(len(facts))]
        changes = self._stage(actions, facts, hashes, categories, vectors, candidates, user_id,
                              (stamp, wall), result)
        return changes, result

    def _user_names(self, user_id: str, facts: Sequence[Fact]) -> frozenset[str]:
        """Names the user goes by (`slots.NameEvidence`): read once from their store, then
        from each fact offered to it."""
        known = self._names.get(user_id)
        if known is None:
            known = NameEvidence()
            for m in self.store.memories(user_id):
                known.add(m.content)
            self._names[user_id] = known
        for f in facts:
            known.add(f.content)
        return known.self_names()

    def _distinct_facts(
        self, raw_facts: Sequence[Fact]
    ) -> tuple[list[Fact], list[str], list[str | None], list[bool]]:
        """Non-empty facts without repeats, after the YMYL floor: (facts, content hashes,
        YMYL categories, strong?)."""
        facts: list[Fact] = []
        hashes: list[str] = []  # content_hash of each fact, computed once
        categories: list[str | None] = []
        strong: list[bool] = []
        seen: set[str] = set()
        for f in raw_facts:
            chash = content_hash(f.content) if f.content.strip() else None
            if chash is None or chash in seen:
                continue
            seen.add(chash)
            hashes.append(chash)
            fact, category, is_strong = self._ymyl(f)
            facts.append(fact)
            categories.append(category)
            strong.append(is_strong)
        return facts, hashes, categories, strong

    def _stage(
        self,
        actions: Sequence[Action],
        facts: Sequence[Fact],
        hashes: Sequence[str],
        categories: Sequence[str | None],
        vectors: np.ndarray,
        candidates: Sequence[Sequence[tuple[Memory, float]]],
        user_id: str,
        times: tuple[dt.datetime, dt.datetime],
        result: AddResult,
    ) -> list[Change]:
        """The changes the resolver's ``actions`` make (``result`` records them)."""
        stamp, wall = times
        changes: list[Change] = []
        logged = 0  # changes that count in history_count (new ids key on it; SUPERSEDE does not)
        versions: dict[str, tuple[int, dt.datetime, dt.datetime]] = {}  # staged updates per memory
        staged: dict[str, Memory | None] = {}
        staged_hashes: set[str] = set()
        valid_targets: set[str] | None = None  # built at the first action that names a target
        decided: set[int] = set()
        for action in actions:
            i = action.fact_index
            if not 0 <= i < len(facts) or i in decided:
                continue
            decided.add(i)
            fact, chash = facts[i], hashes[i]
            kind, target_id = action.kind, action.target_id
            target = None
            if kind != "ADD":
                if valid_targets is None:
                    valid_targets = {m.id for cands in candidates for m, _ in cands}
                # A target must be one of this user's candidates (never another user's memory).
                if target_id in valid_targets:
                    target = staged[target_id] if target_id in staged else self.store.get(target_id, user_id)
                if target is None:
                    kind = "ADD"
            if kind == "NONE":
                result.actions.append(Action("NONE", i, target_id))
                continue
            duplicate = chash in staged_hashes or self.store.find_hash(user_id, chash) is not None
            if kind in ("ADD", "UPDATE") and duplicate:
                # Identical content is never stored twice (per user).
                dup = self.store.find_hash(user_id, chash)
                result.actions.append(Action("NONE", i, dup.id if dup else None))
                continue
            logged += 1
            if kind == "ADD":
                memory = Memory(self._new_id(user_id, fact.content, logged - 1), user_id, fact.content,
                                fact.importance, stamp, wall, stamp, categories[i], fact.slot, chash)
                changes.append(Change("ADD", memory, vectors[i], None, stamp))
                staged[memory.id] = memory
                staged_hashes.add(chash)
                result.memories.append(memory)
                result.actions.append(Action("ADD", i, memory.id))
            elif kind == "UPDATE":
                assert target is not None
                memory = target.replace(
                    content=fact.content,
                    content_hash=chash,
                    importance=fact.importance,
                    updated_at=stamp,
                    ymyl_category=categories[i],
                    slot=fact.slot if fact.slot is not None else target.slot,
                )  # created_at and inserted_at are kept, as widemem keeps created_at
                # The old version is kept, superseded (issue 26): the live memory keeps the
                # id and row, as widemem's UPDATE keeps the id, so searches see the same list.
                old = self._retire(target, stamp, versions, memory.id)
                versions[memory.id] = (versions.get(memory.id, (0, stamp, wall))[0] + 1, stamp, wall)
                changes.append(Change("SUPERSEDE", old, None, None, stamp))
                result.superseded.append(old)
                changes.append(Change("UPDATE", memory, vectors[i], target.content, stamp))
                staged[memory.id] = memory
                staged_hashes.add(chash)
                result.memories = [m for m in result.memories if m.id != memory.id] + [memory]
                result.actions.append(Action("UPDATE", i, memory.id))
            else:  # DELETE
                assert target is not None and valid_targets is not None
                changes.append(Change("DELETE", target, None, target.content, stamp))
                staged[target.id] = None
                valid_targets.discard(target.id)
                result.memories = [m for m in result.memories if m.id != target.id]
                result.actions.append(Action("DELETE", i, target.id))
        return changes

    def _encode(self, texts: Sequence[str], kind: str) -> np.ndarray:
        vecs = np.asarray(self.embedder.encode(list(texts), kind=kind), dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts):
            raise ValueError(f"embedder: returned shape {vecs.shape} for {len(texts)} texts")
        return vecs

    # -------------------------------------------------------------- search
    @_serialised
    def search(
        self,
        query: str,
        user_id: str,
        mode: RetrievalMode | str | None = None,
        now: dt.datetime | None = None,
        top_k: int | None = None,
        include_superseded: bool = False,
    ) -> SearchResult:
        """widemem's ranked search over ``user_id``'s memories (see the module docstring).

        ``mode`` None means ``config.default_mode`` ("balanced"). ``now`` is the
        clock recency is measured against (default: wall clock). Never filters
        by confidence: the ranked list comes back with the verdict.
        ``include_superseded`` ranks the versions updates retired among the live
        memories (each hit's ``valid_from`` / ``valid_to`` / ``superseded_by`` say
        which); by default they are left out.
        """
        cfg = self.config
        query = _check_text(query, "query", cfg.max_text_chars)
        user_id = _check_user(user_id)
        when = _check_time(now, "now")
        past = include_superseded is True or _check_flag(include_superseded, "include_superseded")
        resolved = self._mode(mode, query)
        kind = scoring.classify_query(query)  # once: the weights and the fetch size both read it
        if cfg.adapt_weights:
            weights = scoring.weights_for(kind, cfg.weights)
            sim_first = kind == "factual"
        else:
            weights = cfg.weights  # 3 floats, checked by EngineConfig
            sim_first = False
        k, fetch = search_plan(resolved, top_k, sim_first)
        thresholds = self._thresholds()

        qvec = self._encode([query], "query")[0]
        hits = self.store.hits(user_id, qvec, fetch, past)
        if hits is None:
            return SearchResult([], self._confidence(query, user_id, [], thresholds), resolved,
                                weights, thresholds, kind)

        mems, sim = hits.memories, hits.sims
        importance = hits.importance01
        recency = self._recency(hits, when)
        multiplier = None
        if cfg.topic_weights:
            multiplier = np.array([scoring.topic_multiplier(m.content, cfg.topic_weights) for m in mems])
        final, order = scoring.rank_hits(
            sim, importance, recency, weights, multiplier,
            RETRIEVAL_MODE_PRESETS[resolved].similarity_boost if sim_first and cfg.two_pass_boost else None,
        )
        # Converted to Python floats once per search: per-element numpy scalar ops here
        # cost more than the scoring itself (perf benchmark, issue 9). Same values.
        sim_l, final_l, rec_l, imp_l = sim.tolist(), final.tolist(), recency.tolist(), importance.tolist()
        ranked = [_scored(mems[j], sim_l[j], final_l[j], rec_l[j], imp_l[j]) for j in order[:k].tolist()]
        confidence = self._confidence(query, user_id, ranked, thresholds)
        return SearchResult(ranked, confidence, resolved, weights, thresholds, kind)

    def _mode(self, mode: RetrievalMode | str | None, query: str) -> RetrievalMode:
        """``resolve_mode`` of ``mode`` (None: the configured default) for ``query``; a
        concrete mode's name or member is looked up, skipping two enum conversions."""
        m = self.config.default_mode if mode is None else mode
        if m.__class__ is str or m.__class__ is RetrievalMode:
            found = _CONCRETE_MODES.get(m)
            if found is not None:
                return found
        return resolve_mode(m, query)  # "auto", or the error naming a bad mode

    def _thresholds(self) -> tuple[float, float, float]:
        """(high, moderate, low) in force: widemem's table + env, a fixed triple, or calibrated."""
        fixed = self.config.thresholds
        if fixed is None:
            # Resolved at every search: widemem reads the WIDEMEM_CONFIDENCE_* env at every call.
            return resolve_thresholds(self.embedder.model_id, None)
        if fixed != CALIBRATED:
            return fixed  # type: ignore[return-value]  # a triple EngineConfig validated
        if self._calibrated is None:
            # Lazy: the calibration package is only needed for this setting; its
            # "no calibration file" error names the command that creates one.
            calibration = importlib.import_module("widemem_bench.calibration")
            fitted = calibration.load_calibration(self.embedder.name)
            self._calibrated = validate_thresholds(
                fitted.thresholds, name=f"calibrated thresholds of {self.embedder.name!r}"
            )
        return self._calibrated

    def _recency(self, hits: Hits, now: dt.datetime | None) -> np.ndarray:
        cfg = self.config
        insert = cfg.age_from == "insert"
        col = hits.inserted_us if insert else hits.created_us
        ref = None if insert else now  # None: the wall clock, read once
        ref_us = utcnow_us() if ref is None else epoch_us(ref)
        if col is not None and ref_us is not None:
            # The memories' times as whole microseconds (store.epoch_us): the same ages as
            # the loops below, without a timedelta per memory.
            ages = (ref_us - col) / 1e6 / SECONDS_PER_DAY
        else:
            ref = from_epoch_us(ref_us) if ref is None else ref
            times = [m.inserted_at if insert else m.created_at for m in hits.memories]
            ages = np.array([(ref - t).total_seconds() / SECONDS_PER_DAY for t in times])
        recency = decay(ages, cfg.decay_function, cfg.decay_rate)  # a setting EngineConfig checked
        if cfg.ymyl_enabled and cfg.ymyl_decay_immunity:
            for j, m in enumerate(hits.memories):
                # widemem trusts a stored category first, then re-classifies the text.
                if m.ymyl_category is not None:
                    recency[j] = 1.0
                    continue
                match = classify_ymyl_with(m.content, cfg.ymyl_categories, cfg.ymyl_classifier)
                if match is not None and match.strength == "strong":
                    recency[j] = 1.0
        return recency

    def _confidence(
        self,
        query: str,
        user_id: str,
        ranked: Sequence[ScoredMemory],
        thresholds: tuple[float, float, float],
    ) -> Confidence:
        if self.config.confidence.startswith("answerability"):  # v2 (also "_v2"), "_v3" or "_v1"
            return self._answerability(query, ranked, thresholds)
        top = ranked[0].raw_similarity_score if ranked else None
        return confidence_from_similarity(top, thresholds)

    def _answerability(
        self, query: str, ranked: Sequence[ScoredMemory], thresholds: tuple[float, float, float]
    ) -> Confidence:
        try:
            # Lazy: the answerability scorer is optional and heavier than the engine.
            answerability = importlib.import_module("widemem_bench.answerability")
        except ImportError as exc:
            raise ValueError(
                f"confidence: 'answerability' needs widemem_bench.answerability ({exc})"
            ) from None
        assess = getattr(answerability, "assess_confidence", None)
        if assess is None:
            raise ValueError(
                "confidence: 'answerability' needs widemem_bench.answerability.assess_confidence"
            )
        # embedder= (registry name): calibration files, which hold the scorer, are named by it.
        return Confidence(assess(query, ranked, model_id=self.embedder.model_id, thresholds=thresholds,
                                 embedder=self.embedder.name, version=self.config.confidence,
                                 encoder=self.embedder))
