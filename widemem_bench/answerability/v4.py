"""Answerability v4: v3's trees over v3's features plus a cross-encoder's reading of the top memories.

v3 (`answerability.v3`) reads cosines and the parse. v4 adds what the fine-tuned
cross-encoder (`answerability.cross`) says about the (question, memory) pairs of a search's
first `CROSS_TOP_K` memories, scored in one batch:

- ``cross_top1``: its logit for the rank-1 memory;
- ``cross_max``: the best logit over the first `CROSS_TOP_K` memories;
- ``cross_max_cos``: the raw cosine of that memory (a best pair far down the ranking is weaker).

Version 2 ("v4.1", DESIGN_LOG V5) is the same model at a lower cost per search: the file
names ``cross_quant`` (the int8 copy of the same cross-encoder, `cross_quant.build_int8`) and
``cross_top_k`` (how many of the first memories are scored); a file without them is
version 1 (fp32, top 3). With ``cross_top_k`` = 1 the three features are the rank-1
memory's logit (twice) and its cosine. Version 3 ("v4.2", DESIGN_LOG V8) reads the same way
with a cross-encoder also trained on the hand-written development answer sets (`cross.HAND_FILES`);
version 4 ("v4.3", DESIGN_LOG V9) the same with three more writers among them; "v4.4" (DESIGN_LOG
V10) reads v4.3's cross-encoder through its onnxruntime int8 copy (``cross_quant`` "onnx-int8",
`cross_quant.build_onnx_int8`), refitted on those logits, for speed; "v4.5" (DESIGN_LOG V11) the
same with three more writers (w8-w10) training the cross-encoder.

The model is gradient-boosted trees (`trees.TreeModel`) with (high, moderate, low) cut-offs
certified by `calibration.certify_ladder`, users as the unit (`answerability.fit_v4`). The
file ``widemem_bench/answerability/files/<embedder>.v4.json`` names the cross-encoder by its
cache key and the sha256 of the weights it was fitted on (``cross_encoder``:
``weights_sha256``, ``int8_weights_sha256``); `ScorerV4.cross` refuses other weights in one
line (the cut-offs are certified for those weights only, and a build on another kind of CPU
differs: `answerability.cross`). The engine reaches it as
``EngineConfig(confidence="answerability_v4")`` (opt-in).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.answerability.features_v2 import Encode
from widemem_bench.answerability.features_v3 import FEATURES_V3
from widemem_bench.answerability.trees import TreeModel
from widemem_bench.answerability.v2 import FILES_DIR
from widemem_bench.answerability.v3 import feature_rows_v3, features_v3_row
from widemem_bench.engine.confidence import confidence_from_similarity

FORMAT_VERSION = 4
SUFFIX = ".v4.json"
CROSS_TOP_K = 3
FEATURES_CROSS: tuple[str, ...] = ("cross_top1", "cross_max", "cross_max_cos")
FEATURES_V4: tuple[str, ...] = (*FEATURES_V3, *FEATURES_CROSS)
NO_PAIR = -20.0  # the logit of a search that returned nothing


def cross_row(logits: Sequence[float], cosines: Sequence[float]) -> np.ndarray:
    """`FEATURES_CROSS` of one search from its top memories' logits (rank order)."""
    if not len(logits):
        return np.array([NO_PAIR, NO_PAIR, 0.0])
    j = int(np.argmax(logits))
    return np.array([float(logits[0]), float(logits[j]), float(cosines[j])])


def cross_rows(queries: Sequence[str], contents: Sequence[Sequence[str]], cosines: Sequence[Sequence[float]],
               cross: Any, top_k: int = CROSS_TOP_K) -> np.ndarray:
    """(n, 3) cross features for many searches, every pair scored once in batches."""
    pairs = [(str(q), str(c)) for q, row in zip(queries, contents, strict=True) for c in list(row)[:top_k]]
    flat = cross.scores(pairs) if pairs else np.zeros(0)
    out, j = [], 0
    for row, cos in zip(contents, cosines, strict=True):
        n = min(len(row), top_k)
        out.append(cross_row(flat[j:j + n].tolist(), list(cos)[:n]))
        j += n
    return np.stack(out) if out else np.zeros((0, len(FEATURES_CROSS)))


def feature_rows_v4(queries: Sequence[str], contents: Sequence[Sequence[str]], cosines: Sequence[Sequence[float]],
                    encoder: Any, cross: Any, parser: Any = None, top_k: int = CROSS_TOP_K) -> np.ndarray:
    """(n, len(FEATURES_V4)) for many searches: v3's batched rows and the cross features."""
    v3 = feature_rows_v3(queries, contents, cosines, encoder, parser)
    return np.concatenate([v3, cross_rows(queries, contents, cosines, cross, top_k)], axis=1)


