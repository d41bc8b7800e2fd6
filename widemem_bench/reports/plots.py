"""Figures of the report. Each takes a table from the run records and a PNG path, and
returns the path; nothing here reads files or runs experiments.

Tables:
- `results`: long-format metric rows (aggregate.collect) of compare_embedders;
- `per_query`: concatenated per_query.parquet tables (embedder, kind, top1_sim, ...);
- `age_curve`, `survival`: tables of sweep_decay; `curve`: sweep_thresholds; `grid`: sweep_weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from widemem_bench.metrics import risk_coverage

BANDS = ("none", "low", "moderate", "high")
BAND_COLOURS = {"none": "#d9d9d9", "low": "#fdd49e", "moderate": "#fc8d59", "high": "#b30000"}
KIND_LABELS = {"answerable": "answerable", "hard_negative": "hard negative",
               "never_mentioned": "unrelated (never mentioned)", "other_person": "other person"}
CONF_KINDS = ("answerable", "hard_negative", "never_mentioned", "other_person")


def _save(fig: plt.Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path


def plot_band_shares(results: pd.DataFrame, path: Path, split: str = "all",
                     embedders: Sequence[str] | None = None) -> Path:
    """Stacked bars: share of each question kind in each band, per embedder."""
    r = results[(results["split"] == split) & results["metric"].str.startswith("share_")]
    embs = list(embedders) if embedders else sorted(r["embedder"].dropna().unique())
    kinds = [k for k in CONF_KINDS if r["metric"].str.startswith(f"share_{k}_").any()]
    fig, axes = plt.subplots(1, len(kinds), figsize=(3.6 * len(kinds), 0.5 * len(embs) + 1.6),
                             sharey=True, squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        left = np.zeros(len(embs))
        for band in BANDS:
            vals = np.array([
                r.loc[(r["embedder"] == e) & (r["metric"] == f"share_{kind}_{band}"), "value"].mean()
                for e in embs])
            vals = np.nan_to_num(vals)
            ax.barh(embs, vals, left=left, color=BAND_COLOURS[band], label=band, edgecolor="white")
            left += vals
        ax.set_title(KIND_LABELS.get(kind, kind), fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of questions")
        ax.invert_yaxis()
    axes[0][-1].legend(title="band", bbox_to_anchor=(1.02, 1), loc="upper left", fontsize=8)
    fig.suptitle(f"Confidence band per question kind ({split} split)", fontsize=11, y=1.05)
    return _save(fig, path)


def plot_risk_coverage(per_query: pd.DataFrame, path: Path, score: str = "top1_sim") -> Path:
    """Risk (share not answerable) vs coverage when answering the top-scored questions first."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    pq = per_query[per_query["kind"].isin(CONF_KINDS)]
    for emb, part in sorted(pq.groupby("embedder"), key=lambda kv: str(kv[0])):
        cov, risk = risk_coverage(part[score].fillna(-1.0).to_numpy(), (part["kind"] == "answerable").to_numpy())
        ax.plot(cov, risk, label=str(emb), lw=1.4)
    base = 1 - (pq["kind"] == "answerable").mean() if len(pq) else np.nan
    ax.axhline(base, color="grey", ls=":", lw=1, label="answer everything")
    ax.set_xlabel("coverage (share of questions answered)")
    ax.set_ylabel("risk (share answered with nothing stored)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Risk-coverage of the top-1 cosine", fontsize=11)
    return _save(fig, path)


def plot_reliability(per_query: pd.DataFrame, path: Path, score: str = "top1_sim", n_bins: int = 10) -> Path:
    """Share answerable per equal-mass bin of the score, against the bin's mean score.

    The top-1 cosine is not a probability; the diagonal shows how far reading it as one
    would be off (the gap is what per-model calibration fixes).
    """
    fig, ax = plt.subplots(figsize=(5, 4.5))
    pq = per_query[per_query["kind"].isin(CONF_KINDS)]
    for emb, part in sorted(pq.groupby("embedder"), key=lambda kv: str(kv[0])):
        s = part[score].fillna(0.0).to_numpy()
        y = (part["kind"] == "answerable").to_numpy()
        order = np.argsort(s, kind="stable")
        bins = np.array_split(order, n_bins)
        xs = [s[b].mean() for b in bins if len(b)]
        ys = [y[b].mean() for b in bins if len(b)]
        ax.plot(xs, ys, marker="o", ms=3, lw=1.2, label=str(emb))
    ax.plot([0, 1], [0, 1], color="grey", ls=":", lw=1)
    ax.set_xlabel(f"mean {score} in bin ({n_bins} equal-mass bins)")
    ax.set_ylabel("share answerable")
    ax.set_xlim(-0.05, 1)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Reliability of the top-1 cosine read as a probability", fontsize=11)
    return _save(fig, path)


