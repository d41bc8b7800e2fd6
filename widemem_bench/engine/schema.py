"""The store file's SQLite side: its tables, how a file is created, recognised as ours
and migrated (schema versions 1-3), and how one transaction is written into it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Container
from pathlib import Path

import numpy as np

from widemem_bench.engine.integrity import (
    StoreDamagedError,
    history_row,
    memory_checksum,
    memory_row,
    row_checksum,
)
from widemem_bench.engine.lock import folder_problem
from widemem_bench.engine.memory import HistoryEntry, Memory

log = logging.getLogger(__name__)

# 2: per-row checksums (issue 17). A version-1 store is migrated on open: its rows are
# checksummed as found, after SQLite's integrity check passed.
# 3: superseded_at / superseded_by columns (issue 26). A live row hashes as in schema 2
# (see ``memory_checksum``), so a version-2 store migrates by adding the two columns and
# keeps every checksum it had, still verified on each open.
SCHEMA_VERSION = 3
MIGRATABLE_VERSIONS = ("1", "2")
# Marks a SQLite file as ours; any other SQLite database is refused, never migrated.
STORE_KIND = "widemem_bench.memory_store"
# The first 16 bytes of every SQLite 3 database file (WAL mode included).
SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA = """
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

MEMORY_COLUMNS = (
    "id, user_id, content, content_hash, importance, created_at, inserted_at, "
    "updated_at, ymyl_category, slot_subject, slot_attribute, vector, superseded_at, superseded_by"
)
HISTORY_COLUMNS = "memory_id, user_id, action, old_content, new_content, at, logged_at"


def check_file(path: Path) -> None:
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



def create(path: Path) -> None:
    """A new store, built in a temp file and renamed: never half-made under its name."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        conn = sqlite3.connect(str(tmp))
        try:
            with conn:
                conn.executescript(SCHEMA)
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("kind", STORE_KIND), ("schema_version", str(SCHEMA_VERSION))],
                )
        finally:
            conn.close()
        os.replace(tmp, path)
    except OSError as exc:
        raise ValueError(f"store_path: {folder_problem(path.parent, exc)}") from None
    except sqlite3.Error as exc:
        raise ValueError(f"store_path: cannot create {path} ({exc})") from None
    finally:
        tmp.unlink(missing_ok=True)


def connect(path: Path) -> sqlite3.Connection:
    try:
        # check_same_thread off: every use goes through self._lock.
        return sqlite3.connect(str(path), check_same_thread=False)
    except sqlite3.Error as exc:
        raise ValueError(f"store_path: cannot open {path} ({exc})") from None


def sqlite_error(path: Path, exc: sqlite3.DatabaseError) -> ValueError:
    msg = " ".join(str(exc).split())[:200]  # one line
    if "not a database" in msg:
        return ValueError(f"store_path: {path} is not a valid store (not a SQLite database)")
    if "readonly" in msg or "read-only" in msg:
        return ValueError(f"store_path: {path} is read-only ({msg})")
    if "unable to open" in msg:
        return ValueError(f"store_path: cannot open {path} ({msg})")
    return StoreDamagedError(f"store_path: {path} is damaged (SQLite: {msg})")


def check_meta(conn: sqlite3.Connection, path: Path, tables: set[str]) -> str:
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


def migrate(conn: sqlite3.Connection, path: Path, version: str, rebind_to: str | None = None) -> None:
    """Schema 1 -> 2 (add and fill the per-row checksums) and 2 -> 3 (add the
    superseded columns), in one transaction. A schema-2 row keeps its checksum:
    ``memory_checksum`` of a live row is the schema-2 hash, verified on every load.
    ``rebind_to``: the embedder fingerprint a legacy-bound schema-1 store is rebound to."""
    conn.execute("BEGIN IMMEDIATE")
    conn.text_factory = bytes  # checksums over the stored bytes, as a load reads them
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
            mems = conn.execute(f"SELECT seq, {MEMORY_COLUMNS} FROM memories").fetchall()
            conn.executemany(
                "UPDATE memories SET checksum = ? WHERE seq = ?",
                [(memory_checksum(r[1:]), r[0]) for r in mems],
            )
            hist = conn.execute(f"SELECT seq, {HISTORY_COLUMNS} FROM history").fetchall()
            conn.executemany(
                "UPDATE history SET checksum = ? WHERE seq = ?",
                [(row_checksum(r[1:]), r[0]) for r in hist],
            )
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        if rebind_to is not None:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (rebind_to,))
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.text_factory = str
    log.info("memory store %s: migrated schema %s -> %d (%d memories checksummed)",
             path, version, SCHEMA_VERSION, len(mems))


def write(
    conn: sqlite3.Connection,
    dim: int | None,
    staged: dict[str, Memory | None],
    vectors: dict[str, np.ndarray],
    entries: list[HistoryEntry],
    moved: set[str],
    stored: Container[str],
) -> None:
    """One store transaction as one SQLite transaction: ``staged`` (None: deleted),
    their ``vectors``, the history ``entries``; ``moved`` rows go to the end (an
    unsupersede), and an id in ``stored`` is updated in place."""
    with conn:
        if dim is not None:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('dim', ?)", (str(dim),))
        for mid, new in staged.items():
            if new is None:
                conn.execute("DELETE FROM memories WHERE id = ?", (mid,))
                continue
            row = memory_row(mid, new, vectors[mid])
            checksum = memory_checksum(row)
            if mid in moved:
                # Back among the live memories at the end, where the in-memory index put
                # it: a new row (a new seq), so the order survives a reopen.
                conn.execute("DELETE FROM memories WHERE id = ?", (mid,))
            if mid in stored and mid not in moved:
                # UPDATE in place keeps the row's seq, so insertion order survives a reopen.
                conn.execute(
                    "UPDATE memories SET user_id=?, content=?, content_hash=?, importance=?, "
                    "created_at=?, inserted_at=?, updated_at=?, ymyl_category=?, "
                    "slot_subject=?, slot_attribute=?, vector=?, superseded_at=?, superseded_by=?, "
                    "checksum=? WHERE id=?",
                    (*row[1:], checksum, mid),
                )
            else:
                conn.execute(
                    f"INSERT INTO memories ({MEMORY_COLUMNS}, checksum) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*row, checksum),
                )
        rows = [history_row(e) for e in entries]
        conn.executemany(
            f"INSERT INTO history ({HISTORY_COLUMNS}, checksum) VALUES (?,?,?,?,?,?,?,?)",
            [(*r, row_checksum(r)) for r in rows],
        )

