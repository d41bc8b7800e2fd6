"""The answerability model: standardised logistic regression + Platt scaling, as JSON numbers.

Training uses scikit-learn; prediction is a dot product and a sigmoid in numpy, so
the model needs no pickle (the calibration file stores its numbers) and one query
costs a few microseconds.

Platt scaling is fitted on out-of-fold decision values (folds by user), never on the
values the regression saw in training, which would be over-confident. The same
out-of-fold probabilities are what `fit_model` returns for choosing band cut-offs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from widemem_bench.answerability.features import FEATURES
from widemem_bench.answerability.features_v2 import FEATURES_V2
from widemem_bench.answerability.features_v3 import FEATURES_V3

MODEL_KIND = "logistic_regression+platt"
# v1's, v2's (`answerability.v2`) and v3's features: a stored model must name one of them in order.
KNOWN_FEATURE_SETS: tuple[tuple[str, ...], ...] = (FEATURES, FEATURES_V2, FEATURES_V3)


@dataclass(frozen=True)
class AnswerabilityModel:
    """p(answerable) = sigmoid(a * (w . (x - mean) / scale + b0) + b)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    platt_a: float
    platt_b: float
    kind: str = MODEL_KIND

    def __post_init__(self) -> None:
        n = len(self.features)
        for key in ("mean", "scale", "coef"):
            if len(getattr(self, key)) != n:
                raise ValueError(f"model {key} has {len(getattr(self, key))} values for {n} features")
        if self.kind != MODEL_KIND:
            raise ValueError(f"model kind must be {MODEL_KIND!r}, got {self.kind!r}")
        if tuple(self.features) not in KNOWN_FEATURE_SETS:
            raise ValueError(f"model features {list(self.features)} are none of v1's {list(FEATURES)}, v2's "
                             f"{list(FEATURES_V2)} or v3's ({len(FEATURES_V3)} names)")
        # Folded once: prob = sigmoid(x . w_eff + b_eff).
        w = np.asarray(self.coef) / np.asarray(self.scale)
        object.__setattr__(self, "_w", self.platt_a * w)
        object.__setattr__(self, "_b", self.platt_a * (self.intercept - float(w @ np.asarray(self.mean))) + self.platt_b)
        object.__setattr__(self, "_wl", [float(v) for v in self.platt_a * w])

    def logit(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float64) @ self._w + self._b  # type: ignore[attr-defined]

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """Calibrated p(answerable) per row of ``x`` (n, n_features), or a float for one row."""
        z = self.logit(x)
        return 1.0 / (1.0 + np.exp(-z))

    def prob_one(self, x: Any) -> float:
        """p(answerable) of one feature vector with plain floats (faster than numpy for one row)."""
        z = self._b + sum(w * float(v) for w, v in zip(self._wl, x, strict=True))  # type: ignore[attr-defined]
        if z < -700:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "features": list(self.features),
            "mean": [float(v) for v in self.mean],
            "scale": [float(v) for v in self.scale],
            "coef": [float(v) for v in self.coef],
            "intercept": float(self.intercept),
            "platt_a": float(self.platt_a),
            "platt_b": float(self.platt_b),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerabilityModel:
        need = ("features", "mean", "scale", "coef", "intercept", "platt_a", "platt_b")
        missing = [k for k in need if k not in data]
        if missing:
            raise ValueError(f"answerability model is missing keys {missing}")
        return cls(
            features=tuple(data["features"]),
            mean=tuple(float(v) for v in data["mean"]),
            scale=tuple(float(v) for v in data["scale"]),
            coef=tuple(float(v) for v in data["coef"]),
            intercept=float(data["intercept"]),
            platt_a=float(data["platt_a"]),
            platt_b=float(data["platt_b"]),
            kind=str(data.get("kind", MODEL_KIND)),
        )


def fit_model(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    *,
    c: float = 1.0,
    n_folds: int = 5,
    seed: int = 0,
    features: tuple[str, ...] = FEATURES,
) -> tuple[AnswerabilityModel, np.ndarray]:
    """Fit on (x, y); returns the model and out-of-fold calibrated probabilities of x.

    ``groups`` (user ids) keep a user's questions in one fold, so out-of-fold means
    "a user the regression never saw", as on the validation and holdout splits.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    if x.ndim != 2 or x.shape[1] != len(features) or x.shape[0] != y.shape[0]:
        raise ValueError(f"x must be (n, {len(features)}) matching y, got {x.shape} and {y.shape}")
    if y.all() or not y.any():
        raise ValueError("y must hold both answerable and unanswerable questions")
    if c <= 0:
        raise ValueError(f"c must be positive, got {c}")

    def standardise(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu = a.mean(axis=0)
        sd = a.std(axis=0)
        return mu, np.where(sd > 1e-12, sd, 1.0)

    def lr() -> LogisticRegression:
        return LogisticRegression(C=c, max_iter=2000, random_state=seed)

    n_groups = len(np.unique(groups))
    folds = GroupKFold(n_splits=max(2, min(n_folds, n_groups)))
    oof = np.zeros(len(y), dtype=np.float64)
    for tr, te in folds.split(x, y, groups):
        mu, sd = standardise(x[tr])
        m = lr().fit((x[tr] - mu) / sd, y[tr])
        oof[te] = m.decision_function((x[te] - mu) / sd)
    # Platt: a 1-D logistic regression of the label on the out-of-fold decision value,
    # practically unregularised (two parameters, thousands of questions).
    platt = LogisticRegression(C=1e6, max_iter=2000).fit(oof[:, None], y)
    a, b = float(platt.coef_[0, 0]), float(platt.intercept_[0])
    oof_prob = 1.0 / (1.0 + np.exp(-(a * oof + b)))
    mu, sd = standardise(x)
    final = lr().fit((x - mu) / sd, y)
    model = AnswerabilityModel(
        features=tuple(features),
        mean=tuple(float(v) for v in mu),
        scale=tuple(float(v) for v in sd),
        coef=tuple(float(v) for v in final.coef_[0]),
        intercept=float(final.intercept_[0]),
        platt_a=a,
        platt_b=b,
    )
    return model, oof_prob
