"""Per-fact heads of the structure resolver's pair scorer: small classifiers on one MiniLM vector.

Three classifiers fitted on DEVELOPMENT facts only (the pair scorer's fitting sets), each
predicting from a fact's own vector. Version 3.2: one hidden layer (:data:`HIDDEN` ReLU units,
scikit-learn's ``MLPClassifier``, adam, fixed seed and size); version 3.1's were multinomial
logistic regressions. Why: with the gold subject in place of the head, world N's out-of-fold
updates went from 128 to 428 of 793 (DESIGN_LOG R20) - who a chat message or a note is about is
what the resolver misreads most, and a linear read of the mean-pooled vector got 92.5 % of world
N's subjects right, the hidden layer 94.5 %.

- ``family``: the gold attribute's family (the ``attribute`` column without its ":Name"
  suffix: "home_city", "employer", "pet");
- ``subject``: whose fact it is, as the gold ``subject`` names it ("user", "cousin",
  "best mate": a role, never a name);
- ``multi``: whether its attribute holds several values at once (gold ``multi_valued``).

Two facts whose predicted families agree, about the same kind of subject, on a
single-valued attribute, are what an update looks like; the pair scorer reads the heads'
agreement (:func:`head_row`). For the pairs it is fitted on, the heads' values come from
models that never saw the text (:func:`fit_heads` returns out-of-fold predictions: folds by
the text's sha256), so the scorer learns how much to trust them on unseen text.
Stored as plain numbers in the pair scorer's JSON file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

HEADS = ("family", "subject", "multi")
FOLDS = 3
HIDDEN = 256  # units of the one hidden layer
EPOCHS = 60  # adam's passes over the facts: a fixed size (no early stopping), so a refit is the same model


@dataclass(frozen=True)
class Linear:
    """p(class | x) = softmax(h @ w.T + b), h = relu(x @ w1.T + b1) (or x itself without a hidden
    layer); one row of ``w`` and two classes: a sigmoid."""

    classes: tuple[str, ...]
    w: np.ndarray
    b: np.ndarray
    w1: np.ndarray | None = None
    b1: np.ndarray | None = None

    def proba(self, x: np.ndarray) -> np.ndarray:
        h = np.atleast_2d(x)
        if self.w1 is not None and self.b1 is not None:
            h = np.maximum(h @ self.w1.T + self.b1, 0.0)
        z = h @ self.w.T + self.b
        if self.w.shape[0] == 1:
            p1 = 1.0 / (1.0 + np.exp(-z[:, 0]))
            return np.stack([1.0 - p1, p1], axis=1)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        out: np.ndarray = e / e.sum(axis=1, keepdims=True)
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"classes": list(self.classes), "w": _rows(self.w), "b": _rows(self.b)}
        if self.w1 is not None and self.b1 is not None:
            out |= {"w1": _rows(self.w1), "b1": _rows(self.b1)}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Linear:
        w = np.asarray(d["w"], dtype=np.float64)
        b = np.asarray(d["b"], dtype=np.float64)
        if w.ndim != 2 or b.shape != (w.shape[0],) or len(d["classes"]) != max(2, w.shape[0]):
            raise ValueError("a head's weights do not match its classes")
        if "w1" not in d:
            return cls(tuple(str(c) for c in d["classes"]), w, b)
        w1 = np.asarray(d["w1"], dtype=np.float64)
        b1 = np.asarray(d["b1"], dtype=np.float64)
        if w1.ndim != 2 or b1.shape != (w1.shape[0],) or w.shape[1] != w1.shape[0]:
            raise ValueError("a head's hidden layer does not match its output layer")
        return cls(tuple(str(c) for c in d["classes"]), w, b, w1, b1)


def _rows(a: np.ndarray) -> list[Any]:
    """Weights as JSON numbers, 5 decimals (the committed file's size; the scores move < 1e-4)."""
    if a.ndim == 1:
        return [round(float(v), 5) for v in a]
    return [[round(float(v), 5) for v in r] for r in a]


def _fit(x: np.ndarray, y: np.ndarray, seed: int) -> Linear:
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    with warnings.catch_warnings():  # a fixed number of passes, by design: no convergence test
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = MLPClassifier(hidden_layer_sizes=(HIDDEN,), alpha=1e-3, max_iter=EPOCHS, random_state=seed).fit(x, y)
    # scikit-learn keeps (in, out) matrices; Linear keeps (out, in) rows
    return Linear(tuple(str(c) for c in m.classes_), np.asarray(m.coefs_[1].T, dtype=np.float64),
                  np.asarray(m.intercepts_[1], dtype=np.float64), np.asarray(m.coefs_[0].T, dtype=np.float64),
                  np.asarray(m.intercepts_[0], dtype=np.float64))


def _fold(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % FOLDS


def fit_heads(texts: Sequence[str], x: np.ndarray, labels: Mapping[str, Sequence[str]], seed: int
              ) -> tuple[dict[str, Linear], dict[str, dict[str, np.ndarray]]]:
    """(the heads fitted on every row, per head text -> out-of-fold probabilities over its
    classes). ``texts[i]`` is row ``i`` of ``x``; a text on several rows keeps its first
    row's out-of-fold value."""
    fold = np.asarray([_fold(t) for t in texts])
    heads: dict[str, Linear] = {}
    oof: dict[str, dict[str, np.ndarray]] = {}
    for name in HEADS:
        y = np.asarray(labels[name])
        full = _fit(x, y, seed)
        out = np.zeros((len(texts), len(full.classes)))
        for f in range(FOLDS):
            part = _fit(x[fold != f], y[fold != f], seed)
            cols = [full.classes.index(c) for c in part.classes]
            out[np.ix_(fold == f, cols)] = part.proba(x[fold == f])
        heads[name] = full
        per: dict[str, np.ndarray] = {}
        for t, row in zip(texts, out, strict=True):
            per.setdefault(t, row)
        oof[name] = per
    return heads, oof


def predict(heads: dict[str, Linear], texts: Sequence[str], x: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """Per head, text -> probabilities (rows of ``x``)."""
    return {name: dict(zip(texts, h.proba(x), strict=True)) for name, h in heads.items()}


def roles_differ(so: np.ndarray, sn: np.ndarray, cut: float) -> bool:
    """The subject head reads two different roles, each with probability at least ``cut``."""
    return bool(so.argmax() != sn.argmax() and min(so.max(), sn.max()) >= cut)


def roles_agree(so: np.ndarray, sn: np.ndarray, cut: float) -> bool:
    """The subject head reads one role for both, each with probability at least ``cut``."""
    return bool(so.argmax() == sn.argmax() and min(so.max(), sn.max()) >= cut)


def head_row(vals: dict[str, dict[str, np.ndarray]], old: str, new: str, user_col: int, multi_col: int) -> list[float]:
    """The heads' features of one pair (``pair_model.HEAD_FEATURES`` order)."""
    fo, fn = vals["family"][old], vals["family"][new]
    so, sn = vals["subject"][old], vals["subject"][new]
    uo, un = float(so[user_col]), float(sn[user_col])
    mo, mn = float(vals["multi"][old][multi_col]), float(vals["multi"][new][multi_col])
    return [float(fo @ fn), float(fo.argmax() == fn.argmax()), float(min(fo.max(), fn.max())),
            float(so @ sn), float(so.argmax() == sn.argmax()), uo, un, abs(uo - un), mo, mn, max(mo, mn)]
