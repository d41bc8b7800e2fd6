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
# The order of calibrate's console table and reports/calibration.md (calibrate.table_columns).
KIND_COLUMNS = (("false conf. hard negative", "false_confidence_hard_negative"),
                ("false conf. other person", "false_confidence_other_person"),
                ("false conf. never mentioned", "false_confidence_never_mentioned"))
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
    cal_mark = _mark("calibrated thresholds", "world A holdout", _marks())
    for rc in recs:
        for setting, label in (("calibrated", f"calibrated (ship){cal_mark}"), ("widemem", "widemem default")):
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
        *([f"{cal_mark.strip()} a decision on the calibration's rules saw holdout figures "
           f"({_note('calibrated thresholds', 'world A holdout')}, reports/DESIGN_LOG.md).", ""] if cal_mark else []),
        "How the thresholds are certified, per band and per embedder: [calibration.md](calibration.md).",
        "",
    ])


def _note(method: str, set_name: str) -> str:
    from widemem_bench.design_log import mark_note

    return mark_note(method, set_name, _marks())


def ledger_section(ledger: Sequence[Mapping[str, Any]] | None = None,
                   entries: Sequence[Any] | None = None) -> str:
    """Per measuring set: reads outside measurement (reports/seal_ledger.jsonl) since the last
    logged method change (the newest DESIGN_LOG entry that changed a method, by its commit's time)."""
    from widemem_bench import design_log, sealed

    entries = list(design_log.load() if entries is None else entries)
    lines = [dict(x) for x in (sealed.read_ledger() if ledger is None else ledger)]
    last = design_log.last_change_commit(entries)
    since = (design_log.commit_time(last.commit) or f"{last.date}T00:00:00+00:00") if last else None
    counts = sealed.reads_outside_measurement(lines, dict.fromkeys(sealed.measuring_splits(), since))
    total = sealed.reads_outside_measurement(lines, {})
    rows = [{"set": k, "reads outside measurement since the last method change": str(v),
             "all reads outside measurement": str(total[k])} for k, v in counts.items()]
    head = (f"Since DESIGN_LOG entry {last.id} ({last.commit}, {', '.join(last.changed)}), the newest method change"
            if last else "No method change logged yet")
    return "\n".join([
        "## Reads of the measuring splits", "",
        f"{head}. A read is logged in `reports/seal_ledger.jsonl` (time, commit, caller, purpose) whenever a "
        "measuring split is loaded for any purpose but `make bench` and the tests' \"measure\" "
        "(`widemem_bench.sealed.open_split`).", "",
        md_table(pd.DataFrame(rows)), "",
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


def _s_defaults(recs: Sequence[Mapping[str, Any]], prefer: Sequence[str],
                seen: Mapping[str, Any] | None = None) -> str | None:
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
            f"{fmt_ci(c['false_confidence_hard_negative'])}{_mark('calibrated thresholds', 'world A holdout', seen)} "
            f"at recall {fmt_ci(c.get('recall_moderate_plus'))}{_mark('calibrated thresholds', 'world A holdout', seen)}.")


def _mark(method: str, set_name: str, seen: Mapping[str, Any] | None) -> str:
    from widemem_bench.design_log import mark

    return mark(method, set_name, seen)


def _s_transfer(sources: Mapping[str, Any], seen: Mapping[str, Any] | None = None) -> str | None:
    src = sources.get("transfer")
    if src is None or src.results.empty:
        return None
    r = src.results
    sets = ("world A holdout", "world B", "LoCoMo")
    v2 = {s: _row(r, "transfer_auroc", setting="answerability v2", split=s) for s in sets}
    wm = {s: _row(r, "transfer_auroc", setting="widemem bands", split=s) for s in sets}
    diff = _row(r, "transfer_auroc_minus_top1", setting="answerability v2", split="LoCoMo")
    if v2["world A holdout"] is None:
        return None
    m = {s: _mark("answerability v2", s, seen) for s in sets}
    far = [s for s in ("world B", "LoCoMo") if v2[s] is not None]
    parts = [f"{s} {fmt_ci(v2[s], pct=False)}{m[s]}" + (f" vs {fmt_ci(wm[s], pct=False)} for widemem's bands"
                                                       if wm[s] else "")
             for s in far]
    s = f"Answerability v2 reaches AUROC {fmt_ci(v2['world A holdout'], pct=False)}{m['world A holdout']} on world A's holdout"
    s += f" and transfers with {'; '.join(parts)}" if parts else ""
    if diff is not None:
        s += (f"; on LoCoMo v2 minus the top-1 cosine is {diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}]"
              f"{m['LoCoMo']} AUROC (paired bootstrap by conversation)")
    v3 = {k: _row(r, "transfer_auroc", setting="answerability v3", split=k)
          for k in ("world N holdout", "world B", "LoCoMo")}
    if v3["world N holdout"] is None:
        return s + "."
    wn = _row(r, "transfer_auroc", setting="widemem bands", split="world N holdout")
    rest = "".join(f", {k} {fmt_ci(v3[k], pct=False)}" for k in ("world B", "LoCoMo") if v3[k] is not None)
    # which sets v3's decisions saw: its development worlds only (reports/DESIGN_LOG.md, entry V3)
    return s + (f"; answerability v3 (opt-in, `confidence=\"answerability_v3\"`), every decision of it made on "
                f"worlds A, C and N's train and validation users only, reaches {fmt_ci(v3['world N holdout'], pct=False)} on world N's holdout"
                + (f" against {fmt_ci(wn, pct=False)} for widemem's bands" if wn else "") + f"{rest}.")



def _resolver_row(r: pd.DataFrame, set_name: str, split: str, kind: str = "direct", resolver: str = "rule",
                  metric: str = "survival") -> dict[str, Any] | None:
    if r.empty or "set" not in r:
        return None
    m = r[(r["metric"] == metric) & (r["setting"] == resolver) & (r["set"] == set_name) & (r["split"] == split)
          & (r["kind"] == kind)]
    if m.empty:
        return None
    x = m.iloc[0]
    out: dict[str, Any] = {"ci": (float(x["value"]), float(x["ci_lo"]), float(x["ci_hi"]))}
    if "count" in x and "n" in x and x["count"] == x["count"] and x["n"] == x["n"]:
        out["count"] = f" ({int(x['count'])}/{int(x['n'])})"
    return out


def _s_fresh(r: pd.DataFrame, seen: Mapping[str, Any] | None) -> str | None:
    """The structure resolver on the newest world N fresh split (its version's one measuring
    read: users generated for it, never seen by a decision of that version), beside rule."""
    from widemem_bench.reports.sections.resolver_transfer import log_set

    if "set" not in r:
        return None
    keys = sorted({(str(a), str(b)) for a, b in r[["set", "split"]].drop_duplicates().itertuples(index=False)
                   if str(a).startswith("world_n_fresh")}, key=lambda k: (len(k[0]), k[0]))
    if not keys:
        return None
    set_name, split = keys[-1]
    st = _resolver_row(r, set_name, split, resolver="structure")
    rule = _resolver_row(r, set_name, split)
    fu = _resolver_row(r, set_name, split, kind="all", resolver="structure", metric="false_update_rate")
    if st is None or rule is None or fu is None:
        return None
    name = log_set(set_name, split)
    mark = _mark("structure resolver", name, seen)
    return (f"on {name} (world N's generator, users made for one read per resolver version) the structure "
            f"resolver (opt-in, `resolver=structure`) leaves {fmt_ci(st['ci'])}{st.get('count', '')}{mark} of "
            f"directly superseded facts stored against {fmt_ci(rule['ci'])}{rule.get('count', '')} for rule, "
            f"and wrongly updates {fmt_ci(fu['ci'])}{fu.get('count', '')}{mark} of all facts")


def _s_contradiction(sources: Mapping[str, Any], seen: Mapping[str, Any] | None = None) -> str | None:
    """The resolver sentence on held-out users first (resolver_transfer's world A holdout), world B
    as development for the resolvers; contradiction's probes by split when its run has them."""
    parts: list[str] = []
    rt = sources.get("resolver_transfer")
    if rt is not None and not rt.results.empty:
        hold = _resolver_row(rt.results, "timelines", "holdout")
        wb = _resolver_row(rt.results, "world_b", "all")
        if hold is not None:
            s = (f"On world A's held-out users the rule resolver leaves a directly superseded fact stored in "
                 f"{fmt_ci(hold['ci'])}{hold.get('count', '')}{_mark('rule resolver', 'world A holdout', seen)} "
                 f"of supersessions")
            if wb is not None:
                s += (f" (world B, development for the resolvers: {fmt_ci(wb['ci'])}{wb.get('count', '')}"
                      f"{_mark('rule resolver', 'world B', seen)})")
            parts.append(s)
        fresh = _s_fresh(rt.results, seen)
        if fresh:
            parts.append(fresh)
    src = sources.get("contradiction")
    if src is not None and not src.results.empty:
        r = src.results
        split_rows = "split" in r and (r["split"] == "holdout").any()
        if split_rows:
            rule = _row(r, "survival", setting="rule", kind="direct", split="holdout")
            app = _row(r, "survival", setting="append", kind="direct", split="holdout")
            dev = _row(r, "survival", setting="rule", kind="direct", split="train")
            if rule is not None:
                s = (f"at stale probes of held-out users the stale value stays retrievable in {fmt_ci(rule)}"
                     f"{_mark('rule resolver', 'world A holdout', seen)}")
                s += f" (append-only: {fmt_ci(app)})" if app is not None else ""
                s += f", against {fmt_ci(dev)} on the train users it was written on (development)" if dev else ""
                parts.append(s)
        elif not parts:
            where = {"split": "all"} if "split" in r else {}   # records from before the split rows
            rule = _row(r, "survival", setting="rule", kind="direct", **where)
            if rule is not None:
                parts.append(f"pooled over every user (mostly development), the rule resolver leaves the stale "
                             f"value retrievable in {fmt_ci(rule)} of probes")
    if not parts:
        return None
    s = "; ".join(parts)
    return s[0].upper() + s[1:] + "."


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
    seen = _marks()
    sentences = [s for s in (_s_auroc(sources, embedders), _s_defaults(recs, prefer, seen),
                             _s_transfer(sources, seen), _s_contradiction(sources, seen), _s_ymyl(sources)) if s]
    text = " ".join(sentences[:MAX_SENTENCES])
    if "†" in text:
        text += (" († = a logged decision of that method saw the set the figure is on, read from the entry "
                 "headers of reports/DESIGN_LOG.md.)")
    return text


def _marks() -> Mapping[str, Any]:
    from widemem_bench.design_log import marks

    return marks()
