"""Answerability v2 features of one search: no topic word list, subject masked out.

v1 (`features`) matched queries and memories through topic words written for the
synthetic timelines' attributes, and read the person's name shared by a question and
a fact as a match. v2 looks at:

- the raw cosine distribution of the returned memories (top-1, best, gap to the mean);
- the cosine once the subject (pronouns, relation words, names; `subject`) is masked
  out of the query and of each memory: what is left is the attribute asked about and
  the attribute stored, so "where does Priya live?" no longer matches every fact that
  starts with "Priya";
- whether that best masked match is about the query's subject (same person, someone
  else, cannot tell), and the best masked cosine among memories about that subject;
- attribute agreement learned from train embeddings: soft assignment of the masked
  query to question prototypes and of the masked memory to fact prototypes (one per
  attribute of the training world, `Prototypes`), and the overlap of the two.

Embeddings come from an ``encode(texts, kind)`` callable returning L2-normalised rows
(the engine's embedder; its cache makes repeated texts free).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from widemem_bench.answerability.subject import (
    agreement,
    mask_subject,
    memory_subject,
    query_subject,
)

Encode = Callable[[Sequence[str], str], np.ndarray]

FEATURES_V2: tuple[str, ...] = (
    "top1_cosine",       # raw cosine of the rank-1 result (widemem's confidence score)
    "max_cosine",        # best raw cosine among the returned results
    "cosine_gap",        # best raw cosine minus the mean over the returned results
    "masked_max",        # best cosine with the subject masked out of query and memory
    "masked_gap",        # that best minus the mean masked cosine
    "best_is_other",     # the best masked match is about someone other than the query's subject
    "masked_possible",   # best masked cosine among memories not about someone else (0: none)
    "share_other",       # share of the returned memories about someone else
    "attr_agree",        # prototype agreement of the query and the best not-someone-else memory
    "attr_agree_max",    # best prototype agreement x masked cosine among not-someone-else memories
)
N_FEATURES_V2 = len(FEATURES_V2)
# widemem's balanced mode returns 10 results; the features read at most that many.
MAX_RESULTS = 10


@dataclass(frozen=True)
class Prototypes:
    """Attribute prototypes from train embeddings: one mean masked vector per attribute.

    ``query`` (A, d) from answerable train questions, ``memory`` (A, d) from train facts,
    both L2-normalised; ``tau`` the softmax temperature of the soft assignment.
    """

    labels: tuple[str, ...]
    query: np.ndarray
    memory: np.ndarray
    tau: float = 20.0

    def agreement(self, qvec: np.ndarray, mvecs: np.ndarray) -> np.ndarray:
        """Per memory: sum over attributes of p(attr | query) * p(attr | memory)."""
        pq = _softmax(self.tau * (self.query @ qvec))
        pm = _softmax(self.tau * (np.atleast_2d(mvecs) @ self.memory.T), axis=1)
        return np.asarray(pm @ pq, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "tau": float(self.tau),
                "query": np.round(self.query.astype(np.float64), 6).tolist(),
                "memory": np.round(self.memory.astype(np.float64), 6).tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Prototypes:
        missing = [k for k in ("labels", "query", "memory") if k not in data]
        if missing:
            raise ValueError(f"answerability v2 prototypes are missing keys {missing}")
        q = np.asarray(data["query"], dtype=np.float32)
        m = np.asarray(data["memory"], dtype=np.float32)
        labels = tuple(str(x) for x in data["labels"])
        if q.ndim != 2 or q.shape != m.shape or q.shape[0] != len(labels):
            raise ValueError(f"answerability v2 prototypes: query {q.shape} and memory {m.shape} "
                             f"must both be ({len(labels)}, dim)")
        return cls(labels, q, m, float(data.get("tau", 20.0)))


def _softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def fit_prototypes(qvecs: np.ndarray, qlabels: Sequence[str], mvecs: np.ndarray, mlabels: Sequence[str],
                   tau: float = 20.0) -> Prototypes:
    """Mean masked embedding per attribute present on both sides (train data only)."""
    ql = np.asarray(qlabels, dtype=object)
    ml = np.asarray(mlabels, dtype=object)
    labels = sorted(set(ql.tolist()) & set(ml.tolist()))
    if not labels:
        raise ValueError("fit_prototypes: no attribute is labelled on both questions and memories")

    def means(v: np.ndarray, lab: np.ndarray) -> np.ndarray:
        out = np.stack([v[lab == a].mean(axis=0) for a in labels])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)

    return Prototypes(tuple(labels), means(qvecs, ql), means(mvecs, ml), tau)


def masked_texts(query: str, contents: Sequence[str]) -> tuple[str, list[str], np.ndarray]:
    """(masked query, masked memories, subject agreement per memory), as the features use them."""
    subjects = [memory_subject(c) for c in contents]
    known = frozenset(v for k, v in subjects if k == "name")
    qsub = query_subject(query, known)
    names = known | ({qsub[1]} if qsub[0] == "name" else set())
    agree = np.array([agreement(qsub, s) for s in subjects], dtype=np.float64)
    return mask_subject(query, frozenset(names)), [mask_subject(c, frozenset(names)) for c in contents], agree


def query_features_v2(
    query: str,
    contents: Sequence[str],
    cosines: Sequence[float],
    encode: Encode,
    prototypes: Prototypes | None,
) -> np.ndarray:
    """Feature vector (len `N_FEATURES_V2`) of one query and its returned memories (rank order)."""
    out = np.zeros(N_FEATURES_V2, dtype=np.float64)
    n = min(len(contents), MAX_RESULTS)
    if n == 0:
        out[0:5] = (-1.0, -1.0, 0.0, -1.0, 0.0)
        return out
    contents = [str(c) for c in contents[:n]]
    c = np.asarray([float(x) for x in cosines[:n]], dtype=np.float64)
    mq, mm, agree = masked_texts(query, contents)
    qv = np.asarray(encode([mq], "query"), dtype=np.float32)[0]
    mv = np.asarray(encode(mm, "passage"), dtype=np.float32)
    s = (mv @ qv).astype(np.float64)
    return _assemble(c, s, agree, qv, mv, prototypes)


def _assemble(c: np.ndarray, s: np.ndarray, agree: np.ndarray, qv: np.ndarray, mv: np.ndarray,
              prototypes: Prototypes | None) -> np.ndarray:
    out = np.zeros(N_FEATURES_V2, dtype=np.float64)
    out[0] = c[0]
    out[1] = c.max()
    out[2] = c.max() - c.mean()
    best = int(np.argmax(s))
    out[3] = s[best]
    out[4] = s[best] - s.mean()
    # "Surely the same person" and "cannot tell" count alike: a first-person world only
    # ever shows the first, so a model that told them apart would learn an artefact.
    possible = agree >= 0.5
    out[5] = float(not possible[best])
    out[6] = s[possible].max() if possible.any() else 0.0
    out[7] = 1.0 - float(possible.mean())
    if prototypes is not None and possible.any():
        p = prototypes.agreement(qv, mv)
        idx = np.flatnonzero(possible)
        out[8] = p[idx[np.argmax(s[idx])]]
        out[9] = float(np.max(p[idx] * s[idx]))
    return out
