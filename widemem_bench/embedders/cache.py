"""Content-addressed embedding cache on disk.

Layout: ``<root>/embeddings/<model name>/<fingerprint[:16]>/<kind>/shard-*.npz``. A bucket
(one model, weights fingerprint and text kind) is a set of append-only shard files; each
shard holds three numpy arrays:

- ``keys``: (n, 32) uint8, sha256 of ``model name, fingerprint, kind, text``;
- ``vectors``: (n, dim) float32, the L2-normalised rows;
- ``checksum``: (32,) uint8, sha256 over the shape and the bytes of the other two.

A bucket is read once into a dict (key -> row view, no copy) the first time it is used;
new rows go to a new shard written atomically (temp file in the same folder, fsync,
``os.replace``), so a crash never leaves a half-written shard under a real name and
parallel writers never clobber each other. Files are read with ``allow_pickle=False``:
nothing but plain arrays is ever stored. A shard that fails to load or whose checksum
does not match is reported in one warning line, deleted, and its rows are simply
recomputed by the caller; wrong vectors are never returned. Each row is checked too when
read (finite, unit norm or all-zero): the checksum proves the file is what its writer
wrote, the row check that the writer wrote an embedding. A bad row is left out (one
warning per shard) and recomputed; ``put`` refuses such rows in the first place.
Temp files older than ``STALE_TEMP_SECONDS`` (left by a killed writer) are removed when
their bucket is opened.

The cache serves a row to every later run, so a row must be the same whichever run
computed it first: per-text rows (the default, ``base.BaseEmbedder.encode``) are computed
one text per model call on one intra-op thread, a function of the text alone; shared-batch
rows depend on their batch-mates and live under their own keys (``base.PER_TEXT_TAG``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

KEY_BYTES = 32
# Many small encode() calls (one per engine.add) would leave many tiny shards; past this
# count a bucket is merged into one shard so loading stays one file read per bucket.
MAX_SHARDS = 64
# The rows the embedders write are L2-normalised float32 (error ~1e-7) or all-zero.
NORM_TOLERANCE = 1e-3
# A temp file this old cannot belong to a live writer (one shard takes well under a
# second to write); younger ones may, and are left alone.
STALE_TEMP_SECONDS = 3600.0


def remove_stale_temps(folder: Path, max_age: float = STALE_TEMP_SECONDS) -> int:
    """Delete ``.tmp-*`` files and folders in ``folder`` older than ``max_age`` seconds
    (what a killed write leaves behind); returns how many were removed."""
    if not folder.is_dir():
        return 0
    removed = 0
    cutoff = time.time() - max_age
    for path in folder.glob(".tmp-*"):
        try:
            if path.lstat().st_mtime > cutoff:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed += 1
        except OSError:
            continue  # removed by another process meanwhile
    if removed:
        log.info("embedding cache: removed %d stale temp file(s) in %s", removed, folder)
    return removed


def bad_rows(vectors: np.ndarray) -> np.ndarray:
    """Boolean mask of rows that are not embeddings: NaN/inf, or neither unit nor zero norm."""
    finite = np.isfinite(vectors).all(axis=1)
    norms = np.linalg.norm(np.where(finite[:, None], vectors, 0).astype(np.float64), axis=1)
    unit = (np.abs(norms - 1.0) <= NORM_TOLERANCE) | (norms == 0.0)
    return ~(finite & unit)


def default_cache_dir() -> Path:
    """``$WIDEMEM_BENCH_CACHE``, else ``$XDG_CACHE_HOME/widemem_bench``, else ``~/.cache/widemem_bench``."""
    env = os.environ.get("WIDEMEM_BENCH_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "widemem_bench"


def text_key(model: str, fingerprint: str, kind: str, text: str) -> bytes:
    """32-byte content address of one embedding."""
    h = hashlib.sha256()
    for part in (model, fingerprint, kind, text):
        data = part.encode("utf-8")
        # length-prefixed, so ("ab", "c") and ("a", "bc") never collide
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


def _checksum(keys: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    h = hashlib.sha256()
    h.update(np.asarray(vectors.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(keys).tobytes())
    h.update(np.ascontiguousarray(vectors).tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8).copy()


class ShardError(Exception):
    """A shard file that cannot be trusted."""


def read_shard(path: Path, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Load and validate one shard; raise ShardError when it is damaged."""
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = np.asarray(data["keys"])
            vectors = np.asarray(data["vectors"])
            stored = np.asarray(data["checksum"])
    except FileNotFoundError:
        raise
    except Exception as exc:  # zipfile/numpy raise many types for truncated or garbled files
        raise ShardError(f"unreadable ({type(exc).__name__})") from exc
    if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != KEY_BYTES:
        raise ShardError(f"bad keys array {keys.dtype}{keys.shape}")
    if vectors.dtype != np.float32 or vectors.shape != (keys.shape[0], dim):
        raise ShardError(f"bad vectors array {vectors.dtype}{vectors.shape}, expected dim {dim}")
    if stored.shape != (KEY_BYTES,) or not np.array_equal(stored, _checksum(keys, vectors)):
        raise ShardError("checksum mismatch")
    return keys, vectors


