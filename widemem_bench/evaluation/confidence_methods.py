"""Each confidence method's score and band on a set of searches, and its transfer cell.

Shared by the `transfer` and `outside` experiments (an experiment never imports another):
`method_scores` scores widemem's bands, the calibrated thresholds and answerability v1 / v2
/ v3 / v4 on one `answerability.sets.Searches`; `cell` gives AUROC, recall and false confidence
at MODERATE or above with cluster-bootstrap intervals; `paired_vs_top1` the paired AUROC
difference against the top-1 cosine; `load_methods` / `load_v3` / `load_v4` read the committed files.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Unanswerable kinds pooled per set (the fixture's "unrelated" included).
NEGATIVE = "unanswerable"


def method_scores(s: Any, embedder: Any, *, cal: Any, v1: Any, v2: Any,
                  v3: Any = None, v4: Any = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(score, band code) per method for one set of searches."""
    from widemem_bench.answerability.v2 import feature_rows
    from widemem_bench.calibration import assign_bands
    from widemem_bench.engine import thresholds_for_model

    top1 = s.frame["top1"].to_numpy(dtype=float)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {
        "widemem bands": (top1, assign_bands(top1, thresholds_for_model(embedder.model_id))),
        "calibrated thresholds": (top1, assign_bands(top1, tuple(cal.thresholds))),
    }
    if v1 is not None:
        p1 = np.array([v1.probability(q, c, x) for q, c, x in zip(s.frame["query"], s.contents, s.cosines,
                                                                   strict=True)])
        out["answerability v1"] = (p1, assign_bands(p1, v1.cutoffs))
    if v2 is not None:
        x2 = feature_rows(s.frame["query"].tolist(), s.contents, s.cosines, embedder, v2.prototypes)
        p2 = v2.model.predict_proba(x2)
        out["answerability v2"] = (p2, assign_bands(p2, v2.cutoffs))
    if v3 is not None:
        from widemem_bench.answerability.v3 import feature_rows_v3

        p3 = v3.model.predict_proba(feature_rows_v3(s.frame["query"].tolist(), s.contents, s.cosines, embedder))
        out["answerability v3"] = (p3, assign_bands(p3, v3.cutoffs))
    if v4 is not None:
        # the version the file holds (its cross-encoder reading: `ScorerV4.quant`, `.top_k`), as the engine scores it
        p4 = v4.predict_searches(s, embedder)
        out["answerability v4"] = (p4, assign_bands(p4, v4.cutoffs))
    return out


def cell(score: np.ndarray, bands: np.ndarray, kinds: np.ndarray, groups: np.ndarray, *, n_boot: int,
         seed: int) -> dict[str, Any]:
    """AUROC, recall and false confidence at MODERATE or above, each (value, lo, hi)."""
    from widemem_bench.metrics import with_ci

    pooled = np.where(kinds == "answerable", "answerable", NEGATIVE)
    row: dict[str, Any] = {"n_answerable": int((pooled == "answerable").sum()),
                           "n_unanswerable": int((pooled == NEGATIVE).sum())}
    for key, name, arrays, params in (
        ("auroc", "auroc", (score, pooled), {}),
        ("recall", "recall_moderate_plus", (bands, pooled), {}),
        # the registered false-confidence metric, read for the pooled unanswerable label
        ("false_confidence", "false_confidence_hard_negative", (bands, pooled), {"kind": NEGATIVE}),
    ):
        v, lo, hi = with_ci(name, *arrays, groups=groups, seed=seed, n_boot=n_boot, **params)
        row[key], row[f"{key}_lo"], row[f"{key}_hi"] = float(v), float(lo), float(hi)
    # answerable questions the method puts at NONE (band 0): what its LOW cut-off certifies <= 5 % on train users
    from widemem_bench.metrics.rates import rate_ci
    ans = kinds == "answerable"
    v, lo, hi = rate_ci((bands[ans] == 0).astype(float), groups[ans], n_boot=n_boot, seed=seed)
    row["answerable_none"], row["answerable_none_lo"], row["answerable_none_hi"] = v, lo, hi
    row["answerable_none_count"] = int((bands[ans] == 0).sum())
    row["hard_negative_moderate_plus"] = int(((kinds == "hard_negative") & (bands >= 2)).sum())
    row["n_hard_negative"] = int((kinds == "hard_negative").sum())
    row["answerable_moderate_plus"] = int(((kinds == "answerable") & (bands >= 2)).sum())
    return row


def paired_vs_top1(score: np.ndarray, top1: np.ndarray, kinds: np.ndarray, groups: np.ndarray, *, n_boot: int,
                   seed: int) -> dict[str, float]:
    """AUROC of ``score`` minus the top-1 cosine's on the same questions, paired cluster bootstrap
    (each replicate one resample of whole users / conversations, both scores on it)."""
    from widemem_bench.metrics import auroc
    from widemem_bench.metrics.rates import cluster_percentile_ci

    pooled = np.where(kinds == "answerable", "answerable", NEGATIVE)

    def diff(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> float:
        return float(auroc(a, y) - auroc(b, y))

    v, lo, hi = cluster_percentile_ci(diff, np.asarray(groups), n_boot, seed, score, top1, pooled)
    return {"auroc_minus_top1": v, "auroc_minus_top1_lo": lo, "auroc_minus_top1_hi": hi}


def load_methods(embedder_name: str, calibration_dir: Any = None,
                 answerability_dir: Any = None) -> tuple[Any, Any, Any]:
    """(calibration file, v1 scorer or None, v2 scorer) of one embedder, from world A's files.

    A folder of None means the committed files (widemem_bench/calibration/files,
    widemem_bench/answerability/files); a missing file is a one-line error naming it.
    """
    from widemem_bench.answerability import scorer_from_calibration
    from widemem_bench.answerability.v2 import load_scorer_v2
    from widemem_bench.calibration import load_calibration

    cal = load_calibration(embedder_name, calibration_dir)
    v1 = scorer_from_calibration(cal) if cal.answerability else None
    return cal, v1, load_scorer_v2(embedder_name, answerability_dir)


def load_v3(embedder_name: str, answerability_dir: Any = None) -> Any:
    """The v3 scorer of one embedder (``<embedder>.v3.json``), or None when that embedder has none."""
    from widemem_bench.answerability.v3 import load_scorer_v3, scorer_path_v3

    if not scorer_path_v3(embedder_name, answerability_dir).is_file():
        return None
    return load_scorer_v3(embedder_name, answerability_dir)


def load_v4(embedder_name: str, answerability_dir: Any = None) -> Any:
    """The v4 scorer of one embedder (``<embedder>.v4.json``), or None when that embedder has none; its
    cross-encoder loaded now, so weights other than the file's are refused before any search runs."""
    from widemem_bench.answerability.v4 import load_scorer_v4, scorer_path_v4

    if not scorer_path_v4(embedder_name, answerability_dir).is_file():
        return None
    scorer = load_scorer_v4(embedder_name, answerability_dir)
    scorer.cross()
    return scorer
