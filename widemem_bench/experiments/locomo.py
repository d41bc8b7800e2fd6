"""`locomo`: retrieval, confidence bands and abstention on LoCoMo's real conversations.

Each LoCoMo conversation is one user's memory store (every turn one memory, "Speaker:
text", or the rule extractor's facts). For every question we measure where its evidence
turn ranks (hit@k, MRR per category), which confidence band widemem would report, and how
well a score separates the 446 adversarial questions (category 5, not answerable from the
conversation) from the 1,540 answerable ones (categories 1-4): AUROC with a bootstrap
interval that resamples whole conversations, because the questions of one conversation
share its memories.

Scores (higher = more likely answerable):

- ``top1_cosine``: widemem's confidence input. Memories carry equal importance and no
  recency here, so the top result by widemem's final score is the top result by cosine
  (the two-pass boost only lifts the top five by cosine) and its raw cosine is the max.
- ``margin``: top-1 minus top-2 cosine.
- ``answerability``: the answerability scorer fitted on the timelines (from the embedder's
  calibration file), fed the top 10 of the cosine search; present only when that file has it.
- ``speaker_top1``: top-1 cosine among the memories of the speaker the question names
  (``speaker_top1_bare``: the same with the names taken out of the question and the
  "Speaker: " prefix off the memories).
- ``speaker_contrast``: best hybrid match (cosine of the question without speaker names
  against the bare turn text, plus a small BM25 term) among the named speaker's turns
  minus the best among the other speaker's turns.
- ``ownership``: most adversarial questions take an answerable one and swap the speaker
  ("What did Caroline ..." when Melanie did it). The turns that match the question
  best are found with the name-free hybrid score, and each is attributed to whom its
  content belongs: the speaker for first-person turns ("I went ..."), the addressee for
  second-person replies ("you went ..."). The score is the softmax-weighted share of that
  evidence owned by the named speaker. No training, no LLM.
- ``ownership_cv``: ``ownership`` with its temperature picked on the other conversations.
- ``ownership_lr``: logistic regression over all the features above, trained and scored
  leave-one-conversation-out, so no conversation is ever scored by a model that saw it.

Thresholds for the band tables: widemem's table; the embedder's timeline calibration
(when a committed file exists, judged on LoCoMo as "calibration transfer"); and thresholds
fitted on LoCoMo itself, leave-one-conversation-out: Learn-then-Test from
``widemem_bench.calibration`` and, labelled as such, the plain empirical cut-off.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment, report_section
from widemem_bench.external.locomo import CATEGORY_NAMES, MEMORY_FORMS, LoCoMo, load_locomo

BAND_LABELS = {3: "high", 2: "moderate", 1: "low", 0: "none"}
METHODS = ("top1_cosine", "margin", "answerability", "speaker_top1", "speaker_top1_bare", "speaker_contrast",
           "ownership", "ownership_cv", "ownership_lr")
METHOD_NOTES = {
    "top1_cosine": "top-1 cosine, question vs 'Speaker: text' (widemem's confidence input)",
    "margin": "top-1 minus top-2 cosine",
    "answerability": "the answerability scorer as fitted on the timelines (probability), unchanged",
    "speaker_top1": "top-1 cosine among the named speaker's memories",
    "speaker_top1_bare": "the same, question without speaker names vs bare turn text",
    "speaker_contrast": "best hybrid match among the named speaker's turns minus the other's",
    "ownership": "share of the best-matching evidence owned by the named speaker (no training; "
                 "temperature fixed in research on all conversations)",
    "ownership_cv": "ownership with its temperature picked on the other conversations",
    "ownership_lr": "logistic regression over all features, leave-one-conversation-out",
}
DEFAULT_PARAMS: dict[str, Any] = {
    "locomo_path": None,
    "memory_form": "turn",
    "conversations": None,
    "embedders": None,
    "hit_k": [1, 5, 10],
    "bm25_weight": 0.03,
    "temperatures": [0.05, 0.1, 0.2],
    "ownership_temperature": 0.1,
    "recall_target": 0.9,
    "n_boot": 1000,
    "ltt_delta": 0.1,
    "ltt_method": "binomial",
    "lr_c": 1.0,
}

_TOKEN = re.compile(r"[a-z0-9']+")
# Function words carry no topic; leaving them in lets BM25 match on "did" and "what".
_STOP = frozenset(
    ["a", "an", "the", "of", "to", "in", "on", "at", "for", "and", "or", "is", "was", "were", "are", "be", "been", "did", "do", "does", "what", "when", "where", "who", "why", "how", "which", "that", "this", "with", "her", "his", "their", "he", "she", "they", "it", "its", "from", "by", "as", "about", "s", "has", "have", "had", "would", "could", "will", "can"]
)
# The answerability scorer reads the top results of a search (its features use the top 10).
_SCORER_RESULTS = 10
_FIRST = frozenset(["i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself", "we", "we're", "we've", "our", "ours", "us"])
_SECOND = frozenset(["you", "you're", "you've", "you'd", "you'll", "your", "yours", "yourself"])


# ---------------------------------------------------------------------------- parameters


def resolve_params(cfg: dict[str, Any]) -> dict[str, Any]:
    """`cfg["params"]` over the defaults, validated; one-line ValueError naming the bad key."""
    raw = dict(cfg.get("params") or {})
    unknown = sorted(set(raw) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"params: unknown key(s) {unknown} for experiment locomo")
    p = {**DEFAULT_PARAMS, **{k: v for k, v in raw.items() if v is not None}}
    if p["memory_form"] not in MEMORY_FORMS:
        raise ValueError(f"params.memory_form: {p['memory_form']!r} is not one of {MEMORY_FORMS}")
    p["hit_k"] = [int(k) for k in p["hit_k"]]
    if not p["hit_k"] or min(p["hit_k"]) < 1:
        raise ValueError(f"params.hit_k: need positive ints, got {p['hit_k']}")
    p["temperatures"] = [float(t) for t in p["temperatures"]]
    if not p["temperatures"] or min(p["temperatures"]) <= 0:
        raise ValueError(f"params.temperatures: need positive values, got {p['temperatures']}")
    if float(p["ownership_temperature"]) <= 0:
        raise ValueError(f"params.ownership_temperature: must be > 0, got {p['ownership_temperature']}")
    if not 0 < float(p["recall_target"]) < 1:
        raise ValueError(f"params.recall_target: must lie in (0, 1), got {p['recall_target']}")
    if float(p["bm25_weight"]) < 0:
        raise ValueError(f"params.bm25_weight: must be >= 0, got {p['bm25_weight']}")
    if int(p["n_boot"]) < 1:
        raise ValueError(f"params.n_boot: must be >= 1, got {p['n_boot']}")
    return p


def _locomo_path(cfg: dict[str, Any], p: dict[str, Any]) -> Path | None:
    if p.get("locomo_path"):
        return Path(str(p["locomo_path"]))
    shared = (cfg.get("paths") or {}).get("shared_data_dir")
    return Path(str(shared)) / "locomo10.json" if shared else None


# ---------------------------------------------------------------------------- text helpers


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

    e_mem = embedder.encode(list(mem["content"]), kind="passage")
    e_bare = embedder.encode(list(mem["text"]), kind="passage")
    e_q = embedder.encode(list(q["question"]), kind="query")
    e_qs = embedder.encode(stripped, kind="query")

    out = q[["sample_id", "qa_index", "question", "category", "category_name", "answerable"]].copy()
    out["evidence"] = ["; ".join(ev) for ev in q["evidence"]]
    cols: dict[str, np.ndarray] = {c: np.zeros(len(q)) for c in FEATURES}
    for tau in temperatures:
        cols[f"ownership_tau{tau:g}"] = np.zeros(len(q))
    cols["ownership"] = np.zeros(len(q))
    if scorer is not None:
        cols["answerability"] = np.zeros(len(q))
    cols["rank_cosine"] = np.full(len(q), np.inf)
    cols["rank_hybrid"] = np.full(len(q), np.inf)
    named_col: list[str] = [""] * len(q)
    # Whether an evidence turn was said by the one named speaker (None: not exactly one named).
    ev_by_named: list[bool | None] = [None] * len(q)

    for sid in data.sample_ids:
        mi = np.flatnonzero(mem["sample_id"].to_numpy() == sid)
        qi = np.flatnonzero(q["sample_id"].to_numpy() == sid)
        if qi.size == 0 or mi.size == 0:
            continue
        speakers = spk_of[sid]
        spk = mem["speaker"].to_numpy()[mi]
        dia = mem["dia_id"].to_numpy()[mi]
        own = np.array([own_turn[(sid, d)] for d in dia])
        s_full = e_q[qi] @ e_mem[mi].T
        s_bare = e_qs[qi] @ e_bare[mi].T
        bm = bm25_matrix([stripped[i] for i in qi], list(mem["text"].to_numpy()[mi]))
        hyb = s_bare + bm25_weight * bm

        evidence = [q["evidence"].iloc[i] for i in qi]
        order_full = np.argsort(-s_full, axis=1, kind="stable")
        cols["rank_cosine"][qi] = _first_rank(order_full, dia, evidence)
        order_hyb = np.argsort(-hyb, axis=1, kind="stable")
        cols["rank_hybrid"][qi] = _first_rank(order_hyb, dia, evidence)

        sorted_full = np.take_along_axis(s_full, order_full, axis=1)
        cols["top1_cosine"][qi] = sorted_full[:, 0]
        cols["margin"][qi] = sorted_full[:, 0] - (sorted_full[:, 1] if mi.size > 1 else 0.0)
        cols["bare_top1"][qi] = s_bare.max(axis=1)
        cols["bm25_top1"][qi] = bm.max(axis=1)
        cols["hybrid_top1"][qi] = hyb.max(axis=1)
        soft = {tau: _softmax_rows(hyb, tau) for tau in {*temperatures, ownership_temperature}}

        contents = mem["content"].to_numpy()[mi]
        for k, i in enumerate(qi):
            if scorer is not None:
                top = order_full[k, :_SCORER_RESULTS]
                cols["answerability"][i] = scorer.probability(
                    str(q["question"].iloc[i]), [str(c) for c in contents[top]], sorted_full[k, :_SCORER_RESULTS].tolist()
                )
            names = named_speakers(q["question"].iloc[i], speakers)
            named_col[i] = ",".join(names)
            cols["n_named"][i] = len(names)
            if len(names) != 1:
                # Both or neither speaker named: no side to contrast; neutral values.
                cols["speaker_top1"][i] = s_full[k].max()
                cols["speaker_top1_bare"][i] = s_bare[k].max()
                for tau in temperatures:
                    cols[f"ownership_tau{tau:g}"][i] = 0.5
                cols["ownership"][i] = cols["ownership_top1"][i] = cols["ownership_top5"][i] = 0.5
                continue
            mine = spk == names[0]
            ev_by_named[i] = bool(np.isin(dia[mine], list(q["evidence"].iloc[i])).any())
            if not mine.any() or mine.all():
                cols["speaker_top1"][i] = s_full[k].max()
                cols["speaker_top1_bare"][i] = s_bare[k].max()
                for tau in temperatures:
                    cols[f"ownership_tau{tau:g}"][i] = 0.5
                cols["ownership"][i] = cols["ownership_top1"][i] = cols["ownership_top5"][i] = 0.5
                continue
            cols["speaker_top1"][i] = s_full[k][mine].max()
            cols["speaker_top1_bare"][i] = s_bare[k][mine].max()
            cols["contrast_cosine"][i] = s_bare[k][mine].max() - s_bare[k][~mine].max()
            cols["contrast_bm25"][i] = bm[k][mine].max() - bm[k][~mine].max()
            cols["speaker_contrast"][i] = hyb[k][mine].max() - hyb[k][~mine].max()
            # Probability that each memory's content belongs to the named speaker.
            owned = np.where(mine, own, 1.0 - own)
            for tau in temperatures:
                cols[f"ownership_tau{tau:g}"][i] = float(soft[tau][k] @ owned)
            cols["ownership"][i] = float(soft[ownership_temperature][k] @ owned)
            top = order_hyb[k]
            cols["ownership_top1"][i] = owned[top[0]]
            cols["ownership_top5"][i] = owned[top[:5]].mean()
            cols["ownership_max"][i] = (hyb[k] * owned).max() - (hyb[k] * (1.0 - owned)).max()

    for c, v in cols.items():
        out[c] = v
    out["named"] = named_col
    out["evidence_by_named"] = pd.array(ev_by_named, dtype="boolean")
    return out


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
                         "temperature": float(t), "auroc": _auroc(pq[f"ownership_tau{t:g}"].to_numpy(dtype=float), y)})
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
        best = max(temperatures, key=lambda t: _auroc(cols[t][~test], y[~test]))
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


# ---------------------------------------------------------------------------- tables


def _cluster_boot(
    fn: Any, groups: np.ndarray, n_boot: int, seed: int, *arrays: np.ndarray
) -> tuple[float, float, float]:
    """fn(*arrays) and its 95% percentile interval over resampled whole conversations."""
    value = float(fn(*arrays))
    codes = np.unique(groups, return_inverse=True)[1]
    members = [np.flatnonzero(codes == g) for g in range(codes.max() + 1)]
    if len(members) < 2:
        return value, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        idx = np.concatenate([members[j] for j in rng.integers(0, len(members), len(members))])
        with np.errstate(all="ignore"):
            reps.append(fn(*(a[idx] for a in arrays)))
    arr = np.asarray(reps, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return value, float("nan"), float("nan")
    lo, hi = np.percentile(arr, [2.5, 97.5])
    return value, float(lo), float(hi)


def _auroc(scores: np.ndarray, y: np.ndarray) -> float:
    """AUROC by the Mann-Whitney rank sum (ties count one half): the same value as
    scikit-learn's, fast enough to recompute for every bootstrap replicate."""
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def adversarial_share_at_recall(scores: np.ndarray, y: np.ndarray, recall: float = 0.9) -> float:
    """Share of unanswerable questions scoring at or above the cut-off that keeps `recall` of
    the answerable ones (the widest MODERATE band a user wanting that recall could set)."""
    if y.all() or not y.any():
        return float("nan")
    cut = np.quantile(scores[y], 1.0 - recall, method="lower")
    return float(np.mean(scores[~y] >= cut))


