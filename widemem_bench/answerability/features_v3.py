"""Answerability v3 features of one search: v2's, plus what the parse says about the top memories.

v2 (`features_v2`) sees cosines, with and without the subject masked. What it cannot see
is structure: whose fact a memory is, which slot the question asks for, and whether the
memory holds a value of that kind or only mentions the entity ("booked a flight to
Lisbon" for "what time does my flight leave?"). The language layer
(`widemem_bench.language`) reads that with general grammar; `language.pair_features`
compares one (question, memory) pair. Here, per search:

- v2's ten features, unchanged (`features_v2._assemble`, one implementation);
- the pair features of the rank-1 memory (``top1_<name>``);
- over the first `TOP_K` memories, the best cosine among those where a structural
  statement holds (``best_<name>``: max of cosine x feature), so a linear model reads
  "a memory about this subject that holds a value of the asked type, at cosine c";
- the share of those memories whose subject conflicts with the question's, and
  whether an asked typed slot is held by none of them (``typed_missing``).

Each text is parsed once (`language.parse_many`, cached by the pipeline's hash); a
search parses its query, and the memories were parsed when added (or in the batch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from widemem_bench.answerability.features_v2 import FEATURES_V2
from widemem_bench.language import FEATURE_NAMES, Parse, pair_features

# Memories the structural maxima look at (rank order): the answer, when stored, is near the top.
TOP_K = 5
# Pair features whose cosine-weighted maximum over the top memories is a feature.
BEST: tuple[str, ...] = (
    "subject_same", "subject_partial", "owner_same", "q_head_mentioned",
    "holds_type", "holds_type_loose", "holds_any_value", "slot_head_in_memory", "head_and_value",
    "predicate_same", "noun_overlap", "frame_answered", "frame_answered_typed",
)
_IDX = {n: i for i, n in enumerate(FEATURE_NAMES)}
_BEST_IDX = np.array([_IDX[n] for n in BEST])
_CONFLICT = _IDX["subject_conflict"]
_TYPED = _IDX["slot_typed"]
_LOOSE = _IDX["holds_type_loose"]

FEATURES_LANG: tuple[str, ...] = (
    *(f"top1_{n}" for n in FEATURE_NAMES),
    *(f"best_{n}" for n in BEST),
    "best_no_conflict",   # best cosine among the top memories whose subject does not conflict
    "conflict_share",     # share of the top memories whose subject conflicts with the question's
    "typed_missing",      # a typed slot is asked and no top memory holds a value of that type
)
FEATURES_V3: tuple[str, ...] = (*FEATURES_V2, *FEATURES_LANG)
N_FEATURES_V3 = len(FEATURES_V3)
N_LANG = len(FEATURES_LANG)
_EMPTY = Parse(text="")


def language_features(q: Parse, memories: Sequence[Parse], cosines: Sequence[float]) -> np.ndarray:
    """The `FEATURES_LANG` part of one search: the question's parse against its memories' (rank order)."""
    k = min(len(memories), TOP_K)
    out = np.zeros(N_LANG, dtype=np.float64)
    nf = len(FEATURE_NAMES)
    if k == 0:
        out[:nf] = pair_features(q, _EMPTY)
        out[nf + len(BEST) + 2] = out[_TYPED]
        return out
    p = np.stack([pair_features(q, m) for m in memories[:k]]).astype(np.float64)
    c = np.clip(np.asarray([float(x) for x in cosines[:k]], dtype=np.float64), 0.0, None)
    out[:nf] = p[0]
    out[nf:nf + len(BEST)] = (p[:, _BEST_IDX] * c[:, None]).max(axis=0)
    ok = p[:, _CONFLICT] == 0.0
    j = nf + len(BEST)
    out[j] = c[ok].max() if ok.any() else 0.0
    out[j + 1] = 1.0 - float(ok.mean())
    out[j + 2] = float(p[0, _TYPED] == 1.0 and not (p[:, _LOOSE] == 1.0).any())
    return out
