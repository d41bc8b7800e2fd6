"""Answerability v4 beside v3 and the top-1 cosine on already built searches: `v4_table`.

The run layer builds the searches (the transfer sets, `experiments.transfer._searches`;
the outside answer sets, `experiments.outside.outside_searches`) and passes them here, so
this floor imports no experiment. Each row: the transfer cell (`evaluation.confidence_methods
.cell`: AUROC, recall and false confidence at MODERATE+ with cluster-bootstrap intervals,
answerable at NONE, the fixture counts), the paired AUROC difference against the top-1
cosine, and Youden J at MODERATE+ with a cluster bootstrap by user.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

METHODS = ("top-1 cosine (widemem bands)", "answerability v3", "answerability v4")


def _scores(s: Any, emb: Any, v3: Any, v4: Any) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from widemem_bench.answerability.v3 import feature_rows_v3
    from widemem_bench.calibration import assign_bands
    from widemem_bench.engine import thresholds_for_model

    top1 = s.frame["top1"].to_numpy(dtype=float)
    p3 = v3.model.predict_proba(feature_rows_v3(s.frame["query"].tolist(), s.contents, s.cosines, emb))
    p4 = v4.predict_searches(s, emb)
    return {METHODS[0]: (top1, assign_bands(top1, thresholds_for_model(emb.model_id))),
            METHODS[1]: (p3, assign_bands(p3, v3.cutoffs)), METHODS[2]: (p4, assign_bands(p4, v4.cutoffs))}


def youden_ci(bands: np.ndarray, kinds: np.ndarray, users: np.ndarray, n_boot: int, seed: int) -> tuple[float, ...]:
    """(J, lo, hi): recall minus false confidence at MODERATE+, 95 % cluster bootstrap by user."""
    def j(b: np.ndarray, k: np.ndarray) -> float:
        up, pos = b >= 2, k == "answerable"
        return float(up[pos].mean() - up[~pos].mean()) if pos.any() and (~pos).any() else float("nan")

    uniq = np.unique(users)
    rng = np.random.default_rng(seed)
    idx = {u: np.flatnonzero(users == u) for u in uniq}
    js = [j(bands[b], kinds[b]) for b in (np.concatenate([idx[u] for u in rng.choice(uniq, uniq.size)])
                                          for _ in range(n_boot))]
    return j(bands, kinds), float(np.nanpercentile(js, 2.5)), float(np.nanpercentile(js, 97.5))


def v4_table(sets: Sequence[Any], emb: Any, *, n_boot: int = 1000, seed: int = 0, v3: Any = None,
             v4: Any = None) -> pd.DataFrame:
    """One row per (set, method) over ``sets`` (`answerability.sets.Searches`); committed files by default."""
    from widemem_bench.answerability.v3 import load_scorer_v3
    from widemem_bench.answerability.v4 import load_scorer_v4
    from widemem_bench.evaluation.confidence_methods import cell, paired_vs_top1

    v3 = v3 or load_scorer_v3(emb.name)
    v4 = v4 or load_scorer_v4(emb.name)
    rows = []
    for s in sets:
        kinds = s.frame["kind"].to_numpy(dtype=str)
        groups = s.frame["group"].to_numpy().astype(str)
        scores = _scores(s, emb, v3, v4)
        top1 = scores[METHODS[0]][0]
        for method, (score, bands) in scores.items():
            row = {"set": s.name, "method": method, "embedder": emb.name,
                   **cell(score, bands, kinds, groups, n_boot=n_boot, seed=seed)}
            if method != METHODS[0]:
                row.update(paired_vs_top1(score, top1, kinds, groups, n_boot=n_boot, seed=seed))
            row["j"], row["j_lo"], row["j_hi"] = youden_ci(bands, kinds, groups, n_boot, seed)
            for k in ("hard_negative", "other_person", "never_mentioned", "unrelated"):
                m = kinds == k
                row[f"fc_{k}"] = float((bands[m] >= 2).mean()) if m.any() else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def v4_markdown(table: pd.DataFrame, command: str) -> str:
    """The table as markdown (for outputs/, not the committed reports)."""
    lines = [f"Command: `{command}`", "",
             "| set | method | AUROC [95%] | minus top-1 | recall M+ | false conf. M+ | J M+ [95%] | "
             "hard neg. M+ | answerable M+ | answerable at NONE |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table.to_dict("records"):
        d = r.get("auroc_minus_top1", float("nan"))
        diff = "" if d != d else f"{d:+.3f} [{r['auroc_minus_top1_lo']:+.3f}, {r['auroc_minus_top1_hi']:+.3f}]"
        lines.append(f"| {r['set']} | {r['method']} | {r['auroc']:.3f} [{r['auroc_lo']:.3f}, {r['auroc_hi']:.3f}] | "
                     f"{diff} | {r['recall']:.3f} | {r['false_confidence']:.3f} | "
                     f"{r['j']:.3f} [{r['j_lo']:.3f}, {r['j_hi']:.3f}] | "
                     f"{r['hard_negative_moderate_plus']}/{r['n_hard_negative']} | "
                     f"{r['answerable_moderate_plus']}/{r['n_answerable']} | "
                     f"{100 * r['answerable_none']:.1f}% ({r['answerable_none_count']}/{r['n_answerable']}) |")
    return "\n".join(lines) + "\n"
