"""Answerability scorer: is the answer to this query stored, beyond top-1 similarity?

Features of one search (`features.query_features`), a logistic regression with
Platt scaling fitted per embedder on the timelines' train split (`model.fit_model`),
band cut-offs of its probability chosen by Learn-then-Test, all stored in the
embedder's calibration file. `assess_confidence` is the engine's hook for
``EngineConfig(confidence="answerability")``.
"""

from widemem_bench.answerability.features import (
    FEATURES,
    N_FEATURES,
    feature_matrix,
    query_features,
)
from widemem_bench.answerability.model import AnswerabilityModel, fit_model
from widemem_bench.answerability.scorer import (
    Scorer,
    assess_confidence,
    load_scorer,
    scorer_from_calibration,
    set_scorer,
)

__all__ = [
    "FEATURES",
    "N_FEATURES",
    "AnswerabilityModel",
    "Scorer",
    "assess_confidence",
    "feature_matrix",
    "fit_model",
    "load_scorer",
    "query_features",
    "scorer_from_calibration",
    "set_scorer",
]
