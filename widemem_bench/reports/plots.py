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
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from widemem_bench.experiments.sweep_weights import FIT_SPLITS, PICK
from widemem_bench.metrics import risk_coverage

BANDS = ("none", "low", "moderate", "high")
BAND_COLOURS = {"none": "#d9d9d9", "low": "#fdd49e", "moderate": "#fc8d59", "high": "#b30000"}
KIND_LABELS = {"answerable": "answerable", "hard_negative": "hard negative",
               "never_mentioned": "unrelated (never mentioned)", "other_person": "other person"}
CONF_KINDS = ("answerable", "hard_negative", "never_mentioned", "other_person")
BAND_HATCHES = {"none": "", "low": "..", "moderate": "//", "high": "xx"}
SCORE_LABELS = {"top1_sim": "top-1 cosine similarity", "final": "final score"}

# Every series gets a colour (Okabe-Ito, readable by colour-blind readers) *and* a line
# style and marker, so two series never differ by colour alone; at most MAX_SERIES per panel.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
MAX_SERIES = 8
# The default embedders keep one look in every figure. minilm-l6 (widemem's model) and
# its int8 twin draw nearly the same curves: minilm-l6 goes first, wide and pale, and
# every other series is drawn over it thinner, so both stay visible where they coincide.
EMBEDDER_ORDER = ("minilm-l6", "minilm-l6-int8", "minilm-l3", "bge-small", "tfidf")


def series_style(i: int) -> dict[str, Any]:
    """Matplotlib keywords of the i-th series of a panel (colour, line style, marker)."""
    if not 0 <= i < MAX_SERIES:
        raise ValueError(f"series index {i}: a panel holds at most {MAX_SERIES} series")
    return {"color": COLOURS[i], "ls": LINESTYLES[i], "marker": MARKERS[i]}


def embedder_order(names: Sequence[Any]) -> list[str]:
    """Draw order: the default set (minilm-l6 first, at the bottom), then any other name."""
    got = [str(n) for n in names]
    return [e for e in EMBEDDER_ORDER if e in got] + sorted(e for e in got if e not in EMBEDDER_ORDER)


def embedder_style(name: str, names: Sequence[Any]) -> dict[str, Any]:
    """One style per embedder, the same in every figure (slot = its place in the default
    set, then the others in name order); minilm-l6 wide and pale underneath the rest."""
    order = embedder_order(names)
    slot = order.index(name) if name in order else len(order)
    style = series_style(min(slot, MAX_SERIES - 1))
    style["zorder"] = 3 + slot
    style["lw"] = 3.2 if name == "minilm-l6" else 1.3
    if name == "minilm-l6":
        style["alpha"] = 0.55
    return style


