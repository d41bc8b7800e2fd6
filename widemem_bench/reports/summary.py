"""The opening of reports/README.md: a takeaway paragraph and the thresholds to ship.

Both are written from the numbers (run records and the committed calibration files), never
by hand: a sentence appears only when the run it quotes exists, and every figure that has
a bootstrap interval is printed with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.reports.markdown import fmt, md_table

MAX_SENTENCES = 8
# Recommendation table: (column, figure key in the calibration file / metric in the record).
KIND_COLUMNS = (("false conf. hard negative", "false_confidence_hard_negative"),
                ("false conf. never mentioned", "false_confidence_never_mentioned"),
                ("false conf. other person", "false_confidence_other_person"))
NONE_KEY = "none_rate_answerable"


def fmt_ci(triple: Sequence[Any] | float | None, pct: bool = True) -> str:
    """`61.2% [55.0, 67.1]` or `0.812 [0.790, 0.833]` (the report's one format); 'n/a' when missing."""
    if triple is None or isinstance(triple, (int, float)):  # a point without its interval
        triple = [triple]
    if not triple or triple[0] is None:
        return "n/a"
    v, lo, hi = [*triple, None, None][:3]
    return fmt(v, math.nan if lo is None else lo, math.nan if hi is None else hi, pct)


def _row(r: pd.DataFrame, metric: str, **where: Any) -> tuple[float, float, float] | None:
    if r.empty or "metric" not in r:
        return None
    m = r[r["metric"] == metric]
    for k, v in where.items():
        if k not in m:
            return None
        m = m[m[k] == v]
    if m.empty:
        return None
    x = m.iloc[0]
    return float(x["value"]), float(x["ci_lo"]), float(x["ci_hi"])


def _emb(rec: Mapping[str, Any]) -> str:
    return str(((rec.get("config") or {}).get("embedder") or {}).get("name"))


# ------------------------------------------------------------------ thresholds to ship


def recommendations(sources: Mapping[str, Any], embedders: Sequence[str],
                    calibration_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Per embedder: the calibrated ladder and widemem's defaults with their holdout figures.

    The committed calibration file (`load_calibration`) is what ships, so its thresholds,
    env lines and holdout figures (the calibrate pipeline's trade-off rows, NONE rate
    included) come first; an embedder without one falls back to its `calibrate` run
    record (holdout metric rows; the record holds no NONE rate).
    """
    from widemem_bench.calibration import load_calibration

    src = sources.get("calibrate")
    out: list[dict[str, Any]] = []
    for e in embedders:
        entry: dict[str, Any] | None = None
        try:
            cal = load_calibration(str(e), calibration_dir)
        except (ValueError, OSError):
            cal = None
        if cal is not None and cal.holdout:
            h = dict(cal.holdout)
            wm = dict(h.get("widemem_thresholds") or {})
            entry = {"embedder": e, "source": "file", "env": list(cal.env),
                     "calibrated": {"thresholds": list(cal.thresholds), **h},
                     "widemem": wm if wm else None}
        elif src is not None and not src.results.empty:
            rec = next((r for r in src.records if _emb(r) == e), None)
            if rec is not None:
                r = src.results[(src.results["embedder"] == e) & (src.results["split"] == "holdout")]
                extra = rec.get("extra") or {}
                sets = {}
                for setting, th in (("calibrated", extra.get("thresholds")), ("widemem", extra.get("widemem_thresholds"))):
                    if not th:
                        continue
                    d: dict[str, Any] = {"thresholds": [float(t) for t in th],
                                         "recall_moderate_plus": _row(r, "recall_moderate_plus", setting=setting)}
                    for _, key in KIND_COLUMNS:
                        d[key] = _row(r, key, setting=setting)
                    sets[setting] = d
                if "calibrated" in sets:
                    th = sets["calibrated"]["thresholds"]
                    env = [f"WIDEMEM_CONFIDENCE_{b}={t}" for b, t in zip(("HIGH", "MODERATE", "LOW"), th, strict=True)]
                    entry = {"embedder": e, "source": "record", "env": env, "calibrated": sets["calibrated"],
                             "widemem": sets.get("widemem")}
        if entry is not None:
            out.append(entry)
    return out


def recommendation_table(recs: Sequence[Mapping[str, Any]]) -> str:
    """One row per embedder and setting (calibrated, widemem's default), holdout figures."""
    if not recs:
        return ""
    rows = []
    for rc in recs:
        for setting, label in (("calibrated", "calibrated (ship)"), ("widemem", "widemem default")):
            d = rc.get(setting)
            if not d:
                continue
            rows.append({
                "embedder": rc["embedder"], "thresholds": label,
                "high / moderate / low": " / ".join(f"{float(t):.3f}" for t in d.get("thresholds") or []),
                "recall MOD+": fmt_ci(d.get("recall_moderate_plus")),
                **{col: fmt_ci(d.get(key)) for col, key in KIND_COLUMNS},
                "answerable at NONE": fmt_ci(d.get(NONE_KEY)),
            })
    from_rec = [str(rc["embedder"]) for rc in recs if rc.get("source") == "record"]
    env = []
    for rc in recs:
        env += [f"# {rc['embedder']}", *rc["env"]]
    return "\n".join([
        "## Thresholds to ship",
        "",
        "Figures on the holdout split (users and phrasings never seen while fitting), 95% cluster-bootstrap "
        "intervals by user. MOD+ = MODERATE or above: recall over answerable questions, false confidence over "
        "each kind of unanswerable question. Source: the calibration file that ships "
        "(`widemem_bench/calibration/files/<embedder>.json`, `make calibrate`)"
        + (f"; from its calibrate run record (no NONE rate there): {', '.join(from_rec)}" if from_rec else "")
        + ". Paste the lines of your embedder into the environment:",
        "",
        md_table(pd.DataFrame(rows)),
        "",
        "```bash",
        *env,
        "```",
        "",
        "How the thresholds are certified, per band and per embedder: [calibration.md](calibration.md).",
        "",
    ])


# ------------------------------------------------------------------ takeaway


def _s_auroc(sources: Mapping[str, Any], embedders: Sequence[str]) -> str | None:
    src = sources.get("compare_embedders")
    if src is None or src.results.empty:
        return None
    r = src.results
    found = {e: _row(r[r["embedder"] == e], "auroc", split="all") for e in embedders}
    vals = {e: v for e, v in found.items() if v is not None and not math.isnan(v[0])}
    if not vals:
        return None
    order = sorted(vals, key=lambda e: -vals[e][0])
    best = order[0]
    if len(order) == 1:
        return f"{best} separates answerable from unanswerable questions with AUROC {fmt_ci(vals[best], pct=False)}."
    # "best" only where the intervals say so: name every embedder whose interval reaches the top one's
    tied = [e for e in order[1:] if vals[e][2] >= vals[best][1]]
    s = (f"Of {len(order)} embedders, {best} has the highest AUROC for answerable against unanswerable "
         f"questions ({fmt_ci(vals[best], pct=False)})")
    if tied:
        s += ", with intervals overlapping " + ", ".join(f"{e} ({vals[e][0]:.3f})" for e in tied)
    return s + f"; {order[-1]} is lowest ({fmt_ci(vals[order[-1]], pct=False)})."


def _s_defaults(recs: Sequence[Mapping[str, Any]], prefer: Sequence[str]) -> str | None:
    usable = [rc for rc in recs if rc.get("widemem") and rc.get("calibrated")
              and rc["widemem"].get("false_confidence_hard_negative")
              and rc["calibrated"].get("false_confidence_hard_negative")]
    if not usable:
        return None
    rank = {e: i for i, e in enumerate(prefer)}
    rc = min(usable, key=lambda x: rank.get(x["embedder"], len(rank)))
    w, c = rc["widemem"], rc["calibrated"]
    verb = "cut that to" if c["false_confidence_hard_negative"][0] < w["false_confidence_hard_negative"][0] else "give"
    return (f"With widemem's default thresholds, {rc['embedder']} answers at MODERATE or above on "
            f"{fmt_ci(w['false_confidence_hard_negative'])} of holdout hard negatives (recall "
            f"{fmt_ci(w.get('recall_moderate_plus'))}); its calibrated thresholds {verb} "
            f"{fmt_ci(c['false_confidence_hard_negative'])} at recall {fmt_ci(c.get('recall_moderate_plus'))}.")


def _s_transfer(sources: Mapping[str, Any]) -> str | None:
    src = sources.get("transfer")
    if src is None or src.results.empty:
        return None
    r = src.results
    v2 = {s: _row(r, "transfer_auroc", setting="answerability v2", split=s) for s in ("world A holdout", "world B", "LoCoMo")}
    wm = {s: _row(r, "transfer_auroc", setting="widemem bands", split=s) for s in ("world A holdout", "world B", "LoCoMo")}
    if v2["world A holdout"] is None:
        return None
    far = [s for s in ("world B", "LoCoMo") if v2[s] is not None]
    parts = [f"{s} {fmt_ci(v2[s], pct=False)}" + (f" vs {fmt_ci(wm[s], pct=False)} for widemem's bands" if wm[s] else "")
             for s in far]
    s = f"Answerability v2 reaches AUROC {fmt_ci(v2['world A holdout'], pct=False)} on world A's holdout"
    s += f" and transfers with {'; '.join(parts)}" if parts else ""
    v3 = {k: _row(r, "transfer_auroc", setting="answerability v3", split=k)
          for k in ("world N holdout", "world B", "LoCoMo")}
    if v3["world N holdout"] is None:
        return s + "."
    wn = _row(r, "transfer_auroc", setting="widemem bands", split="world N holdout")
    rest = "".join(f", {k} {fmt_ci(v3[k], pct=False)}" for k in ("world B", "LoCoMo") if v3[k] is not None)
    # which sets v3's decisions saw: its development worlds only (reports/DESIGN_LOG.md, entry V3)
    return s + (f"; answerability v3, every decision of it made on worlds A, C and N's train and validation "
                f"users only, reaches {fmt_ci(v3['world N holdout'], pct=False)} on world N's holdout"
                + (f" against {fmt_ci(wn, pct=False)} for widemem's bands" if wn else "") + f"{rest}.")


def _s_contradiction(sources: Mapping[str, Any]) -> str | None:
    src = sources.get("contradiction")
    if src is None or src.results.empty:
        return None
    r = src.results
    rule = {k: _row(r, "survival", setting="rule", kind=k) for k in ("direct", "oblique")}
    app = _row(r, "survival", setting="append", kind="direct")
    if rule["direct"] is None:
        return None
    s = (f"After a direct contradiction the rule resolver leaves the stale value retrievable in "
         f"{fmt_ci(rule['direct'])} of probes")
    if app is not None:
        s += f" (append-only: {fmt_ci(app)})"
    if rule["oblique"] is not None:
        s += f"; after an oblique (reworded) contradiction, in {fmt_ci(rule['oblique'])}"
    return s + "."


def _s_ymyl(sources: Mapping[str, Any]) -> str | None:
    src = sources.get("ymyl_decay")
    if src is None or src.results.empty or not src.records:
        return None
    r = src.results
    rec = src.records[-1]
    store = str((rec.get("extra") or {}).get("plot_store")
                or ((rec.get("config") or {}).get("params") or {}).get("plot_store", 300))
    base = r[(r["metric"] == "lost_reach") & (r["kind"] == "medication") & (r["days"] == 60.0)
             & (r["store"].astype(str) == store)]
    if base.empty:
        return None
    # widemem's default decay when it was run, else the first one.
    ex = base[(base["decay"] == "exponential") & (base["rate"] == 0.01)]
    base = ex if not ex.empty else base[(base["decay"] == base["decay"].iloc[0]) & (base["rate"] == base["rate"].iloc[0])]
    at = {y: _row(base, "lost_reach", ymyl=y) for y in ("off", "on", "on_lexicon")}
    if at["off"] is None:
        return None
    k = int(base["reach_k"].iloc[0]) if "reach_k" in base and pd.notna(base["reach_k"].iloc[0]) else 3
    s = (f"After 60 quiet days in a store of {store}, {fmt_ci(at['off'])} of medication facts in the top {k} "
         f"at day 1 are out of it with YMYL off")
    extra = [f"{fmt_ci(at[y])} with {name}" for y, name in (("on", "widemem's YMYL regex"),
                                                              ("on_lexicon", "the YMYL lexicon")) if at[y]]
    return s + (", " + " and ".join(extra) if extra else "") + "."


def takeaway(sources: Mapping[str, Any], embedders: Sequence[str],
             recs: Sequence[Mapping[str, Any]] | None = None) -> str:
    """At most MAX_SENTENCES sentences, each from a run that exists; "" when none does."""
    recs = recommendations(sources, embedders) if recs is None else recs
    cmp = sources.get("compare_embedders")
    prefer = list(embedders)
    if cmp is not None and not cmp.results.empty:
        au = {e: _row(cmp.results[cmp.results["embedder"] == e], "auroc", split="all") for e in embedders}
        prefer = sorted(embedders, key=lambda e: -(x[0] if (x := au.get(e)) else -1.0))
    sentences = [s for s in (_s_auroc(sources, embedders), _s_defaults(recs, prefer), _s_transfer(sources),
                             _s_contradiction(sources), _s_ymyl(sources)) if s]
    return " ".join(sentences[:MAX_SENTENCES])