def heldout_share_at_recall(
    scores: np.ndarray, y: np.ndarray, groups: np.ndarray, recall: float = 0.9
) -> tuple[float, float]:
    """(recall on 1-4, cat. 5 share) at MODERATE or above when each conversation's cut-off is
    set at `recall` on the OTHER conversations: the recall-matched band as a user would ship it."""
    passed = np.zeros(len(scores), dtype=bool)
    for g in np.unique(groups):
        test = groups == g
        train_pos = scores[~test & y]
        if train_pos.size == 0:
            return float("nan"), float("nan")
        passed[test] = scores[test] >= np.quantile(train_pos, 1.0 - recall, method="lower")
    return float(passed[y].mean()) if y.any() else float("nan"), float(passed[~y].mean()) if (~y).any() else float("nan")


def auroc_table(per_query: pd.DataFrame, methods: Sequence[str], *, recall: float, n_boot: int, seed: int) -> pd.DataFrame:
    """Per method: AUROC of answerable (1-4) vs adversarial (5) and the adversarial share
    at MODERATE or above at `recall` on 1-4, each with a conversation-cluster bootstrap CI."""
    y = per_query["answerable"].to_numpy(dtype=bool)
    groups = per_query["sample_id"].to_numpy()
    rows = []
    for m in methods:
        if m not in per_query or per_query[m].isna().any():
            continue
        s = per_query[m].to_numpy(dtype=float)
        a, a_lo, a_hi = _cluster_boot(_auroc, groups, n_boot, seed, s, y)
        f, f_lo, f_hi = _cluster_boot(
            lambda s_, y_: adversarial_share_at_recall(s_, y_, recall), groups, n_boot, seed, s, y
        )
        rec_ho, adv_ho = heldout_share_at_recall(s, y, groups, recall) if len(np.unique(groups)) > 1 else (
            float("nan"), float("nan"))
        rows.append({
            "method": m, "auroc": a, "auroc_lo": a_lo, "auroc_hi": a_hi,
            "adv_moderate_plus": f, "adv_moderate_plus_lo": f_lo, "adv_moderate_plus_hi": f_hi,
            "recall_heldout": rec_ho, "adv_moderate_plus_heldout": adv_ho,
            "recall_target": recall, "n": len(s), "n_adversarial": int((~y).sum()),
            "note": METHOD_NOTES.get(m, ""),
        })
    return pd.DataFrame(rows)


