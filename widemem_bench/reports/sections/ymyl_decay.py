"""Report section of `ymyl_decay`: facts in reach by age, with YMYL off / on / lexicon / gold.

Rendered from the run's saved tables (curve, classifier) and metric rows; the experiment
itself only computes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.engine.config import WIDEMEM_DECAY
from widemem_bench.experiments.ymyl_decay import YMYL_SETTINGS
from widemem_bench.reports.markdown import md_table, pct
from widemem_bench.reports.sections import report_section
from widemem_bench.reports.sections._common import latest_run, metric_value, publish_fragment, table

FIGURE = "ymyl_decay.png"


# Panels of the plot: (row title, [(slice, YMYL settings drawn)]); at most 8 series a panel.
_PLOT_ROWS: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    ("medication facts", (("medication", YMYL_SETTINGS),)),
    ("other facts", (("trivial", ("off", "on", "on_lexicon")),
                     ("critical", ("off", "on_lexicon", "on_gold")),
                     ("core", ("off", "on_lexicon")))),
)
# Colour = which facts (slice), line style and marker = the YMYL setting: the same in every panel.
_SLICE_SLOT = {"medication": 1, "trivial": 6, "critical": 4, "core": 0, "context": 2}
_YMYL_LABELS = {"off": "YMYL off", "on": "widemem's YMYL regex", "on_lexicon": "YMYL lexicon",
                "on_gold": "YMYL from the labels"}


def _style(sl: str, ymyl: str) -> dict[str, Any]:
    from widemem_bench.reports.plots import series_style

    line = series_style(list(YMYL_SETTINGS).index(ymyl) if ymyl in YMYL_SETTINGS else 0)
    return {"color": series_style(_SLICE_SLOT.get(sl, 7))["color"], "ls": line["ls"], "marker": line["marker"],
            "ms": 4}


def _plot(table: pd.DataFrame, path: Path, decay: str, rate: float, reach_k: int, store: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from widemem_bench.reports.plots import spaced_ticks

    t = table[(table["decay"] == decay) & (table["rate"] == rate) & (table["store"] == store)]
    fig, axes = plt.subplots(2, 3, figsize=(15.5, 7.6), sharex=True)
    metrics = (("in_reach", f"in the top {reach_k}"), ("top1", "at top 1"),
               ("lost_reach", f"lost: out of the top {reach_k}, of those in it at 1 day"))
    for r, (row_title, lines) in enumerate(_PLOT_ROWS):
        for c, (metric, title) in enumerate(metrics):
            ax = axes[r][c]
            for sl, settings in lines:
                if metric == "lost_reach" and sl not in ("medication", "trivial"):
                    continue
                for ymyl in settings:
                    s = t[(t["slice"] == sl) & (t["ymyl"] == ymyl)].sort_values("days")
                    if s.empty or metric not in s:
                        continue
                    st = _style(sl, ymyl)
                    ax.plot(s["days"], s[metric], label=f"{sl}, {_YMYL_LABELS.get(ymyl, ymyl)}", **st)
                    if f"{metric}_lo" in s and ymyl in ("off", "on_lexicon") and metric == "lost_reach":
                        ax.fill_between(s["days"], s[f"{metric}_lo"], s[f"{metric}_hi"], color=st["color"],
                                        alpha=0.12 if ymyl == "off" else 0.25, lw=0)
            ax.axvline(60, color="grey", lw=0.8)
            ax.text(60, 1.0, " 60 d", color="grey", fontsize=8, va="top", transform=ax.get_xaxis_transform())
            ax.set_xscale("log")
            # Every measured day gets a tick, only well-spaced ones a label: the later
            # days sit close together on the log axis and their labels ran together.
            days = sorted(float(d) for d in set(t["days"]))
            ax.set_xticks(days, minor=True)
            ax.tick_params(axis="x", which="minor", length=3, labelbottom=False)
            labelled = spaced_ticks(days)
            ax.set_xticks(labelled, [f"{d:g}" for d in labelled])
            if r == len(_PLOT_ROWS) - 1:
                ax.set_xlabel("days since the fact was last mentioned (log scale)")
            ax.set_title(f"{row_title}: {title}", fontsize=9)
            # Below 0 so that a flat 0% line (an immune fact is never lost) stays visible.
            ax.set_ylim(-0.03, 1.03)
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
            if c == 0:
                ax.set_ylabel("share of facts")
        # the top-1 panel draws every series of its row; its legend goes right of the row
        handles, labels = axes[r][1].get_legend_handles_labels()
        axes[r][2].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(f"Decay survival, {decay} rate {rate:g}, store of {store} memories per user "
                 "(right: shaded = 95% cluster-bootstrap interval)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _lost_table(t: pd.DataFrame, reach_k: int, day: float) -> pd.DataFrame:
    """Medication and trivial facts: share lost by ``day`` (top k and top 1) per YMYL setting."""
    out = []
    for sl in ("medication", "trivial"):
        for ymyl in YMYL_SETTINGS:
            s = t[(t["slice"] == sl) & (t["ymyl"] == ymyl)].set_index("days")
            if s.empty or day not in s.index or "lost_reach" not in s:
                continue
            x: Any = s.loc[day]
            b: Any = s.iloc[0]
            out.append({
                "facts": sl, "YMYL": ymyl,
                f"in reach at {s.index[0]:g} d, top {reach_k} / top 1": f"{int(x['lost_reach_n'])} / {int(x['lost_top1_n'])} "
                f"of {int(b['n'])}",
                f"lost by day {day:g}, top {reach_k}": pct(float(x["lost_reach"]), float(x["lost_reach_lo"]),
                                                          float(x["lost_reach_hi"])),
                f"lost by day {day:g}, top 1": pct(float(x["lost_top1"]), float(x["lost_top1_lo"]),
                                                   float(x["lost_top1_hi"])),
            })
    return pd.DataFrame(out)


def _quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """One row per measure: widemem / lexicon per split, the holdout lexicon with its interval."""
    out = []
    for measure, g in quality.groupby("measure", sort=False):
        r: dict[str, Any] = {"measure": measure}
        cell = {(str(q["split"]), str(q["classifier"])): q for q in g.to_dict("records")}
        for sp in ("train", "validation", "holdout"):
            if (sp, "widemem") not in cell or (sp, "lexicon") not in cell:
                continue
            w, lx = cell[(sp, "widemem")], cell[(sp, "lexicon")]
            r[f"{sp}: widemem / lexicon (n)"] = f"{w['value']:.0%} / {lx['value']:.0%} (n={int(lx['n'])})"
        h = cell.get(("holdout", "lexicon"))
        if h is not None:
            r["holdout, lexicon [95% CI]"] = pct(float(h["value"]), float(h["lo"]), float(h["hi"]))
        out.append(r)
    return pd.DataFrame(out)


def render(table: pd.DataFrame, emb_name: str, n_users: int, reach_k: int, n_targets: int,
           figure: str, store: str, decay: str = "exponential", rate: float = 0.01,
           quality: pd.DataFrame | None = None, overlap: dict[str, int] | None = None) -> str:
    """Markdown fragment (pure function of the curve table, the classifier table and the
    lexicon's overlap with the generator's vocabulary)."""
    t = table[(table["decay"] == decay) & (table["rate"] == rate) & (table["store"] == store)]
    show_days = [d for d in (1.0, 30.0, 60.0, 90.0, 180.0, 365.0) if d in set(t["days"])]
    rows = _age_rows(t, show_days)
    stores = _store_rows(table, decay, rate, reach_k, show_days)
    sweep = _sweep_rows(table, store)
    out = [
        "## YMYL decay survival (`ymyl_decay`)",
        "",
        f"{n_targets} facts still true at the end of {n_users} users' timelines ({emb_name}, balanced mode, "
        "widemem's weights); each is asked with its slot's questions as if last said N days ago, against "
        "the user's other memories at their real ages at the end of the timeline (same-slot memories left "
        "out). `store` = memories per user: `own` is the timeline's (~25), a number pads the store with "
        "other users' non-YMYL memories (other attributes, their own ages; non-YMYL by the timeline's "
        "labels and widemem's regex), i.e. a chattier user whose YMYL facts stay their own. "
        f"Decay {decay}, rate {rate:g}. YMYL `off` = widemem's default; `on` = widemem 2.0.2's regex "
        "(importance floor 8 + decay immunity on a strong match of the memory text); `on_lexicon` = the "
        "same two effects with the engine's `ymyl_classifier=lexicon` (widemem's regex plus the project's "
        "drug, condition and medical-usage lexicon), exactly as `MemoryEngine` applies them; `on_gold` = "
        "the same two effects for every fact the timeline labels strong YMYL (widemem's extraction LLM "
        "tagging them all).",
        "",
        f"**Out of reach** = not among the top {reach_k} results for its own question (also reported at "
        "top 1). **Lost by day N** = of the facts in reach when 1 day old, the share out of reach when "
        "N days old (per question; 95% cluster-bootstrap intervals over users).",
        "",
        f"### The 60-day failure and its fix (medication facts, store of {store})",
        "",
        md_table(_lost_table(t, reach_k, 60.0)),
        "",
    ]
    out += _reading(t, reach_k, store)
    if quality is not None and not quality.empty:
        out += _quality_text(quality, overlap)
    out += [
        "",
        f"### Survival by age (store of {store})",
        "",
        f"Cells: in the top {reach_k} [95% cluster-bootstrap interval] / at top 1.",
        "",
        md_table(pd.DataFrame(rows)),
        "",
        f"![decay survival]({figure})",
        "",
        "Medication and trivial facts per store size:",
        "",
        md_table(pd.DataFrame(stores)),
        "",
        f"Medication facts, store of {store}, every decay setting (top {reach_k} at 1 / 60 / 365 days):",
        "",
        md_table(pd.DataFrame(sweep)),
    ]
    return "\n".join(out)


def _day_cells(s: pd.DataFrame, show_days: list[float]) -> dict[str, str]:
    """In the top k [interval] / at top 1, one cell per shown day (``s`` indexed by days)."""
    out = {}
    for d in show_days:
        x: Any = s.loc[d]
        cell = pct(float(x["in_reach"]), float(x["in_reach_lo"]), float(x["in_reach_hi"]))
        out[f"{int(d)} d"] = f"{cell} / {float(x['top1']):.0%}"
    return out


def _age_rows(t: pd.DataFrame, show_days: list[float]) -> list[dict[str, Any]]:
    """Survival by age per slice of facts and YMYL setting (one decay setting and store)."""
    rows = []
    for sl in ("medication", "critical", "core", "context", "trivial"):
        for ymyl in YMYL_SETTINGS:
            s = t[(t["slice"] == sl) & (t["ymyl"] == ymyl)].set_index("days")
            if s.empty:
                continue
            rows.append({"facts": sl, "YMYL": ymyl, "n": int(s["n"].iloc[0]), **_day_cells(s, show_days)})
    return rows


def _store_rows(table: pd.DataFrame, decay: str, rate: float, reach_k: int,
                show_days: list[float]) -> list[dict[str, Any]]:
    """Medication and trivial facts per store size."""
    stores = []
    for st in dict.fromkeys(table["store"]):
        s_all = table[(table["decay"] == decay) & (table["rate"] == rate) & (table["store"] == st)]
        for sl in ("medication", "trivial"):
            for ymyl in YMYL_SETTINGS:
                s = s_all[(s_all["slice"] == sl) & (s_all["ymyl"] == ymyl)].set_index("days")
                if s.empty:
                    continue
                lost = float(s.loc[60.0, "lost_reach"]) if 60.0 in s.index else float("nan")
                stores.append({"store": st, "facts": sl, "YMYL": ymyl, **_day_cells(s, show_days),
                               f"lost by day 60, top {reach_k}": f"{lost:.0%}"})
    return stores


def _sweep_rows(table: pd.DataFrame, store: str) -> list[dict[str, Any]]:
    """Medication facts in reach at 1 / 60 / 365 days, per swept decay setting."""
    sweep = []
    for (dec, rt), g in table[(table["slice"] == "medication") & (table["store"] == store)].groupby(
            ["decay", "rate"], sort=False):
        r: dict[str, Any] = {"decay": dec, "rate": rt}
        for ymyl in YMYL_SETTINGS:
            s = g[g["ymyl"] == ymyl].sort_values("days")
            r[f"YMYL {ymyl}"] = " / ".join(
                f"{v:.0%}" for v in (s["in_reach"].iloc[0], s[s["days"] == 60.0]["in_reach"].max(),
                                     s["in_reach"].iloc[-1]))
        sweep.append(r)
    return sweep


def _quality_text(quality: pd.DataFrame, overlap: dict[str, int] | None) -> list[str]:
    """The classifiers' recall and false positives, and the lexicon's overlap with the generator."""
    out = [
        "",
        "### The YMYL classifiers on the timelines",
        "",
        "Share of stored facts each classifier reads as strong YMYL: recall on facts the timeline "
        "labels strong YMYL, false positives on facts it labels not YMYL. Per user split; the "
        "holdout split's users speak only in template families the other splits never use. "
        "Cells: widemem's regex / the lexicon classifier (n facts).",
        "",
        md_table(_quality_table(quality)),
    ]
    if overlap:
        out += [
            "",
            f"The lexicon was written from general medical knowledge, not from the generator: "
            f"{overlap['drugs']} of the generator's {overlap['drugs_total']} drug names and "
            f"{overlap['conditions']} of its {overlap['conditions_total']} condition names happen to be "
            "in its lists, so medication recall here measures that coverage more than generalisation; "
            "the oblique row (conditions, allergies and legal matters described without their names) is the "
            "honest test of reading beyond a list.",
        ]
    return out


def _reading(t: pd.DataFrame, reach_k: int, store: str) -> list[str]:
    """The figures the text quotes, read from the table of one decay setting and store."""
    def at(sl: str, ymyl: str, day: float, m: str) -> float:
        r = t[(t["slice"] == sl) & (t["ymyl"] == ymyl) & (t["days"] == day)]
        return float(r[m].iloc[0]) if len(r) and m in r else float("nan")

    if not {1.0, 30.0, 60.0, 90.0, 365.0} <= set(t["days"]):
        return []
    lost = {y: {d: at("medication", y, d, "lost_reach") for d in (30.0, 60.0, 90.0, 365.0)} for y in YMYL_SETTINGS}
    lost1 = {y: at("medication", y, 60.0, "lost_top1") for y in YMYL_SETTINGS}
    tri = {y: at("trivial", y, 60.0, "lost_reach") for y in YMYL_SETTINGS}
    tri365 = at("trivial", "on_lexicon", 365.0, "lost_reach")
    top1_day1 = {y: at("medication", y, 1.0, "top1") for y in ("off", "on_lexicon")}
    crit = {y: (at("critical", y, 1.0, "in_reach"), at("critical", y, 365.0, "in_reach"))
            for y in ("on_lexicon", "on_gold")}
    off = lost["off"]
    # A cliff would be most of the 60-day loss arriving between 30 and 90 days at once; say
    # which it is from the numbers rather than assume it.
    steps = [off[30.0], off[60.0] - off[30.0], off[90.0] - off[60.0]]
    shape = ("a rising share, not a cliff at 60 days" if max(steps) < 0.5 * off[90.0] or off[90.0] < 0.05
             else "concentrated around 60 days")
    return [
        f"Reading it: with YMYL off, {off[60.0]:.0%} of the medication facts in the top {reach_k} at 1 day are "
        f"out of reach after 60 quiet days ({lost1['off']:.0%} of those at top 1 lose it), and "
        f"{off[365.0]:.0%} after a year; the loss is {shape} ({off[30.0]:.0%} by 30 days, {off[90.0]:.0%} "
        f"by 90). widemem's regex (`on`): {lost['on'][60.0]:.0%} lost by day 60, since \"takes metformin "
        "for type 2 diabetes\" holds at most one weak term and stays unprotected. The lexicon classifier "
        f"(`on_lexicon`), which flags every medication fact: {lost['on_lexicon'][60.0]:.0%} lost by day 60 "
        f"({lost1['on_lexicon']:.0%} at top 1); with the timeline's own labels (`on_gold`): "
        f"{lost['on_gold'][60.0]:.0%}. Trivial facts still fade with the lexicon: "
        f"{tri['on_lexicon']:.0%} of those in reach are lost by day 60 and {tri365:.0%} by day 365 "
        f"(YMYL off: {tri['off']:.0%} by day 60). The price of protection: every other fact the "
        "classifier flags is immune too and floored at importance 8, so a fresh medication fact meets "
        f"stronger competition (top 1 at 1 day: {top1_day1['on_lexicon']:.0%} with the lexicon, "
        f"{top1_day1['off']:.0%} with YMYL off). The lexicon misses most oblique mentions and many legal "
        "facts (table below), so the critical facts as a whole still fade a little with it (in the top "
        f"{reach_k}: {crit['on_lexicon'][0]:.0%} at 1 day, {crit['on_lexicon'][1]:.0%} at 365; `on_gold` "
        f"{crit['on_gold'][1]:.0%}).",
    ]


@report_section("ymyl_decay", order=61)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """The latest run's curve at widemem's decay (or the first swept one), its tables and figure."""
    rec = latest_run(records)
    if rec is None:
        return ""
    curve = table(rec, "curve")
    if curve is None or curve.empty:
        return ""
    cfg = rec.get("config") or {}
    params = cfg.get("params") or {}
    store = str((rec.get("extra") or {}).get("plot_store") or params.get("plot_store", 300))
    if store not in set(curve["store"]):  # records written before the run chose it
        store = str(curve["store"].iloc[0])
    has = ((curve["decay"] == WIDEMEM_DECAY[0]) & (curve["rate"] == WIDEMEM_DECAY[1])).any()
    decay, rate = WIDEMEM_DECAY if has else (str(curve["decay"].iloc[0]), float(curve["rate"].iloc[0]))
    reach_k = int(params.get("reach_k", 3))
    overlap = {k: int(metric_value(rec, f"lexicon_overlap_{k}"))
               for k in ("drugs", "drugs_total", "conditions", "conditions_total")}
    figures_dir.mkdir(parents=True, exist_ok=True)
    _plot(curve, figures_dir / FIGURE, decay, rate, reach_k, store)
    text = render(curve, str((cfg.get("embedder") or {}).get("name")), int(metric_value(rec, "n_users")),
                  reach_k, int(metric_value(rec, "n_targets")), f"figures/{FIGURE}", store, decay, rate,
                  table(rec, "classifier"), overlap) + "\n"
    return publish_fragment("ymyl_decay", text, figures_dir)
