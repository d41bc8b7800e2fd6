"""The in-memory views of a store (every memory, the per-user vector indexes, the dedup
hashes and the history) and the queries that read them.

Both backends answer every read from these views, never from SQLite: a SQLite store
only mirrors them to disk (``store.MemoryStore``), and fills them on open.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np

from widemem_bench.engine.index import Hits, _UserIndex
from widemem_bench.engine.memory import UNCOUNTED_ACTIONS, HistoryEntry, Memory


class Views:
    """A store's memories, indexes and history, and every read of them (``MemoryStore``
    adds opening and writing). Reads take the re-entrant lock where they walk a view."""

    def __init__(self, dim: int | None) -> None:
        self.dim = dim
        self._quarantined: set[str] = set()  # ids of rows set aside on open (never reused)
        self._memories: dict[str, Memory] = {}  # live and superseded
        self._users: dict[str, _UserIndex] = {}  # live memories: what searches read
        self._past: dict[str, _UserIndex] = {}  # superseded memories, per user
        self._hashes: dict[tuple[str, str], str] = {}
        self._history: dict[str, list[HistoryEntry]] = {}
        self._history_count = 0
        self._lock = threading.RLock()

    def get(self, memory_id: str, user_id: str | None = None) -> Memory | None:
        """The memory, or None if absent or (when ``user_id`` is given) owned by someone else."""
        memory = self._memories.get(memory_id)
        if memory is None or (user_id is not None and memory.user_id != user_id):
            return None
        return memory

    def vector(self, memory_id: str, user_id: str) -> np.ndarray | None:
        for users in (self._users, self._past):
            index = users.get(user_id)
            if index is not None and memory_id in index.vectors:
                return index.vectors[memory_id]
        return None

    def memories(self, user_id: str, include_superseded: bool = False) -> list[Memory]:
        """The live memories of one user, in insertion order; with ``include_superseded``,
        then the superseded ones, in the order they were retired."""
        with self._lock:
            indexes = (self._users, self._past) if include_superseded else (self._users,)
            return [self._memories[i] for users in indexes if user_id in users for i in users[user_id].vectors]

    def superseded_versions(self, memory_id: str) -> list[Memory]:
        """The superseded memories that ``memory_id`` replaced, oldest first."""
        with self._lock:
            mem = self._memories.get(memory_id)
            past = None if mem is None else self._past.get(mem.user_id)
            if past is None:
                return []
            return [m for m in (self._memories[i] for i in past.vectors) if m.superseded_by == memory_id]

    def version_id(self, memory_id: str, pending: int = 0) -> str:
        """A new id for the version of ``memory_id`` that its next UPDATE retires:
        ``<id>~<n>``, n = that update's number in its history (``pending`` updates of the
        same memory staged before it), stepping past any id already taken."""
        with self._lock:
            n = sum(e.action == "UPDATE" for e in self._history.get(memory_id, ())) + 1 + pending
            while f"{memory_id}~{n}" in self._memories or f"{memory_id}~{n}" in self._quarantined:
                n += 1
            return f"{memory_id}~{n}"

    def users(self) -> list[str]:
        with self._lock:
            return [u for u, idx in self._users.items() if idx.vectors]

    def find_hash(self, user_id: str, chash: str) -> Memory | None:
        mid = self._hashes.get((user_id, chash))
        return None if mid is None else self._memories.get(mid)

    def __len__(self) -> int:
        """Memories stored, live and superseded."""
        return len(self._memories)

    def search(
        self, user_id: str, query: np.ndarray, k: int, include_superseded: bool = False
    ) -> list[tuple[Memory, float]]:
        """The ``k`` nearest live memories of ``user_id`` by cosine, nearest first (with
        ``include_superseded``, then the ``k`` nearest superseded ones).

        Ties keep insertion order (stable sort), so results are deterministic.
        """
        memories, sims = self.nearest(user_id, query, k, include_superseded)
        return list(zip(memories, sims.tolist(), strict=True))

    def nearest(
        self, user_id: str, query: np.ndarray, k: int, include_superseded: bool = False
    ) -> tuple[list[Memory], np.ndarray]:
        """``search`` as (memories, float64 cosines): without one tuple and one numpy
        scalar per hit (the same values: float32 cosines widened)."""
        with self._lock:
            if include_superseded:
                hits = self.hits(user_id, query, k, True)
                return ([], np.zeros(0, dtype=np.float64)) if hits is None else (hits.memories, hits.sims)
            found = self._nearest(self._users, user_id, query, k)
            if found is None:
                return [], np.zeros(0, dtype=np.float64)
            _, memories, sims, _ = found
            return memories, sims

    def hits(self, user_id: str, query: np.ndarray, k: int, include_superseded: bool = False) -> Hits | None:
        """``nearest`` with the columns the engine's search scores by; None when none.

        With ``include_superseded``: the ``k`` nearest live memories, then the ``k``
        nearest superseded ones (live first: a retired version never outranks what
        replaced it)."""
        with self._lock:
            found = self._nearest(self._users, user_id, query, k)
            past = self._nearest(self._past, user_id, query, k) if include_superseded else None
            parts = [f for f in (found, past) if f is not None]
            if not parts:
                return None
            if len(parts) == 1:
                index, memories, sims, order = parts[0]
                return Hits(memories, sims, index.gather(order), not index.odd)
            memories = [m for f in parts for m in f[1]]
            sims = np.concatenate([f[2] for f in parts])
            cols = np.concatenate([f[0].gather(f[3]) for f in parts], axis=1)
            return Hits(memories, sims, cols, not any(f[0].odd for f in parts))

    def superseded_hits(self, user_id: str, query: np.ndarray, k: int) -> Hits | None:
        """``hits`` of the superseded memories alone (the ``k`` nearest); None when none."""
        with self._lock:
            found = self._nearest(self._past, user_id, query, k)
            if found is None:
                return None
            index, memories, sims, order = found
            return Hits(memories, sims, index.gather(order), not index.odd)

    def _nearest(
        self, users: dict[str, _UserIndex], user_id: str, query: np.ndarray, k: int
    ) -> tuple[_UserIndex, list[Memory], np.ndarray, np.ndarray] | None:
        index = users.get(user_id)
        if k <= 0 or index is None or not index.vectors:
            return None
        ids, matrix = index.matrix(self.dim or query.shape[0])
        sims = matrix @ np.asarray(query, dtype=np.float32)
        order = (-sims).argsort(kind="stable")[:k]
        memories = self._memories
        return index, [memories[ids[i]] for i in order.tolist()], sims[order].astype(np.float64), order

    def history(self, memory_id: str, user_id: str | None = None) -> list[HistoryEntry]:
        """Logged changes of one memory, oldest first; with ``user_id``, only that user's."""
        with self._lock:
            entries = self._history.get(memory_id, ())
            return [e for e in entries if user_id is None or e.user_id == user_id]

    @property
    def history_count(self) -> int:
        """Entries ever logged, less the SUPERSEDE entries that ride with an UPDATE; never
        shrinks (deletes are logged too). New ids are seeded by it."""
        return self._history_count

    def _log(self, entry: HistoryEntry) -> None:
        self._history.setdefault(entry.memory_id, []).append(entry)
        if entry.action not in UNCOUNTED_ACTIONS:
            self._history_count += 1

    def _put(self, memory: Memory, vector: np.ndarray) -> None:
        old = self._memories.get(memory.id)
        if old is not None and old.superseded_at is None:
            self._hashes.pop((old.user_id, old.content_hash), None)
        if old is not None and (old.superseded_at is None) != (memory.superseded_at is None):
            self._drop(old)  # moves between the live and the superseded index: appended there
        self._memories[memory.id] = memory
        users = self._users if memory.superseded_at is None else self._past
        index = users.get(memory.user_id)
        if index is None:
            index = users[memory.user_id] = _UserIndex()
        index.put(memory, vector)
        if memory.superseded_at is None:  # dedup sees live content only, as widemem does
            self._hashes[(memory.user_id, memory.content_hash)] = memory.id

    def _drop(self, memory: Memory) -> None:
        self._memories.pop(memory.id, None)
        index = (self._users if memory.superseded_at is None else self._past).get(memory.user_id)
        if index is not None:
            index.drop(memory.id)
        if self._hashes.get((memory.user_id, memory.content_hash)) == memory.id:
            del self._hashes[(memory.user_id, memory.content_hash)]

    def __iter__(self) -> Iterator[Memory]:
        return iter(list(self._memories.values()))