def plot_score_vs_age(age_curve: pd.DataFrame, path: Path,
                      rates: Mapping[str, float] | None = None) -> Path:
    """Final score of a memory (fixed cosine) vs age, one panel per decay function, a line per importance."""
    fns = [f for f in ("exponential", "linear", "step", "none") if f in set(age_curve["decay"])]
    fig, axes = plt.subplots(1, len(fns), figsize=(3.4 * len(fns), 3.3), sharey=True, squeeze=False)
    for ax, fn in zip(axes[0], fns, strict=True):
        part = age_curve[age_curve["decay"] == fn]
        avail = sorted(part["rate"].unique())
        want = (rates or {}).get(fn)
        rate = want if want in avail else avail[len(avail) // 2]
        part = part[part["rate"] == rate]
        for imp, line in part.groupby("importance"):
            ax.plot(line["age_days"], line["final"], label=f"importance {imp:g}")
        ax.set_title(f"{fn}" + (f" (rate {rate:g})" if fn in ("exponential", "linear") else ""), fontsize=10)
        ax.set_xlabel("age (days)")
    axes[0][0].set_ylabel("final score")
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.suptitle("Score vs age per decay function and importance", fontsize=11)
    return _save(fig, path)


def plot_survival(survival: pd.DataFrame, path: Path, metric: str = "hit@1") -> Path:
    """Share of answerable questions whose gold memory is still top-1, by the gold's age."""
    fig, ax = plt.subplots(figsize=(6, 4))
    buckets = list(dict.fromkeys(survival["age_bucket"]))
    for (fn, rate), part in survival.groupby(["decay", "rate"], sort=True):
        part = part.set_index("age_bucket").reindex(buckets)
        label = fn if fn in ("step", "none") else f"{fn} {rate:g}"
        ax.plot(buckets, part[metric], marker="o", ms=3, lw=1.2, label=label)
    ax.set_xlabel("age of the gold memory at question time")
    ax.set_ylabel(metric)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"Survival of old, still-true facts ({metric})", fontsize=11)
    return _save(fig, path)


def plot_threshold_curves(curve: pd.DataFrame, path: Path, split: str = "all",
                          marks: Mapping[str, float] | None = None) -> Path:
    """Precision and recall at MODERATE or above vs the threshold, per embedder."""
    c = curve[curve["split"] == split]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for emb, part in sorted(c.groupby("embedder"), key=lambda kv: str(kv[0])):
        part = part.sort_values("threshold")
        (line,) = axes[0].plot(part["threshold"], part["precision_moderate_plus"], lw=1.3, label=str(emb))
        axes[1].plot(part["threshold"], part["recall_moderate_plus"], lw=1.3, color=line.get_color())
        axes[1].plot(part["threshold"], part["false_confidence_hard_negative"], lw=1, ls="--",
                     color=line.get_color())
        if marks and str(emb) in marks:
            for ax in axes:
                ax.axvline(marks[str(emb)], color=line.get_color(), ls=":", lw=0.8)
    axes[0].set_title("precision of MODERATE or above", fontsize=10)
    axes[1].set_title("recall (solid), false confidence on hard negatives (dashed)", fontsize=10)
    for ax in axes:
        ax.set_xlabel("threshold on the top-1 cosine")
        ax.set_ylim(0, 1)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Precision and recall vs threshold ({split} split; dotted: moderate threshold in force)",
                 fontsize=11)
    return _save(fig, path)


def plot_weight_grid(grid: pd.DataFrame, path: Path, metric: str = "hit@1") -> Path:
    """The simplex of weights coloured by `metric` (x = similarity, y = importance; recency = rest)."""
    modes = sorted(grid["adapt"].unique(), reverse=True)
    fig, axes = plt.subplots(1, len(modes), figsize=(4.6 * len(modes), 4), squeeze=False)
    vmin, vmax = grid[metric].min(), grid[metric].max()
    sc = None
    for ax, adapt in zip(axes[0], modes, strict=True):
        g = grid[grid["adapt"] == adapt]
        sc = ax.scatter(g["w_sim"], g["w_imp"], c=g[metric], cmap="viridis", vmin=vmin, vmax=vmax,
                        s=40, marker="s")
        best = g.loc[g[metric].idxmax()]
        ax.scatter([best["w_sim"]], [best["w_imp"]], marker="*", s=160, color="red", label="best")
        ax.scatter([0.5], [0.3], marker="x", s=80, color="black", label="widemem 0.5/0.3/0.2")
        ax.set_xlabel("similarity weight")
        ax.set_ylabel("importance weight (recency = 1 - both)")
        ax.set_title("per-query adaptation " + ("on (widemem)" if adapt else "off"), fontsize=10)
        ax.legend(fontsize=7, loc="upper right")
    if sc is not None:
        fig.colorbar(sc, ax=axes[0].tolist(), label=metric)
    return _save(fig, path)
