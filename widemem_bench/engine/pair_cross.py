"""The ``pair`` resolver's scorer at run time: its cross-encoder's onnxruntime int8 copy.

The ``pair`` resolver is the ``structure`` resolver's gate with another pair scorer: a
cross-encoder over (old fact, new fact), the packaged MiniLM fine-tuned on development pairs
only (world A train + validation, world C, world N train, and the hand-written development
update files; ``make resolver-cross``, `answerability.pair_cross`, DESIGN_LOG R24). Why: on
hand-written text the structure resolver's trees score the pairs a writer means as updates
low (pair AUROC 0.77, R22), and a cross-encoder trained on six writers scored three unseen
writers' pairs at 0.94-0.97 (R23).

`RECORD` (committed, written by ``make resolver-cross``) names the build: its cache folder,
the sha256 of the int8 file it was measured with, the threshold and the tokenizer's length.
The file is read from ``<cache>/cross/`` and its sha256 checked; another build (another kind of
CPU trains other weights) or none is refused in one line naming ``make resolver-cross``.
One pair per call, one thread: onnxruntime quantizes activations per call, so a pair's score
never depends on the pairs scored with it. Scores are memoised per (old, new) text pair. A pair is
tokenized by the tokenizer's Rust backend directly (the same ids, 0.09 ms against 0.22 ms a pair).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

RECORD = Path(__file__).parent / "files" / "pair_cross.json"
MAKE_TARGET = "make resolver-cross"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def read_record(path: Path | None = None) -> dict[str, Any]:
    """The committed record (its bytes checked against their pin, `pins`), or the file ``path``."""
    from .pins import read_pinned

    p = path or RECORD
    if not p.is_file():
        raise ValueError(f"resolver 'pair': no record {p}; build it with {MAKE_TARGET}")
    try:
        rec = json.loads(read_pinned(p) if path is None else p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    missing = [k for k in ("key", "onnx_folder", "onnx_int8_weights_sha256", "threshold", "max_length") if k not in rec]
    if missing:
        raise ValueError(f"{p}: missing keys {missing}")
    if not 0.0 < float(rec["threshold"]) < 1.0:
        raise ValueError(f"{p}: threshold must be in (0, 1), got {rec['threshold']!r}")
    return rec


class PairCrossScorer:
    """`resolvers.PairModel` over the cross-encoder: p(the old fact is superseded by the new one)."""

    def __init__(self, record: Mapping[str, Any], session: Any, tokenizer: Any) -> None:
        self.record = dict(record)
        self.threshold = float(record["threshold"])
        self.max_length = int(record["max_length"])
        self.session, self.tokenizer = session, tokenizer
        self.memo: dict[tuple[str, str], float] = {}
        self.fast = _backend(tokenizer, self.max_length)

    def _feeds(self, old: str, new: str) -> dict[str, np.ndarray]:
        if self.fast is not None:  # the same ids as the tokenizer's own call, at a third of its cost
            enc = self.fast.encode(old, new)
            return {"input_ids": np.array([enc.ids], dtype=np.int64),
                    "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                    "token_type_ids": np.array([enc.type_ids], dtype=np.int64)}
        enc = self.tokenizer([old], [new], truncation=True, max_length=self.max_length, padding=True,
                             return_tensors="np")
        return {k: np.asarray(enc[k], dtype=np.int64) for k in INPUTS if k in enc}

    def probability(self, old: str, new: str) -> float:
        key = (old, new)
        if key not in self.memo:
            logit = float(np.asarray(self.session.run(None, self._feeds(old, new))[0]).reshape(-1)[0])
            self.memo[key] = float(1.0 / (1.0 + np.exp(-logit)))
            if len(self.memo) > 200_000:  # a long-lived process keeps the newest pairs only
                for k in list(self.memo)[:100_000]:
                    del self.memo[k]
        return self.memo[key]

    def score(self, pairs: Sequence[tuple[str, str]], groups: Sequence[int], read: Mapping[str, Any]) -> list[float]:
        return [self.probability(old, new) for old, new in pairs]


def _backend(tokenizer: Any, max_length: int) -> Any:
    """A copy of a fast tokenizer's Rust backend that truncates a pair as the tokenizer's call does
    (longest first, to ``max_length``) and never pads (one pair per call); None for another tokenizer."""
    inner = getattr(tokenizer, "backend_tokenizer", None)
    if inner is None:
        return None
    from tokenizers import Tokenizer

    fast = Tokenizer.from_str(inner.to_str())
    fast.enable_truncation(max_length, strategy="longest_first")
    fast.no_padding()
    return fast


_LOADED: dict[str, PairCrossScorer] = {}


def load_pair_scorer(path: Path | None = None, cache_root: Path | None = None) -> PairCrossScorer:
    """The committed build's scorer (cached per process); one line when absent or not the recorded weights."""
    rec = read_record(path)
    from widemem_bench.embedders.cache import default_cache_dir

    root = (cache_root or default_cache_dir()) / "cross"
    onnx = root / str(rec["onnx_folder"]) / "model.int8.onnx"
    memo = f"{onnx}:{rec['onnx_int8_weights_sha256']}"
    if memo in _LOADED:
        return _LOADED[memo]
    if not onnx.is_file():
        raise ValueError(f"resolver 'pair': its cross-encoder is not built at {onnx.parent}; run {MAKE_TARGET}")
    from widemem_bench.embedders.registry import file_sha256

    got = file_sha256(onnx)
    if got != rec["onnx_int8_weights_sha256"]:
        raise ValueError(f"resolver 'pair': the cross-encoder at {onnx.parent} is sha256 {got[:12]}..., not the "
                         f"{str(rec['onnx_int8_weights_sha256'])[:12]}... its threshold was set for (another build, "
                         f"or damaged); rebuild and rewrite the record with {MAKE_TARGET}")
    tok = root / str(rec["key"])
    if not (tok / "tokenizer.json").is_file():
        raise ValueError(f"resolver 'pair': the cross-encoder's tokenizer is not at {tok}; run {MAKE_TARGET}")
    _LOADED[memo] = PairCrossScorer(rec, *load_session(onnx, tok))
    return _LOADED[memo]


def load_session(onnx: Path, tokenizer_folder: Path) -> tuple[Any, Any]:
    """(onnxruntime session on one thread, the build's tokenizer)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import onnxruntime as ort
    from transformers import AutoTokenizer

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1  # a pair's score never depends on the thread count
    session = ort.InferenceSession(str(onnx), so, providers=["CPUExecutionProvider"])
    return session, AutoTokenizer.from_pretrained(str(tokenizer_folder))
