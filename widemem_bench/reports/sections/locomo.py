"""Report section of `locomo` (and reports/locomo.md): AUROC, retrieval and band tables,
figures and a short reading, rendered from the run tables; the experiment only computes."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from widemem_bench.external.locomo import CATEGORY_NAMES
from widemem_bench.reports.markdown import fmt
from widemem_bench.reports.sections import report_section


def _fmt_ci(v: float, lo: float, hi: float, pct: bool = False) -> str:
    return fmt(v, lo, hi, percent=pct)


# How the figures name the confidence signals (METHOD_NOTES has the long form).
METHOD_LABELS = {"top1_cosine": "top-1 cosine", "margin": "top-1 minus top-2 cosine",
                 "answerability": "answerability scorer", "speaker_top1": "top-1 cosine, named speaker",
                 "speaker_top1_bare": "top-1 cosine, named speaker, bare text",
                 "speaker_contrast": "speaker contrast", "ownership": "evidence ownership",
                 "ownership_cv": "evidence ownership, cross-validated",
                 "ownership_lr": "ownership model (logistic regression)"}


def _label(name: str) -> str:
    return METHOD_LABELS.get(name, name.replace("_", " "))


def _plots(tables: dict[str, pd.DataFrame], fig_dir: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")  # before any pyplot import (the _plot_* functions import it)
    fig_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    if len(tables["retrieval"]):
        out["hit10"] = _plot_hit10(tables["retrieval"], fig_dir)
    if len(tables["auroc"]):
        out["auroc"] = _plot_auroc(tables["auroc"], fig_dir)
    if len(tables["bands"]):
        out["bands"] = _plot_bands(tables["bands"], fig_dir)
    return out


def _plot_hit10(ret: pd.DataFrame, fig_dir: Path) -> Path:
    """locomo_hit10.png: evidence turn in the top 10, per category and search."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from widemem_bench.reports.plots import series_style

    fig, ax = plt.subplots(figsize=(9, 3.8))
    labels = [f"{e} / {s}" for e, s in ret[["embedder", "search"]].drop_duplicates().itertuples(index=False)]
    groups = ret[["embedder", "search"]].drop_duplicates().to_numpy()
    cats = sorted(ret["category"].unique())
    width = 0.8 / max(len(groups), 1)
    for j, (emb, search) in enumerate(groups):
        sub = ret[(ret["embedder"] == emb) & (ret["search"] == search)].set_index("category")
        ax.bar(np.arange(len(cats)) + j * width, [sub.loc[c, "hit@10"] for c in cats], width, label=labels[j],
               color=series_style(j % 8)["color"], hatch=("", "//", "..", "xx")[j % 4], edgecolor="white")
    ax.set_xticks(np.arange(len(cats)) + width * (len(groups) - 1) / 2)
    ax.set_xticklabels([f"{c} {CATEGORY_NAMES[c]}" for c in cats])
    ax.set_ylabel("evidence turn in the top 10")
    ax.set_xlabel("LoCoMo question category")
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("LoCoMo: evidence turn in the top 10, per category")
    fig.tight_layout()
    path = fig_dir / "locomo_hit10.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _plot_auroc(au: pd.DataFrame, fig_dir: Path) -> Path:
    """locomo_auroc.png: AUROC of each confidence signal, per embedder."""
    import matplotlib.pyplot as plt

    from widemem_bench.reports.plots import embedder_style

    methods = list(dict.fromkeys(au["method"]))
    embs = list(dict.fromkeys(au["embedder"]))
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(methods) + 1.4))
    step = 0.7 / max(len(embs), 1)
    for j, emb in enumerate(embs):
        sub = au[au["embedder"] == emb].set_index("method").reindex(methods)
        ypos = np.arange(len(methods))[::-1] + 0.35 - (j + 0.5) * step
        err = np.vstack([sub["auroc"] - sub["auroc_lo"], sub["auroc_hi"] - sub["auroc"]])
        st = embedder_style(emb, embs)
        ax.errorbar(sub["auroc"], ypos, xerr=err, fmt=st["marker"], color=st["color"], ms=5, capsize=2,
                    label=emb)
    ax.axvline(0.5, color="grey", lw=0.8, ls=":", label="chance 0.5")
    ax.axvline(0.75, color="tab:green", lw=0.8, ls="--", label="target 0.75")
    ax.set_yticks(np.arange(len(methods))[::-1])
    ax.set_yticklabels([_label(m) for m in methods], fontsize=8)
    ax.set_ylabel("confidence signal")
    ax.set_xlabel("AUROC, answerable (1-4) vs adversarial (5); 95% conversation bootstrap")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path = fig_dir / "locomo_auroc.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _plot_bands(bands: pd.DataFrame, fig_dir: Path) -> Path:
    """locomo_bands.png: band shares per category (the first embedder)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from widemem_bench.reports.plots import BAND_COLOURS, BAND_HATCHES

    # One embedder (the first, the headline one) keeps the figure readable.
    bands = bands[bands["embedder"] == bands["embedder"].iloc[0]]
    combos = bands[["embedder", "setting", "score"]].drop_duplicates().to_numpy()
    fig, axes = plt.subplots(len(combos), 1, figsize=(8, 1.9 * len(combos) + 0.8), squeeze=False)
    colours = BAND_COLOURS  # the same band colours as band_shares.png
    for ax, (emb, setting, score) in zip(axes[:, 0], combos, strict=True):
        sub = bands[(bands["embedder"] == emb) & (bands["setting"] == setting) & (bands["score"] == score)]
        left = np.zeros(len(sub))
        for name in ("none", "low", "moderate", "high"):
            ax.barh(sub["category_name"], sub[name], left=left, color=colours[name], label=name,
                    hatch=BAND_HATCHES[name], edgecolor="white")
            left += sub[name].to_numpy()
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_title(textwrap.fill(f"{emb}: {setting} thresholds on {_label(str(score))}", 95), fontsize=8)
        ax.tick_params(labelsize=7)
    axes[-1, 0].set_xlabel("share of the category's questions in each confidence band")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=7, ncol=4, loc="upper center")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / (1.9 * len(combos) + 0.8)))
    path = fig_dir / "locomo_bands.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


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
    au = t["auroc"]
    if len(au) and au["embedder"].nunique() == 1:
        # make bench runs one embedder (five cost ~25 min on 2 cores); say how to get the rest
        lines[-1] += (f" Embedder {au['embedder'].iloc[0]} only; other embedders in one run: "
                      "`widemem-bench locomo 'params.embedders=[minilm-l6,bge-small]'`.")
    lines.append("")
    if len(au):
        lines += _auroc_lines(au, t.get("per_query"))
    forms = t.get("auroc_forms")
    if forms is not None and len(forms):
        lines += _forms_lines(forms)
    by_cat = t.get("auroc_by_category")
    if by_cat is not None and len(by_cat):
        lines += _by_category_lines(by_cat)
    if len(t["retrieval"]):
        lines += _retrieval_lines(t["retrieval"])
    if len(t["bands"]):
        lines += _bands_lines(t["bands"])
    if len(t["thresholds"]):
        lines += _thresholds_lines(t["thresholds"])
    sens = t.get("sensitivity")
    if sens is not None and len(sens):
        lines += _sensitivity_lines(sens)
    lines += _transfer_lines(t["transfer"])
    for key, title in (("hit10", "evidence hit@10"), ("auroc", "AUROC per method"), ("bands", "bands")):
        if key in figures:
            lines.append(f"![LoCoMo {title}]({os.path.relpath(figures[key], rel_to)})")
    lines.append("")
    return "\n".join(lines)




def _auroc_lines(au: pd.DataFrame, per_query: pd.DataFrame | None) -> list[str]:
    """The reading and the AUROC table (categories 1-4 against 5)."""
    lines: list[str] = []
    lines += _reading(au, per_query)
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
    return lines


def _forms_lines(forms: pd.DataFrame) -> list[str]:
    """Turns against the rule extractor's facts as memories."""
    lines: list[str] = []
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
    return lines


