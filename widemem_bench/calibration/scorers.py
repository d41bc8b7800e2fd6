"""A scorer's cut-offs certified on users its fit never saw, scored by the very model that ships.

Any `CertifiableScorer` (fit, predict, to_dict) on any feature table: answerability v1
(the calibrate pipeline's default) and v3 (`answerability.fit_v3`) go through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from widemem_bench.calibration.certify import certify_ladder

CALIBRATION_SHARE = 0.5   # share of train users kept out of the scorer's fit, to certify its cut-offs


class CertifiableScorer(Protocol):
    """What the pipeline needs of a scorer to certify its cut-offs: fit, predict, describe."""

    def fit(self, x: Any, y: np.ndarray, groups: np.ndarray) -> Any: ...

    def predict(self, x: Any) -> np.ndarray: ...

    def to_dict(self) -> dict[str, Any]: ...


def split_users(users: np.ndarray, share: float, seed: int) -> np.ndarray:
    """Boolean mask of the rows whose user falls in the calibration share (seeded, by user)."""
    uniq = np.unique(users.astype(str))
    rng = np.random.default_rng(seed)
    held = set(rng.permutation(uniq)[: round(share * uniq.size)].tolist())
    return np.array([u in held for u in users.astype(str)])


def certify_scorer(scorer: CertifiableScorer, x: Any, kinds: np.ndarray, users: np.ndarray, groups: np.ndarray,
                   settings: Mapping[str, Any], *, seed: int = 0, share: float = CALIBRATION_SHARE,
                   score_name: str = "answerability") -> tuple[Any, np.ndarray, dict[str, Any]]:
    """Fit ``scorer`` on some users, certify its cut-offs on the others, scored by that same model.

    ``x`` holds the train rows only (indexable by a boolean mask). Returns the ladder,
    the scorer's probabilities for every row of ``x`` and the split's description.
    """
    held = split_users(users, share, seed)
    y = kinds == "answerable"
    scorer.fit(x[~held], y[~held], groups[~held])
    prob = scorer.predict(x)
    ladder = certify_ladder(prob[held], kinds[held], users[held], targets=settings["targets"],
                            caps=settings["cap"], none_answerable=settings["none_answerable"],
                            low_caps=settings["low_cap"], delta=settings["delta"], method=settings["method"],
                            score_name=score_name)
    split = {"fit_users": int(np.unique(users[~held]).size), "calibration_users": int(np.unique(users[held]).size),
             "fit_questions": int((~held).sum()), "calibration_questions": int(held.sum()),
             "note": "cut-offs certified on users the shipped model never saw, scored by the shipped model"}
    return ladder, prob, split
