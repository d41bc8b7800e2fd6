"""LoCoMo's tables: AUROC and recall-matched abstention per score, evidence retrieval per
category, confidence bands under widemem's, the timeline's and LoCoMo-fitted thresholds,
and how timeline calibration transfers. Pure functions of the per-question frame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.calibration.ltt import assign_bands
from widemem_bench.external.locomo import CATEGORY_NAMES
from widemem_bench.metrics.abstention import adversarial_share_at_recall, heldout_share_at_recall
from widemem_bench.metrics.rates import auroc_ranksum, cluster_percentile_ci

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
        a, a_lo, a_hi = cluster_percentile_ci(auroc_ranksum, groups, n_boot, seed, s, y)
        f, f_lo, f_hi = cluster_percentile_ci(
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
                         "auroc": auroc_ranksum(s[sel], cat[sel] == c)})
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
    return assign_bands(scores, (high, moderate, low))


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