def _by_category_lines(by_cat: pd.DataFrame) -> list[str]:
    """AUROC of each answerable category alone against category 5."""
    lines: list[str] = []
    keep = by_cat[by_cat["method"].isin(["top1_cosine", "ownership", "ownership_lr"])]
    grid = keep.pivot_table(index=["embedder", "method"], columns="category", values="auroc", sort=False)
    lines += ["AUROC of each answerable category alone against category 5:", "",
              "| embedder | method | " + " | ".join(f"{int(str(c))} {CATEGORY_NAMES[int(str(c))]}" for c in grid.columns) + " |",
              "|---|---|" + "---|" * len(grid.columns)]
    for key, r in grid.iterrows():
        emb, method = cast(tuple[str, str], key)  # the pivot's two-level index
        lines.append(f"| {emb} | {method} | " + " | ".join(f"{v:.3f}" for v in r) + " |")
    lines.append("")
    return lines


def _retrieval_lines(ret: pd.DataFrame) -> list[str]:
    """Evidence hit@k and MRR per category and search."""
    lines: list[str] = []
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
    return lines


def _bands_lines(bands: pd.DataFrame) -> list[str]:
    """Share of each category at MODERATE or above."""
    lines: list[str] = []
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
    return lines


def _thresholds_lines(thr: pd.DataFrame) -> list[str]:
    """The thresholds in force over the held-out folds."""
    lines: list[str] = []
    summ = thr.groupby(["embedder", "setting", "score"], sort=False)[["high", "moderate", "low"]].agg(["min", "max"])
    lines += ["Thresholds in force (min-max over the held-out folds):", "",
              "| embedder | thresholds | score | high | moderate | low |", "|---|---|---|---|---|---|"]
    for key, r in summ.iterrows():
        emb, setting, score = cast(tuple[str, str, str], key)  # the groupby's three-level index
        cells = [f"{r[(b, 'min')]:.3f}" if r[(b, 'min')] == r[(b, 'max')] else f"{r[(b, 'min')]:.3f}-{r[(b, 'max')]:.3f}"
                 for b in ("high", "moderate", "low")]
        lines.append(f"| {emb} | {setting} | {score} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _sensitivity_lines(sens: pd.DataFrame) -> list[str]:
    """AUROC of `ownership` over its two settings."""
    lines: list[str] = []
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
    return lines


def _transfer_lines(tr: pd.DataFrame) -> list[str]:
    """Timeline thresholds judged on LoCoMo (or why there are none)."""
    lines = ["### Calibration transfer: timeline thresholds judged on LoCoMo", ""]
    if len(tr):
        lines += ["| embedder | score | band | threshold | certified target | precision on timelines | precision on LoCoMo | recall on LoCoMo 1-4 | cat. 5 at band or above |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in tr.to_dict("records"):
            def f(x: Any) -> str:
                return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * float(x):.1f}%"
            lines.append(f"| {r['embedder']} | {r.get('score', 'top1_cosine')} | {r['band']} | {r['threshold']:.3f} | {_target(r['band'], f(r['target']))} | "
                         f"{f(r['timeline_precision'])} | {f(r['locomo_precision'])} | {f(r['locomo_recall'])} | "
                         f"{f(r['adversarial_at_or_above'])} |")
        lines += ["", f"LoCoMo's base rate of answerable questions is {100 * float(tr['locomo_base_rate'].iloc[0]):.1f}%: "
                  "a band whose precision is no higher than that tells nothing.", ""]
    else:
        lines += ["No committed timeline calibration for these embedders yet "
                  "(`widemem_bench/calibration/files/<embedder>.json`); this table fills in once one exists.", ""]
    return lines


def _target(band: str, value: str) -> str:
    # LOW is certified by answerable questions kept out of NONE, not by a precision
    return f"answerable at LOW+ >= {value}" if band == "low" else f"precision >= {value}"


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
        k: [] for k in ("auroc", "auroc_by_category", "retrieval", "bands", "thresholds", "transfer", "sensitivity", "auroc_forms",
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
