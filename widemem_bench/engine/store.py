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
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import hashlib
import logging
import math
import os
import socket
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from widemem_bench.engine import scoring

try:  # POSIX; elsewhere the single-writer rule is not enforced (documented)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

# 2: per-row checksums (issue 17). A version-1 store is migrated on open: its rows are
# checksummed as found, after SQLite's integrity check passed.
# 3: superseded_at / superseded_by columns (issue 26). A live row hashes as in schema 2
# (see ``memory_checksum``), so a version-2 store migrates by adding the two columns and
# keeps every checksum it had, still verified on each open.
SCHEMA_VERSION = 3
MIGRATABLE_VERSIONS = ("1", "2")
# A stored vector is a unit vector (or all-zero: tfidf's "no known term"); float32
# normalisation is off by ~1e-7, so anything past this was not written by an embedder.
NORM_TOLERANCE = 1e-3
OnDamage = Literal["error", "quarantine"]
# Marks a SQLite file as ours; any other SQLite database is refused, never migrated.
STORE_KIND = "widemem_bench.memory_store"
# The first 16 bytes of every SQLite 3 database file (WAL mode included).
SQLITE_MAGIC = b"SQLite format 3\x00"

Action = Literal["ADD", "UPDATE", "DELETE", "PIN", "NONE"]
LOGGED_ACTIONS = ("ADD", "UPDATE", "DELETE", "PIN", "SUPERSEDE", "UNSUPERSEDE")
# Logged beside the UPDATE that retires a version, so not counted in ``history_count``
# (which seeds new ids): keeping versions leaves every id an add makes unchanged.
UNCOUNTED_ACTIONS = frozenset({"SUPERSEDE"})


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
    ``superseded_by`` (the id of the memory that holds the new content); its
    validity interval is [``valid_from``, ``valid_to``) = [created_at, superseded_at).
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

    def replace(self, **changes: object) -> Memory:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @property
    def superseded(self) -> bool:
        return self.superseded_at is not None

    @property
    def valid_from(self) -> dt.datetime:
        return self.created_at

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


def _iso(t: dt.datetime) -> str:
    return t.isoformat()


def _parse(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s)


class _BadRow(Exception):
    """One stored row that cannot be trusted (the message says why)."""


def _text(v: object) -> str:
    if not isinstance(v, bytes):
        raise _BadRow(f"expected text, found {type(v).__name__}")
    try:
        return v.decode("utf-8")
    except UnicodeDecodeError:
        raise _BadRow("text is not valid UTF-8") from None


def _opt_text(v: object) -> str | None:
    return None if v is None else _text(v)


def _opt_time(v: object) -> dt.datetime | None:
    return None if v is None else _time(v)


def _time(v: object) -> dt.datetime:
    try:
        return _parse(_text(v))
    except ValueError:
        raise _BadRow(f"time {v!r} is not an ISO datetime") from None


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


def importance01(importance: float) -> float:
    """``np.clip(importance, 0, 10) / 10``, the importance term of a score, as one float
    (in range it is the plain division numpy does; anything else goes through numpy)."""
    return float(scoring.importance01(float(importance)))  # the one formula


class Hits:
    """The nearest memories of one user, nearest first, with what a search scores by.

    ``sims`` are the float32 cosines widened to float64; ``importance01`` is
    ``importance01(m.importance)`` per hit; ``created_us`` / ``inserted_us`` are
    ``epoch_us`` of the hits' times, None when some memory of the user has none.
    """

    __slots__ = ("_columns", "_exact_times", "importance01", "memories", "sims")

    def __init__(self, memories: list[Memory], sims: np.ndarray, columns: np.ndarray, exact_times: bool) -> None:
        self.memories = memories
        self.sims = sims
        self.importance01 = columns[0]
        self._columns = columns
        self._exact_times = exact_times

    @property
    def created_us(self) -> np.ndarray | None:
        return self._columns[1] if self._exact_times else None

    @property
    def inserted_us(self) -> np.ndarray | None:
        return self._columns[2] if self._exact_times else None


