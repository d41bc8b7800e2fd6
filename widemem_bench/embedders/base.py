"""Embedder protocol and the shared encode loop (prefixes, cache, fixed batches, progress)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from tqdm.auto import tqdm

from widemem_bench.embedders.cache import CacheBucket, EmbeddingCache, default_cache_dir, text_key
from widemem_bench.embedders.registry import EmbedderSpec

KINDS = ("passage", "query")
# Below this many texts to compute a progress bar is noise (and tests stay quiet).
PROGRESS_MIN_TEXTS = 2048
# Misses are written to the cache every this many texts, so an interrupted long run keeps
# most of its work.
FLUSH_EVERY = 8192


@runtime_checkable
class Embedder(Protocol):
    name: str
    model_id: str

    @property
    def dim(self) -> int: ...

    @property
    def fingerprint(self) -> str: ...

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray: ...


@dataclass
class EncodeStats:
    """Counters over the embedder's life; unique texts per call are counted once."""

    hits: int = 0  # rows served from the cache
    misses: int = 0  # rows that had to be computed
    model_calls: int = 0  # batches sent to the model
    texts_encoded: int = 0  # rows the model computed


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Unit rows in float32; an all-zero row (no feature at all) stays zero."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


class BaseEmbedder:
    """Runtimes implement ``_embed_batch``; this class does everything around it.

    Batching is fixed: the unique texts still missing from the cache, in first-occurrence
    order (or, with ``sort_by_length``, stably sorted by length), are cut into consecutive
    batches of ``batch_size``. For a given input and cache
    state the batches are always the same, so int8 models (whose activations are
    quantised per batch) give the same vectors run after run; the cache then keeps what
    that batching produced.
    """

    #: options this runtime accepts besides the common ones
    extra_options: tuple[str, ...] = ()

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        cache: EmbeddingCache | None,
        cache_root: Path | None = None,
        batch_size: int | None = None,
        progress: bool | None = None,
        sort_by_length: bool | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.model_id = spec.model_id
        self.batch_size = int(batch_size or spec.batch_size)
        if self.batch_size < 1:
            raise ValueError(f"batch_size={self.batch_size} must be >= 1")
        self.progress = progress
        # Batches of similar length pad less: on short texts MiniLM on one CPU thread ran
        # 1.8x faster with the texts to compute sorted by length (500 vs 280 texts/s). Off
        # by default: int8 models quantise per batch, so their vectors depend on the batch.
        self.sort_by_length = bool(
            spec.extra.get("sort_by_length", False) if sort_by_length is None else sort_by_length
        )
        self.cache = cache
        # where runtimes may unpack weights (mpnet's joined zip), even when cache=False
        self.cache_root = cache_root or (cache.root if cache is not None else default_cache_dir())
        self.stats = EncodeStats()

    # Runtimes set these in __init__ (or override the properties, as tfidf does until fit).
    _dim: int
    _fingerprint: str

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    # --- to implement -----------------------------------------------------------------

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        """Raw (len(texts), dim) vectors for texts that already carry their prefix."""
        raise NotImplementedError

    # --- shared -----------------------------------------------------------------------
    def prefix(self, kind: str) -> str:
        return self.spec.query_prefix if kind == "query" else self.spec.passage_prefix

    def _check_ready(self) -> None:
        """Hook for runtimes that need preparation (tfidf must be fitted)."""

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised rows; cached rows are not recomputed."""
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r}, expected one of {KINDS}")
        if isinstance(texts, str):
            raise ValueError("texts must be a sequence of strings, not one str")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise ValueError(f"texts must be strings, got {type(t).__name__}")
        self._check_ready()
        dim = self.dim
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)

        unique = list(dict.fromkeys(texts))
        rows: dict[str, np.ndarray] = {}
        bucket: CacheBucket | None = None
        keys: dict[str, bytes] = {}
        if self.cache is not None:
            fp = self.fingerprint
            bucket = self.cache.bucket(self.name, fp, kind, dim)
            for t in unique:
                k = text_key(self.name, fp, kind, t)
                hit = bucket.get(k)
                if hit is None:
                    keys[t] = k
                else:
                    rows[t] = hit
        missing = [t for t in unique if t not in rows]
        self.stats.hits += len(unique) - len(missing)
        self.stats.misses += len(missing)
        if missing:
            self._compute(missing, kind, rows, bucket, keys)

        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = rows[t]
        return out

    def _compute(
        self,
        missing: list[str],
        kind: str,
        rows: dict[str, np.ndarray],
        bucket: CacheBucket | None,
        keys: dict[str, bytes],
    ) -> None:
        show = self.progress
        if show is None:
            show = len(missing) >= PROGRESS_MIN_TEXTS and sys.stderr.isatty()
        prefix = self.prefix(kind)
        if self.sort_by_length:  # stable: the same input and cache state give the same batches
            missing = sorted(missing, key=len)
        pending: list[str] = []
        pending_vecs: list[np.ndarray] = []
        with tqdm(total=len(missing), disable=not show, desc=self.name, unit="text") as bar:
            for start in range(0, len(missing), self.batch_size):
                batch = missing[start : start + self.batch_size]
                raw = self._embed_batch([prefix + t for t in batch], kind)
                self.stats.model_calls += 1
                self.stats.texts_encoded += len(batch)
                if raw.shape != (len(batch), self.dim):
                    raise RuntimeError(
                        f"{self.name}: model returned shape {raw.shape}, expected {(len(batch), self.dim)}"
                    )
                vecs = l2_normalise(raw)
                for t, v in zip(batch, vecs, strict=True):
                    rows[t] = v
                if bucket is not None:
                    pending.extend(batch)
                    pending_vecs.append(vecs)
                    if len(pending) >= FLUSH_EVERY:
                        bucket.put([keys[t] for t in pending], np.concatenate(pending_vecs))
                        pending, pending_vecs = [], []
                bar.update(len(batch))
        if bucket is not None and pending:
            bucket.put([keys[t] for t in pending], np.concatenate(pending_vecs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model_id={self.model_id!r})"


def check_options(name: str, options: dict[str, Any], allowed: Sequence[str]) -> None:
    for key in options:
        if key not in allowed:
            raise ValueError(
                f"unknown option {key!r} for embedder {name!r}; allowed: {', '.join(sorted(allowed))}"
            )
