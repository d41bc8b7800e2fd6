"""Answerability v2 at search time and on disk: `ScorerV2`, its JSON file, batched features.

A v2 scorer is the logistic model over `features_v2.FEATURES_V2`, the attribute
prototypes, and its (high, moderate, low) probability cut-offs, all fitted on the
training world's train split (`answerability.fit`). It is stored per embedder in
``widemem_bench/answerability/files/<embedder>.json``, apart from the similarity
calibration files, so refitting one never rewrites the other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.answerability.features_v2 import (
    FEATURES_V2,
    MAX_RESULTS,
    N_FEATURES_V2,
    Encode,
    Prototypes,
    _assemble,
    masked_texts,
    query_features_v2,
)
from widemem_bench.answerability.model import AnswerabilityModel
from widemem_bench.engine.confidence import confidence_from_similarity

FILES_DIR = Path(__file__).resolve().parent / "files"
FORMAT_VERSION = 2


@dataclass(frozen=True)
class ScorerV2:
    """A fitted v2 model, its prototypes and (high, moderate, low) probability cut-offs."""

    embedder: str
    model: AnswerabilityModel
    prototypes: Prototypes | None
    cutoffs: tuple[float, float, float]
    meta: dict[str, Any] = field(default_factory=dict)

    def features(self, query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode) -> np.ndarray:
        return query_features_v2(query, contents, cosines, encode, self.prototypes)

    def probability(self, query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode) -> float:
        return self.model.prob_one(self.features(query, contents, cosines, encode))

    def band(self, probability: float) -> str:
        # the same rule as a cosine against widemem's thresholds, on the probability scale
        return str(confidence_from_similarity(probability, self.cutoffs))

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT_VERSION, "embedder": self.embedder, "model": self.model.to_dict(),
                "prototypes": self.prototypes.to_dict() if self.prototypes is not None else None,
                "cutoffs": [float(c) for c in self.cutoffs], **self.meta}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "answerability v2 file") -> ScorerV2:
        missing = [k for k in ("embedder", "model", "cutoffs") if k not in data]
        if missing:
            raise ValueError(f"{where}: missing keys {missing}")
        model = AnswerabilityModel.from_dict(data["model"])
        if tuple(model.features) != FEATURES_V2:
            raise ValueError(f"{where}: model features are not v2's {list(FEATURES_V2)}")
        cut = tuple(float(c) for c in data["cutoffs"])
        if len(cut) != 3 or not cut[0] >= cut[1] >= cut[2]:
            raise ValueError(f"{where}: cutoffs must be (high, moderate, low) in that order, got {list(cut)}")
        protos = Prototypes.from_dict(data["prototypes"]) if data.get("prototypes") else None
        meta = {k: v for k, v in data.items() if k not in ("format", "embedder", "model", "prototypes", "cutoffs")}
        return cls(str(data["embedder"]), model, protos, (cut[0], cut[1], cut[2]), meta)


def scorer_path(embedder: str, directory: str | Path | None = None) -> Path:
    return Path(directory or FILES_DIR) / f"{embedder}.json"


def save_scorer_v2(scorer: ScorerV2, path: str | Path) -> Path:
    """Write atomically (temp file + rename), so a reader never sees half a file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(scorer.to_dict(), indent=1) + "\n", encoding="utf-8")
    tmp.replace(p)
    from widemem_bench.engine.pins import pin_committed

    pin_committed(p, Path(FILES_DIR))  # the committed file and its pin (commit both)
    return p


_SCORERS: dict[str, ScorerV2] = {}


def load_scorer_v2(embedder: str, directory: str | Path | None = None) -> ScorerV2:
    """The committed v2 scorer of ``embedder`` (registry name), cached after the first load."""
    p = scorer_path(embedder, directory)
    key = str(p)
    if key not in _SCORERS:
        from widemem_bench.engine.pins import read_committed

        if not p.is_file():
            out = "" if directory is None else f" out={directory}"
            raise ValueError(f"embedder: no answerability v2 file {p}; fit it with "
                             f"widemem-bench fit_v2 embedder={embedder}{out}")
        try:
            data = json.loads(read_committed(p, Path(FILES_DIR), f"widemem-bench fit_v2 embedder={embedder}", "answerability v2"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        _SCORERS[key] = ScorerV2.from_dict(data, where=str(p))
    return _SCORERS[key]


def set_scorer_v2(scorer: ScorerV2 | None, embedder: str | None = None, directory: str | Path | None = None) -> None:
    """Install (or with None, forget) an in-memory v2 scorer, e.g. in tests."""
    if scorer is None:
        if embedder is None:
            _SCORERS.clear()
        else:
            _SCORERS.pop(str(scorer_path(embedder, directory)), None)
        return
    _SCORERS[str(scorer_path(embedder or scorer.embedder, directory))] = scorer


def assess_confidence_v2(query: str, results: Sequence[Any], *, embedder: str, encode: Encode) -> str:
    """Band of one search under the committed v2 scorer of ``embedder``.

    ``results``: the engine's `ScoredMemory` objects in rank order; ``encode`` the
    engine's embedder (masked texts are embedded with it).
    """
    scorer = load_scorer_v2(embedder)
    contents = [r.memory.content for r in results]
    cosines = [r.raw_similarity_score for r in results]
    return scorer.band(scorer.probability(query, contents, cosines, encode))


# --------------------------------------------------------------------------- batched


def feature_rows(
    queries: Sequence[str],
    contents: Sequence[Sequence[str]],
    cosines: Sequence[Sequence[float]],
    encoder: Any,
    prototypes: Prototypes | None,
) -> np.ndarray:
    """(n, N_FEATURES_V2) for many searches; every masked text is embedded once, in two batches.

    The same arithmetic as `query_features_v2` row by row (tests compare the two).
    """
    n = len(queries)
    masked: list[tuple[str, list[str], np.ndarray]] = []
    for q, cs in zip(queries, contents, strict=True):
        masked.append(masked_texts(str(q), [str(c) for c in list(cs)[:MAX_RESULTS]]))
    q_texts = sorted({m[0] for m in masked})
    m_texts = sorted({t for m in masked for t in m[1]})
    qv = dict(zip(q_texts, np.asarray(encoder.encode(q_texts, kind="query"), dtype=np.float32), strict=True)) \
        if q_texts else {}
    mv = dict(zip(m_texts, np.asarray(encoder.encode(m_texts, kind="passage"), dtype=np.float32), strict=True)) \
        if m_texts else {}
    x = np.zeros((n, N_FEATURES_V2), dtype=np.float64)
    for i, (mq, mm, agree) in enumerate(masked):
        k = len(mm)
        if k == 0:
            x[i, 0:5] = (-1.0, -1.0, 0.0, -1.0, 0.0)
            continue
        c = np.asarray([float(v) for v in list(cosines[i])[:k]], dtype=np.float64)
        mvec = np.stack([mv[t] for t in mm])
        s = (mvec @ qv[mq]).astype(np.float64)
        x[i] = _assemble(c, s, agree, qv[mq], mvec, prototypes)
    return x


def encoder_fn(encoder: Any) -> Encode:
    """``encode(texts, kind)`` over an embedder object (positional kind, as the features call it)."""
    def encode(texts: Sequence[str], kind: str) -> np.ndarray:
        return np.asarray(encoder.encode(list(texts), kind=kind), dtype=np.float32)
    return encode