class _UserIndex:
    """Vectors of one user, in insertion order, stacked lazily into one matrix, and
    the columns a search scores by beside it (see ``Hits``)."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}
        self.columns: dict[str, tuple[float, float | None, float | None]] = {}
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        # Rows live in buffers that grow by doubling, so an add appends one row
        # instead of restacking every vector of the user (quadratic over a long
        # ingest: 3,000 adds of one user took 17 s; perf benchmark, issue 9).
        self._buf: np.ndarray | None = None  # None = rebuild from `vectors` on next read
        self._cols = np.zeros((3, 0), dtype=np.float64)  # one row per column: gathers are cheap
        self.odd = 0  # memories without column times (see epoch_us)

    def put(self, memory: Memory, vector: np.ndarray) -> None:
        # dict keeps the original insertion position on update, matching SQLite rowid order.
        memory_id = memory.id
        self.vectors[memory_id] = vector
        col = (importance01(memory.importance), epoch_us(memory.created_at), epoch_us(memory.inserted_at))
        old = self.columns.get(memory_id)
        self.odd += _odd(col) - (old is not None and _odd(old))
        self.columns[memory_id] = col
        if self._buf is None:
            return
        row = self._rows.get(memory_id)
        if row is None:
            row = len(self._ids)
            if row == self._buf.shape[0]:
                self._grow(max(2 * row, 16))
            self._rows[memory_id] = row
            self._ids.append(memory_id)
        self._buf[row] = vector  # an update stays in place: same position
        self._cols[:, row] = _col_row(col)

    def _grow(self, size: int) -> None:
        assert self._buf is not None
        n = len(self._ids)
        grown = np.zeros((size, self._buf.shape[1]), dtype=np.float32)
        grown[:n] = self._buf[:n]
        self._buf = grown
        cols = np.zeros((3, size), dtype=np.float64)
        cols[:, :n] = self._cols[:, :n]
        self._cols = cols

    def drop(self, memory_id: str) -> None:
        self.vectors.pop(memory_id, None)
        old = self.columns.pop(memory_id, None)
        self.odd -= old is not None and _odd(old)
        self._buf = None  # rows shift: rebuild on the next read

    def matrix(self, dim: int) -> tuple[list[str], np.ndarray]:
        if self._buf is None:
            self._ids = list(self.vectors)
            self._rows = {m: i for i, m in enumerate(self._ids)}
            size = max(len(self._ids), 16)
            self._buf = np.zeros((size, dim), dtype=np.float32)
            self._cols = np.zeros((3, size), dtype=np.float64)
            if self._ids:
                self._buf[: len(self._ids)] = np.stack([self.vectors[i] for i in self._ids])
                self._cols[:, : len(self._ids)] = np.array([_col_row(self.columns[i]) for i in self._ids]).T
        return self._ids, self._buf[: len(self._ids)]

    def gather(self, order: np.ndarray) -> np.ndarray:
        """The columns of the rows ``order`` of ``matrix``, one (3, k) array."""
        return self._cols.take(order, axis=1)


def _odd(col: tuple[float, float | None, float | None]) -> bool:
    return col[1] is None or col[2] is None


def _col_row(col: tuple[float, float | None, float | None]) -> tuple[float, float, float]:
    return (col[0], 0.0 if col[1] is None else col[1], 0.0 if col[2] is None else col[2])


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
    vector BLOB NOT NULL,
    checksum TEXT NOT NULL,
    superseded_at TEXT,
    superseded_by TEXT
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
    logged_at TEXT NOT NULL,
    checksum TEXT NOT NULL
);
CREATE INDEX history_memory ON history (memory_id);
"""

