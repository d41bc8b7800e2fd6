"""Memory store: an in-memory backend or a SQLite file, with a per-user vector matrix.

Both backends keep every memory and its float32 vector in Python dicts and a
per-user numpy matrix, which is what search reads. The SQLite backend mirrors
every change to disk; each call to :meth:`MemoryStore.apply` is one committed
transaction (``with conn:``), so a crash never leaves half of an ``add()``
behind, and reopening the file gives back exactly the same memories and
vectors (so the same search results).

User isolation lives here, at the storage API: every read is keyed by
``user_id`` and a write that names a user refuses to touch a memory owned by
another user.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

SCHEMA_VERSION = 1
# Marks a SQLite file as ours; any other SQLite database is refused, never migrated.
STORE_KIND = "widemem_bench.memory_store"

Action = Literal["ADD", "UPDATE", "DELETE", "PIN", "NONE"]
LOGGED_ACTIONS = ("ADD", "UPDATE", "DELETE", "PIN")


def content_hash(content: str) -> str:
    """Hash of the exact fact text (widemem hashes the raw text too), used for dedup."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def utcnow() -> dt.datetime:
    """Wall-clock now as a timezone-naive UTC datetime (the project's time convention)."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Memory:
    """One stored fact.

    ``created_at`` is the fact's time on the experiment clock (the ``at`` given
    to ``add``; kept across UPDATE). ``inserted_at`` is the wall-clock insert
    time, which is what widemem ages memories from (``age_from="insert"``).
    Importance is 0-10.
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

    def replace(self, **changes: object) -> Memory:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


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
    removes ``memory.id``. Each change is logged in history with ``old_content``.
    """

    kind: Literal["ADD", "UPDATE", "DELETE", "PIN"]
    memory: Memory
    vector: np.ndarray | None = None
    old_content: str | None = None
    at: dt.datetime = field(default_factory=utcnow)


def _iso(t: dt.datetime) -> str:
    return t.isoformat()


def _parse(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s)


class _UserIndex:
    """Vectors of one user, in insertion order, stacked lazily into one matrix."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        # Rows live in a buffer that grows by doubling, so an add appends one row
        # instead of restacking every vector of the user (quadratic over a long
        # ingest: 3,000 adds of one user took 17 s; perf benchmark, issue 9).
        self._buf: np.ndarray | None = None  # None = rebuild from `vectors` on next read

    def put(self, memory_id: str, vector: np.ndarray) -> None:
        # dict keeps the original insertion position on update, matching SQLite rowid order.
        self.vectors[memory_id] = vector
        if self._buf is None:
            return
        row = self._rows.get(memory_id)
        if row is not None:  # update in place: same position
            self._buf[row] = vector
            return
        n = len(self._ids)
        if n == self._buf.shape[0]:
            grown = np.zeros((max(2 * n, 16), self._buf.shape[1]), dtype=np.float32)
            grown[:n] = self._buf[:n]
            self._buf = grown
        self._buf[n] = vector
        self._rows[memory_id] = n
        self._ids.append(memory_id)

    def drop(self, memory_id: str) -> None:
        self.vectors.pop(memory_id, None)
        self._buf = None  # rows shift: rebuild on the next read

    def matrix(self, dim: int) -> tuple[list[str], np.ndarray]:
        if self._buf is None:
            self._ids = list(self.vectors)
            self._rows = {m: i for i, m in enumerate(self._ids)}
            self._buf = np.zeros((max(len(self._ids), 16), dim), dtype=np.float32)
            if self._ids:
                self._buf[: len(self._ids)] = np.stack([self.vectors[i] for i in self._ids])
        return self._ids, self._buf[: len(self._ids)]


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    importance REAL NOT NULL,
    created_at TEXT NOT NULL,
    inserted_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ymyl_category TEXT,
    slot_subject TEXT,
    slot_attribute TEXT,
    vector BLOB NOT NULL
);
CREATE INDEX memories_user ON memories (user_id, content_hash);
CREATE TABLE history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    old_content TEXT,
    new_content TEXT,
    at TEXT NOT NULL,
    logged_at TEXT NOT NULL
);
CREATE INDEX history_memory ON history (memory_id);
"""

_MEMORY_COLUMNS = (
    "id, user_id, content, content_hash, importance, created_at, inserted_at, "
    "updated_at, ymyl_category, slot_subject, slot_attribute, vector"
)


class MemoryStore:
    """Memories + vectors + history for many users.

    ``path=None`` keeps everything in memory; a path opens (or creates) a SQLite
    store file. ``dim`` and ``embedder`` (a fingerprint string) bind the store to
    one embedding space: reopening a file with another dim or embedder is refused,
    because the stored vectors would be meaningless for the new model.
    """

    def __init__(
        self, path: str | Path | None = None, *, dim: int | None = None, embedder: str | None = None
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.dim = dim
        self.embedder = embedder
        self._memories: dict[str, Memory] = {}
        self._users: dict[str, _UserIndex] = {}
        self._hashes: dict[tuple[str, str], str] = {}
        self._history: dict[str, list[HistoryEntry]] = {}
        self._history_count = 0
        self._conn: sqlite3.Connection | None = None
        if self.path is not None:
            self._open_sqlite(self.path)

    # ------------------------------------------------------------------ open
    def _open_sqlite(self, path: Path) -> None:
        if path.is_dir():
            raise ValueError(f"store_path: {path} is a directory, not a store file")
        try:
            conn = sqlite3.connect(str(path))
            tables = {
                r[0]
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                if not r[0].startswith("sqlite_")
            }
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store_path: {path} is not a valid store ({exc})") from None
        try:
            if not tables:
                with conn:
                    conn.executescript(_SCHEMA)
                    conn.executemany(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        [("kind", STORE_KIND), ("schema_version", str(SCHEMA_VERSION))],
                    )
            else:
                self._check_meta(conn, path, tables)
            # WAL + synchronous=NORMAL: every transaction is still atomic (a crash
            # leaves it all or nothing), but a commit costs no fsync; only a power
            # loss can drop the last few committed writes. 25 ms -> <1 ms per add.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._bind(conn, path)
            self._conn = conn
            self._load(conn)
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _check_meta(conn: sqlite3.Connection, path: Path, tables: set[str]) -> None:
        if not {"meta", "memories", "history"} <= tables:
            raise ValueError(f"store_path: {path} is a SQLite file but not a widemem_bench store")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("kind") != STORE_KIND:
            raise ValueError(f"store_path: {path} is a SQLite file but not a widemem_bench store")
        if meta.get("schema_version") != str(SCHEMA_VERSION):
            raise ValueError(
                f"store_path: {path} has schema_version {meta.get('schema_version')}, "
                f"expected {SCHEMA_VERSION}"
            )

    def _bind(self, conn: sqlite3.Connection, path: Path) -> None:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        stored_dim = int(meta["dim"]) if "dim" in meta else None
        if stored_dim is not None and self.dim is not None and stored_dim != self.dim:
            raise ValueError(f"store_path: {path} holds dim {stored_dim} vectors, embedder dim is {self.dim}")
        stored_emb = meta.get("embedder")
        if stored_emb is not None and self.embedder is not None and stored_emb != self.embedder:
            raise ValueError(
                f"store_path: {path} was written with embedder {stored_emb!r}, not {self.embedder!r}"
            )
        self.dim = self.dim if self.dim is not None else stored_dim
        self.embedder = self.embedder if self.embedder is not None else stored_emb
        rows = []
        if self.dim is not None and stored_dim is None:
            rows.append(("dim", str(self.dim)))
        if self.embedder is not None and stored_emb is None:
            rows.append(("embedder", self.embedder))
        if rows:
            with conn:
                conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", rows)

    def _load(self, conn: sqlite3.Connection) -> None:
        for row in conn.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories ORDER BY seq"):
            (mid, uid, content, chash, imp, created, inserted, updated, ymyl, s_sub, s_att, blob) = row
            vector = np.frombuffer(blob, dtype=np.float32).copy()
            if self.dim is not None and vector.shape[0] != self.dim:
                raise ValueError(f"store_path: memory {mid} has a vector of dim {vector.shape[0]}")
            memory = Memory(
                id=mid,
                user_id=uid,
                content=content,
                importance=float(imp),
                created_at=_parse(created),
                inserted_at=_parse(inserted),
                updated_at=_parse(updated),
                ymyl_category=ymyl,
                slot=(s_sub, s_att) if s_sub is not None and s_att is not None else None,
                content_hash=chash,
            )
            self._put(memory, vector)
        for row in conn.execute(
            "SELECT memory_id, user_id, action, old_content, new_content, at, logged_at "
            "FROM history ORDER BY seq"
        ):
            self._log(HistoryEntry(row[0], row[1], row[2], row[3], row[4], _parse(row[5]), _parse(row[6])))

    # ----------------------------------------------------------------- reads
    def get(self, memory_id: str, user_id: str | None = None) -> Memory | None:
        """The memory, or None if absent or (when ``user_id`` is given) owned by someone else."""
        memory = self._memories.get(memory_id)
        if memory is None or (user_id is not None and memory.user_id != user_id):
            return None
        return memory

    def vector(self, memory_id: str, user_id: str) -> np.ndarray | None:
        index = self._users.get(user_id)
        return None if index is None else index.vectors.get(memory_id)

    def memories(self, user_id: str) -> list[Memory]:
        """All memories of one user, in insertion order."""
        index = self._users.get(user_id)
        return [] if index is None else [self._memories[i] for i in index.vectors]

    def users(self) -> list[str]:
        return [u for u, idx in self._users.items() if idx.vectors]

    def find_hash(self, user_id: str, chash: str) -> Memory | None:
        mid = self._hashes.get((user_id, chash))
        return None if mid is None else self._memories.get(mid)

    def __len__(self) -> int:
        return len(self._memories)

    def similarities(self, user_id: str, query: np.ndarray) -> tuple[list[Memory], np.ndarray]:
        """Every memory of ``user_id`` with its cosine to ``query`` (a unit vector)."""
        index = self._users.get(user_id)
        if index is None or not index.vectors:
            return [], np.zeros(0, dtype=np.float32)
        ids, matrix = index.matrix(self.dim or query.shape[0])
        sims = matrix @ np.asarray(query, dtype=np.float32)
        return [self._memories[i] for i in ids], sims

    def search(self, user_id: str, query: np.ndarray, k: int) -> list[tuple[Memory, float]]:
        """The ``k`` nearest memories of ``user_id`` by cosine, nearest first.

        Ties keep insertion order (stable sort), so results are deterministic.
        """
        memories, sims = self.similarities(user_id, query)
        if k <= 0 or not memories:
            return []
        order = np.argsort(-sims, kind="stable")[:k]
        return [(memories[i], float(sims[i])) for i in order]

    def history(self, memory_id: str) -> list[HistoryEntry]:
        return list(self._history.get(memory_id, ()))

    @property
    def history_count(self) -> int:
        """Entries ever logged; never shrinks (deletes are logged too)."""
        return self._history_count

    def _log(self, entry: HistoryEntry) -> None:
        self._history.setdefault(entry.memory_id, []).append(entry)
        self._history_count += 1

    # ---------------------------------------------------------------- writes
    def _check_vector(self, vector: np.ndarray | None) -> np.ndarray | None:
        if vector is None:
            return None
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if self.dim is None:
            self.dim = int(v.shape[0])
        elif v.shape[0] != self.dim:
            raise ValueError(f"vector: dim {v.shape[0]} does not match store dim {self.dim}")
        if not np.all(np.isfinite(v)):
            raise ValueError("vector: contains NaN or inf")
        return v.copy()

    def _put(self, memory: Memory, vector: np.ndarray) -> None:
        old = self._memories.get(memory.id)
        if old is not None:
            self._hashes.pop((old.user_id, old.content_hash), None)
        self._memories[memory.id] = memory
        self._users.setdefault(memory.user_id, _UserIndex()).put(memory.id, vector)
        self._hashes[(memory.user_id, memory.content_hash)] = memory.id

    def _drop(self, memory: Memory) -> None:
        self._memories.pop(memory.id, None)
        index = self._users.get(memory.user_id)
        if index is not None:
            index.drop(memory.id)
        if self._hashes.get((memory.user_id, memory.content_hash)) == memory.id:
            del self._hashes[(memory.user_id, memory.content_hash)]

    def apply(self, changes: Sequence[Change]) -> None:
        """Apply ``changes`` as one transaction: all of them, or (on any error) none.

        Everything is validated before the first write. An UPDATE / PIN / DELETE
        of a memory that does not exist or belongs to another user than
        ``change.memory.user_id`` is refused.
        """
        if not changes:
            return
        staged: dict[str, Memory | None] = {}
        vectors: dict[str, np.ndarray] = {}
        entries: list[HistoryEntry] = []
        now = utcnow()
        for ch in changes:
            mem = ch.memory
            current = staged[mem.id] if mem.id in staged else self._memories.get(mem.id)
            if ch.kind == "ADD":
                if current is not None:
                    raise ValueError(f"memory_id: {mem.id} already exists")
                vec = self._check_vector(ch.vector)
                if vec is None:
                    raise ValueError("vector: an ADD needs a vector")
                vectors[mem.id] = vec
            else:
                if current is None or current.user_id != mem.user_id:
                    raise ValueError(f"memory_id: {mem.id} not found for user {mem.user_id!r}")
                vec = self._check_vector(ch.vector)
                if vec is not None:
                    vectors[mem.id] = vec
                elif ch.kind != "DELETE" and mem.id not in vectors:
                    stored = self.vector(mem.id, mem.user_id)
                    assert stored is not None
                    vectors[mem.id] = stored
            staged[mem.id] = None if ch.kind == "DELETE" else mem.replace(
                content_hash=mem.content_hash or content_hash(mem.content)
            )
            entries.append(
                HistoryEntry(
                    memory_id=mem.id,
                    user_id=mem.user_id,
                    action=ch.kind,
                    old_content=ch.old_content,
                    new_content=None if ch.kind == "DELETE" else mem.content,
                    at=ch.at,
                    logged_at=now,
                )
            )
        if self._conn is not None:
            self._write_sqlite(staged, vectors, entries)
        # Only after the commit succeeded do the in-memory views change.
        for mid, new in staged.items():
            old = self._memories.get(mid)
            if new is None:
                if old is not None:
                    self._drop(old)
            else:
                self._put(new, vectors[mid])
        for entry in entries:
            self._log(entry)

    def _write_sqlite(
        self,
        staged: dict[str, Memory | None],
        vectors: dict[str, np.ndarray],
        entries: list[HistoryEntry],
    ) -> None:
        conn = self._conn
        assert conn is not None
        with conn:
            if self.dim is not None:
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('dim', ?)", (str(self.dim),))
            for mid, new in staged.items():
                if new is None:
                    conn.execute("DELETE FROM memories WHERE id = ?", (mid,))
                    continue
                slot = new.slot or (None, None)
                values = (
                    new.user_id,
                    new.content,
                    new.content_hash,
                    float(new.importance),
                    _iso(new.created_at),
                    _iso(new.inserted_at),
                    _iso(new.updated_at),
                    new.ymyl_category,
                    slot[0],
                    slot[1],
                    vectors[mid].astype(np.float32).tobytes(),
                )
                if mid in self._memories:
                    # UPDATE in place keeps the row's seq, so insertion order survives a reopen.
                    conn.execute(
                        "UPDATE memories SET user_id=?, content=?, content_hash=?, importance=?, "
                        "created_at=?, inserted_at=?, updated_at=?, ymyl_category=?, "
                        "slot_subject=?, slot_attribute=?, vector=? WHERE id=?",
                        (*values, mid),
                    )
                else:
                    conn.execute(
                        f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (mid, *values),
                    )
            conn.executemany(
                "INSERT INTO history (memory_id, user_id, action, old_content, new_content, at, "
                "logged_at) VALUES (?,?,?,?,?,?,?)",
                [
                    (e.memory_id, e.user_id, e.action, e.old_content, e.new_content, _iso(e.at),
                     _iso(e.logged_at))
                    for e in entries
                ],
            )

    # ------------------------------------------------------------- lifetime
    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Memory]:
        return iter(list(self._memories.values()))
