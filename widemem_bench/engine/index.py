"""The per-user vector index a search reads: vectors stacked into one matrix, with the
columns a search scores by (importance, created and inserted times) beside it.
"""

from __future__ import annotations

import numpy as np

from widemem_bench.engine.memory import Memory, epoch_us, importance01


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

