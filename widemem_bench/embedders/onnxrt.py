"""The onnxruntime runtimes: an ONNX encoder from a wheel (``onnxruntime``), and a
sentence-transformers model exported once to ONNX and checked against torch
(``onnx-export``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.embedders.base import BaseEmbedder, l2_normalise
from widemem_bench.embedders.cache import EmbeddingCache, remove_stale_temps
from widemem_bench.embedders.files import (
    check_model_files,
    fingerprint_of,
    model_folder_files,
    set_offline,
)
from widemem_bench.embedders.registry import (
    EmbedderError,
    EmbedderSpec,
    file_sha256,
    locate,
    package_root,
    verify,
)


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
        threads = self.call_threads(threads)
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
