"""Answerability features for every question of a batch-scored data set.

The batched scorer (`engine.batch`) reproduces `MemoryEngine.search` over cached
similarities; here its final scores give each question's returned memories (the
engine's top_k, in rank order), and `features.query_features` turns them into the
same feature vector the engine's hook computes at search time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from widemem_bench.answerability.features import N_FEATURES, query_features


def returned_columns(prep: Any, final: np.ndarray) -> np.ndarray:
    """(Q, top_k) candidate columns in the engine's rank order, -1 where fewer were returned.

    Order: final score descending, then candidate position (store order). The engine
    also breaks exact final-score ties by the pre-boost score; such ties are rare
    enough (float equality) to leave out here.
    """
    present = prep.mem >= 0
    key = np.where(present, final, -np.inf)
    order = np.argsort(-key, axis=1, kind="stable")[:, : prep.top_k]
    taken = np.take_along_axis(present, order, axis=1)
    return np.where(taken, order, -1)


def feature_table(prep: Any, final: np.ndarray, texts: Any) -> np.ndarray:
    """(Q, N_FEATURES) features of every question (``texts`` in ``prep``'s question order)."""
    cols = returned_columns(prep, final)
    contents = prep.memories["content"].to_numpy()
    x = np.zeros((prep.n_questions, N_FEATURES), dtype=np.float64)
    for q, query in enumerate(texts):
        c = cols[q][cols[q] >= 0]
        mems = prep.mem[q, c]
        x[q] = query_features(str(query), [str(s) for s in contents[mems]], prep.sim[q, c].tolist())
    return x