_MEMORY_COLUMNS = (
    "id, user_id, content, content_hash, importance, created_at, inserted_at, "
    "updated_at, ymyl_category, slot_subject, slot_attribute, vector, superseded_at, superseded_by"
)
_HISTORY_COLUMNS = "memory_id, user_id, action, old_content, new_content, at, logged_at"


class StoreDamagedError(ValueError):
    """A store file, or one of its rows, fails its integrity check."""


class StoreLockedError(ValueError):
    """Another engine (this process or another) holds the store's writer lock."""


_PACK_DOUBLE = struct.Struct("<d").pack


def row_checksum(values: Sequence[object]) -> str:
    """sha256 over one row's fields, each tagged with its type and length-prefixed, so a
    NULL, a changed type or bytes moved between two fields never hash alike."""
    parts: list[bytes] = []
    for v in values:
        if isinstance(v, bytes):
            parts += (b"B", len(v).to_bytes(8, "little"), v)
        elif isinstance(v, str):
            data = v.encode("utf-8")
            parts += (b"B", len(data).to_bytes(8, "little"), data)
        elif v is None:
            parts.append(b"N")
        elif isinstance(v, float | int) and not isinstance(v, bool):
            parts.append(b"F" + _PACK_DOUBLE(float(v)))
        else:
            raise TypeError(f"row_checksum: unsupported field type {type(v).__name__}")
    return hashlib.sha256(b"".join(parts)).hexdigest()


def memory_checksum(values: Sequence[object]) -> str:
    """``row_checksum`` of a memories row (``_MEMORY_COLUMNS`` order). A live row (both
    superseded fields NULL) hashes its first twelve fields, as schema 2 did; a superseded
    row hashes all fourteen. Both ways every field is covered: NULLing the pair of a
    superseded row, or setting it on a live one, changes what is hashed."""
    if values[-2] is None and values[-1] is None:
        return row_checksum(values[:-2])
    return row_checksum(values)


def check_stored_vector(vector: np.ndarray, dim: int | None) -> str | None:
    """Why ``vector`` cannot be a stored embedding (wrong length, NaN/inf, not unit norm), or None."""
    if dim is not None and vector.shape[0] != dim:
        return f"vector of dim {vector.shape[0]}, store dim {dim}"
    if not np.all(np.isfinite(vector)):
        return "vector contains NaN or inf"
    norm = float(np.linalg.norm(vector.astype(np.float64)))
    if norm != 0.0 and abs(norm - 1.0) > NORM_TOLERANCE:
        return f"vector norm {norm:.6g} is not 1"
    return None


