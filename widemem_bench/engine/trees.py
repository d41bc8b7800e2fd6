"""Gradient-boosted trees as JSON numbers (answerability v3 and v4, the structure resolver's pair scorer):
fitted by scikit-learn, predicted in numpy.

Why trees: v3's structural features are mostly yes/no statements whose meaning depends
on each other ("holds a value of the asked type" counts only for a memory about the
asked subject); a logistic model adds them up. On development users it never saw,
scikit-learn's `HistGradientBoostingClassifier` gave world N AUROC 0.785 against 0.690
for the logistic model over the same features (reports/DESIGN_LOG.md, entry V3).

Training uses scikit-learn; the fitted trees are read out (feature, threshold, children,
leaf value per node) and prediction is an array walk, so the file needs no pickle and
loads in any process. `fit_trees` checks that the read-out trees reproduce scikit-learn's
probabilities on the training rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

MODEL_KIND = "gradient_boosted_trees"


@dataclass(frozen=True)
class TreeModel:
    """p(answerable) = sigmoid(baseline + sum of tree leaf values); ``x <= threshold`` goes left."""

    features: tuple[str, ...]
    baseline: float
    trees: tuple[dict[str, np.ndarray], ...]   # per tree: feature, threshold, left, right, leaf, value
    params: dict[str, Any]
    kind: str = MODEL_KIND

    def logit(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        if x.shape[1] != len(self.features):
            raise ValueError(f"x has {x.shape[1]} columns for {len(self.features)} features")
        rows = np.arange(x.shape[0])
        z = np.full(x.shape[0], self.baseline, dtype=np.float64)
        for t in self.trees:
            node = np.zeros(x.shape[0], dtype=np.int64)
            while True:
                inner = ~t["leaf"][node]
                if not inner.any():
                    break
                go_left = x[rows, t["feature"][node]] <= t["threshold"][node]
                node = np.where(inner, np.where(go_left, t["left"][node], t["right"][node]), node)
            z += t["value"][node]
        return z

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logit(x)))

    def prob_one(self, x: Any) -> float:
        """One feature vector, walked with plain Python (faster than numpy for one row)."""
        v = [float(a) for a in x]
        z = self.baseline
        for t in self._lists:  # type: ignore[attr-defined]
            f, thr, left, right, leaf, val = t
            i = 0
            while not leaf[i]:
                i = left[i] if v[f[i]] <= thr[i] else right[i]
            z += val[i]
        if z < -700:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def __post_init__(self) -> None:
        lists = tuple((t["feature"].tolist(), t["threshold"].tolist(), t["left"].tolist(), t["right"].tolist(),
                       t["leaf"].tolist(), t["value"].tolist()) for t in self.trees)
        object.__setattr__(self, "_lists", lists)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "features": list(self.features), "baseline": float(self.baseline),
                "params": dict(self.params),
                "trees": [{"feature": t["feature"].tolist(), "threshold": [float(v) for v in t["threshold"]],
                           "left": t["left"].tolist(), "right": t["right"].tolist(),
                           "leaf": [int(b) for b in t["leaf"]], "value": [float(v) for v in t["value"]]}
                          for t in self.trees]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TreeModel:
        missing = [k for k in ("kind", "features", "baseline", "trees") if k not in data]
        if missing:
            raise ValueError(f"tree model is missing keys {missing}")
        if data["kind"] != MODEL_KIND:
            raise ValueError(f"model kind must be {MODEL_KIND!r}, got {data['kind']!r}")
        n = len(data["features"])
        trees = []
        for i, t in enumerate(data["trees"]):
            arr = {"feature": np.asarray(t["feature"], dtype=np.int64),
                   "threshold": np.asarray(t["threshold"], dtype=np.float64),
                   "left": np.asarray(t["left"], dtype=np.int64), "right": np.asarray(t["right"], dtype=np.int64),
                   "leaf": np.asarray(t["leaf"], dtype=bool), "value": np.asarray(t["value"], dtype=np.float64)}
            m = arr["feature"].size
            if any(a.size != m for a in arr.values()) or m == 0:
                raise ValueError(f"tree {i}: node arrays differ in length")
            inner = ~arr["leaf"]
            if (arr["feature"][inner] >= n).any() or (arr["left"][inner] >= m).any() or (arr["right"][inner] >= m).any():
                raise ValueError(f"tree {i}: a node points outside the tree or the features")
            trees.append(arr)
        return cls(tuple(str(f) for f in data["features"]), float(data["baseline"]), tuple(trees),
                   dict(data.get("params", {})))


def fit_trees(x: np.ndarray, y: np.ndarray, features: tuple[str, ...], *, seed: int = 0, max_iter: int = 200,
              max_leaf_nodes: int = 15, learning_rate: float = 0.1, min_samples_leaf: int = 20,
              l2_regularization: float = 0.0, sample_weight: np.ndarray | None = None) -> TreeModel:
    """Fit scikit-learn's HistGradientBoostingClassifier (no early stopping: a fixed size) and read it out.
    ``min_samples_leaf`` and ``l2_regularization`` are scikit-learn's defaults unless set (and
    then recorded in ``params``)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    if x.ndim != 2 or x.shape[1] != len(features) or x.shape[0] != y.shape[0]:
        raise ValueError(f"x must be (n, {len(features)}) matching y, got {x.shape} and {y.shape}")
    if y.all() or not y.any():
        raise ValueError("y must hold both answerable and unanswerable questions")
    params = {"max_iter": max_iter, "max_leaf_nodes": max_leaf_nodes, "learning_rate": learning_rate,
              "early_stopping": False, "random_state": seed}
    if min_samples_leaf != 20:
        params["min_samples_leaf"] = min_samples_leaf
    if l2_regularization:
        params["l2_regularization"] = l2_regularization
    g = HistGradientBoostingClassifier(**params).fit(x, y, sample_weight=sample_weight)  # type: ignore[arg-type]
    trees = []
    for (pred,) in g._predictors:  # one tree per iteration (binary)
        nodes = pred.nodes
        trees.append({"feature": nodes["feature_idx"].astype(np.int64),
                      "threshold": nodes["num_threshold"].astype(np.float64),
                      "left": nodes["left"].astype(np.int64), "right": nodes["right"].astype(np.int64),
                      "leaf": nodes["is_leaf"].astype(bool), "value": nodes["value"].astype(np.float64)})
    model = TreeModel(tuple(features), float(np.ravel(g._baseline_prediction)[0]), tuple(trees), params)
    ours, theirs = model.predict_proba(x), g.predict_proba(x)[:, 1]
    if not np.allclose(ours, theirs, atol=1e-9):
        raise RuntimeError(f"read-out trees differ from scikit-learn's by {np.abs(ours - theirs).max():.2e}")
    return model
