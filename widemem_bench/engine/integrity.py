"""Integrity checks of a store file: SQLite's own check, a sha256 per row, and the
stored vectors' length, finiteness and norm; and the decoding of a row read as raw bytes.

A row that fails any of these raises ``BadRow`` (its message says why); the store turns
that into a one-line error naming the row, or sets the row aside (``on_damage``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from widemem_bench.engine.memory import HistoryEntry, Memory

# A stored vector is a unit vector (or all-zero: tfidf's "no known term"); float32
# normalisation is off by ~1e-7, so anything past this was not written by an embedder.
NORM_TOLERANCE = 1e-3


class StoreDamagedError(ValueError):
    """A store file, or one of its rows, fails its integrity check."""


class BadRow(Exception):
    """One stored row that cannot be trusted (the message says why)."""


def _text(v: object) -> str:
    if not isinstance(v, bytes):
        raise BadRow(f"expected text, found {type(v).__name__}")
    try:
        return v.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRow("text is not valid UTF-8") from None


def _opt_text(v: object) -> str | None:
    return None if v is None else _text(v)


def _opt_time(v: object) -> dt.datetime | None:
    return None if v is None else _time(v)


def _time(v: object) -> dt.datetime:
    try:
        return _parse(_text(v))
    except ValueError:
        raise BadRow(f"time {v!r} is not an ISO datetime") from None


def _iso(t: dt.datetime) -> str:
    return t.isoformat()


def _parse(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s)


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
    """``row_checksum`` of a memories row (``schema.MEMORY_COLUMNS`` order). A live row (both
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


def verify_file(conn: sqlite3.Connection, path: Path) -> None:
    # integrity_check (not quick_check): it also proves the indexes match the table,
    # which the UNIQUE id and the dedup lookups rely on. ~40 ms per 10,000 memories.
    rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(3)")]
    if rows != ["ok"]:
        found = " ".join("; ".join(rows).replace("*** in database main ***", "").split())
        raise StoreDamagedError(f"store_path: {path} is damaged (SQLite integrity_check: {found[:200]})")


# ---------------------------------------------------------------- rows
# A row is read with text_factory=bytes, so a flipped byte that breaks UTF-8 is a damaged
# row named by the store, not a decoding error from inside the cursor.
def memory_row(mid: str, m: Memory, vector: np.ndarray) -> tuple[object, ...]:
    """The memories row of ``m`` (``schema.MEMORY_COLUMNS`` order), as written and hashed."""
    slot = m.slot or (None, None)
    return (
        mid,
        m.user_id,
        m.content,
        m.content_hash,
        float(m.importance),
        _iso(m.created_at),
        _iso(m.inserted_at),
        _iso(m.updated_at),
        m.ymyl_category,
        slot[0],
        slot[1],
        vector.astype(np.float32).tobytes(),
        None if m.superseded_at is None else _iso(m.superseded_at),
        m.superseded_by,
    )


def history_row(e: HistoryEntry) -> tuple[object, ...]:
    """The history row of ``e`` (``schema.HISTORY_COLUMNS`` order)."""
    return (e.memory_id, e.user_id, e.action, e.old_content, e.new_content, _iso(e.at), _iso(e.logged_at))


def checked_vector(values: Sequence[object], stored: object) -> np.ndarray:
    """The vector of a memories row (``values`` as read, ``stored`` its checksum), once the
    checksum holds and the blob is a float32 array."""
    if _text(stored) != memory_checksum(values):
        raise BadRow("fails its checksum")
    blob = values[11]
    if not isinstance(blob, bytes) or len(blob) % 4:
        raise BadRow("vector is not a float32 array")
    return np.frombuffer(blob, dtype=np.float32).copy()


def memory_from_row(values: Sequence[object], vector: np.ndarray, dim: int) -> Memory:
    """The memory of a row ``checked_vector`` passed; ``dim`` is the store's."""
    (mid, uid, content, chash, imp, created, inserted, updated, ymyl, s_sub, s_att, _blob,
     s_at, s_by) = values
    if vector.shape[0] != dim:
        raise BadRow(f"vector of dim {vector.shape[0]}, store dim {dim}")
    if not isinstance(imp, float | int) or not 0.0 <= float(imp) <= 10.0:
        raise BadRow(f"importance {imp!r} is not a number in 0-10")
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
        raise BadRow("has only one of superseded_at / superseded_by")
    return memory


def entry_from_row(values: Sequence[object], stored: object) -> HistoryEntry:
    if _text(stored) != row_checksum(values):
        raise BadRow("fails its checksum")
    mid, uid, action, old, new, at, logged = values
    return HistoryEntry(_text(mid), _text(uid), _text(action), _opt_text(old), _opt_text(new),
                        _time(at), _time(logged))