class _WriterLock:
    """An exclusive ``flock`` on ``<store>.lock``: one writer per store file.

    The kernel drops the lock when its holder dies, so a killed process never leaves a
    stale lock. flock locks belong to an open file description: a second engine in the
    same process is refused just like another process.
    """

    def __init__(self, store: Path) -> None:
        # The lock sits beside the file the path resolves to: a symlink (or another
        # spelling of the path) to an open store must meet the same lock.
        real = Path(os.path.realpath(store))
        self.path = real.with_name(real.name + ".lock")
        self._fd: int | None = None
        self.created = False  # this open made the lock file (a refused open removes it)
        # A forked child inherits the fd (and so the lock); it must neither write nor
        # unlock the parent's store (see MemoryStore.apply).
        self.pid = os.getpid()
        if fcntl is None:  # pragma: no cover
            return
        for _ in range(10):  # retried only while a refused open removes the file under us
            fd, self.created = self._open_file(store)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise ValueError(f"store_path: cannot lock {self.path} ({exc.strerror})") from None
                raise StoreLockedError(
                    f"store_path: {store} is open in another engine ({holder}); "
                    "one writer per store: close that engine first"
                ) from None
            # Locked, but is it still the file at self.path? A refused open unlinks its
            # lock file while holding it; a lock on the unlinked file guards nothing.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        else:  # pragma: no cover - ten opens each refused and removed in between
            raise StoreLockedError(f"store_path: {store}: its lock file {self.path} keeps being replaced")
        os.ftruncate(fd, 0)
        stamp = utcnow().isoformat(timespec="seconds")
        os.pwrite(fd, f"pid {os.getpid()} on host {socket.gethostname()} since {stamp}Z\n".encode(), 0)
        self._fd = fd

    def _open_file(self, store: Path) -> tuple[int, bool]:
        """The lock file's fd, and whether this call created the file."""
        while True:
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644), True
            except FileExistsError:
                pass
            except OSError as exc:
                problem = _folder_problem(store.parent, exc)
                raise ValueError(f"store_path: {problem} (lock file {self.path})") from None
            try:
                return os.open(self.path, os.O_RDWR), False
            except FileNotFoundError:
                continue  # removed in between: create it
            except OSError as exc:
                if exc.errno == errno.EROFS:
                    raise ValueError(f"store_path: {_folder_problem(store.parent, exc)}") from None
                raise ValueError(f"store_path: cannot open lock file {self.path} ({exc.strerror})") from None

    def __del__(self) -> None:  # an engine dropped without close() frees its store
        self.release()

    def discard(self) -> None:
        """Release after a refused open, removing the lock file if this open created it.
        Unlinked while still held, so no other open can be holding it; an open that
        already has it open re-checks the path after locking (see ``__init__``)."""
        if self._fd is not None and self.created and self.pid == os.getpid():
            self.path.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        fd = getattr(self, "_fd", None)  # None too when __init__ failed half-way
        self._fd = None
        if fd is not None and getattr(self, "pid", None) != os.getpid():
            os.close(fd)  # a forked child's copy: unlocking would free the parent's lock
            return
        if fd is not None and fcntl is not None:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _folder_problem(folder: Path, exc: OSError) -> str:
    """One phrase saying why ``folder`` cannot take the store's files."""
    if exc.errno == errno.EROFS:
        return f"folder {folder} is on a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to write in folder {folder}"
    if exc.errno == errno.ENOENT:
        return f"folder {folder} does not exist"
    return f"cannot write in folder {folder} ({exc.strerror})"