def write_shard(folder: Path, keys: np.ndarray, vectors: np.ndarray) -> Path:
    """Write one shard atomically; return its final path."""
    folder.mkdir(parents=True, exist_ok=True)
    keys = np.ascontiguousarray(keys, dtype=np.uint8)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    name = f"shard-{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}.npz"
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, keys=keys, vectors=vectors, checksum=_checksum(keys, vectors))
            fh.flush()
            os.fsync(fh.fileno())
        final = folder / name
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return final


class CacheBucket:
    """All cached rows of one (model, fingerprint, kind), loaded once into a dict."""

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        self._rows: dict[bytes, np.ndarray] = {}
        self._shards: list[Path] = []
        self.corrupt_files = 0
        self.bad_rows = 0  # rows left out of valid shards (see bad_rows)
        self.stale_temps = 0
        self._load()

    def _load(self) -> None:
        if not self.folder.is_dir():
            return
        self.stale_temps = remove_stale_temps(self.folder)
        for path in sorted(self.folder.glob("shard-*.npz")):
            try:
                keys, vectors = read_shard(path, self.dim)
            except FileNotFoundError:
                continue  # removed by another process's compaction between glob and read
            except ShardError as exc:
                self.corrupt_files += 1
                log.warning(
                    "embedding cache: dropped damaged file %s (%s); its rows will be recomputed",
                    path,
                    exc,
                )
                path.unlink(missing_ok=True)
                continue
            bad = bad_rows(vectors)
            if bad.any():
                self.bad_rows += int(bad.sum())
                log.warning(
                    "embedding cache: %s holds %d row(s) that are not unit vectors "
                    "(NaN, inf or wrong norm); they will be recomputed",
                    path,
                    int(bad.sum()),
                )
                keys, vectors = keys[~bad], vectors[~bad]
            self._index(keys, vectors)
            self._shards.append(path)

    def _index(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        raw = keys.tobytes()
        for i in range(keys.shape[0]):
            self._rows[raw[i * KEY_BYTES : (i + 1) * KEY_BYTES]] = vectors[i]

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: bytes) -> np.ndarray | None:
        return self._rows.get(key)

    def put(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store new rows (one new shard), then compact if there are too many shards."""
        if len(keys) == 0:
            return
        if vectors.shape != (len(keys), self.dim):
            raise ValueError(
                f"vectors shape {vectors.shape} does not match {len(keys)} keys x dim {self.dim}"
            )
        karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        bad = bad_rows(vectors)
        if bad.any():
            raise ValueError(
                f"vectors: {int(bad.sum())} of {len(keys)} rows are not unit vectors "
                "(NaN, inf or wrong norm); the cache stores only normalised embeddings"
            )
        self._shards.append(write_shard(self.folder, karr, vectors))
        self._index(karr, vectors)
        if len(self._shards) > MAX_SHARDS:
            self.compact()

    def compact(self) -> None:
        """Merge every shard this process knows into one file, then delete the old ones."""
        if len(self._shards) <= 1:
            return
        keys = list(self._rows)
        karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
        vectors = np.stack([self._rows[k] for k in keys]).astype(np.float32, copy=False)
        merged = write_shard(self.folder, karr, vectors)
        for old in self._shards:
            old.unlink(missing_ok=True)
        self._shards = [merged]
        self._rows = {}
        self._index(karr, vectors)


class EmbeddingCache:
    """Root of the on-disk cache; hands out one bucket per (model, fingerprint, kind)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self._buckets: dict[tuple[str, str, str], CacheBucket] = {}

    def folder(self, model: str, fingerprint: str, kind: str) -> Path:
        return self.root / "embeddings" / model / fingerprint[:16] / kind

    def bucket(self, model: str, fingerprint: str, kind: str, dim: int) -> CacheBucket:
        key = (model, fingerprint, kind)
        found = self._buckets.get(key)
        if found is None or found.dim != dim:
            found = CacheBucket(self.folder(model, fingerprint, kind), dim)
            self._buckets[key] = found
        return found

    def files(self) -> Iterable[Path]:
        return sorted((self.root / "embeddings").glob("*/*/*/shard-*.npz"))