@dataclass(frozen=True)
class ScorerV4:
    """A fitted v4 model, its (high, moderate, low) cut-offs and the cache key of its cross-encoder."""

    embedder: str
    model: TreeModel
    cutoffs: tuple[float, float, float]
    cross_key: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def top_k(self) -> int:
        return int(self.meta.get("cross_top_k", CROSS_TOP_K))

    @property
    def quant(self) -> str:
        return str(self.meta.get("cross_quant", "fp32"))

    @property
    def cross_weights(self) -> dict[str, str]:
        """sha256 of the cross-encoder weights this file was fitted on, per quant (empty: not recorded)."""
        from widemem_bench.answerability.cross import RECORD_KEYS

        ce = self.meta.get("cross_encoder") or {}
        return {q: str(ce[k]) for q, k in RECORD_KEYS.items() if ce.get(k)}

    def cross(self) -> Any:
        """The cross-encoder, its weights checked against the file's record (one line when they differ)."""
        from widemem_bench.answerability.cross import load_cross

        return load_cross(self.cross_key, self.quant, expect=dict(self.meta.get("cross_encoder") or {}),
                          where=f"answerability v4 file of {self.embedder}")

    def features(self, query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode,
                 parser: Any = None) -> np.ndarray:
        top = [str(c) for c in contents[:self.top_k]]
        logits = self.cross().scores([(str(query), c) for c in top]) if top else np.zeros(0)
        return np.concatenate([features_v3_row(query, contents, cosines, encode, parser),
                               cross_row(logits.tolist(), list(cosines)[:len(top)])])

    def probability(self, query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode,
                    parser: Any = None) -> float:
        return self.model.prob_one(self.features(query, contents, cosines, encode, parser))

    def predict_searches(self, s: Any, encoder: Any) -> np.ndarray:
        """p(answerable) of every search of an `answerability.sets.Searches`, batched."""
        x = feature_rows_v4(s.frame["query"].tolist(), s.contents, s.cosines, encoder, self.cross(),
                            top_k=self.top_k)
        return np.asarray(self.model.predict_proba(x), dtype=float)

    def band(self, probability: float) -> str:
        return str(confidence_from_similarity(probability, self.cutoffs))

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT_VERSION, "embedder": self.embedder, "cross_key": self.cross_key,
                "cutoffs": [float(c) for c in self.cutoffs], **self.meta, "model": self.model.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "answerability v4 file") -> ScorerV4:
        missing = [k for k in ("embedder", "model", "cutoffs", "cross_key") if k not in data]
        if missing:
            raise ValueError(f"{where}: missing keys {missing}")
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"{where}: format {data.get('format')!r}, expected {FORMAT_VERSION}")
        model = TreeModel.from_dict(data["model"])
        if tuple(model.features) != FEATURES_V4:
            raise ValueError(f"{where}: model features are not v4's ({len(FEATURES_V4)} names)")
        cut = tuple(float(c) for c in data["cutoffs"])
        if len(cut) != 3 or not cut[0] >= cut[1] >= cut[2]:
            raise ValueError(f"{where}: cutoffs must be (high, moderate, low) in that order, got {list(cut)}")
        meta = {k: v for k, v in data.items() if k not in ("format", "embedder", "model", "cutoffs", "cross_key")}
        k = meta.get("cross_top_k", CROSS_TOP_K)
        if not isinstance(k, int) or not 1 <= k <= CROSS_TOP_K:
            raise ValueError(f"{where}: cross_top_k must be an integer in 1..{CROSS_TOP_K}, got {k!r}")
        from widemem_bench.answerability.cross import QUANTS

        if meta.get("cross_quant", "fp32") not in QUANTS:
            raise ValueError(f"{where}: cross_quant must be one of {list(QUANTS)}, got {meta['cross_quant']!r}")
        return cls(str(data["embedder"]), model, (cut[0], cut[1], cut[2]), str(data["cross_key"]), meta)


def scorer_path_v4(embedder: str, directory: str | Path | None = None) -> Path:
    return Path(directory or FILES_DIR) / f"{embedder}{SUFFIX}"


def save_scorer_v4(scorer: ScorerV4, path: str | Path) -> Path:
    """Write atomically; the description line by line, the trees' numbers on one line. A file
    written into the committed folder is pinned there too (``files/pins.json``: commit both)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    d = scorer.to_dict()
    model = d.pop("model")
    body = json.dumps(d, indent=1)[:-2] + ',\n "model": ' + json.dumps(model, separators=(",", ":")) + "\n}\n"
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(p)
    from widemem_bench.engine.pins import pin_committed

    pin_committed(p, Path(FILES_DIR))  # a fit's scratch output elsewhere is not pinned
    return p


_SCORERS: dict[str, ScorerV4] = {}


def load_scorer_v4(embedder: str, directory: str | Path | None = None) -> ScorerV4:
    """The committed v4 scorer of ``embedder``, cached after the first load (its cross-encoder loads lazily)."""
    p = scorer_path_v4(embedder, directory)
    key = str(p)
    if key not in _SCORERS:
        if not p.is_file():
            raise ValueError(f"embedder: no answerability v4 file {p}; fit it with make fit-v4")
        from widemem_bench.engine.pins import read_committed

        # the committed file's bytes must be the pinned ones (a hand-edited cut-off)
        text = read_committed(p, Path(FILES_DIR), "make fit-v4", "answerability v4")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        _SCORERS[key] = ScorerV4.from_dict(data, where=str(p))
    return _SCORERS[key]


def set_scorer_v4(scorer: ScorerV4 | None, embedder: str | None = None, directory: str | Path | None = None) -> None:
    """Install (or with None, forget) an in-memory v4 scorer, e.g. in tests."""
    if scorer is None:
        _SCORERS.clear() if embedder is None else _SCORERS.pop(str(scorer_path_v4(embedder, directory)), None)
        return
    _SCORERS[str(scorer_path_v4(embedder or scorer.embedder, directory))] = scorer


def assess_confidence_v4(query: str, results: Sequence[Any], *, embedder: str, encode: Encode) -> str:
    """Band of one search under the committed v4 scorer of ``embedder`` (results: `ScoredMemory`, rank order)."""
    scorer = load_scorer_v4(embedder)
    contents = [r.memory.content for r in results]
    cosines = [r.raw_similarity_score for r in results]
    return scorer.band(scorer.probability(query, contents, cosines, encode))