class MemoryStore:
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
        self.dim = dim
        self.embedder = embedder
        self.on_damage = on_damage
        # The binding schema-1 stores were written with (``name:weights_sha256``, before
        # fingerprints covered every vector-shaping file); accepted only while migrating.
        self.legacy_embedder = legacy_embedder
        self._rebind = False  # the migration rewrites a legacy binding to ``embedder``
        self.damaged: list[str] = []  # one line per quarantined row
        self._quarantined: set[str] = set()
        self._memories: dict[str, Memory] = {}  # live and superseded
        self._users: dict[str, _UserIndex] = {}  # live memories: what searches read
        self._past: dict[str, _UserIndex] = {}  # superseded memories, per user
        self._hashes: dict[tuple[str, str], str] = {}
        self._history: dict[str, list[HistoryEntry]] = {}
        self._history_count = 0
        self._conn: sqlite3.Connection | None = None
        self._writer: _WriterLock | None = None
        self._lock = threading.RLock()
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
        self._writer = _WriterLock(path)
        try:
            self._check_file(path)
            if not path.exists():
                self._create(path)
            conn = self._connect(path)
            try:
                self._verify_file(conn, path)
                tables = {
                    r[0]
                    for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                    if not r[0].startswith("sqlite_")
                }
                version = self._check_meta(conn, path, tables)
                # Bound to this dim / embedder before anything is written: a refused open
                # (another embedder) must leave a schema-1 file as it found it.
                self._bind(conn, path, version)
                if version != str(SCHEMA_VERSION):
                    self._migrate(conn, path, version)
                # WAL + synchronous=NORMAL: every transaction is still atomic (a crash
                # leaves it all or nothing), but a commit costs no fsync; only a power
                # loss can drop the last few committed writes. 25 ms -> <1 ms per add.
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                self._load(conn, path)
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise self._sqlite_error(path, exc) from None
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        except BaseException:
            self._writer.discard()  # a refused open leaves no lock file of its own behind
            self._writer = None
            raise

    @staticmethod
    def _check_file(path: Path) -> None:
        """Refuse, with the reason, a file the store could not use (before SQLite sees it)."""
        if not path.exists():
            return
        if not os.access(path, os.R_OK):
            raise ValueError(f"store_path: no permission to read {path}")
        if not os.access(path, os.W_OK):
            raise ValueError(f"store_path: {path} is read-only (no write permission)")
        if path.stat().st_size == 0:
            # SQLite would silently treat it as a new empty database; our stores are
            # created whole (temp file + rename), so an empty file is a loss, not a start.
            raise ValueError(
                f"store_path: {path} is an empty (0-byte) file, not a store; "
                "delete it to start a new store"
            )
        with path.open("rb") as fh:
            # SQLite reads a file shorter than its header as an empty database.
            if fh.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                raise ValueError(f"store_path: {path} is not a valid store (not a SQLite database)")
        for stale in path.parent.glob(f".{path.name}.tmp-*"):
            stale.unlink(missing_ok=True)  # a creation killed half-way (we hold the lock)

    @staticmethod
    def _create(path: Path) -> None:
        """A new store, built in a temp file and renamed: never half-made under its name."""
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        try:
            conn = sqlite3.connect(str(tmp))
            try:
                with conn:
                    conn.executescript(_SCHEMA)
                    conn.executemany(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        [("kind", STORE_KIND), ("schema_version", str(SCHEMA_VERSION))],
                    )
            finally:
                conn.close()
            os.replace(tmp, path)
        except OSError as exc:
            raise ValueError(f"store_path: {_folder_problem(path.parent, exc)}") from None
        except sqlite3.Error as exc:
            raise ValueError(f"store_path: cannot create {path} ({exc})") from None
        finally:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        try:
            # check_same_thread off: every use goes through self._lock.
            return sqlite3.connect(str(path), check_same_thread=False)
        except sqlite3.Error as exc:
            raise ValueError(f"store_path: cannot open {path} ({exc})") from None

    @staticmethod
    def _sqlite_error(path: Path, exc: sqlite3.DatabaseError) -> ValueError:
        msg = " ".join(str(exc).split())[:200]  # one line
        if "not a database" in msg:
            return ValueError(f"store_path: {path} is not a valid store (not a SQLite database)")
        if "readonly" in msg or "read-only" in msg:
            return ValueError(f"store_path: {path} is read-only ({msg})")
        if "unable to open" in msg:
            return ValueError(f"store_path: cannot open {path} ({msg})")
        return StoreDamagedError(f"store_path: {path} is damaged (SQLite: {msg})")

    @staticmethod
    def _verify_file(conn: sqlite3.Connection, path: Path) -> None:
        # integrity_check (not quick_check): it also proves the indexes match the table,
        # which the UNIQUE id and the dedup lookups rely on. ~40 ms per 10,000 memories.
        rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(3)")]
        if rows != ["ok"]:
            found = " ".join("; ".join(rows).replace("*** in database main ***", "").split())
            raise StoreDamagedError(f"store_path: {path} is damaged (SQLite integrity_check: {found[:200]})")

    @staticmethod
    def _check_meta(conn: sqlite3.Connection, path: Path, tables: set[str]) -> str:
        """The store's schema version, once it is proven ours and readable by this code."""
        if not {"meta", "memories", "history"} <= tables:
            raise ValueError(f"store_path: {path} is a SQLite file but not a widemem_bench store")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("kind") != STORE_KIND:
            raise ValueError(f"store_path: {path} is a SQLite file but not a widemem_bench store")
        version = meta.get("schema_version")
        if version != str(SCHEMA_VERSION) and version not in MIGRATABLE_VERSIONS:
            raise ValueError(
                f"store_path: {path} has schema_version {version}, this code reads "
                f"{SCHEMA_VERSION} (and migrates {', '.join(MIGRATABLE_VERSIONS)})"
            )
        return str(version)

    def _migrate(self, conn: sqlite3.Connection, path: Path, version: str) -> None:
        """Schema 1 -> 2 (add and fill the per-row checksums) and 2 -> 3 (add the
        superseded columns), in one transaction. A schema-2 row keeps its checksum:
        ``memory_checksum`` of a live row is the schema-2 hash, verified by ``_load``."""
        conn.execute("BEGIN IMMEDIATE")
        conn.text_factory = bytes  # checksums over the stored bytes, as _load reads them
        mems: list[tuple[object, ...]] = []
        try:
            if version == "1":
                for table in ("memories", "history"):
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN checksum TEXT NOT NULL DEFAULT ''")
            have = {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
            for column in ("superseded_at", "superseded_by"):
                if column.encode() not in have and column not in have:  # a hand-made old file may have them
                    conn.execute(f"ALTER TABLE memories ADD COLUMN {column} TEXT")
            if version == "1":
                mems = conn.execute(f"SELECT seq, {_MEMORY_COLUMNS} FROM memories").fetchall()
                conn.executemany(
                    "UPDATE memories SET checksum = ? WHERE seq = ?",
                    [(memory_checksum(r[1:]), r[0]) for r in mems],
                )
                hist = conn.execute(f"SELECT seq, {_HISTORY_COLUMNS} FROM history").fetchall()
                conn.executemany(
                    "UPDATE history SET checksum = ? WHERE seq = ?",
                    [(row_checksum(r[1:]), r[0]) for r in hist],
                )
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
            if self._rebind:
                conn.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (self.embedder,))
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.text_factory = str
        log.info("memory store %s: migrated schema %s -> %d (%d memories checksummed)",
                 path, version, SCHEMA_VERSION, len(mems))

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
                f"SELECT seq, {_MEMORY_COLUMNS}, checksum FROM memories ORDER BY seq"
            ).fetchall()
            history = conn.execute(
                f"SELECT seq, {_HISTORY_COLUMNS}, checksum FROM history ORDER BY seq"
            ).fetchall()
        finally:
            conn.text_factory = str
        parsed: list[tuple[object, object, Memory, np.ndarray]] = []
        for row in memories:
            seq, values, stored = row[0], row[1:-1], row[-1]
            try:
                memory, vector = self._memory_from_row(values, stored)
            except _BadRow as exc:
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
                entry = self._entry_from_row(values, stored)
            except _BadRow as exc:
                self._history_count += 1  # damaged or not: new ids key on this count (never lower)
                self._damaged(path, "history", seq, values[0], str(exc))
                continue
            self._log(entry)

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

    def _memory_from_row(self, values: Sequence[object], stored: object) -> tuple[Memory, np.ndarray]:
        if _text(stored) != memory_checksum(values):
            raise _BadRow("fails its checksum")
        (mid, uid, content, chash, imp, created, inserted, updated, ymyl, s_sub, s_att, blob,
         s_at, s_by) = values
        if not isinstance(blob, bytes) or len(blob) % 4:
            raise _BadRow("vector is not a float32 array")
        vector = np.frombuffer(blob, dtype=np.float32).copy()
        if self.dim is None:  # a file without a dim entry: its first row sets it
            self.dim = int(vector.shape[0])
        if vector.shape[0] != self.dim:
            raise _BadRow(f"vector of dim {vector.shape[0]}, store dim {self.dim}")
        if not isinstance(imp, float | int) or not 0.0 <= float(imp) <= 10.0:
            raise _BadRow(f"importance {imp!r} is not a number in 0-10")
        slot_sub, slot_att = _opt_text(s_sub), _opt_text(s_att)
        memory = Memory(
            id=_text(mid),
            user_id=_text(uid),
            content=_text(content),
            importance=float(imp),
            created_at=_time(created),
            inserted_at=_time(inserted),
            updated_at=_time(updated),
            ymyl_category=_opt_text(ymyl),
            slot=(slot_sub, slot_att) if slot_sub is not None and slot_att is not None else None,
            content_hash=_text(chash),
            superseded_at=_opt_time(s_at),
            superseded_by=_opt_text(s_by),
        )
        if (memory.superseded_at is None) != (memory.superseded_by is None):
            raise _BadRow("has only one of superseded_at / superseded_by")
        return memory, vector

    @staticmethod
    def _entry_from_row(values: Sequence[object], stored: object) -> HistoryEntry:
        if _text(stored) != row_checksum(values):
            raise _BadRow("fails its checksum")
        mid, uid, action, old, new, at, logged = values
        return HistoryEntry(_text(mid), _text(uid), _text(action), _opt_text(old), _opt_text(new),
                            _time(at), _time(logged))

    # ----------------------------------------------------------------- reads
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
        ``include_superseded``, superseded ones too).

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

        With ``include_superseded`` the live and the superseded memories are ranked
        together; a tie puts the live one first."""
        with self._lock:
            found = self._nearest(self._users, user_id, query, k)
            past = self._nearest(self._past, user_id, query, k) if include_superseded else None
            if past is None:
                if found is None:
                    return None
                index, memories, sims, order = found
                return Hits(memories, sims, index.gather(order), not index.odd)
            parts = [f for f in (found, past) if f is not None]
            memories = [m for f in parts for m in f[1]]
            sims = np.concatenate([f[2] for f in parts])
            cols = np.concatenate([f[0].gather(f[3]) for f in parts], axis=1)
            keep = (-sims).argsort(kind="stable")[:k]
            exact = not any(f[0].odd for f in parts)
            return Hits([memories[i] for i in keep.tolist()], sims[keep], cols[:, keep], exact)

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
            self._write_sqlite(staged, vectors, entries, moved)
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

    def _write_sqlite(
        self,
        staged: dict[str, Memory | None],
        vectors: dict[str, np.ndarray],
        entries: list[HistoryEntry],
        moved: set[str],
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
                values: tuple[object, ...] = (
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
                    None if new.superseded_at is None else _iso(new.superseded_at),
                    new.superseded_by,
                )
                checksum = memory_checksum((mid, *values))
                if mid in moved:
                    # Back among the live memories at the end, where the in-memory index put
                    # it: a new row (a new seq), so the order survives a reopen.
                    conn.execute("DELETE FROM memories WHERE id = ?", (mid,))
                if mid in self._memories and mid not in moved:
                    # UPDATE in place keeps the row's seq, so insertion order survives a reopen.
                    conn.execute(
                        "UPDATE memories SET user_id=?, content=?, content_hash=?, importance=?, "
                        "created_at=?, inserted_at=?, updated_at=?, ymyl_category=?, "
                        "slot_subject=?, slot_attribute=?, vector=?, superseded_at=?, superseded_by=?, "
                        "checksum=? WHERE id=?",
                        (*values, checksum, mid),
                    )
                else:
                    conn.execute(
                        f"INSERT INTO memories ({_MEMORY_COLUMNS}, checksum) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (mid, *values, checksum),
                    )
            rows = [
                (e.memory_id, e.user_id, e.action, e.old_content, e.new_content, _iso(e.at),
                 _iso(e.logged_at))
                for e in entries
            ]
            conn.executemany(
                f"INSERT INTO history ({_HISTORY_COLUMNS}, checksum) VALUES (?,?,?,?,?,?,?,?)",
                [(*r, row_checksum(r)) for r in rows],
            )

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

    def __iter__(self) -> Iterator[Memory]:
        return iter(list(self._memories.values()))
