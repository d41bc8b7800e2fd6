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
# Below this many texts to compute a progress bar is noise (and tests stay quiet); one
# text per model call runs at 50-150 texts/s on one thread, so 256 texts is a few seconds.
PROGRESS_MIN_TEXTS = 256
# How the texts still missing from the cache reach the model:
# - "per-text": one text per model call on ONE intra-op thread, so a vector depends on
#   its text alone, never on which other texts were missing or already cached, nor on
#   the thread count the process happened to run with. fp32 models gave vectors that
#   moved in the last bits (up to 2e-7) with their batch-mates and padding, enough to
#   flip a best-F1 threshold fit (the rephrase threshold 0.537 vs 0.505); int8 models
#   quantise activations per batch and moved by up to 0.2. torch's thread count is
#   process-wide state: MiniLM-L6 per text on 2 threads moved 75 % of the development
#   facts' vectors by up to 2.1e-7, and a cache filled that way moved the pair scorer's
#   threshold from 0.962277 to 0.954681 (make resolver-pair).
# - "shared": consecutive batches of ``batch_size`` (optionally sorted by length):
#   2-3x faster for transformers on short texts, but a vector depends on its batch.
#   For throughput measurements and hosted models; its vectors live under their own
#   cache keys, so they never mix with per-text ones.
BATCHING = ("per-text", "shared")
# What the cache key records for per-text vectors: rows cached under the older tag
# "per-text" may have been computed on another torch thread count, so they are never served.
PER_TEXT_TAG = "per-text/1-thread"
# Runtimes that compute every row on its own in numpy (hashed n-grams, tf-idf, mean of
# word vectors): any batching gives the same bytes per text, so they keep batches.
ROW_INDEPENDENT_RUNTIMES = frozenset({"hash", "tfidf", "glove"})
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

    The unique texts still missing from the cache, in first-occurrence order (or, with
    ``sort_by_length``, stably sorted by length), are taken in chunks of ``batch_size``
    (one progress step, one cache flush). With ``batching="per-text"`` (the default) each
    text of a chunk is its own model call on one intra-op thread (:meth:`call_threads`),
    so every vector is a function of its text only and a run reproduces to the byte
    whatever the cache already held or the process's thread settings; runtimes in
    ``ROW_INDEPENDENT_RUNTIMES`` get the whole chunk at once (same bytes, cheaper). With
    ``batching="shared"`` the chunk is one model call (see ``BATCHING``).
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
        batching: str | None = None,
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
        self.row_independent = spec.runtime in ROW_INDEPENDENT_RUNTIMES
        # Sorting by length only pays off inside shared batches, so asking for it (here or
        # in the entry) without naming a batching means shared batches.
        chosen = batching if batching is not None else spec.extra.get("batching")
        if chosen is None:
            chosen = "shared" if self.sort_by_length and not self.row_independent else "per-text"
        if chosen not in BATCHING:
            raise ValueError(f"batching={chosen!r}, expected one of {BATCHING}")
        if chosen == "per-text" and self.sort_by_length and not self.row_independent:
            raise ValueError(
                f"{spec.name}: sort_by_length=True needs batching='shared' (one text per call has no batches to sort)"
            )
        self.batching = str(chosen)
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

    @property
    def batching_tag(self) -> str:
        """What the cache key records about how a vector was computed: per-text vectors
        (and every row-independent runtime's) are one thing, shared-batch ones another."""
        return PER_TEXT_TAG if self.row_independent or self.batching == "per-text" else "shared"

    def call_threads(self, requested: int | None) -> int | None:
        """Intra-op threads for a model call: always 1 for per-text vectors (a kernel's
        summation order may follow the thread count, so the bits would too); ``requested``
        (the runtime's ``threads`` option, None = the runtime's default) for shared batches."""
        return 1 if self.batching_tag == PER_TEXT_TAG else requested

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
            # The batching scheme is part of the key: vectors cached before it (or by the
            # other scheme) are never served as if they were computed this way.
            key_fp = f"{fp}|batching={self.batching_tag}"
            for t in unique:
                k = text_key(self.name, key_fp, kind, t)
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
                vecs = self._embed_chunk([prefix + t for t in batch], kind)
                self.stats.texts_encoded += len(batch)
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

    def _embed_chunk(self, texts: list[str], kind: str) -> np.ndarray:
        """Unit rows for ``texts`` (prefixed): one model call, or one per text (per-text)."""
        calls = [texts] if self.batching_tag == "shared" or self.row_independent else [[t] for t in texts]
        out: list[np.ndarray] = []
        for call in calls:
            raw = self._embed_batch(call, kind)
            self.stats.model_calls += 1
            if raw.shape != (len(call), self.dim):
                raise RuntimeError(
                    f"{self.name}: model returned shape {raw.shape}, expected {(len(call), self.dim)}"
                )
            # row by row: a row's norm never depends on how many rows came with it
            out.extend(l2_normalise(row[None, :])[0] for row in np.asarray(raw, dtype=np.float32))
        return np.stack(out) if out else np.zeros((0, self.dim), dtype=np.float32)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model_id={self.model_id!r})"


def check_options(name: str, options: dict[str, Any], allowed: Sequence[str]) -> None:
    for key in options:
        if key not in allowed:
            raise ValueError(
                f"unknown option {key!r} for embedder {name!r}; allowed: {', '.join(sorted(allowed))}"
            )
