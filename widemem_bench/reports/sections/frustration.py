"""Report section of `frustration`: actions per gold action, quiet frustration, auto mode.

Rendered from the run's saved tables (spoken, quiet, auto_mode, rephrase_windows) and its
metric rows (the fitted threshold, search timings); the experiment itself only computes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine.rephrase import precision_recall
from widemem_bench.experiments.frustration import ACTIONS
from widemem_bench.metrics.rates import rate_ci
from widemem_bench.reports.markdown import md_table, pct
from widemem_bench.reports.sections import report_section
from widemem_bench.reports.sections._common import latest_run, metric_value, publish_fragment, table

TIMING_PREFIXES = ("search_ms_", "candidates_")


# How the figures name the agent's actions and the retrieval modes.
ACTION_LABELS = {"reassure": "reassure", "recover_and_pin": "recover and pin",
                 "apologize_and_ask": "apologise and ask", "none": "no action"}
ACTION_HATCHES = ("", "//", "..", "xx")


def _figures(spoken: pd.DataFrame, quiet: pd.DataFrame, thr: float, auto: pd.DataFrame,
             out_dir: Path) -> tuple[Path, Path]:
    """frustration.png (actions, rephrase threshold) and auto_mode.png into `out_dir`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from widemem_bench.reports.plots import series_style

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    s = spoken[spoken["resolver"] == spoken["resolver"].iloc[0]]
    conf = pd.crosstab(s["gold_action"], s["action"]).reindex(columns=list(ACTIONS), fill_value=0)
    bottom = np.zeros(len(conf))
    x = np.arange(len(conf))
    # stacked bars: colour *and* hatch per action, so no two differ by colour alone
    for i, action in enumerate(conf.columns):
        vals = conf[action].to_numpy(float)
        axes[0].bar(x, vals, bottom=bottom, color=series_style(i)["color"], hatch=ACTION_HATCHES[i % 4],
                    edgecolor="white", label=ACTION_LABELS.get(str(action), str(action)))
        bottom += vals
    axes[0].set_xticks(x, [ACTION_LABELS.get(str(g), str(g)) for g in conf.index], fontsize=8)
    axes[0].set_xlabel("action the message calls for (gold)")
    axes[0].set_ylabel("messages (count)")
    axes[0].set_title("action picked per gold action", fontsize=9)
    axes[0].legend(title="action picked", fontsize=7, title_fontsize=7)
    ev = quiet[quiet["split"] != "train"]
    grid = np.linspace(0.3, 1.0, 36)
    pr = [precision_recall(ev["prior_similarity"] >= g, ev["quiet_frustration"]) for g in grid]
    for i, (name, curve) in enumerate((("precision", [p[0] for p in pr]), ("recall", [p[1] for p in pr]))):
        axes[1].plot(grid, 100 * np.asarray(curve, float), label=name, markevery=5, ms=4, **series_style(i))
    axes[1].axvline(thr, color="grey", lw=0.8, ls="--", label=f"fitted on train: {thr:.2f}")
    axes[1].set_xlabel("rephrase threshold (cosine to an earlier query of the session)")
    axes[1].set_ylabel("precision, recall of the flag (%)")
    axes[1].set_ylim(-3, 103)
    axes[1].set_title("quiet frustration, validation + holdout users", fontsize=9)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    p1 = out_dir / "frustration.png"
    fig.savefig(p1, dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    modes = ["fast", "balanced", "deep"]
    conf = pd.crosstab(auto["gold_mode"], auto["auto_mode"]).reindex(index=modes, columns=modes, fill_value=0)
    cells = conf.to_numpy()
    axes[0].imshow(cells, cmap="Blues")
    for (i, j), v in np.ndenumerate(cells):
        dark = cells.max() > 0 and v > 0.6 * cells.max()
        axes[0].text(j, i, str(v), ha="center", va="center", fontsize=9, color="white" if dark else "black")
    axes[0].set_xticks(range(3), modes)
    axes[0].set_yticks(range(3), modes)
    axes[0].set_xlabel("mode picked by auto")
    axes[0].set_ylabel("mode the timeline labels")
    axes[0].set_title("auto mode vs the timeline's labels (queries)", fontsize=9)
    groups = ["memories fetched\n(fetch_k)", "memories scored\n(in the user's store)"]
    width = 0.38
    for i, (mode, cols) in enumerate((("balanced", ("fetch_k_balanced", "cand_balanced")),
                                      ("auto", ("fetch_k_auto", "cand_auto")))):
        st = series_style(i)
        axes[1].bar(np.arange(2) + (i - 0.5) * width, [auto[c].mean() for c in cols], width,
                    color=st["color"], hatch=ACTION_HATCHES[i], edgecolor="white", label=f"{mode} mode")
    axes[1].set_xticks(range(2), groups)
    axes[1].set_ylabel("candidates per query (mean)")
    axes[1].set_title("search cost: balanced vs auto", fontsize=9)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    p2 = out_dir / "auto_mode.png"
    fig.savefig(p2, dpi=110)
    plt.close(fig)
    return p1, p2


def render(spoken: pd.DataFrame, quiet: pd.DataFrame, thr: float, auto: pd.DataFrame,
           timing: dict[str, float], emb_name: str, n_users: int, window: float,
           windows: pd.DataFrame | None = None) -> str:
    """Markdown fragment (pure function of the tables)."""
    out = [
        "## Frustration and automatic retrieval mode (`frustration`)",
        "",
        f"{n_users} timeline users, {emb_name}, widemem's bands; uncertainty mode `helpful`. "
        "Frustration events' own facts are not ingested beforehand (recovering them is the point); each "
        "message gets its own replay up to its time. `pinned fact answers follow-up` = after a "
        "recover_and_pin, the slot question's top result holds the gold value. "
        "Intervals: 95% cluster bootstrap over users.",
        "",
        md_table(pd.DataFrame(_action_rows(spoken))),
    ]
    pins = {r: float(g[(g["gold_action"] == "recover_and_pin") & g["pinned"]]["answered"].mean())
            for r, g in spoken.groupby("resolver")}
    if pins.get("rule", 1.0) < pins.get("append", 0.0):
        out += ["", f"A correct pin answers the follow-up {pins['append']:.0%} of the time with `append` but "
                f"{pins['rule']:.0%} with `rule`: there the pinned fact UPDATEs the old memory, which keeps "
                "its old created_at (as widemem's UPDATE does), so the fresh fact reads as old and a more "
                "recent related memory (\"settled on the East Coast\") can outrank it."]
    out += [
        "",
        f"Quiet frustration (`engine/rephrase.py`): a query is flagged when an earlier query of its session, "
        f"at most {window:g} minutes before, has cosine >= {thr:.3f} (fitted for best F1 on train users).",
        "",
        md_table(pd.DataFrame(_quiet_rows(quiet))),
        "",
    ]
    if windows is not None and len(windows):
        out += _windows_text(windows)
    return "\n".join(out + _auto_text(auto, timing))


def _action_rows(spoken: pd.DataFrame) -> list[dict[str, Any]]:
    """Per resolver and gold action: the action picked, and whether a pin answers the follow-up."""
    rows = []
    for resolver, s in spoken.groupby("resolver", sort=False):
        for gold, g in [("all", s), *s.groupby("gold_action")]:
            v, lo, hi = rate_ci(g["correct"], g["user_id"], n_boot=500)
            picked = g["action"].value_counts().reindex(list(ACTIONS), fill_value=0)
            pin = g[g["pinned"] & g["answered"].notna()]
            ans = g[g["answered"].notna()]
            rows.append({"resolver": resolver, "gold action": gold, "n": len(g), "action correct": pct(v, lo, hi),
                         "picked (reassure/pin/ask/none)": "/".join(str(int(x)) for x in picked),
                         "pinned fact answers follow-up": f"{pin['answered'].mean():.0%} (n={len(pin)})"
                         if len(pin) else "n/a",
                         "follow-up answered": f"{ans['answered'].mean():.0%} (n={len(ans)})" if len(ans) else "n/a"})
    return rows


def _quiet_rows(quiet: pd.DataFrame) -> list[dict[str, Any]]:
    """The rephrase flag's precision and recall, on the users it was fitted on and the others."""
    qrows = []
    for name, g in (("train (fit)", quiet[quiet["split"] == "train"]),
                    ("validation + holdout", quiet[quiet["split"] != "train"])):
        prec, rec = precision_recall(g["flag"], g["quiet_frustration"])
        sess = g.groupby("session_id").agg(gold=("quiet_frustration", "any"), flag=("flag", "any"))
        sp, sr = precision_recall(sess["flag"], sess["gold"])
        y, f = g["quiet_frustration"].to_numpy(bool), g["flag"].to_numpy(bool)
        pv = rate_ci(y[f], g["user_id"].to_numpy()[f], n_boot=500)
        rv = rate_ci(f[y], g["user_id"].to_numpy()[y], n_boot=500)
        qrows.append({"users": name, "rephrases": int(y.sum()), "queries": len(g),
                      "precision": pct(prec, pv[1], pv[2]), "recall": pct(rec, rv[1], rv[2]),
                      "precision / recall, identical re-asks counted as rephrases": "{:.1%} / {:.1%}".format(
                          *precision_recall(f, y | g["identical_reask"].to_numpy(bool))),
                      "session precision / recall": f"{sp:.1%} / {sr:.1%}",
                      "false alarms that are unlabelled identical re-asks":
                      f"{int((g['flag'] & g['identical_reask']).sum())} of {int((g['flag'] & ~g['quiet_frustration']).sum())}"})
    return qrows


def _windows_text(windows: pd.DataFrame) -> list[str]:
    w = windows.assign(threshold=windows["threshold"].map(lambda x: f"{x:.3f}"),
                       precision=windows["precision"].map(lambda x: f"{x:.1%}"),
                       recall=windows["recall"].map(lambda x: f"{x:.1%}"))
    return ["The labels mark only reworded re-asks; the timelines also hold sessions where the same "
            "question was drawn twice, unlabelled. A user asking the identical question again is the "
            "plainest quiet frustration, so the second precision counts those as rephrases. The remaining "
            "false alarms are questions about different slots in the same template shape (\"where do I "
            "work?\" after \"where do I live?\"): query similarity alone cannot tell them apart.",
            "",
            "Look-back window (threshold refitted on train, scored on validation + holdout). The timelines "
            "space a session's asks 10 minutes apart and its rephrases 2 minutes apart, so a window under "
            "10 minutes uses the generator's timing rather than the wording: read the longer windows.",
            "", md_table(w), ""]


def _auto_text(auto: pd.DataFrame, timing: dict[str, float]) -> list[str]:
    """The automatic mode's agreement with the labels, and its search cost against balanced."""
    v, lo, hi = rate_ci(auto["agree"], auto["user_id"], n_boot=500)
    conf = pd.crosstab(auto["gold_mode"], auto["auto_mode"]).reset_index().rename(columns={"gold_mode": "gold \\ auto"})
    g = auto[auto["kind"].isin(["answerable", "stale_probe"])]
    hold = auto[auto["split"] == "holdout"]
    out = [
        "![frustration](figures/frustration.png)",
        "",
        f"Automatic mode: agreement with the timeline's `gold_mode` labels {pct(v, lo, hi)} "
        f"(holdout users: {hold['agree'].mean():.1%}). The labels follow a rule close to auto's own "
        "(broad -> deep; at most 8 words -> fast), so agreement mostly checks the cue lists; the "
        "disagreements are two-sentence lookups and a question containing \"I mentioned\".",
        "",
        md_table(conf),
        "",
        f"Cost against always-balanced: nominal fetch_k {auto['fetch_k_auto'].mean():.1f} vs "
        f"{auto['fetch_k_balanced'].mean():.1f} candidates per query; actually scored (the user's store is "
        f"smaller) {auto['cand_auto'].mean():.1f} vs {auto['cand_balanced'].mean():.1f}; median search "
        f"{timing.get('search_ms_auto', float('nan')):.2f} ms vs {timing.get('search_ms_balanced', float('nan')):.2f} ms. "
        f"Gold memory at top 1 on answerable + stale-probe questions: auto {g['top1_auto'].mean():.1%}, "
        f"balanced {g['top1_balanced'].mean():.1%} (n={len(g)}).",
    ]
    for k in sorted(k for k in timing if k.startswith("search_ms_balanced_store")):
        size = k.rsplit("_store", 1)[1]
        out += ["", f"In a store of {size} memories per user (own facts plus other users', 20 users): "
                f"candidates scored per query auto {timing.get(f'candidates_auto_store{size}', float('nan')):.1f} "
                f"vs balanced {timing.get(f'candidates_balanced_store{size}', float('nan')):.1f}; median search "
                f"{timing.get(f'search_ms_auto_store{size}', float('nan')):.2f} ms vs "
                f"{timing.get(f'search_ms_balanced_store{size}', float('nan')):.2f} ms."]
    return [*out, "", "![auto mode](figures/auto_mode.png)"]


def _timing(rec: dict[str, Any]) -> dict[str, float]:
    """Search timings and candidate counts of the run (the last row of a name wins: the
    experiment writes the auto-mode means first, then the timed searches)."""
    out: dict[str, float] = {}
    for row in rec.get("metrics") or []:
        if str(row.get("metric", "")).startswith(TIMING_PREFIXES):
            out[str(row["metric"])] = float(row["value"])
    return out


@report_section("frustration", order=62)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """The latest run's tables and figures (reports/frustration.md too)."""
    rec = latest_run(records)
    if rec is None:
        return ""
    spoken, quiet, auto = table(rec, "spoken"), table(rec, "quiet"), table(rec, "auto_mode")
    if spoken is None or quiet is None or auto is None:
        return ""
    cfg = rec.get("config") or {}
    params = cfg.get("params") or {}
    thr = metric_value(rec, "rephrase_threshold")
    window = float(params.get("window_minutes", 60.0))
    n_users = metric_value(rec, "n_users")
    if math.isnan(n_users):  # records written before the metric existed
        n_users = float(params.get("n_users") or quiet["user_id"].nunique())
    figures_dir.mkdir(parents=True, exist_ok=True)
    _figures(spoken, quiet, thr, auto, figures_dir)
    text = render(spoken, quiet, thr, auto, _timing(rec), str((cfg.get("embedder") or {}).get("name")),
                  int(n_users), window, table(rec, "rephrase_windows")) + "\n"
    return publish_fragment("frustration", text, figures_dir)
