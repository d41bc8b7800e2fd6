"""A tiny deterministic embedder for fast engine tests (hashed character n-grams).

Stand-in for ``load_embedder("hash-test")`` while the embedder registry lands;
texts that share character trigrams get a positive cosine, so nearest-neighbour
behaviour is meaningful, and the same text always gives the same vector.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


class HashNgramEmbedder:
    name = "hash-ngram-test"
    model_id = "hash-ngram-test"

    def __init__(self, dim: int = 256, n: int = 3) -> None:
        self.dim = dim
        self.n = n
        self.fingerprint = hashlib.sha256(f"hash-ngram:{dim}:{n}".encode()).hexdigest()

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        t = f"  {text.lower()}  "
        for i in range(len(t) - self.n + 1):
            h = hashlib.blake2b(t[i : i + self.n].encode(), digest_size=8).digest()
            v[int.from_bytes(h[:4], "little") % self.dim] += 1.0 if h[4] & 1 else -1.0
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts]).astype(np.float32)


def make_test_embedder() -> HashNgramEmbedder:
    """The registry's ``hash-test`` when available, else the local stand-in."""
    try:
        from widemem_bench.embedders import load_embedder

        return load_embedder("hash-test", cache=False)  # type: ignore[no-any-return]
    except Exception:
        return HashNgramEmbedder()
