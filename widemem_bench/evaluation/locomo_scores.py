"""LoCoMo's abstention scores: speaker-aware similarity, BM25 hybrid search and ownership.

Per question of a LoCoMo conversation: evidence ranks under the plain cosine and the
name-free hybrid search, and every score of the `locomo` experiment (see its docstring):
top-1 cosine and margin, the named speaker's best match, speaker contrast, and
``ownership``, the softmax-weighted share of the best-matching evidence that belongs to
the named speaker (first-person turns to their speaker, second-person replies to the
addressee). Also the leave-one-conversation-out temperature choice and logistic
regression over these features. Pure numpy / scikit-learn; no files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from widemem_bench.external.locomo import LoCoMo
from widemem_bench.metrics.rates import auroc_ranksum

_TOKEN = re.compile(r"[a-z0-9']+")
# Function words carry no topic; leaving them in lets BM25 match on "did" and "what".
_STOP = frozenset(
    ["a", "an", "the", "of", "to", "in", "on", "at", "for", "and", "or", "is", "was", "were", "are", "be", "been", "did", "do", "does", "what", "when", "where", "who", "why", "how", "which", "that", "this", "with", "her", "his", "their", "he", "she", "they", "it", "its", "from", "by", "as", "about", "s", "has", "have", "had", "would", "could", "will", "can"]
)
# The answerability scorer reads the top results of a search (its features use the top 10).
_SCORER_RESULTS = 10
_FIRST = frozenset(["i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself", "we", "we're", "we've", "our", "ours", "us"])
_SECOND = frozenset(["you", "you're", "you've", "you'd", "you'll", "your", "yours", "yourself"])




def named_speakers(question: str, speakers: Sequence[str]) -> list[str]:
    """The conversation's speakers the question names (word-bounded, case-sensitive)."""
    return [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", question)]


def strip_speakers(question: str, speakers: Sequence[str]) -> str:
    """The question without speaker names (and their "'s"): the name would otherwise pull the
    search towards any turn that mentions or addresses that person."""
    for s in speakers:
        question = re.sub(rf"\b{re.escape(s)}(?:'s)?\b", "", question)
    return " ".join(question.split())


def _tokens(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in _STOP]


def self_ownership(text: str) -> float:
    """Share of a turn's content the speaker claims for themself, in (0, 1).

    First-person words ("I", "my") say the content is the speaker's; second-person words
    ("you", "your") say it belongs to the addressee. Add-one smoothing gives 0.5 to a
    turn with neither, and keeps a single pronoun from deciding everything.
    """
    words = _TOKEN.findall(text.lower())
    first = sum(w in _FIRST for w in words)
    second = sum(w in _SECOND for w in words)
    return (first + 0.5) / (first + second + 1.0)


def bm25_matrix(queries: Sequence[str], docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """Okapi BM25 of each query (binary terms) against each doc; (n_queries, n_docs) float32."""
    vec = CountVectorizer(tokenizer=_tokens, lowercase=False, token_pattern=None)
    try:
        tf = vec.fit_transform(docs).tocsr().astype(np.float64)
    except ValueError:  # empty vocabulary: no doc has a content word
        return np.zeros((len(queries), len(docs)), dtype=np.float32)
    n_docs = tf.shape[0]
    df = np.asarray((tf > 0).sum(axis=0)).ravel()
    idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    length = np.asarray(tf.sum(axis=1)).ravel()
    norm = k1 * (1.0 - b + b * length / max(float(length.mean()), 1e-9))
    weighted = tf.copy()
    rows = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
    weighted.data = tf.data * (k1 + 1.0) / (tf.data + norm[rows])
    q = CountVectorizer(tokenizer=_tokens, lowercase=False, token_pattern=None,
                        vocabulary=vec.vocabulary_, binary=True).transform(queries)
    q = sp.csr_matrix(q.multiply(idf[None, :]))
    return np.asarray((q @ weighted.T).todense(), dtype=np.float32)


def _softmax_rows(x: np.ndarray, tau: float) -> np.ndarray:
    z = (x - x.max(axis=1, keepdims=True)) / tau
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _first_rank(order: np.ndarray, dia: np.ndarray, evidence: Sequence[tuple[str, ...]]) -> np.ndarray:
    """1-based rank of the first evidence memory per question (inf when none / no evidence)."""
    ranks = np.full(len(evidence), np.inf)
    ranked_dia = dia[order]
    for i, ev in enumerate(evidence):
        if not ev:
            continue
        hit = np.flatnonzero(np.isin(ranked_dia[i], list(ev)))
        if hit.size:
            ranks[i] = hit[0] + 1
    return ranks


# ---------------------------------------------------------------------------- features

FEATURES = (
    "top1_cosine", "margin", "speaker_top1", "speaker_top1_bare", "n_named", "bare_top1", "bm25_top1", "hybrid_top1",
    "contrast_cosine", "contrast_bm25", "speaker_contrast", "ownership_top1", "ownership_top5",
    "ownership_max",
)


def question_features(
    data: LoCoMo,
    embedder: Any,
    *,
    memory_form: str = "turn",
    bm25_weight: float = 0.03,
    temperatures: Sequence[float] = (0.05, 0.1, 0.2),
    ownership_temperature: float = 0.1,
    scorer: Any | None = None,
) -> pd.DataFrame:
    """One row per question: labels, evidence ranks and every score (see the module docstring).

    `scorer` (an `answerability.Scorer`) adds the ``answerability`` column: its probability
    from the question and the top results of the plain cosine search, as the engine sees them.

    All texts are embedded in four batched calls (the embedder's cache makes re-runs free);
    the rest is array arithmetic per conversation.
    """
    mem = data.memories(memory_form).reset_index(drop=True)
    q = data.questions.reset_index(drop=True)
    spk_of = {sid: data.speakers(sid) for sid in data.sample_ids}
    stripped = [strip_speakers(t, spk_of[s]) for t, s in zip(q["question"], q["sample_id"], strict=True)]
    # Ownership is read from the whole source turn: the rule extractor drops the "I".
    own_turn = {
        (sid, dia): self_ownership(str(text))
        for sid, dia, text in zip(data.turns["sample_id"], data.turns["dia_id"], data.turns["text"], strict=True)
    }
    emb = _Embedded(
        mem=embedder.encode(list(mem["content"]), kind="passage"),
        bare=embedder.encode(list(mem["text"]), kind="passage"),
        q=embedder.encode(list(q["question"]), kind="query"),
        qs=embedder.encode(stripped, kind="query"),
    )
    out = q[["sample_id", "qa_index", "question", "category", "category_name", "answerable"]].copy()
    out["evidence"] = ["; ".join(ev) for ev in q["evidence"]]
    cols = _empty_columns(len(q), temperatures, scorer is not None)
    named_col: list[str] = [""] * len(q)
    # Whether an evidence turn was said by the one named speaker (None: not exactly one named).
    ev_by_named: list[bool | None] = [None] * len(q)
    taus = {*temperatures, ownership_temperature}

    for sid in data.sample_ids:
        mi = np.flatnonzero(mem["sample_id"].to_numpy() == sid)
        qi = np.flatnonzero(q["sample_id"].to_numpy() == sid)
        if qi.size == 0 or mi.size == 0:
            continue
        dia = mem["dia_id"].to_numpy()[mi]
        own = np.array([own_turn[(sid, d)] for d in dia])
        bm = bm25_matrix([stripped[i] for i in qi], list(mem["text"].to_numpy()[mi]))
        conv = _conversation(emb, mi, qi, dia, own, bm, bm25_weight, taus, mem["speaker"].to_numpy()[mi])
        evidence = [q["evidence"].iloc[i] for i in qi]
        _fill_search_columns(cols, conv, qi, evidence, mi.size)

        contents = mem["content"].to_numpy()[mi]
        for k, i in enumerate(qi):
            if scorer is not None:
                top = conv.order_full[k, :_SCORER_RESULTS]
                cols["answerability"][i] = scorer.probability(
                    str(q["question"].iloc[i]), [str(c) for c in contents[top]],
                    conv.sorted_full[k, :_SCORER_RESULTS].tolist()
                )
            names = named_speakers(q["question"].iloc[i], spk_of[sid])
            named_col[i] = ",".join(names)
            cols["n_named"][i] = len(names)
            ev_by_named[i] = _speaker_scores(cols, conv, k, int(i), names, q["evidence"].iloc[i],
                                             temperatures, ownership_temperature)

    for c, v in cols.items():
        out[c] = v
    out["named"] = named_col
    out["evidence_by_named"] = pd.array(ev_by_named, dtype="boolean")
    return out


@dataclass(frozen=True)
class _Embedded:
    """The four batched embeddings: memories with and without their speaker, questions
    with and without the speakers' names."""

    mem: np.ndarray
    bare: np.ndarray
    q: np.ndarray
    qs: np.ndarray


@dataclass(frozen=True)
class _Conversation:
    """The similarity matrices of one conversation's questions (rows) against its
    memories (columns), and what each memory is: speaker, dialogue id, self-ownership."""

    spk: np.ndarray
    dia: np.ndarray
    own: np.ndarray
    s_full: np.ndarray
    s_bare: np.ndarray
    bm: np.ndarray
    hyb: np.ndarray
    order_full: np.ndarray
    order_hyb: np.ndarray
    sorted_full: np.ndarray
    soft: dict[float, np.ndarray]


def _empty_columns(n: int, temperatures: Sequence[float], with_scorer: bool) -> dict[str, np.ndarray]:
    cols: dict[str, np.ndarray] = {c: np.zeros(n) for c in FEATURES}
    for tau in temperatures:
        cols[f"ownership_tau{tau:g}"] = np.zeros(n)
    cols["ownership"] = np.zeros(n)
    if with_scorer:
        cols["answerability"] = np.zeros(n)
    cols["rank_cosine"] = np.full(n, np.inf)
    cols["rank_hybrid"] = np.full(n, np.inf)
    return cols


def _conversation(emb: _Embedded, mi: np.ndarray, qi: np.ndarray, dia: np.ndarray, own: np.ndarray,
                  bm: np.ndarray, bm25_weight: float, taus: set[float], spk: np.ndarray) -> _Conversation:
    s_full = emb.q[qi] @ emb.mem[mi].T
    s_bare = emb.qs[qi] @ emb.bare[mi].T
    hyb = s_bare + bm25_weight * bm
    order_full = np.argsort(-s_full, axis=1, kind="stable")
    order_hyb = np.argsort(-hyb, axis=1, kind="stable")
    return _Conversation(spk, dia, own, s_full, s_bare, bm, hyb, order_full, order_hyb,
                         np.take_along_axis(s_full, order_full, axis=1),
                         {tau: _softmax_rows(hyb, tau) for tau in taus})


def _fill_search_columns(cols: dict[str, np.ndarray], c: _Conversation, qi: np.ndarray,
                         evidence: list[Any], n_memories: int) -> None:
    """Evidence ranks and the top scores of the plain, bare, BM25 and hybrid searches."""
    cols["rank_cosine"][qi] = _first_rank(c.order_full, c.dia, evidence)
    cols["rank_hybrid"][qi] = _first_rank(c.order_hyb, c.dia, evidence)
    cols["top1_cosine"][qi] = c.sorted_full[:, 0]
    cols["margin"][qi] = c.sorted_full[:, 0] - (c.sorted_full[:, 1] if n_memories > 1 else 0.0)
    cols["bare_top1"][qi] = c.s_bare.max(axis=1)
    cols["bm25_top1"][qi] = c.bm.max(axis=1)
    cols["hybrid_top1"][qi] = c.hyb.max(axis=1)


def _speaker_scores(cols: dict[str, np.ndarray], c: _Conversation, k: int, i: int, names: list[str],
                    evidence: Any, temperatures: Sequence[float], ownership_temperature: float) -> bool | None:
    """The named-speaker scores of question ``i`` (row ``k`` of its conversation); returns
    whether an evidence turn was said by the one named speaker (None: not exactly one)."""
    mine = c.spk == names[0] if len(names) == 1 else None
    by_named = None if mine is None else bool(np.isin(c.dia[mine], list(evidence)).any())
    if mine is None or not mine.any() or mine.all():
        # Both or neither speaker named, or one side has no memory: nothing to contrast.
        cols["speaker_top1"][i] = c.s_full[k].max()
        cols["speaker_top1_bare"][i] = c.s_bare[k].max()
        for tau in temperatures:
            cols[f"ownership_tau{tau:g}"][i] = 0.5
        cols["ownership"][i] = cols["ownership_top1"][i] = cols["ownership_top5"][i] = 0.5
        return by_named
    s_bare, bm, hyb = c.s_bare[k], c.bm[k], c.hyb[k]
    cols["speaker_top1"][i] = c.s_full[k][mine].max()
    cols["speaker_top1_bare"][i] = s_bare[mine].max()
    cols["contrast_cosine"][i] = s_bare[mine].max() - s_bare[~mine].max()
    cols["contrast_bm25"][i] = bm[mine].max() - bm[~mine].max()
    cols["speaker_contrast"][i] = hyb[mine].max() - hyb[~mine].max()
    # Probability that each memory's content belongs to the named speaker.
    owned = np.where(mine, c.own, 1.0 - c.own)
    for tau in temperatures:
        cols[f"ownership_tau{tau:g}"][i] = float(c.soft[tau][k] @ owned)
    cols["ownership"][i] = float(c.soft[ownership_temperature][k] @ owned)
    top = c.order_hyb[k]
    cols["ownership_top1"][i] = owned[top[0]]
    cols["ownership_top5"][i] = owned[top[:5]].mean()
    cols["ownership_max"][i] = (hyb * owned).max() - (hyb * (1.0 - owned)).max()
    return by_named


def sensitivity_table(
    data: LoCoMo,
    embedder: Any,
    temperatures: Sequence[float] = (0.02, 0.05, 0.1, 0.2, 0.5),
    bm25_weights: Sequence[float] = (0.0, 0.01, 0.03, 0.05, 0.1),
) -> pd.DataFrame:
    """AUROC of ``ownership`` over a grid of its two research-chosen settings (long format:
    embedder, bm25_weight, temperature, auroc), to show how much the headline leans on them."""
    rows = []
    for w in bm25_weights:
        pq = question_features(data, embedder, bm25_weight=float(w), temperatures=temperatures)
        y = pq["answerable"].to_numpy(dtype=bool)
        for t in temperatures:
            rows.append({"embedder": str(getattr(embedder, "name", "embedder")), "bm25_weight": float(w),
                         "temperature": float(t), "auroc": auroc_ranksum(pq[f"ownership_tau{t:g}"].to_numpy(dtype=float), y)})
    return pd.DataFrame(rows)


def feature_columns(per_query: pd.DataFrame) -> list[str]:
    """The model inputs: every score column except the evidence ranks and the final LR."""
    own = sorted(c for c in per_query.columns if c.startswith("ownership_tau"))
    return [*FEATURES, *own, "ownership"]


def grouped_temperature_scores(per_query: pd.DataFrame, temperatures: Sequence[float]) -> tuple[np.ndarray, list[float]]:
    """``ownership`` with its softmax temperature chosen on the other conversations (best
    AUROC there), so that no held-out conversation influenced its own setting."""
    y = per_query["answerable"].to_numpy(dtype=bool)
    groups = per_query["sample_id"].to_numpy()
    cols = {t: per_query[f"ownership_tau{t:g}"].to_numpy(dtype=float) for t in temperatures}
    out = per_query["ownership"].to_numpy(dtype=float).copy()
    chosen: list[float] = []
    for g in np.unique(groups):
        test = groups == g
        if y[~test].all() or not y[~test].any():
            continue
        best = max(temperatures, key=lambda t: auroc_ranksum(cols[t][~test], y[~test]))
        out[test] = cols[best][test]
        chosen.append(float(best))
    return out, chosen


def grouped_lr_scores(
    per_query: pd.DataFrame, features: Sequence[str], *, c: float = 1.0
) -> tuple[np.ndarray, pd.DataFrame]:
    """Leave-one-conversation-out logistic-regression probabilities of "answerable".

    Every question is scored by a model fitted on the other conversations only. Also
    returns the standardised coefficients of a fit on everything (for reading, not scoring).
    """
    x = per_query[list(features)].to_numpy(dtype=float)
    y = per_query["answerable"].to_numpy(dtype=bool)
    groups = per_query["sample_id"].to_numpy()
    scores = np.full(len(per_query), np.nan)

    def model() -> Any:
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000))

    for g in np.unique(groups):
        test = groups == g
        train_y = y[~test]
        if train_y.all() or not train_y.any():
            continue  # a one-conversation slice has nothing else to learn from
        scores[test] = model().fit(x[~test], train_y).predict_proba(x[test])[:, 1]
    coef = pd.DataFrame({"feature": list(features), "coef": np.nan})
    if y.any() and not y.all():
        fitted = model().fit(x, y)
        coef["coef"] = fitted[-1].coef_[0]
    return scores, coef
