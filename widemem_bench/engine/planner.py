"""How one add becomes writes: distinct facts, the YMYL floor, candidates, the resolver's
actions, and the changes they stage (nothing is written here; `MemoryEngine` applies them
in one transaction). A mixin of `MemoryEngine`, split out of engine.py for size."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .config import EngineConfig
from .extractors import Fact
from .resolvers import Action, AppendResolver
from .results import AddResult, YMYLConflict
from .slots import NameEvidence
from .store import Change, Memory, MemoryStore, content_hash, utcnow
from .ymyl import classify_ymyl_with

Versions = dict[str, tuple[int, dt.datetime, dt.datetime]]


@dataclass
class _Staged:
    """One add's writes so far: what its later actions must see."""

    changes: list[Change] = field(default_factory=list)
    logged: int = 0  # changes that count in history_count (new ids key on it; SUPERSEDE does not)
    versions: Versions = field(default_factory=dict)  # staged updates per memory: (count, clock, wall)
    memories: dict[str, Memory | None] = field(default_factory=dict)
    hashes: set[str] = field(default_factory=set)
    valid_targets: set[str] | None = None  # built at the first action that names a target


class Planner:
    """The write planning of `MemoryEngine` (see the module docstring)."""

    config: EngineConfig
    store: MemoryStore
    embedder: Any
    resolver: Any
    _names: dict[str, NameEvidence]

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

    def _retire(self, target: Memory, at: dt.datetime, versions: Versions, replaced_by: str) -> Memory:
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
                              superseded_at=at, superseded_by=replaced_by, valid_since=None)

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
                actions = list(self.resolver.decide(facts, candidates, user_names=names))
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
        st = _Staged()
        decided: set[int] = set()
        for action in actions:
            i = action.fact_index
            if not 0 <= i < len(facts) or i in decided:
                continue
            decided.add(i)
            fact, chash = facts[i], hashes[i]
            kind, target_id = action.kind, action.target_id
            target = self._target(st, kind, target_id, candidates, user_id)
            if target is None:
                kind = "ADD"
            if kind == "NONE":
                result.actions.append(Action("NONE", i, target_id))
                continue
            duplicate = chash in st.hashes or self.store.find_hash(user_id, chash) is not None
            if kind in ("ADD", "UPDATE") and duplicate:
                # Identical content is never stored twice (per user).
                dup = self.store.find_hash(user_id, chash)
                result.actions.append(Action("NONE", i, dup.id if dup else None))
                continue
            st.logged += 1
            if kind == "ADD":
                memory = Memory(self._new_id(user_id, fact.content, st.logged - 1), user_id, fact.content,
                                fact.importance, stamp, wall, stamp, categories[i], fact.slot, chash)
                st.changes.append(Change("ADD", memory, vectors[i], None, stamp))
                st.memories[memory.id] = memory
                st.hashes.add(chash)
                result.memories.append(memory)
                result.actions.append(Action("ADD", i, memory.id))
            elif kind == "UPDATE":
                assert target is not None
                self._stage_update(st, i, fact, chash, categories[i], vectors[i], target, times, result)
            else:  # DELETE
                assert target is not None and st.valid_targets is not None
                st.changes.append(Change("DELETE", target, None, target.content, stamp))
                st.memories[target.id] = None
                st.valid_targets.discard(target.id)
                result.memories = [m for m in result.memories if m.id != target.id]
                result.actions.append(Action("DELETE", i, target.id))
        return st.changes

    def _target(self, st: _Staged, kind: str, target_id: str | None,
                candidates: Sequence[Sequence[tuple[Memory, float]]], user_id: str) -> Memory | None:
        """The memory an UPDATE / DELETE / NONE names, as this add left it; None: an ADD."""
        if kind == "ADD":
            return None
        if st.valid_targets is None:
            st.valid_targets = {m.id for cands in candidates for m, _ in cands}
        # A target must be one of this user's candidates (never another user's memory).
        if target_id is None or target_id not in st.valid_targets:
            return None
        return st.memories[target_id] if target_id in st.memories else self.store.get(target_id, user_id)

    def _stage_update(self, st: _Staged, i: int, fact: Fact, chash: str, category: str | None,
                      vector: np.ndarray, target: Memory, times: tuple[dt.datetime, dt.datetime],
                      result: AddResult) -> None:
        stamp, wall = times
        memory = target.replace(
            content=fact.content,
            content_hash=chash,
            importance=fact.importance,
            updated_at=stamp,
            ymyl_category=category,
            slot=fact.slot if fact.slot is not None else target.slot,
            valid_since=stamp,  # this content is true from now: the old version's interval ends here
        )  # created_at and inserted_at are kept, as widemem keeps created_at (recency scores by it)
        # The old version is kept, superseded (issue 26): the live memory keeps the
        # id and row, as widemem's UPDATE keeps the id, so searches see the same list.
        old = self._retire(target, stamp, st.versions, memory.id)
        st.versions[memory.id] = (st.versions.get(memory.id, (0, stamp, wall))[0] + 1, stamp, wall)
        st.changes.append(Change("SUPERSEDE", old, None, None, stamp))
        result.superseded.append(old)
        st.changes.append(Change("UPDATE", memory, vector, target.content, stamp))
        st.memories[memory.id] = memory
        st.hashes.add(chash)
        result.memories = [m for m in result.memories if m.id != memory.id] + [memory]
        result.actions.append(Action("UPDATE", i, memory.id))

    def _encode(self, texts: Sequence[str], kind: str) -> np.ndarray:
        vecs = np.asarray(self.embedder.encode(list(texts), kind=kind), dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts):
            raise ValueError(f"embedder: returned shape {vecs.shape} for {len(texts)} texts")
        return vecs