def auroc_by_category(per_query: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """AUROC of each answerable category against category 5 alone, per method."""
    rows = []
    cat = per_query["category"].to_numpy()
    for m in methods:
        s = per_query[m].to_numpy(dtype=float)
        for c in sorted(set(cat) - {5}):
            sel = (cat == c) | (cat == 5)
            rows.append({"method": m, "category": int(c), "category_name": CATEGORY_NAMES[int(c)],
                         "auroc": _auroc(s[sel], cat[sel] == c)})
    return pd.DataFrame(rows)


def retrieval_table(per_query: pd.DataFrame, hit_k: Sequence[int]) -> pd.DataFrame:
    """Evidence hit@k and MRR per category, for the plain cosine search over 'Speaker: text'
    and the name-free hybrid search; questions without evidence are left out."""
    rows = []
    has_ev = per_query["evidence"].str.len() > 0
    for search, col in (("cosine", "rank_cosine"), ("hybrid", "rank_hybrid")):
        for cat in sorted(per_query["category"].unique()):
            sel = has_ev & (per_query["category"] == cat)
            r = per_query.loc[sel, col].to_numpy(dtype=float)
            row: dict[str, Any] = {"search": search, "category": int(cat),
                                   "category_name": CATEGORY_NAMES[int(cat)], "n": int(sel.sum())}
            for k in hit_k:
                row[f"hit@{k}"] = float(np.mean(r <= k)) if r.size else float("nan")
            row["mrr"] = float(np.mean(1.0 / r)) if r.size else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def band_codes_for(scores: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    high, moderate, low = (float(t) for t in thresholds)
    out = np.zeros(len(scores), dtype=np.int8)
    out[scores >= low] = 1
    out[scores >= moderate] = 2
    out[scores >= high] = 3
    return out


def band_table(per_query: pd.DataFrame, bands: np.ndarray, setting: str, score: str) -> pd.DataFrame:
    """Share of each band per category (rows) under one threshold setting."""
    rows = []
    cats = per_query["category"].to_numpy()
    for cat in sorted(np.unique(cats)):
        b = bands[cats == cat]
        row: dict[str, Any] = {"setting": setting, "score": score, "category": int(cat),
                               "category_name": CATEGORY_NAMES[int(cat)], "n": int(b.size)}
        for code, name in BAND_LABELS.items():
            row[name] = float(np.mean(b == code)) if b.size else float("nan")
        row["moderate_plus"] = float(np.mean(b >= 2)) if b.size else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def loco_ltt_bands(
    scores: np.ndarray, y: np.ndarray, groups: np.ndarray, *, delta: float, method: str
) -> tuple[np.ndarray, pd.DataFrame, str]:
    """Bands from thresholds fitted on the other conversations (Learn-then-Test when the
    calibration package has it; else, clearly labelled, the empirical precision cut-off)."""
    fit_thresholds: Any
    try:
        from widemem_bench.calibration import fit_thresholds
    except ImportError:  # pragma: no cover - calibration is part of the package today
        fit_thresholds = None
    codes = np.zeros(len(scores), dtype=np.int8)
    rows = []
    if fit_thresholds is None:
        used = "empirical cut-off, no guarantee (LTT unavailable)"
    elif method == "empirical":
        used = "empirical cut-off, no guarantee"
    else:
        used = f"LTT {method}, delta {delta:g}"
    for g in np.unique(groups):
        test = groups == g
        if fit_thresholds is not None:
            fit = fit_thresholds(scores[~test], y[~test], delta=delta, method=method)  # type: ignore[arg-type]
            thr = fit.thresholds
        else:  # pragma: no cover
            thr = _empirical_thresholds(scores[~test], y[~test])
        codes[test] = band_codes_for(scores[test], thr)
        rows.append({"held_out": g, "high": thr[0], "moderate": thr[1], "low": thr[2]})
    return codes, pd.DataFrame(rows), used


def _empirical_thresholds(scores: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Lowest cut-off whose plain precision meets 0.95 / 0.80 / 0.50 (no guarantee)."""
    order = np.argsort(-scores)
    prec = np.cumsum(y[order]) / np.arange(1, len(y) + 1)
    out = []
    for target in (0.95, 0.80, 0.50):
        ok = np.flatnonzero(prec >= target)
        out.append(float(scores[order][ok[-1]]) if ok.size else 1.0)
    h, m, lo = out
    return h, min(m, h), min(lo, m, h)


def calibration_transfer(
    per_query: pd.DataFrame, cal: Any, score: str = "top1_cosine"
) -> pd.DataFrame:
    """Timeline-calibrated thresholds judged on LoCoMo: per band, the precision promised on
    the timelines against the precision and recall met on LoCoMo."""
    s = per_query[score].to_numpy(dtype=float)
    y = per_query["answerable"].to_numpy(dtype=bool)
    rows = []
    # The answerability scorer keeps its own probability cut-offs in its section of the file.
    source = cal.answerability["bands"] if score == "answerability" else cal.bands
    for band in ("high", "moderate", "low"):
        info = source[band]
        t = float(info["threshold"])
        above = s >= t
        rows.append({
            "score": score, "band": band, "threshold": t, "target": info.get("target"),
            "timeline_precision": info.get("precision"),
            "locomo_precision": float(y[above].mean()) if above.any() else float("nan"),
            "locomo_recall": float(above[y].mean()) if y.any() else float("nan"),
            "adversarial_at_or_above": float(above[~y].mean()) if (~y).any() else float("nan"),
            "locomo_base_rate": float(y.mean()),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- the experiment


def _thresholds_widemem(model_id: str) -> tuple[float, float, float]:
    try:
        from widemem_bench.engine.confidence import thresholds_for_model
    except ImportError:  # pragma: no cover
        return (0.60, 0.30, 0.20) if model_id.lower().endswith("all-minilm-l6-v2") else (0.60, 0.50, 0.30)
    return tuple(thresholds_for_model(model_id))  # type: ignore[return-value]


def _answerability_scorer(cal: Any | None) -> Any | None:
    """The timeline-fitted answerability scorer of this embedder, or None when there is none."""
    if cal is None or not getattr(cal, "answerability", None):
        return None
    try:
        from widemem_bench.answerability import scorer_from_calibration

        return scorer_from_calibration(cal)
    except (ImportError, ValueError, KeyError):
        return None


def _timeline_calibration(name: str) -> Any | None:
    try:
        from widemem_bench.calibration import load_calibration

        return load_calibration(name)
    except (ImportError, ValueError, FileNotFoundError):
        return None


def evaluate_embedder(
    data: LoCoMo, embedder: Any, p: dict[str, Any], *, seed: int = 0
) -> dict[str, Any]:
    """Every table of the experiment for one embedder (pure: no files written)."""
    name = str(getattr(embedder, "name", "embedder"))
    model_id = str(getattr(embedder, "model_id", name))
    if hasattr(embedder, "fit") and getattr(embedder, "name", "") == "tfidf":
        # tfidf needs a vocabulary; fit it on this run's memories (no question text).
        embedder.fit(list(data.memories(p["memory_form"])["content"]))
    cal = _timeline_calibration(name)
    scorer = _answerability_scorer(cal)
    pq = question_features(
        data, embedder, memory_form=p["memory_form"], bm25_weight=float(p["bm25_weight"]),
        temperatures=p["temperatures"], ownership_temperature=float(p["ownership_temperature"]),
        scorer=scorer,
    )
    feats = feature_columns(pq)
    lr, coef = grouped_lr_scores(pq, feats, c=float(p["lr_c"]))
    pq["ownership_lr"] = lr
    pq["ownership_cv"], chosen_tau = grouped_temperature_scores(pq, p["temperatures"])
    pq.insert(0, "embedder", name)

    y = pq["answerable"].to_numpy(dtype=bool)
    groups = pq["sample_id"].to_numpy()
    methods = [m for m in METHODS if m in pq and not pq[m].isna().any()]
    auroc = auroc_table(pq, methods, recall=float(p["recall_target"]), n_boot=int(p["n_boot"]), seed=seed)
    auroc.insert(0, "embedder", name)
    by_cat = auroc_by_category(pq, methods)
    by_cat.insert(0, "embedder", name)
    retrieval = retrieval_table(pq, p["hit_k"])
    retrieval.insert(0, "embedder", name)

    top1 = pq["top1_cosine"].to_numpy(dtype=float)
    band_parts = []
    widemem_thr = _thresholds_widemem(model_id)
    band_parts.append(band_table(pq, band_codes_for(top1, widemem_thr), "widemem", "top1_cosine"))
    thresholds_rows = [{"setting": "widemem", "score": "top1_cosine", "high": widemem_thr[0],
                        "moderate": widemem_thr[1], "low": widemem_thr[2], "held_out": "all"}]
    transfer = pd.DataFrame()
    if cal is not None:
        thr = cal.thresholds
        band_parts.append(band_table(pq, band_codes_for(top1, thr), "timeline-calibrated", "top1_cosine"))
        thresholds_rows.append({"setting": "timeline-calibrated", "score": "top1_cosine", "high": thr[0],
                                "moderate": thr[1], "low": thr[2], "held_out": "all"})
        transfer = calibration_transfer(pq, cal)
        cut = cal.answerability_thresholds if scorer is not None else None
        if cut is not None:
            prob = pq["answerability"].to_numpy(dtype=float)
            band_parts.append(band_table(pq, band_codes_for(prob, cut), "timeline-calibrated", "answerability"))
            thresholds_rows.append({"setting": "timeline-calibrated", "score": "answerability", "high": cut[0],
                                    "moderate": cut[1], "low": cut[2], "held_out": "all"})
            transfer = pd.concat([transfer, calibration_transfer(pq, cal, "answerability")], ignore_index=True)
        transfer.insert(0, "embedder", name)
    ltt_label = ""
    if len(np.unique(groups)) > 1:
        # The configured LTT test, and the plain empirical cut-off (no guarantee) beside it.
        for method in dict.fromkeys([str(p["ltt_method"]), "empirical"]):
            for score in ("top1_cosine", "ownership_lr"):
                s = pq[score].to_numpy(dtype=float)
                if np.isnan(s).any():
                    continue
                codes, thr_df, label = loco_ltt_bands(s, y, groups, delta=float(p["ltt_delta"]), method=method)
                ltt_label = ltt_label or label
                setting = f"locomo-calibrated ({label}, leave-one-conversation-out)"
                band_parts.append(band_table(pq, codes, setting, score))
                thresholds_rows += [{"setting": setting, "score": score, **{str(k): v for k, v in r.items()}}
                                for r in thr_df.to_dict("records")]
                pq[f"band_locomo_{method}_{score}"] = codes
    pq["band_widemem"] = band_codes_for(top1, widemem_thr)
    bands = pd.concat(band_parts, ignore_index=True)
    bands.insert(0, "embedder", name)
    thresholds = pd.DataFrame(thresholds_rows)
    thresholds.insert(0, "embedder", name)
    coef.insert(0, "embedder", name)
    return {
        "per_query": pq, "auroc": auroc, "retrieval": retrieval, "bands": bands,
        "thresholds": thresholds, "transfer": transfer, "lr_coef": coef, "auroc_by_category": by_cat,
        "timeline_calibration": cal is not None, "ltt": ltt_label, "chosen_tau": chosen_tau,
    }


def run_locomo(
    cfg: dict[str, Any],
    out_dir: Path | None = None,
    *,
    embedders: Sequence[Any] | None = None,
    data: LoCoMo | None = None,
) -> dict[str, Any]:
    """The experiment as a pure function: tables (DataFrames) and long-format metric rows.

    `embedders` (objects with `name`, `model_id`, `encode`) override the config's
    `params.embedders` / `embedder.name`; `data` overrides loading the file. With
    `out_dir`, the markdown fragment and figures are written there too.
    """
    p = resolve_params(cfg)
    seed = int(cfg.get("seed", 0))
    if data is None:
        data = load_locomo(_locomo_path(cfg, p))
    if p["conversations"]:
        data = data.select(list(p["conversations"]))
    if embedders is None:
        from widemem_bench.embedders import load_embedder

        names = p["embedders"] or [str((cfg.get("embedder") or {}).get("name") or "minilm-l6")]
        cache_dir = (cfg.get("paths") or {}).get("cache_dir")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        embedders = [load_embedder(str(n), cache_dir=cache_dir) for n in names]
    parts = [evaluate_embedder(data, e, p, seed=seed) for e in embedders]
    tables = {
        k: pd.concat([part[k] for part in parts if len(part[k])], ignore_index=True)
        if any(len(part[k]) for part in parts) else pd.DataFrame()
        for k in ("per_query", "auroc", "retrieval", "bands", "thresholds", "transfer", "lr_coef",
                  "auroc_by_category")
    }
    metrics = _metric_rows(tables)
    result = {
        "tables": tables, "metrics": metrics, "params": p,
        "data": {"path": str(data.path), "sha256": data.sha256, "conversations": data.sample_ids,
                 "n_questions": len(data.questions), "n_memories_form": p["memory_form"]},
        "ltt": sorted({part["ltt"] for part in parts if part["ltt"]}),
        "chosen_tau": {str(getattr(e, "name", i)): part["chosen_tau"] for i, (e, part) in enumerate(zip(embedders, parts, strict=True))},
    }
    if out_dir is not None:
        write_locomo_report(result, Path(out_dir))
    return result


def _metric_rows(tables: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    rows = []
    for r in tables["auroc"].to_dict("records"):
        rows.append(metric_row("auroc_adversarial", r["auroc"], (r["auroc_lo"], r["auroc_hi"]),
                               embedder=r["embedder"], kind="5_vs_1-4", setting=r["method"]))
        rows.append(metric_row("adversarial_moderate_plus_at_recall", r["adv_moderate_plus"],
                               (r["adv_moderate_plus_lo"], r["adv_moderate_plus_hi"]),
                               embedder=r["embedder"], kind="adversarial", setting=r["method"]))
    for r in tables["retrieval"].to_dict("records"):
        for key in [str(c) for c in r if str(c).startswith("hit@")] + ["mrr"]:
            rows.append(metric_row(f"evidence_{key}", r[key], embedder=r["embedder"],
                                   kind=r["category_name"], setting=r["search"]))
    for r in tables["bands"].to_dict("records"):
        rows.append(metric_row("share_moderate_plus", r["moderate_plus"], embedder=r["embedder"],
                               kind=r["category_name"], setting=f"{r['setting']} | {r['score']}"))
    return rows


@experiment("locomo", honours=("embedder", "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = resolve_params(cfg)
    embedders = None
    if not p["embedders"]:
        embedders = [ctx.embedder()]
    with ctx.timer("locomo"):
        res = run_locomo(cfg, None, embedders=embedders)
    ctx.info["dataset"] = res["data"]
    md = write_locomo_report(res, ctx.output_dir)
    tables = {k: v for k, v in res["tables"].items() if k != "per_query" and len(v)}
    return ExperimentResult(
        metrics=res["metrics"], per_query=res["tables"]["per_query"], tables=tables,
        artifacts={"locomo_md": md},
    )


# ---------------------------------------------------------------------------- report


def _fmt_ci(v: float, lo: float, hi: float, pct: bool = False) -> str:
    if pct:
        return f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def _plots(tables: dict[str, pd.DataFrame], fig_dir: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    ret = tables["retrieval"]
    if len(ret):
        fig, ax = plt.subplots(figsize=(9, 3.8))
        labels = [f"{e} / {s}" for e, s in ret[["embedder", "search"]].drop_duplicates().itertuples(index=False)]
        groups = ret[["embedder", "search"]].drop_duplicates().to_numpy()
        cats = sorted(ret["category"].unique())
        width = 0.8 / max(len(groups), 1)
        for j, (emb, search) in enumerate(groups):
            sub = ret[(ret["embedder"] == emb) & (ret["search"] == search)].set_index("category")
            ax.bar(np.arange(len(cats)) + j * width, [sub.loc[c, "hit@10"] for c in cats], width, label=labels[j])
        ax.set_xticks(np.arange(len(cats)) + width * (len(groups) - 1) / 2)
        ax.set_xticklabels([f"{c} {CATEGORY_NAMES[c]}" for c in cats])
        ax.set_ylabel("evidence hit@10")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.set_title("LoCoMo: evidence turn in the top 10, per category")
        fig.tight_layout()
        out["hit10"] = fig_dir / "locomo_hit10.png"
        fig.savefig(out["hit10"], dpi=120)
        plt.close(fig)
    au = tables["auroc"]
    if len(au):
        methods = list(dict.fromkeys(au["method"]))
        embs = list(dict.fromkeys(au["embedder"]))
        fig, ax = plt.subplots(figsize=(8, 0.55 * len(methods) + 1.4))
        step = 0.7 / max(len(embs), 1)
        for j, emb in enumerate(embs):
            sub = au[au["embedder"] == emb].set_index("method").reindex(methods)
            ypos = np.arange(len(methods))[::-1] + 0.35 - (j + 0.5) * step
            err = np.vstack([sub["auroc"] - sub["auroc_lo"], sub["auroc_hi"] - sub["auroc"]])
            ax.errorbar(sub["auroc"], ypos, xerr=err, fmt="o", ms=4, capsize=2, label=emb)
        ax.axvline(0.5, color="grey", lw=0.8, ls=":")
        ax.axvline(0.75, color="tab:green", lw=0.8, ls="--", label="target 0.75")
        ax.set_yticks(np.arange(len(methods))[::-1])
        ax.set_yticklabels(methods, fontsize=8)
        ax.set_xlabel("AUROC, answerable (1-4) vs adversarial (5); 95% conversation bootstrap")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        out["auroc"] = fig_dir / "locomo_auroc.png"
        fig.savefig(out["auroc"], dpi=120)
        plt.close(fig)
    bands = tables["bands"]
    if len(bands):
        # One embedder (the first, the headline one) keeps the figure readable.
        bands = bands[bands["embedder"] == bands["embedder"].iloc[0]]
        combos = bands[["embedder", "setting", "score"]].drop_duplicates().to_numpy()
        fig, axes = plt.subplots(len(combos), 1, figsize=(7, 1.7 * len(combos) + 0.6), squeeze=False)
        colours = {"none": "#bbbbbb", "low": "#f2c14e", "moderate": "#f78154", "high": "#4d9078"}
        for ax, (emb, setting, score) in zip(axes[:, 0], combos, strict=True):
            sub = bands[(bands["embedder"] == emb) & (bands["setting"] == setting) & (bands["score"] == score)]
            left = np.zeros(len(sub))
            for name in ("none", "low", "moderate", "high"):
                ax.barh(sub["category_name"], sub[name], left=left, color=colours[name], label=name)
                left += sub[name].to_numpy()
            ax.set_xlim(0, 1)
            ax.set_title(f"{emb}: {setting} on {score}", fontsize=8)
            ax.tick_params(labelsize=7)
        handles, names = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, names, fontsize=7, ncol=4, loc="upper center")
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / (1.7 * len(combos) + 0.6)))
        out["bands"] = fig_dir / "locomo_bands.png"
        fig.savefig(out["bands"], dpi=120)
        plt.close(fig)
    return out


def _reading(au: pd.DataFrame, per_query: pd.DataFrame | None = None) -> list[str]:
    """A few sentences computed from the AUROC table (so they never disagree with it)."""
    out = ["### Reading", ""]
    for emb, sub in au.groupby("embedder", sort=False):
        recs = {str(r["method"]): r for r in sub.to_dict("records")}
        best = sub.sort_values("auroc", ascending=False).iloc[0].to_dict()
        at = f"{100 * float(best['recall_target']):.0f}% recall on 1-4"
        parts = []
        if "top1_cosine" in recs:
            r = recs["top1_cosine"]
            parts.append(f"top-1 cosine separates answerable from adversarial questions at AUROC "
                         f"{_fmt_ci(r['auroc'], r['auroc_lo'], r['auroc_hi'])}, and at {at} it lets "
                         f"{100 * r['adv_moderate_plus']:.0f}% of category 5 through")
        verdict = "meets" if best["auroc_lo"] >= 0.75 else ("reaches" if best["auroc"] >= 0.75 else "misses")
        parts.append(f"the best method, `{best['method']}`, reaches {_fmt_ci(best['auroc'], best['auroc_lo'], best['auroc_hi'])} "
                     f"({verdict} the 0.75 target{' with its whole interval' if verdict == 'meets' else ''}) and lets "
                     f"{100 * best['adv_moderate_plus']:.0f}% of category 5 through at the same recall")
        out.append(f"- **{emb}**: " + "; ".join(parts) + ".")
    why = ("- Why it works: adversarial questions mostly name one speaker and ask about something the "
           "*other* speaker said.")
    if per_query is not None and len(per_query):
        first = per_query[per_query["embedder"] == per_query["embedder"].iloc[0]] if "embedder" in per_query else per_query
        adv = first[first["category"] == 5]
        one = adv["n_named"] == 1
        other = one & (adv["evidence_by_named"] == False)  # noqa: E712  (nullable boolean)
        why = (f"- Why it works: {int(one.sum())} of {len(adv)} adversarial questions name exactly one speaker, "
               f"and for {int(other.sum())} of them the evidence turn was said by the *other* speaker.")
    out += [
        why + " Similarity cannot see this (the topic matches either way), but who owns the best-matching "
        "turns can: a first-person turn (\"I adopted a puppy\") belongs to its speaker, a second-person "
        "reply (\"you adopted a puppy!\") to the addressee.",
        "- Honesty notes: `ownership` has no trained part, but its temperature (0.1), the BM25 weight (0.03) "
        "and the pronoun lists were chosen while looking at all ten conversations; `ownership_cv` re-picks "
        "the temperature on the other conversations only. `ownership_lr` is fitted leave-one-conversation-out, "
        "so each conversation is scored by a model that never saw it; its features were designed on the same "
        "ten conversations. Ten conversations make the conversation-bootstrap intervals the honest width.",
        "- What it does not solve: questions that name both speakers or none get a neutral 0.5; adversarial "
        "questions whose evidence the named speaker did say (a changed detail, not a swapped speaker) look "
        "answerable to every score here. No LLM is used; everything runs on this CPU in seconds once the "
        "embeddings are cached.",
        "",
    ]
    return out


def locomo_markdown(result: dict[str, Any], figures: dict[str, Path], rel_to: Path) -> str:
    """The markdown fragment (tables plus figure links relative to `rel_to`)."""
    t = result["tables"]
    lines = ["## LoCoMo: real conversations, answerable vs adversarial", ""]
    data = result.get("data") or {}
    lines.append(
        f"Data: `locomo10.json` (snap-research/LoCoMo, CC BY-NC 4.0; sha256 `{str(data.get('sha256', ''))[:12]}...`), "
        f"{len(data.get('conversations', []))} conversations, {data.get('n_questions')} questions; "
        f"memories: one per {data.get('n_memories_form', 'turn')} ('Speaker: text'). "
        "Intervals: 95% percentile bootstrap over whole conversations."
    )
    lines.append("")
    au = t["auroc"]
    if len(au):
        lines += _reading(au, t.get("per_query"))
        lines += ["### Answerability: AUROC of categories 1-4 vs 5", "",
                  f"| embedder | method | AUROC [95% CI] | cat. 5 at MODERATE+ at {100 * float(au['recall_target'].iloc[0]):.0f}% recall on 1-4 "
                  "| same cut-off set on the other conversations: recall 1-4 / cat. 5 | what it is |",
                  "|---|---|---|---|---|---|"]
        for r in au.to_dict("records"):
            lines.append(
                f"| {r['embedder']} | {r['method']} | {_fmt_ci(r['auroc'], r['auroc_lo'], r['auroc_hi'])} | "
                f"{_fmt_ci(r['adv_moderate_plus'], r['adv_moderate_plus_lo'], r['adv_moderate_plus_hi'], pct=True)} | "
                f"{100 * r.get('recall_heldout', float('nan')):.1f}% / {100 * r.get('adv_moderate_plus_heldout', float('nan')):.1f}% | {r['note']} |"
            )
        lines.append("")
    forms = t.get("auroc_forms")
    if forms is not None and len(forms):
        grid = forms.pivot_table(index="method", columns="memory_form", values="auroc", sort=False)
        share = forms.pivot_table(index="method", columns="memory_form", values="adv_moderate_plus", sort=False)
        cols = list(grid.columns)
        lines += [f"Memory form ({forms['embedder'].iloc[0]}): one memory per turn ('Speaker: text') against the "
                  "rule extractor's facts ('Speaker: fact', first-person subject stripped, about 2.7 facts per "
                  "turn). AUROC, and cat. 5 at MODERATE+ at the recall target:", "",
                  "| method | " + " | ".join(f"AUROC, {c}" for c in cols) + " | "
                  + " | ".join(f"cat. 5 at MODERATE+, {c}" for c in cols) + " |",
                  "|---|" + "---|" * (2 * len(cols))]
        for m in grid.index:
            lines.append(f"| {m} | " + " | ".join(f"{grid.loc[m, c]:.3f}" for c in cols) + " | "
                         + " | ".join(f"{100 * share.loc[m, c]:.1f}%" for c in cols) + " |")
        lines += ["", "A likely reading: in a short fact the speaker prefix is a large share of the text, so a "
                  "question naming the wrong speaker matches the right fact less, and similarity alone starts to "
                  "carry who-owns-what; in a long turn the prefix is drowned by the topic. Hit@k over facts "
                  "counts facts, not turns, so it is not comparable with the turn rows.", ""]
    by_cat = t.get("auroc_by_category")
    if by_cat is not None and len(by_cat):
        keep = by_cat[by_cat["method"].isin(["top1_cosine", "ownership", "ownership_lr"])]
        grid = keep.pivot_table(index=["embedder", "method"], columns="category", values="auroc", sort=False)
        lines += ["AUROC of each answerable category alone against category 5:", "",
                  "| embedder | method | " + " | ".join(f"{int(str(c))} {CATEGORY_NAMES[int(str(c))]}" for c in grid.columns) + " |",
                  "|---|---|" + "---|" * len(grid.columns)]
        for (emb, method), r in grid.iterrows():
            lines.append(f"| {emb} | {method} | " + " | ".join(f"{v:.3f}" for v in r) + " |")
        lines.append("")
    ret = t["retrieval"]
    if len(ret):
        ks = [str(c) for c in ret.columns if str(c).startswith("hit@")]
        lines += ["### Evidence retrieval per category", "",
                  "| embedder | search | category | n | " + " | ".join(ks) + " | MRR |",
                  "|---|---|---|---|" + "---|" * (len(ks) + 1)]
        for r in ret.to_dict("records"):
            lines.append(f"| {r['embedder']} | {r['search']} | {r['category']} {r['category_name']} | {r['n']} | "
                         + " | ".join(f"{100 * r[k]:.0f}%" for k in ks) + f" | {r['mrr']:.3f} |")
        lines += ["", "`cosine`: the question as asked against 'Speaker: text'. `hybrid`: the question "
                  "without speaker names against the bare turn text, plus BM25. Category 5 'evidence' is "
                  "the turn the adversarial question was built from (usually said by the other speaker).", ""]
    bands = t["bands"]
    if len(bands):
        cats = sorted(int(c) for c in bands["category"].unique())
        lines += ["### Share at MODERATE or above per category", "",
                  "Full band distributions (none / low / moderate / high) are in `bands.parquet` and, for the "
                  "first embedder, in the figure below. LoCoMo-calibrated thresholds use the calibration "
                  "package's targets (band-or-above precision 0.95 / 0.80 / 0.50); with 77.6% of LoCoMo's "
                  "questions answerable, a 0.80 target is met by almost any cut-off once the first candidates "
                  "pass, while fixed-sequence testing certifies nothing when precision among the very top "
                  "scores misses the target (for top-1 cosine it does everywhere), so these rows swing between "
                  "nearly all and nothing. The "
                  "recall-matched column of the AUROC table is the steadier comparison.", "",
                  "| embedder | thresholds | score | " + " | ".join(f"{c} {CATEGORY_NAMES[c]}" for c in cats) + " |",
                  "|---|---|---|" + "---|" * len(cats)]
        for (emb, setting, score), sub in bands.groupby(["embedder", "setting", "score"], sort=False):
            share = sub.set_index("category")["moderate_plus"]
            lines.append(f"| {emb} | {setting} | {score} | "
                         + " | ".join(f"{100 * float(share.get(c, float('nan'))):.1f}%" for c in cats) + " |")
        lines.append("")
    thr = t["thresholds"]
    if len(thr):
        summ = thr.groupby(["embedder", "setting", "score"], sort=False)[["high", "moderate", "low"]].agg(["min", "max"])
        lines += ["Thresholds in force (min-max over the held-out folds):", "",
                  "| embedder | thresholds | score | high | moderate | low |", "|---|---|---|---|---|---|"]
        for (emb, setting, score), r in summ.iterrows():
            cells = [f"{r[(b, 'min')]:.3f}" if r[(b, 'min')] == r[(b, 'max')] else f"{r[(b, 'min')]:.3f}-{r[(b, 'max')]:.3f}"
                     for b in ("high", "moderate", "low")]
            lines.append(f"| {emb} | {setting} | {score} | " + " | ".join(cells) + " |")
        lines.append("")
    sens = t.get("sensitivity")
    if sens is not None and len(sens):
        lines += ["### How much `ownership` leans on its settings", "",
                  "AUROC of `ownership` (no training) over softmax temperature (columns) and BM25 weight "
                  "(rows); the report's setting is temperature 0.1, weight 0.03.", ""]
        for emb, sub in sens.groupby("embedder", sort=False):
            grid = sub.pivot(index="bm25_weight", columns="temperature", values="auroc")
            lines += [f"{emb}:", "", "| BM25 weight | " + " | ".join(f"{c:g}" for c in grid.columns) + " |",
                      "|---|" + "---|" * len(grid.columns)]
            for w, r in grid.iterrows():
                lines.append(f"| {float(str(w)):g} | " + " | ".join(f"{v:.3f}" for v in r) + " |")
            lines.append("")
    tr = t["transfer"]
    lines += ["### Calibration transfer: timeline thresholds judged on LoCoMo", ""]
    if len(tr):
        lines += ["| embedder | score | band | threshold | target precision | precision on timelines | precision on LoCoMo | recall on LoCoMo 1-4 | cat. 5 at band or above |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in tr.to_dict("records"):
            def f(x: Any) -> str:
                return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * float(x):.1f}%"
            lines.append(f"| {r['embedder']} | {r.get('score', 'top1_cosine')} | {r['band']} | {r['threshold']:.3f} | {f(r['target'])} | "
                         f"{f(r['timeline_precision'])} | {f(r['locomo_precision'])} | {f(r['locomo_recall'])} | "
                         f"{f(r['adversarial_at_or_above'])} |")
        lines += ["", f"LoCoMo's base rate of answerable questions is {100 * float(tr['locomo_base_rate'].iloc[0]):.1f}%: "
                  "a band whose precision is no higher than that tells nothing.", ""]
    else:
        lines += ["No committed timeline calibration for these embedders yet "
                  "(`widemem_bench/calibration/files/<embedder>.json`); this table fills in once one exists.", ""]
    for key, title in (("hit10", "evidence hit@10"), ("auroc", "AUROC per method"), ("bands", "bands")):
        if key in figures:
            lines.append(f"![LoCoMo {title}]({os.path.relpath(figures[key], rel_to)})")
    lines.append("")
    return "\n".join(lines)


def write_locomo_report(result: dict[str, Any], out_dir: str | Path) -> Path:
    """Write `out_dir/locomo.md` and PNGs under `out_dir/figures/`; returns the markdown path.

    With `out_dir = reports/` this gives reports/locomo.md + reports/figures/locomo_*.png.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = _plots(result["tables"], out / "figures")
    md = out / "locomo.md"
    md.write_text(locomo_markdown(result, figures, out), encoding="utf-8")
    return md


@report_section("locomo", order=70)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """reports/README.md section: the tables of the newest complete locomo run(s)."""
    if not records:
        return ""
    parts: dict[str, list[pd.DataFrame]] = {
        k: [] for k in ("auroc", "auroc_by_category", "retrieval", "bands", "thresholds", "transfer", "sensitivity",
                        "per_query")
    }
    data: dict[str, Any] = {}
    for rec in records:
        run_dir = Path(rec.get("run_dir", ""))
        for k in parts:
            f = run_dir / f"{k}.parquet"
            if f.is_file():
                parts[k].append(pd.read_parquet(f))
        data = rec.get("dataset") or data
    # Re-runs of one setting in two folders would repeat rows; keep one of each.
    tables = {k: (pd.concat(v, ignore_index=True).drop_duplicates() if k != "per_query" else pd.concat(v, ignore_index=True))
              if v else pd.DataFrame() for k, v in parts.items()}
    if not len(tables["auroc"]):
        return ""
    figures = _plots(tables, Path(figures_dir))
    return locomo_markdown({"tables": tables, "data": data}, figures, Path(figures_dir).parent)