def every(n_points: int, slot: int, marks: int = 8) -> tuple[int, int]:
    """``markevery`` that spreads ``marks`` markers and shifts each series' markers, so
    series that coincide still show every marker."""
    step = max(1, n_points // marks)
    return (min(n_points - 1, (slot * step) // 5) if n_points else 0, step)


# Day counts a reader looks for first; `spaced_ticks` labels these before any other.
ROUND_DAYS = (1, 7, 14, 30, 60, 90, 180, 365)


def spaced_ticks(values: Sequence[float], min_ratio: float = 1.4,
                 prefer: Sequence[float] = ROUND_DAYS) -> list[float]:
    """The values of a log axis that get a label: ``prefer``-red ones first, then the rest
    in order, each kept only if at least ``min_ratio`` times away from every kept one (so
    e.g. 60/75/90 or 273/365 do not print over each other). Sorted."""
    vals = sorted({float(v) for v in values if float(v) > 0})
    first = [v for v in vals if v in {float(x) for x in prefer}]
    kept: list[float] = []
    for v in first + [v for v in vals if v not in first]:
        if all(max(v, k) / min(v, k) >= min_ratio for k in kept):
            kept.append(v)
    return sorted(kept)


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
            ax.barh(embs, vals, left=left, color=BAND_COLOURS[band], label=band, edgecolor="white",
                    hatch=BAND_HATCHES[band])
            left += vals
        ax.set_title(KIND_LABELS.get(kind, kind), fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of the kind's questions (0-1)")
        ax.invert_yaxis()
    axes[0][-1].legend(title="band", bbox_to_anchor=(1.02, 1), loc="upper left", fontsize=8)
    fig.suptitle(f"Confidence band per question kind ({split} split)", fontsize=11, y=1.05)
    return _save(fig, path)


def plot_risk_coverage(per_query: pd.DataFrame, path: Path, score: str = "top1_sim") -> Path:
    """Risk (share not answerable) vs coverage when answering the top-scored questions first."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    pq = per_query[per_query["kind"].isin(CONF_KINDS)]
    groups = dict(list(pq.groupby("embedder")))
    names = embedder_order(list(groups))
    for emb in names:
        part = groups[emb]
        cov, risk = risk_coverage(part[score].fillna(-1.0).to_numpy(), (part["kind"] == "answerable").to_numpy())
        ax.plot(cov, risk, label=emb, markevery=every(len(cov), names.index(emb)), ms=5,
                **embedder_style(emb, names))
    base = 1 - (pq["kind"] == "answerable").mean() if len(pq) else np.nan
    ax.axhline(base, color="grey", ls=":", lw=1, label="answer everything")
    ax.set_xlabel("coverage (share of questions answered, highest score first)")
    ax.set_ylabel("risk (share of answered questions with nothing stored)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(f"Risk-coverage of the {SCORE_LABELS.get(score, score)}", fontsize=11)
    return _save(fig, path)


def plot_reliability(per_query: pd.DataFrame, path: Path, score: str = "top1_sim", n_bins: int = 10) -> Path:
    """Share answerable per equal-mass bin of the score, against the bin's mean score.

    The top-1 cosine is not a probability; the diagonal shows how far reading it as one
    would be off (the gap is what per-model calibration fixes).
    """
    fig, ax = plt.subplots(figsize=(5, 4.5))
    pq = per_query[per_query["kind"].isin(CONF_KINDS)]
    groups = dict(list(pq.groupby("embedder")))
    names = embedder_order(list(groups))
    for emb in names:
        part = groups[emb]
        s = part[score].fillna(0.0).to_numpy()
        y = (part["kind"] == "answerable").to_numpy()
        order = np.argsort(s, kind="stable")
        bins = np.array_split(order, n_bins)
        xs = [s[b].mean() for b in bins if len(b)]
        ys = [y[b].mean() for b in bins if len(b)]
        ax.plot(xs, ys, ms=4, label=emb, **embedder_style(emb, names))
    ax.plot([0, 1], [0, 1], color="grey", ls=":", lw=1, label="score read as a probability")
    ax.set_xlabel(f"mean {SCORE_LABELS.get(score, score)} in the bin ({n_bins} equal-mass bins)")
    ax.set_ylabel("share of the bin's questions that are answerable")
    ax.set_xlim(-0.05, 1)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Reliability of the top-1 cosine read as a probability", fontsize=11)
    return _save(fig, path)


def plot_score_vs_age(age_curve: pd.DataFrame, path: Path,
                      rates: Mapping[str, float] | None = None, similarity: float | None = None) -> Path:
    """Final score of a memory (fixed cosine) vs age, one panel per decay function, a line per importance."""
    fns = [f for f in ("exponential", "linear", "step", "none") if f in set(age_curve["decay"])]
    fig, axes = plt.subplots(1, len(fns), figsize=(3.4 * len(fns), 3.3), sharey=True, squeeze=False)
    for ax, fn in zip(axes[0], fns, strict=True):
        part = age_curve[age_curve["decay"] == fn]
        avail = sorted(part["rate"].unique())
        want = (rates or {}).get(fn)
        rate = want if want in avail else avail[len(avail) // 2]
        part = part[part["rate"] == rate]
        for i, (imp, line) in enumerate(part.groupby("importance")):
            ax.plot(line["age_days"], line["final"], label=f"importance {imp:g}",
                    markevery=max(1, len(line) // 6), ms=4, **series_style(i))
        ax.set_title(f"{fn}" + (f" (rate {rate:g})" if fn in ("exponential", "linear") else ""), fontsize=10)
        ax.set_xlabel("age (days)")
    axes[0][0].set_ylabel("final score (0-1)" + (f", cosine fixed at {similarity:g}" if similarity is not None else ""))
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.suptitle("Score vs age per decay function and importance", fontsize=11, y=1.04)
    return _save(fig, path)


AGE_BUCKET_DAYS = {"0-7d": "0-7", "7-30d": "7-30", "30-90d": "30-90", "90-180d": "90-180", "180d+": "180+"}
METRIC_LABELS = {
    "hit@1": "hit@1 (share with the gold memory at rank 1)",
    "hit@5": "hit@5 (share with the gold memory in the top 5)",
    "mrr": "MRR (mean reciprocal rank of the gold memory)",
    "recall_moderate_plus": "recall at MODERATE or above (share)",
}


def _ci_lookup(results: pd.DataFrame | None, metric: str, **keys: object) -> tuple[float, float]:
    """(ci_lo, ci_hi) of the one metric row matching ``keys`` in long-format results."""
    if results is None or results.empty or "metric" not in results:
        return (np.nan, np.nan)
    m = results[results["metric"] == metric]
    for k, v in keys.items():
        if k not in m:
            return (np.nan, np.nan)
        m = m[np.isclose(m[k].astype(float), float(v))] if isinstance(v, float) else m[m[k] == v]
    if m.empty:
        return (np.nan, np.nan)
    return float(m["ci_lo"].iloc[0]), float(m["ci_hi"].iloc[0])


def plot_survival(survival: pd.DataFrame, path: Path, metric: str = "hit@1",
                  results: pd.DataFrame | None = None) -> Path:
    """Share of answerable questions whose gold memory is still top-1, by the gold's age.

    One panel per decay family (each rate a series, at most MAX_SERIES per panel); the
    no-decay curve is repeated in every panel as the black reference. Error bars: the
    95% cluster-bootstrap interval of each point when ``results`` (the metric rows) has it.
    """
    buckets = list(dict.fromkeys(survival["age_bucket"]))
    x = np.arange(len(buckets))
    fams = [f for f in ("exponential", "linear", "step") if f in set(survival["decay"])]
    fams += sorted(f for f in set(survival["decay"]) if f not in (*fams, "none"))
    none = survival[survival["decay"] == "none"]
    panels: list[tuple[str, list[tuple[float, pd.DataFrame]]]] = []
    for fn in fams or ["none"]:
        sub = survival[survival["decay"] == fn]
        series = [(float(rate), sub[sub["rate"] == rate]) for rate in sorted(sub["rate"].astype(float).unique())]
        for k in range(0, max(len(series), 1), MAX_SERIES - 1):  # one slot for the reference
            panels.append((fn, series[k:k + MAX_SERIES - 1]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), sharey=True, squeeze=False)
    for ax, (fn, series) in zip(axes[0], panels, strict=True):
        drawn = [(f"{fn} {rate:g}" if fn in ("exponential", "linear") else fn, fn, rate, part)
                 for rate, part in series]
        if not none.empty and fn != "none":
            drawn.append(("none (no decay)", "none", float(none["rate"].to_numpy(float)[0]), none))
        for i, (label, dfn, rate, part) in enumerate(drawn):
            part = part.set_index("age_bucket").reindex(buckets)
            y = part[metric].to_numpy(dtype=float)
            style = series_style(i) if dfn != "none" else {"color": "black", "ls": "--", "marker": "o"}
            ci = np.array([_ci_lookup(results, metric, decay=dfn, rate=float(rate), age_bucket=b) for b in buckets])
            off = (i - (len(drawn) - 1) / 2) * 0.04  # small offsets: error bars never hide each other
            if np.isfinite(ci).all():
                yerr = np.abs(np.vstack([y - ci[:, 0], ci[:, 1] - y]))
                ax.errorbar(x + off, y, yerr=yerr, capsize=2, lw=1.2, ms=4, elinewidth=0.8, label=label, **style)
            else:
                ax.plot(x + off, y, lw=1.2, ms=4, label=label, **style)
        ax.set_xticks(x, [AGE_BUCKET_DAYS.get(b, b) for b in buckets])
        ax.set_xlabel("age of the gold memory at question time (days)")
        ax.set_title(fn, fontsize=10)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, loc="lower left")
    axes[0][0].set_ylabel(METRIC_LABELS.get(metric, metric))
    fig.suptitle(f"Survival of old, still-true facts by decay setting ({metric}; bars: 95% CI)", fontsize=11,
                 y=1.02)
    return _save(fig, path)


CURVE_PANELS = (
    ("precision_moderate_plus", "precision at MODERATE or above"),
    ("recall_moderate_plus", "recall at MODERATE or above (answerable)"),
    ("false_confidence_hard_negative", "false confidence on hard negatives"),
)


def _at(part: pd.DataFrame, col: str, t: float) -> float:
    """The curve's value at threshold ``t`` (linear between grid points)."""
    return float(np.interp(t, part["threshold"].to_numpy(float), part[col].to_numpy(float)))


def plot_threshold_curves(curve: pd.DataFrame, path: Path, split: str = "all",
                          marks: Mapping[str, float] | None = None,
                          calibrated: Mapping[str, float] | None = None,
                          results: pd.DataFrame | None = None) -> Path:
    """Precision, recall and hard-negative false confidence at MODERATE or above vs the
    threshold, one panel each, one series per embedder.

    ``marks``: the moderate threshold in force (widemem's table), an open circle on each
    curve; ``calibrated``: the per-model calibrated moderate threshold, a filled diamond.
    ``results``: the sweep's metric rows; their 95% cluster-bootstrap band is shaded.
    """
    c = curve[curve["split"] == split]
    groups = dict(list(c.groupby("embedder")))
    names = embedder_order(list(groups))
    fig, axes = plt.subplots(1, len(CURVE_PANELS), figsize=(5 * len(CURVE_PANELS), 4.2), sharey=True)
    r = None
    if results is not None and not results.empty and "threshold" in results:
        r = results[(results["split"] == split)]
    for emb in names:
        part = groups[emb].sort_values("threshold")
        style = embedder_style(emb, names)
        for ax, (col, _title) in zip(axes, CURVE_PANELS, strict=True):
            if col not in part:
                continue
            ax.plot(part["threshold"], part[col], label=emb, markevery=every(len(part), names.index(emb)),
                    ms=5, **style)
            if r is not None:
                band = r[(r["embedder"] == emb) & (r["metric"] == col)].sort_values("threshold")
                if len(band) and band["ci_lo"].notna().any():
                    ax.fill_between(band["threshold"], band["ci_lo"], band["ci_hi"], color=style["color"],
                                    alpha=0.12, lw=0, zorder=1)
            for thr, marker, face in (((marks or {}).get(emb), "o", "white"),
                                      ((calibrated or {}).get(emb), "D", style["color"])):
                if thr is not None and np.isfinite(thr):
                    ax.plot([thr], [_at(part, col, float(thr))], marker=marker, ms=8, mfc=face,
                            mec=style["color"], mew=1.5, ls="none", zorder=20)
    for ax, (_col, title) in zip(axes, CURVE_PANELS, strict=True):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("threshold on the top-1 cosine similarity")
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("share of questions (0-1)")
    handles, labels = axes[0].get_legend_handles_labels()
    handles += [plt.Line2D([], [], marker="o", mfc="white", mec="black", ls="none", ms=8),
                plt.Line2D([], [], marker="D", color="black", ls="none", ms=7)]
    labels += ["widemem's moderate threshold", "calibrated moderate threshold"]
    fig.legend(handles, labels, fontsize=8, loc="upper center", ncol=len(labels), bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(f"Precision, recall and false confidence vs threshold ({split} split; shaded: 95% CI)",
                 fontsize=11)
    return _save(fig, path)


def best_mix(g: pd.DataFrame, metric: str = "hit@1") -> tuple[pd.Series, str]:
    """The grid row the report table calls `best_hit@1`, and the splits it was chosen on.

    sweep_weights picks by ``PICK`` (hit@1 on train + validation users, first maximum in
    grid order); the sealed holdout never chooses. Grid tables from before that column
    fall back to ``metric`` over all splits, and say so.
    """
    if PICK in g and metric == "hit@1":
        return g.iloc[int(np.argmax(g[PICK].to_numpy(float)))], " + ".join(FIT_SPLITS)
    return g.iloc[int(np.argmax(g[metric].to_numpy(float)))], "all splits, holdout included"


def plot_weight_grid(grid: pd.DataFrame, path: Path, metric: str = "hit@1") -> Path:
    """The simplex of weights coloured by `metric` (x = similarity, y = importance; recency = rest).

    Colour: ``metric`` over all splits; star: the table's best mix (`best_mix`)."""
    modes = sorted(grid["adapt"].unique(), reverse=True)
    fig, axes = plt.subplots(1, len(modes), figsize=(4.6 * len(modes), 4), squeeze=False)
    vmin, vmax = grid[metric].min(), grid[metric].max()
    sc = None
    picked = ""
    for ax, adapt in zip(axes[0], modes, strict=True):
        g = grid[grid["adapt"] == adapt]
        sc = ax.scatter(g["w_sim"], g["w_imp"], c=g[metric], cmap="viridis", vmin=vmin, vmax=vmax,
                        s=40, marker="s")
        best, picked = best_mix(g, metric)
        ax.scatter([best["w_sim"]], [best["w_imp"]], marker="*", s=160, color="red",
                   label=f"best {metric}: {best['w_sim']:.2f}/{best['w_imp']:.2f}/{best['w_rec']:.2f}")
        ax.scatter([0.5], [0.3], marker="x", s=80, color="black", label="widemem 0.5/0.3/0.2")
        ax.set_xlabel("similarity weight (0-1)")
        if ax is axes[0][0]:  # one y label: the second panel's would run into the first
            ax.set_ylabel("importance weight (0-1; recency = 1 - both)")
        ax.set_title("per-query adaptation " + ("on (widemem)" if adapt else "off"), fontsize=10)
        ax.legend(fontsize=7, loc="upper right")
    if sc is not None:
        fig.colorbar(sc, ax=axes[0].tolist(), label=METRIC_LABELS.get(metric, metric) + ", all splits")
    fig.suptitle(f"Weight mixes (sim/imp/rec); star: best {metric} on {picked}, as in the table", fontsize=10,
                 y=1.02)
    return _save(fig, path)
