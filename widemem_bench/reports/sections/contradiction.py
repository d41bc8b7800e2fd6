"""Report section of `contradiction`: the survival table per resolver and the floor figure.

Rendered from the run's saved tables (summary.parquet) and record; the experiment itself
only computes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.experiments.contradiction import KINDS
from widemem_bench.reports.markdown import md_table, pct
from widemem_bench.reports.sections import report_section
from widemem_bench.reports.sections._common import latest_run, metric_value, publish_fragment, table

FIGURE = "contradiction_floor.png"
# reports.fragments.README_OPEN / README_CLOSE: the block README.md shows of this section
README_OPEN, README_CLOSE = "<!-- readme -->", "<!-- /readme -->"


def _floor_plot(table: pd.DataFrame, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    floors = table[table["setting"].str.startswith("rule@") & (table["attribute"] == "all")]
    for kind, style in (("direct", "o-"), ("oblique", "s--")):
        s = floors[(floors["kind"] == kind) & (floors["metric"] == "survival")].copy()
        if s.empty:
            continue
        s["floor"] = s["setting"].str.slice(5).astype(float)
        s = s.sort_values("floor")
        ax.plot(s["floor"], s["value"], style, label=f"rule, {kind}")
        ax.fill_between(s["floor"], s["ci_lo"], s["ci_hi"], alpha=0.15)
        base = table[(table["setting"] == "rule") & (table["kind"] == kind) & (table["metric"] == "survival")
                     & (table["attribute"] == "all")]
        if len(base):
            ax.axhline(float(base["value"].iloc[0]), color=ax.lines[-1].get_color(), lw=1.0, ls=":",
                       label=f"rule, {kind}, no floor")
    app = table[(table["setting"] == "append") & (table["kind"] == "direct") & (table["metric"] == "survival")
                & (table["attribute"] == "all")]
    if len(app):
        ax.axhline(float(app["value"].iloc[0]), color="grey", lw=0.8, ls="-.", label="append, direct")
    ax.set_xlabel("candidate similarity floor of the rule resolver")
    ax.set_ylabel("survival: stale fact still retrieved\n(share of stale probes, 0-1)")
    ax.set_ylim(-0.02, 1.02)
    # Below the axes: inside, five entries would cover the curves near 0 and 1.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    ax.set_title("Stale facts surviving vs similarity floor (dotted: the rule with no floor)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def render(table: pd.DataFrame, emb_name: str, n_users: int, k: int, figure: str) -> str:
    """The markdown fragment of one run's summary table (pure function of it and of the
    DESIGN_LOG marks)."""
    if "split" not in table:
        table = table.assign(split="all")
    by_split = split_table(table)
    t = table[(table["attribute"] == "all") & (table["split"] == "all")]

    def cell(setting: str, kind: str, metric: str) -> str:
        r = t[(t["setting"] == setting) & (t["kind"] == kind) & (t["metric"] == metric)]
        if r.empty:
            return "n/a"
        x = r.iloc[0]
        return pct(float(x["value"]), float(x["ci_lo"]), float(x["ci_hi"]))

    rows = []
    for setting in dict.fromkeys(t["setting"]):
        for kind in KINDS:
            n = t[(t["setting"] == setting) & (t["kind"] == kind) & (t["metric"] == "survival")]["n"]
            if n.empty:
                continue
            rows.append({"resolver": setting, "contradiction": kind, "probes": int(n.iloc[0]),
                         "survival": cell(setting, kind, "survival"),
                         "stale outranks current": cell(setting, kind, "stale_outranks"),
                         "loss": cell(setting, kind, "loss"),
                         "false updates": cell(setting, "all", "false_update_rate"),
                         "same-value rewordings replaced": cell(setting, "all", "merge_rate")})
    per_attr = table[(table["attribute"] != "all") & (table["metric"] == "survival") & (table["split"] == "all")
                     & table["setting"].isin(["append", "rule", "oracle"])]
    attr_tab = per_attr.assign(cell=[pct(v, lo, hi) + f" (n={n})" for v, lo, hi, n in
                                     zip(per_attr["value"], per_attr["ci_lo"], per_attr["ci_hi"], per_attr["n"],
                                         strict=True)])
    out = [
        "## Contradiction survival (`contradiction`)",
        "",
        f"{n_users} timeline users replayed through the engine ({emb_name}), facts in time order; at every "
        f"stale probe the engine's balanced search is read. Survival = a stale memory of the slot is in the "
        f"top {k} or outranks the current one; loss = no current memory in the top {k}; false updates = "
        "UPDATE/DELETE of a memory of another slot, per ingested fact; same-value rewordings "
        "replaced = a memory replaced by a rewording of the same value (e.g. \"lives in Phoenix\" by "
        "\"settled in the desert southwest\"): not contradicted either, and the exact answer is lost. "
        "95% cluster-bootstrap intervals (users resampled). `rule@x` = rule resolver with candidate "
        "similarity floor x. Held-out users first: survival by user split below (world A's holdout is "
        "for measuring; train and validation are development, the users the resolver was written on); "
        "the table after it pools every user, so it is mostly development.",
        "",
        *([README_OPEN, "**Survival by user split** (held-out first)", "", by_split, README_CLOSE, ""]
          if by_split else []),
        "All users pooled (development and held-out):",
        "",
        md_table(pd.DataFrame(rows)),
        "",
        f"![survival vs similarity floor]({figure})",
        "",
        "Reading it: `append@insert` replays with widemem's insert-time ages (every memory ~0 days old "
        "after a fast ingest): the stale fact then outranks the current one about half the time, the seed's "
        "coin flip; with the timeline's clock, recency breaks the tie towards the newer fact. A similarity "
        "floor on the resolver's candidates (the seed's 0.6 gate) hides contradictions from the resolver: "
        "survival climbs with the floor, the blind spot. Oblique statements (\"settled in NorCal\") are "
        "not read by the rule resolver, so they survive every later move; only the oracle, which knows the "
        "slot, retires them when they are among the 5 candidates.",
        "",
        "Limits of the `rule` resolver (engine/resolvers.py `parse_slot`): English regexes over the "
        "subject-stripped fact forms; its attribute patterns cover every "
        "changeable slot of the timelines (drink, exercise, doctor, bank, insurance, medication per "
        "condition, whole diet phrases), so its direct-contradiction figures hold for these fact forms "
        "only. It never reads negations (\"no longer vegan\"), allergies or conditions (several hold at "
        "once, so a cured allergy is never retired), area-level statements (\"settled in ...\"), or facts "
        "outside the 5 nearest memories; one new fact updates at most one memory.",
    ]
    if len(attr_tab):
        wide = attr_tab.pivot_table(index=["attribute", "kind"], columns="setting", values="cell", aggfunc="first")
        wide = wide.reset_index()
        out += ["", "Survival per attribute:", "", md_table(wide.fillna("n/a"))]
    return "\n".join(out)


SPLIT_ORDER = ("holdout", "world_n_holdout", "train", "validation")
SPLIT_ROLE = {"holdout": "world A holdout (measuring)", "world_n_holdout": "world N holdout (measuring)",
              "train": "world A train (development)", "validation": "world A validation (development)"}
_LOG_SET = {"holdout": "world A holdout", "train": "world A train", "validation": "world A validation"}
_METHOD = {"rule": "rule resolver"}


def split_table(table: pd.DataFrame, seen: Any = None) -> str:
    """Survival per user split and resolver (append, rule, oracle), held-out columns first; a
    rule figure on a set a logged rule decision saw carries † (reports/DESIGN_LOG.md)."""
    from widemem_bench.design_log import mark, marks

    t = table[(table["attribute"] == "all") & (table["metric"] == "survival") & (table["split"] != "all")]
    if t.empty:
        return ""
    seen = marks() if seen is None else seen
    present = {str(x) for x in t["split"]}
    splits: list[str] = [sp for sp in SPLIT_ORDER if sp in present] + sorted(present - set(SPLIT_ORDER))
    rows = []
    for setting in [x for x in ("append", "rule", "oracle") if x in set(t["setting"])]:
        for kind in KINDS:
            row: dict[str, Any] = {"resolver": setting, "contradiction": kind}
            for sp in splits:
                r = t[(t["setting"] == setting) & (t["kind"] == kind) & (t["split"] == sp)]
                if r.empty:
                    row[SPLIT_ROLE.get(sp, sp)] = "n/a"
                    continue
                x = r.iloc[0]
                cnt = f" ({int(x['count'])}/{int(x['n'])})" if "count" in x and x["count"] == x["count"] else ""
                m = mark(_METHOD[setting], _LOG_SET.get(sp, sp), seen) if setting in _METHOD else ""
                row[SPLIT_ROLE.get(sp, sp)] = pct(float(x["value"]), float(x["ci_lo"]), float(x["ci_hi"])) + cnt + m
            rows.append(row)
    return md_table(pd.DataFrame(rows)) + "\n\n† a rule-resolver decision saw this set's numbers (reports/DESIGN_LOG.md)."


@report_section("contradiction", order=60)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """The latest run's summary table and its floor figure (reports/contradiction.md too)."""
    rec = latest_run(records)
    if rec is None:
        return ""
    summary = table(rec, "summary")
    if summary is None:
        return ""
    figures_dir.mkdir(parents=True, exist_ok=True)
    _floor_plot(summary, figures_dir / FIGURE)
    emb_name = str(((rec.get("config") or {}).get("embedder") or {}).get("name"))
    k = int(((rec.get("config") or {}).get("params") or {}).get("k", 5))
    n_users = int(metric_value(rec, "n_users"))
    text = render(summary, emb_name, n_users, k, f"figures/{FIGURE}") + "\n"
    return publish_fragment("contradiction", text, figures_dir)
