"""Answerability v3 at search time and on disk: `ScorerV3`, its JSON file, batched features.

A v3 scorer is gradient-boosted trees (`trees.TreeModel`; the logistic
`model.AnswerabilityModel` is read too) over `features_v3.FEATURES_V3` (v2's features plus the language layer's reading of the
question against its top memories) and its (high, moderate, low) cut-offs certified by
`calibration.certify_ladder` with users as the unit (`answerability.fit_v3`). It is
stored per embedder in ``widemem_bench/answerability/files/<embedder>.v3.json``, beside
v2's ``<embedder>.json``.

The engine reaches it as ``EngineConfig(confidence="answerability_v3")`` (opt-in); v2 stays
reachable as ``"answerability_v2"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.answerability.features_v2 import MAX_RESULTS, Encode, query_features_v2
from widemem_bench.answerability.features_v3 import FEATURES_V3, N_FEATURES_V3, language_features
from widemem_bench.answerability.model import MODEL_KIND, AnswerabilityModel
from widemem_bench.answerability.trees import TreeModel
from widemem_bench.answerability.v2 import FILES_DIR, feature_rows
from widemem_bench.engine.confidence import confidence_from_similarity

FORMAT_VERSION = 3
SUFFIX = ".v3.json"


def _parser() -> Any:
    from widemem_bench.language import default_parser

    return default_parser()


@dataclass(frozen=True)
class ScorerV3:
    """A fitted v3 model and its (high, moderate, low) probability cut-offs."""

    embedder: str
    model: TreeModel | AnswerabilityModel
    cutoffs: tuple[float, float, float]
    meta: dict[str, Any] = field(default_factory=dict)

    def features(self, query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode,
                 parser: Any = None) -> np.ndarray:
        """`FEATURES_V3` of one search; the query and the memories are parsed (cached) by ``parser``."""
        return features_v3_row(query, contents, cosines, encode, parser)

    def probability(self, query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode,
                    parser: Any = None) -> float:
        return self.model.prob_one(self.features(query, contents, cosines, encode, parser))

    def band(self, probability: float) -> str:
        return str(confidence_from_similarity(probability, self.cutoffs))

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT_VERSION, "embedder": self.embedder, "model": self.model.to_dict(),
                "cutoffs": [float(c) for c in self.cutoffs], **self.meta}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "answerability v3 file") -> ScorerV3:
        missing = [k for k in ("embedder", "model", "cutoffs") if k not in data]
        if missing:
            raise ValueError(f"{where}: missing keys {missing}")
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"{where}: format {data.get('format')!r}, expected {FORMAT_VERSION}")
        kind = data["model"].get("kind") if isinstance(data["model"], dict) else None
        model: TreeModel | AnswerabilityModel = (AnswerabilityModel.from_dict(data["model"]) if kind == MODEL_KIND
                                                 else TreeModel.from_dict(data["model"]))
        if tuple(model.features) != FEATURES_V3:
            raise ValueError(f"{where}: model features are not v3's ({N_FEATURES_V3} names)")
        cut = tuple(float(c) for c in data["cutoffs"])
        if len(cut) != 3 or not cut[0] >= cut[1] >= cut[2]:
            raise ValueError(f"{where}: cutoffs must be (high, moderate, low) in that order, got {list(cut)}")
        meta = {k: v for k, v in data.items() if k not in ("format", "embedder", "model", "cutoffs")}
        return cls(str(data["embedder"]), model, (cut[0], cut[1], cut[2]), meta)


def features_v3_row(query: str, contents: Sequence[str], cosines: Sequence[float], encode: Encode,
                    parser: Any = None) -> np.ndarray:
    """`FEATURES_V3` of one search (also the first columns of v4's row)."""
    contents = [str(c) for c in contents[:MAX_RESULTS]]
    v2 = query_features_v2(query, contents, cosines, encode, None)
    parses = (parser or _parser()).parse_many([query, *contents])
    return np.concatenate([v2, language_features(parses[0], parses[1:], cosines)])


def scorer_path_v3(embedder: str, directory: str | Path | None = None) -> Path:
    return Path(directory or FILES_DIR) / f"{embedder}{SUFFIX}"


def save_scorer_v3(scorer: ScorerV3, path: str | Path) -> Path:
    """Write atomically (temp file + rename), so a reader never sees half a file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    d = scorer.to_dict()
    model = d.pop("model")
    # the description readable line by line, the model's numbers on one line (thousands of tree nodes)
    body = json.dumps(d, indent=1)
    body = body[:-2] + ',\n "model": ' + json.dumps(model, separators=(",", ":")) + "\n}"
    tmp.write_text(body + "\n", encoding="utf-8")
    tmp.replace(p)
    from widemem_bench.engine.pins import pin_committed

    pin_committed(p, Path(FILES_DIR))  # the committed file and its pin (commit both)
    return p


_SCORERS: dict[str, ScorerV3] = {}


def load_scorer_v3(embedder: str, directory: str | Path | None = None) -> ScorerV3:
    """The committed v3 scorer of ``embedder`` (registry name), cached after the first load."""
    p = scorer_path_v3(embedder, directory)
    key = str(p)
    if key not in _SCORERS:
        from widemem_bench.engine.pins import read_committed

        if not p.is_file():
            out = "" if directory is None else f" out={directory}"
            raise ValueError(f"embedder: no answerability v3 file {p}; fit it with "
                             f"widemem-bench fit_v3 embedder={embedder}{out}")
        try:
            data = json.loads(read_committed(p, Path(FILES_DIR), "make fit-v3", "answerability v3"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        _SCORERS[key] = ScorerV3.from_dict(data, where=str(p))
    return _SCORERS[key]


def set_scorer_v3(scorer: ScorerV3 | None, embedder: str | None = None, directory: str | Path | None = None) -> None:
    """Install (or with None, forget) an in-memory v3 scorer, e.g. in tests."""
    if scorer is None:
        if embedder is None:
            _SCORERS.clear()
        else:
            _SCORERS.pop(str(scorer_path_v3(embedder, directory)), None)
        return
    _SCORERS[str(scorer_path_v3(embedder or scorer.embedder, directory))] = scorer


def assess_confidence_v3(query: str, results: Sequence[Any], *, embedder: str, encode: Encode) -> str:
    """Band of one search under the committed v3 scorer of ``embedder`` (results: `ScoredMemory`, rank order)."""
    scorer = load_scorer_v3(embedder)
    contents = [r.memory.content for r in results]
    cosines = [r.raw_similarity_score for r in results]
    return scorer.band(scorer.probability(query, contents, cosines, encode))


def warm(texts: Sequence[str]) -> None:
    """Parse stored memories at add time, so a search parses only its query."""
    if texts:
        _parser().parse_many([str(t) for t in texts])


# --------------------------------------------------------------------------- batched


def feature_rows_v3(queries: Sequence[str], contents: Sequence[Sequence[str]], cosines: Sequence[Sequence[float]],
                    encoder: Any, parser: Any = None) -> np.ndarray:
    """(n, N_FEATURES_V3) for many searches: v2's batched rows, every text parsed once in one batch.

    The same arithmetic as `ScorerV3.features` row by row (tests compare the two).
    """
    cs = [[str(c) for c in list(row)[:MAX_RESULTS]] for row in contents]
    v2 = feature_rows(queries, cs, cosines, encoder, None)
    p = parser or _parser()
    texts = list(dict.fromkeys([*(str(q) for q in queries), *(t for row in cs for t in row)]))
    parsed = dict(zip(texts, p.parse_many(texts), strict=True))
    lang = np.stack([language_features(parsed[str(q)], [parsed[t] for t in row], list(cos))
                     for q, row, cos in zip(queries, cs, cosines, strict=True)]) if len(cs) else \
        np.zeros((0, N_FEATURES_V3 - v2.shape[1]))
    return np.concatenate([v2, lang], axis=1)
