"""Search-time scoring: `assess_confidence`, the engine's hook for `confidence="answerability"`.

The model and its band cut-offs come from the embedder's calibration file (the
``answerability`` section), loaded once per embedder and kept in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from widemem_bench.answerability.features import query_features
from widemem_bench.answerability.model import AnswerabilityModel
from widemem_bench.engine.confidence import confidence_from_similarity


@dataclass(frozen=True)
class Scorer:
    """A fitted model and its (high, moderate, low) probability cut-offs."""

    embedder: str
    model: AnswerabilityModel
    cutoffs: tuple[float, float, float]

    def probability(self, query: str, contents: Sequence[str], cosines: Sequence[float]) -> float:
        return self.model.prob_one(query_features(query, contents, cosines))

    def band(self, probability: float) -> str:
        # the same rule as a cosine against widemem's thresholds, on the probability scale
        return str(confidence_from_similarity(probability, self.cutoffs))


_SCORERS: dict[str, Scorer] = {}


def scorer_from_calibration(cal: Any) -> Scorer:
    """The scorer stored in a `CalibrationFile` (its ``answerability`` section)."""
    section = cal.answerability
    if not section or "model" not in section or cal.answerability_thresholds is None:
        raise ValueError(
            f"calibration file of {cal.embedder!r} has no answerability section; "
            f"re-run: widemem-bench calibrate embedder={cal.embedder}"
        )
    return Scorer(cal.embedder, AnswerabilityModel.from_dict(section["model"]), cal.answerability_thresholds)


def load_scorer(embedder: str, directory: str | Path | None = None) -> Scorer:
    """The committed scorer of ``embedder`` (registry name), cached after the first load."""
    key = f"{directory}:{embedder}" if directory is not None else embedder
    if key not in _SCORERS:
        from widemem_bench.calibration import load_calibration

        _SCORERS[key] = scorer_from_calibration(load_calibration(embedder, directory))
    return _SCORERS[key]


def set_scorer(scorer: Scorer | None, embedder: str | None = None) -> None:
    """Install (or with None, forget) an in-memory scorer for an embedder, e.g. in tests."""
    if scorer is None:
        if embedder is None:
            _SCORERS.clear()
        else:
            _SCORERS.pop(embedder, None)
        return
    _SCORERS[embedder or scorer.embedder] = scorer


def _embedder_for_model_id(model_id: str) -> str:
    """The registry name whose calibration file (with a scorer) was fitted for ``model_id``."""
    from widemem_bench.calibration import available_calibrations, load_calibration

    for name in available_calibrations():
        cal = load_calibration(name)
        if cal.model_id == model_id and cal.answerability:
            return name
    raise ValueError(f"model_id {model_id!r}: no calibration file with an answerability section matches it")


def assess_confidence(
    query: str,
    results: Sequence[Any],
    *,
    model_id: str | None = None,
    thresholds: tuple[float, float, float] | None = None,
    embedder: str | None = None,
    version: str = "answerability_v1",
    encoder: Any = None,
) -> str:
    """Confidence band ("high" / "moderate" / "low" / "none") of one search.

    ``results`` are the engine's `ScoredMemory` objects in rank order (or anything
    with ``.memory.content`` and ``.raw_similarity_score``). ``embedder`` is the
    registry name whose calibration file holds the model; without it the file is
    found by ``model_id``. ``thresholds`` (the similarity thresholds) are not used:
    the probability has its own cut-offs, fitted with the same targets.

    ``version``: "answerability_v1" (this module's scorer, in the calibration file),
    "answerability" or its alias "answerability_v2" (`answerability.v2`, in its own file;
    it embeds the masked texts with ``encoder``, the engine's embedder, or the registry's
    when None) or "answerability_v3" (opt-in, `answerability.v3`: v2's features plus the
    query's parse against its memories', in ``<embedder>.v3.json``) or "answerability_v4" (opt-in,
    `answerability.v4`: v3's features plus a fine-tuned cross-encoder over the top memories).
    """
    del thresholds  # the answerability bands use their own calibrated cut-offs
    if version in ("answerability", "answerability_v2", "answerability_v3", "answerability_v4"):
        from widemem_bench.answerability.v2 import assess_confidence_v2, encoder_fn
        from widemem_bench.answerability.v3 import assess_confidence_v3
        from widemem_bench.answerability.v4 import assess_confidence_v4

        name = version.rsplit("_", 1)[-1] if version != "answerability" else "v2"
        if embedder is None:
            raise ValueError(f"assess_confidence: answerability {name} needs embedder= (registry name)")
        if encoder is None:
            from widemem_bench.embedders import load_embedder

            encoder = load_embedder(embedder)
        assess = {"v3": assess_confidence_v3, "v4": assess_confidence_v4}.get(name, assess_confidence_v2)
        return assess(query, results, embedder=embedder, encode=encoder_fn(encoder))
    if version != "answerability_v1":
        raise ValueError("version must be 'answerability' (= 'answerability_v2'), 'answerability_v3', "
                         "'answerability_v4' or "
                         f"'answerability_v1', got {version!r}")
    if embedder is None:
        if model_id is None:
            raise ValueError("assess_confidence needs embedder= (registry name) or model_id=")
        embedder = _embedder_for_model_id(model_id)
    scorer = load_scorer(embedder)
    contents = [r.memory.content for r in results]
    cosines = [r.raw_similarity_score for r in results]
    return scorer.band(scorer.probability(query, contents, cosines))
