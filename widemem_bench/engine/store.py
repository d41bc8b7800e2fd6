"""Memory store: an in-memory backend or a SQLite file, with a per-user vector matrix.

Both backends keep every memory and its float32 vector in Python dicts and a
per-user numpy matrix, with the importance and time columns a search scores by
beside it (``Hits``): that is what search reads. The SQLite backend mirrors
every change to disk; each call to :meth:`MemoryStore.apply` is one committed
transaction (``with conn:``), so a crash never leaves half of an ``add()``
behind, and reopening the file gives back exactly the same memories and
vectors (so the same search results).

What a SQLite store promises (issue 17): one writer per store, enforced by a lock file
beside the store (``<store>.lock``; a second engine or process gets a one-line error
naming the holder's pid and host); and verified reads: every open runs SQLite's
``integrity_check``, every memory and history row carries a sha256 over all of its
fields (id, user, content, importance, times, category, slot, vector and supersession), and every
vector is checked for length, finiteness and unit norm, so a damaged row is either a
one-line error naming the store and the row or (``on_damage="quarantine"``) set aside
and listed in ``MemoryStore.damaged``; it never reaches a search.

Superseded memories (issue 26): the engine's UPDATE keeps the version it replaces as
a row of its own (``Memory.superseded_at`` / ``superseded_by`` set, change kind
SUPERSEDE), so a wrong update can be undone (UNSUPERSEDE). Superseded rows sit in a
per-user index of their own: the nearest-neighbour reads (and so the engine's
candidates and default search) see only live memories unless asked for both.

The in-memory views are guarded by a re-entrant lock, so one store may be shared by
threads (the engine adds its own lock around each add / search).

User isolation lives here, at the storage API: every read is keyed by
``user_id`` and a write that names a user refuses to touch a memory owned by
another user.

The parts, one module each: ``memory`` (the records and the clock), ``index`` (the
per-user vector matrix), ``queries`` (the in-memory views and every read), ``integrity``
(row checksums, vector checks, the row codec), ``schema`` (the file's tables: creation,
migration, one transaction's SQL) and ``lock`` (the writer lock). Here: opening a store,
loading it, and validating and applying a transaction. Every public name of the parts is
re-exported here, the import path callers use.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from widemem_bench.engine import schema
from widemem_bench.engine.index import Hits
from widemem_bench.engine.integrity import (
    NORM_TOLERANCE,
    BadRow,
    StoreDamagedError,
    check_stored_vector,
    checked_vector,
    entry_from_row,
    memory_checksum,
    memory_from_row,
    row_checksum,
    verify_file,
)
from widemem_bench.engine.lock import StoreLockedError, WriterLock
from widemem_bench.engine.memory import (
    EPOCH_US_LIMIT,
    LOGGED_ACTIONS,
    UNCOUNTED_ACTIONS,
    Action,
    Change,
    HistoryEntry,
    Memory,
    content_hash,
    epoch_us,
    from_epoch_us,
    importance01,
    utcnow,
    utcnow_us,
)
from widemem_bench.engine.queries import Views
from widemem_bench.engine.schema import (
    MIGRATABLE_VERSIONS,
    SCHEMA_VERSION,
    SQLITE_MAGIC,
    STORE_KIND,
)

__all__ = [
    "EPOCH_US_LIMIT", "LOGGED_ACTIONS", "MIGRATABLE_VERSIONS", "NORM_TOLERANCE", "SCHEMA_VERSION",
    "SQLITE_MAGIC", "STORE_KIND", "UNCOUNTED_ACTIONS", "Action", "Change", "HistoryEntry", "Hits",
    "Memory", "MemoryStore", "OnDamage", "StoreDamagedError", "StoreLockedError", "WriterLock",
    "check_stored_vector", "content_hash", "epoch_us", "from_epoch_us", "importance01",
    "memory_checksum", "row_checksum", "utcnow", "utcnow_us",
]

log = logging.getLogger(__name__)

OnDamage = Literal["error", "quarantine"]


class MemoryStore(Views):
    """Memories + vectors + history for many users.

    ``path=None`` keeps everything in memory; a path opens (or creates) a SQLite
    store file. ``dim`` and ``embedder`` (a fingerprint string) bind the store to
    one embedding space: reopening a file with another dim or embedder is refused,
    because the stored vectors would be meaningless for the new model.

    A SQLite store has one writer: the open takes ``<path>.lock`` and a second open of
    the same file (another engine, thread or process) fails until ``close()``.
    ``legacy_embedder`` is the binding a schema-1 store of this same model carries
    (``name:weights_sha256``, the fingerprint recipe before issue 17); the migration
    accepts it and rebinds the store to ``embedder``. It is never accepted otherwise.
    ``on_damage`` says what a row that fails its checksum or vector check does on open:
    ``"error"`` (default) refuses the store, naming the row; ``"quarantine"`` leaves the
    row out of every read, logs it and lists it in ``damaged``.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        dim: int | None = None,
        embedder: str | None = None,
        on_damage: OnDamage = "error",
        legacy_embedder: str | None = None,
    ) -> None:
        if on_damage not in ("error", "quarantine"):
            raise ValueError(f"on_damage: expected 'error' or 'quarantine', got {on_damage!r}")
        self.path = Path(path) if path is not None else None
        super().__init__(dim)
        self.embedder = embedder
        self.on_damage = on_damage
        # The binding schema-1 stores were written with (``name:weights_sha256``, before
        # fingerprints covered every vector-shaping file); accepted only while migrating.
        self.legacy_embedder = legacy_embedder
        self._rebind = False  # the migration rewrites a legacy binding to ``embedder``
        self.damaged: list[str] = []  # one line per quarantined row
        self._conn: sqlite3.Connection | None = None
        self._writer: WriterLock | None = None
        if self.path is not None:
            self._open_sqlite(self.path)

    # ------------------------------------------------------------------ open
    def _open_sqlite(self, path: Path) -> None:
        if path.is_dir():
            raise ValueError(f"store_path: {path} is a directory, not a store file")
        if path.parent.exists() and not path.parent.is_dir():
            raise ValueError(f"store_path: {path.parent} is a file, not a folder")
        if not path.parent.is_dir():
            raise ValueError(f"store_path: folder {path.parent} does not exist")
        if path.is_symlink() and not path.exists():
            # Creating the store would replace the link with a file of its own.
            raise ValueError(f"store_path: {path} is a symlink to {os.readlink(path)}, which does not exist")
        self._writer = WriterLock(path)
        try:
            schema.check_file(path)
            if not path.exists():
                schema.create(path)
            conn = schema.connect(path)
            try:
                verify_file(conn, path)
                tables = {
                    r[0]
                    for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                    if not r[0].startswith("sqlite_")
                }
                version = schema.check_meta(conn, path, tables)
                # Bound to this dim / embedder before anything is written: a refused open
                # (another embedder) must leave a schema-1 file as it found it.
                self._bind(conn, path, version)
                if version != str(SCHEMA_VERSION):
                    schema.migrate(conn, path, version, self.embedder if self._rebind else None)
                # WAL + synchronous=NORMAL: every transaction is still atomic (a crash
                # leaves it all or nothing), but a commit costs no fsync; only a power
                # loss can drop the last few committed writes. 25 ms -> <1 ms per add.
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                self._load(conn, path)
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise schema.sqlite_error(path, exc) from None
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        except BaseException:
            self._writer.discard()  # a refused open leaves no lock file of its own behind
            self._writer = None
            raise

    def _bind(self, conn: sqlite3.Connection, path: Path, version: str) -> None:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        stored_dim = int(meta["dim"]) if "dim" in meta else None
        if stored_dim is not None and self.dim is not None and stored_dim != self.dim:
            raise ValueError(f"store_path: {path} holds dim {stored_dim} vectors, embedder dim is {self.dim}")
        stored_emb = meta.get("embedder")
        if stored_emb is not None and self.embedder is not None and stored_emb != self.embedder:
            if version == "1" and self.legacy_embedder is not None and stored_emb == self.legacy_embedder:
                # Same name and verified weights under the old recipe: the same model.
                # The migration rebinds the store to the full fingerprint.
                self._rebind = True
                stored_emb = self.embedder
            elif version == "1":
                weights = f" nor its weights ({self.legacy_embedder!r})" if self.legacy_embedder else ""
                raise ValueError(
                    f"store_path: {path} is a schema-1 store written with embedder {stored_emb!r}, which "
                    f"matches neither this embedder's fingerprint ({self.embedder!r}){weights}: it was "
                    "written by another model or an older fingerprint recipe; rebuild it with this embedder"
                )
            else:
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

    def _load(self, conn: sqlite3.Connection, path: Path) -> None:
        """Read every row, verifying it; see ``on_damage`` for what a bad row does."""
        # Raw bytes, not str: a flipped byte that breaks UTF-8 is then a damaged row we
        # can name, not a decoding error from deep inside the cursor.
        conn.text_factory = bytes
        try:
            memories = conn.execute(
                f"SELECT seq, {schema.MEMORY_COLUMNS}, checksum FROM memories ORDER BY seq"
            ).fetchall()
            history = conn.execute(
                f"SELECT seq, {schema.HISTORY_COLUMNS}, checksum FROM history ORDER BY seq"
            ).fetchall()
        finally:
            conn.text_factory = str
        parsed: list[tuple[object, object, Memory, np.ndarray]] = []
        for row in memories:
            seq, values, stored = row[0], row[1:-1], row[-1]
            try:
                vector = checked_vector(values, stored)
                if self.dim is None:  # a file without a dim entry: its first row sets it
                    self.dim = int(vector.shape[0])
                memory = memory_from_row(values, vector, self.dim)
            except BadRow as exc:
                self._damaged(path, "memory", seq, values[0], str(exc))
                continue
            parsed.append((seq, values[0], memory, vector))
        # Finite and unit norm, checked on all vectors at once (one row at a time cost
        # more than the rest of the load).
        ok = np.ones(len(parsed), dtype=bool)
        if parsed:
            matrix = np.stack([p[3] for p in parsed]).astype(np.float64)
            finite: np.ndarray = np.asarray(np.isfinite(matrix).all(axis=1))
            norms = np.linalg.norm(np.where(finite[:, None], matrix, 0.0), axis=1)
            ok = finite & ((np.abs(norms - 1.0) <= NORM_TOLERANCE) | (norms == 0.0))
        for good, (seq, raw_id, memory, vector) in zip(ok.tolist(), parsed, strict=True):
            if not good:
                self._damaged(path, "memory", seq, raw_id, check_stored_vector(vector, self.dim) or "bad vector")
                continue
            self._put(memory, vector)
        for row in history:
            seq, values, stored = row[0], row[1:-1], row[-1]
            try:
                entry = entry_from_row(values, stored)
            except BadRow as exc:
                self._history_count += 1  # damaged or not: new ids key on this count (never lower)
                self._damaged(path, "history", seq, values[0], str(exc))
                continue
            self._log(entry)
        self._since_updates()

    def _since_updates(self) -> None:
        """``Memory.valid_since`` of each live memory an UPDATE wrote: that UPDATE's ``at``
        in its history (no column of its own, so no migration: any store reads it back)."""
        for mid, entries in self._history.items():
            mem = self._memories.get(mid)
            if mem is None or mem.superseded_at is not None:
                continue
            last = next((e.at for e in reversed(entries) if e.action == "UPDATE"), None)
            if last is not None:
                self._memories[mid] = mem.replace(valid_since=last)

    def _damaged(self, path: Path, table: str, seq: object, raw_id: object, why: str) -> None:
        mid = raw_id.decode("utf-8", "replace") if isinstance(raw_id, bytes) else repr(raw_id)
        line = f"store_path: {path} is damaged: {table} row {seq} (id {mid[:40]!r}): {why}"
        if self.on_damage == "error":
            raise StoreDamagedError(
                f"{line}; restore a backup, or open it with MemoryEngine(..., on_damage='quarantine') "
                "to set the row aside"
            )
        log.warning("%s; quarantined (left out of every read)", line)
        self.damaged.append(line)
        if table == "memory" and isinstance(raw_id, bytes):
            self._quarantined.add(mid)
    # ---------------------------------------------------------------- writes
    def _check_vector(self, vector: np.ndarray | None) -> np.ndarray | None:
        if vector is None:
            return None
        v = np.array(vector, dtype=np.float32)  # the store's own copy
        if v.ndim != 1:
            v = v.reshape(-1)
        if self.dim is None:
            self.dim = int(v.shape[0])
        elif v.shape[0] != self.dim:
            raise ValueError(f"vector: dim {v.shape[0]} does not match store dim {self.dim}")
        v64 = v.astype(np.float64)
        # check_stored_vector's test in one dot product (what np.linalg.norm computes): a
        # finite sum of squares means every entry is finite. Otherwise its own message.
        sq = float(v64.dot(v64))
        if not (math.isfinite(sq) and (sq == 0.0 or abs(math.sqrt(sq) - 1.0) <= NORM_TOLERANCE)):
            problem = check_stored_vector(v, self.dim)
            if problem is not None:  # what the store would refuse on read, it refuses to write
                raise ValueError(f"vector: {problem}")
        return v

    def apply(self, changes: Sequence[Change]) -> None:
        """Apply ``changes`` as one transaction: all of them, or (on any error) none.

        Everything is validated before the first write. An UPDATE / PIN / DELETE
        of a memory that does not exist or belongs to another user than
        ``change.memory.user_id`` is refused.
        """
        if not changes:
            return
        if self.path is not None and self._conn is None:
            # Closed: the lock is gone and nothing would reach the file; accepting the
            # write would report a memory as stored and lose it.
            raise ValueError(f"store_path: {self.path} is closed; open a new engine to write to it")
        if self._writer is not None and self._writer.pid != os.getpid():
            # fork() copied the store and its lock into this process: a second writer
            # planning against a copy of the parent's view (issue 17's lost updates).
            raise StoreLockedError(
                f"store_path: {self.path} was opened by pid {self._writer.pid}, not this "
                f"process ({os.getpid()}, a fork); one writer per store: write from the process that opened it"
            )
        with self._lock:
            self._apply(changes)

    def _apply(self, changes: Sequence[Change]) -> None:
        staged: dict[str, Memory | None] = {}
        vectors: dict[str, np.ndarray] = {}
        entries: list[HistoryEntry] = []
        moved: set[str] = set()  # un-superseded: the row goes to the end, as a new insert
        retiring: dict[str, int] = {}  # memory id -> its SUPERSEDE entry, awaiting the UPDATE
        now = utcnow()
        for ch in changes:
            mem = ch.memory
            current = staged[mem.id] if mem.id in staged else self._memories.get(mem.id)
            new_content: str | None = None if ch.kind == "DELETE" else mem.content
            if ch.kind in ("ADD", "SUPERSEDE"):
                if current is not None or mem.id in self._quarantined:
                    raise ValueError(f"memory_id: {mem.id} already exists")
                vec = self._check_vector(ch.vector)
                if ch.kind == "SUPERSEDE":
                    vec, new_content = self._retired_vector(mem, vec, staged, vectors), None
                    retiring[str(mem.superseded_by)] = len(entries)
                elif mem.superseded_at is not None or mem.superseded_by is not None:
                    raise ValueError(f"memory_id: {mem.id}: an ADD cannot be superseded (a SUPERSEDE is)")
                if vec is None:
                    raise ValueError("vector: an ADD needs a vector")
                vectors[mem.id] = vec
            else:
                if current is None or current.user_id != mem.user_id:
                    raise ValueError(f"memory_id: {mem.id} not found for user {mem.user_id!r}")
                self._check_transition(ch.kind, current, mem)
                vec = self._check_vector(ch.vector)
                if vec is not None:
                    vectors[mem.id] = vec
                elif ch.kind != "DELETE" and mem.id not in vectors:
                    stored = self.vector(mem.id, mem.user_id)
                    assert stored is not None
                    vectors[mem.id] = stored
                if ch.kind == "UNSUPERSEDE":
                    moved.add(mem.id)
                    new_content = mem.content
                if ch.kind == "UPDATE" and mem.id in retiring:
                    i = retiring.pop(mem.id)
                    entries[i] = dataclasses.replace(entries[i], new_content=mem.content)
            if ch.kind == "DELETE":
                staged[mem.id] = None
            else:  # a Memory is frozen: one that carries its hash is stored as it is
                staged[mem.id] = mem if mem.content_hash else mem.replace(content_hash=content_hash(mem.content))
            old = mem.content if ch.kind == "SUPERSEDE" else ch.old_content
            entries.append(HistoryEntry(mem.id, mem.user_id, ch.kind, old, new_content, ch.at, now))
        if retiring:
            raise ValueError(f"memory_id: {next(iter(retiring))}: a SUPERSEDE needs an UPDATE of it after it")
        if self._conn is not None:
            schema.write(self._conn, self.dim, staged, vectors, entries, moved, self._memories)
        # Only after the commit succeeded do the in-memory views change.
        for mid, new in staged.items():
            old_mem = self._memories.get(mid)
            if new is None:
                if old_mem is not None:
                    self._drop(old_mem)
            else:
                self._put(new, vectors[mid])
        for entry in entries:
            self._log(entry)

    def _retired_vector(
        self, mem: Memory, vec: np.ndarray | None, staged: dict[str, Memory | None], vectors: dict[str, np.ndarray]
    ) -> np.ndarray | None:
        """A SUPERSEDE's checks; its vector (None given: its live memory's at this point)."""
        base_id = mem.superseded_by
        if mem.superseded_at is None or base_id is None:
            raise ValueError(f"memory_id: {mem.id}: a SUPERSEDE needs superseded_at and superseded_by")
        base = staged[base_id] if base_id in staged else self._memories.get(base_id)
        if base is None or base.user_id != mem.user_id or base.superseded_at is not None:
            raise ValueError(f"superseded_by: {base_id} is no live memory of user {mem.user_id!r}")
        if vec is None:
            vec = vectors[base_id] if base_id in vectors else self.vector(base_id, mem.user_id)
        return vec

    def _check_transition(self, kind: str, current: Memory, mem: Memory) -> None:
        """UPDATE / PIN touch live memories only; UNSUPERSEDE revives a superseded one
        whose content no live memory holds (identical content is never stored twice)."""
        if kind == "UNSUPERSEDE":
            if current.superseded_at is None:
                raise ValueError(f"memory_id: {mem.id} is not superseded")
            if mem.superseded_at is not None or mem.superseded_by is not None:
                raise ValueError(f"memory_id: {mem.id}: an UNSUPERSEDE clears superseded_at and superseded_by")
            live = self._hashes.get((mem.user_id, mem.content_hash or content_hash(mem.content)))
            if live is not None:
                raise ValueError(f"memory_id: {mem.id} holds the same content as live memory {live}")
        elif kind in ("UPDATE", "PIN") and (current.superseded_at is not None or mem.superseded_at is not None):
            raise ValueError(f"memory_id: {mem.id} is superseded; unsupersede it before an {kind}")

    # ------------------------------------------------------------- lifetime
    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._writer is not None:
                self._writer.release()  # after the close: the WAL is checkpointed by then
                self._writer = None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

