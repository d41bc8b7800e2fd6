"""Report section of the `peer` experiment: agreement with widemem, the agreement grid on
the timeline clock, and every adapter's figures (mem0's threshold advice included)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.reports.sections import report_section

COMMAND = "widemem-bench peer"


def md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_cell(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return "n/a" if not math.isfinite(v) else (f"{v:.2e}" if 0 < abs(v) < 1e-3 else f"{v:.3g}")
    return str(v)


def _pct(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{v:.1%}"


def _table(run_dir: Path | None, name: str) -> pd.DataFrame | None:
    if run_dir is None:
        return None
    path = run_dir / f"{name}.parquet"
    return pd.read_parquet(path) if path.is_file() else None


def agreement_lines(results: pd.DataFrame, run_dir: Path | None) -> list[str]:
    """Part 1: engine (widemem's options) vs widemem as it ships."""
    if "band_agreement" not in set(results["metric"]):
        return []
    plain = results[results["setting"].fillna("default").eq("default")] if "setting" in results else results

    def val(m: str) -> float:
        s = plain[plain["metric"] == m]["value"]
        return float(s.iloc[-1]) if len(s) else math.nan

    causes = plain[plain["metric"] == "disagreements"].drop_duplicates("kind", keep="last")
    out = [
        "### widemem as it ships, answer by answer",
        "",
        "Engine with widemem's options (`age_from=insert`) against widemem's real `WideMemory` "
        "(pass-through LLM for extraction only, its own sentence-transformers MiniLM), same facts "
        "and questions, one loop.",
        "",
        f"- questions: {int(val('n_questions'))}; band agreement {_pct(val('band_agreement'))}, "
        f"top-1 {_pct(val('top1_agreement'))}, full top-k order {_pct(val('topk_order_agreement'))}",
        f"- largest difference over memories both returned: raw similarity {_bound(val('max_raw_similarity_diff'))}, "
        f"final score {_bound(val('max_final_score_diff'))} (float32 sums in another order, one text per "
        "encode call vs batches, two wall clocks microseconds apart; printed as a power-of-ten bound "
        "because the last bits move with the install's BLAS and FAISS builds)",
        "- disagreements by cause (tie, boost_tie, float_threshold, candidate_pool, score): "
        + (", ".join(f"{k}: {int(v)}" for k, v in zip(causes["kind"], causes["value"], strict=True)) or "none"),
    ]
    if run_dir is not None:
        conf = _table(run_dir, "band_confusion")
        if conf is not None:
            out += ["", "Bands (rows: engine, columns: widemem):", "", md_table(conf)]
        dis = _table(run_dir, "disagreements")
        if dis is not None and len(dis):
            out += ["", md_table(dis[["question_id", "engine_band", "widemem_band", "cause", "detail"]])]
    return out


def grid_lines(run_dir: Path | None) -> list[str]:
    """Part 2: the clock-aged agreement grid."""
    table = _table(run_dir, "agreement_grid") if run_dir is not None else None
    if table is None:
        return []
    out = ["", "### Over the whole engine, on the timeline clock", "",
           "widemem reads the timeline clock (`peers.clock.WidememClock` replaces the `datetime` name its "
           "modules call `now()` on; its source is untouched), so memories have their real ages. "
           "`changed_vs_default` = share of questions whose engine top-1 or top-1 score the setting moved "
           "against widemem's default (exponential decay): the setting acted on this data.", "",
           md_table(table)]
    dis = _table(run_dir, "grid_disagreements")
    if dis is not None and len(dis):
        # An exact tie (cause and order cause "tie" or none) is ordered by float rounding, which
        # moves with the install: counted, not listed, so the report reproduces across installs.
        tie = dis["cause"].isin(["", "tie"]) & dis.get("order_cause", pd.Series("", index=dis.index)).isin(["", "tie"])
        rest = dis[~tie]
        cols = ["setting", "question_id", "engine_band", "widemem_band", "cause", "order_cause", "detail"]
        out += ["", f"Exact ties whose two memories came out in either order (float rounding): {_tie_count(int(tie.sum()))}."]
        if len(rest):
            out += ["", "Every other disagreement and top-k order difference, with its cause:", "",
                    md_table(rest[[c for c in cols if c in rest.columns]].head(40))]
    return out


def _tie_count(n: int) -> str:
    """How many tied answers, to within a band: their number moves with float rounding too."""
    return "none" if n == 0 else "fewer than 10" if n < 10 else f"{10 * (n // 10)} or more"


def _bound(x: float) -> str:
    """A float-noise difference as the power of ten it stays below (its digits are the install's)."""
    if not math.isfinite(x):
        return "n/a"
    return "0" if x <= 0 else f"< 1e{math.floor(math.log10(x)) + 1:+03d}"


def adapter_lines(run_dir: Path | None) -> list[str]:
    """Part 3: every adapter through the timelines; mem0's threshold advice."""
    t = _table(run_dir, "adapters") if run_dir is not None else None
    if t is None or t.empty:
        return []
    if "thresholds" not in t.columns:
        t = t.assign(thresholds=None)
    t = t.assign(thresholds=t["thresholds"].fillna("-"))
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for (adapter, model), d in t.groupby(["adapter", "model"], sort=False):
        def get(metric: str, kind: str = "all", thr: str = "-", d: pd.DataFrame = d) -> float:
            s = d[(d["metric"] == metric) & (d["kind"] == kind) & (d["thresholds"] == thr)]["value"]
            return float(s.iloc[0]) if len(s) else math.nan

        thr = [get("calibrated_threshold", b) for b in ("high", "moderate", "low")]
        lost = [b.upper() for b in ("high", "moderate", "low", "none") if get("calibrated_band_reachable", b) == 0]
        cal = "calibrated ({:.3f} / {:.3f} / {:.3f})".format(*thr) + (f"; {', '.join(lost)} unreachable" if lost else "")
        notes += [f"- {adapter} ({model}): {n}" for n in _notes(d)]
        for label in ("own", "mem0_default", "calibrated"):
            if not math.isfinite(get("recall_at_moderate", thr=label)):
                continue
            rows.append({
                "adapter": adapter, "model": model, "thresholds": label if label != "calibrated" else cal,
                "recall": _pct(get("recall_at_moderate", thr=label)),
                "FC hard_negative": _pct(get("false_confidence", "hard_negative", label)),
                "FC never_mentioned": _pct(get("false_confidence", "never_mentioned", label)),
                "FC other_person": _pct(get("false_confidence", "other_person", label)),
                "hit@1": _pct(get("hit@1")), "hit@5": _pct(get("hit@5")),
                "stale first": _pct(get("stale_first")), "stale above current": _pct(get("stale_above_current")),
                "per add": f"{get('ms_per_add'):.2f} ms", "per search": f"{get('ms_per_search'):.2f} ms",
            })
    out = ["", "### Any memory system through the timelines (`MemoryAdapter`)", "",
           "Each adapter stores every fact of the sampled users in timeline order and answers every question "
           f"at its time (top 10). {method_line()} Figures are on the validation split. recall = answerable questions at MODERATE or above; FC = false confidence, the share of a "
           "negative kind at MODERATE or above; `own` = the band the system reports itself; `mem0_default` = "
           "mem0's `threshold=0.1` (any returned result counts as an answer). stale first / above current = "
           "`stale_probe` questions whose superseded fact ranks first / above the current one. ms per call on "
           "this shared machine (load average in the record); the engine reads MiniLM vectors from the warm "
           "embedding cache, widemem and mem0 encode inside each call.", "",
           # the headline reports/README.md shows (reports.fragments.README_OPEN)
           "<!-- readme -->", md_table(pd.DataFrame(rows)), "<!-- /readme -->"]
    if notes:
        out += ["", "Bands the certificate could not give (the row's figures use the ladder as it came out):", "",
                *notes]
    return out


def method_line() -> str:
    """How the peers' thresholds are set, from the settings `peers.evaluate` certifies with."""
    from widemem_bench.calibration.options import Options

    st = Options().resolved(None)
    caps = ", ".join(f"{k.replace('_', ' ')}s at MODERATE or above <= {v:.0%}" for k, v in st["cap"].items())
    return (f"Thresholds are certified on the adapter's own top-1 score over the train split's users with "
            f"`calibration.certify_ladder`, as `widemem-bench calibrate` does: users are the unit "
            f"(questions of one user may depend on each other), one delta = {st['delta']:g} shared by all "
            f"statements; HIGH and MODERATE+ precision >= {st['targets']['high']:.2f} / "
            f"{st['targets']['moderate']:.2f}, {caps}; LOW is the highest cut that leaves answerable questions "
            f"at NONE <= {st['none_answerable']:.0%}, so NONE stays reachable.")


def _notes(d: pd.DataFrame) -> list[str]:
    """The certificate's one-line reason for an adapter, when a band could not be given."""
    if "note" not in d.columns:
        return []
    notes = d.loc[d["metric"] == "calibrated_threshold", "note"].dropna().astype(str)
    return sorted({n for n in notes if n})


def mem0_lines(run_dir: Path | None) -> list[str]:
    t = _table(run_dir, "adapters") if run_dir is not None else None
    if t is None or t.empty or "mem0" not in set(t["adapter"]):
        return []
    out = ["", "### mem0: the threshold to set", ""]
    for model, d in t[t["adapter"] == "mem0"].groupby("model", sort=False):
        cut = d[(d["metric"] == "calibrated_threshold") & (d["kind"] == "moderate")]
        if not len(cut):
            continue
        value = float(cut["value"].iloc[0])
        ok = "reachable" not in cut.columns or cut["reachable"].iloc[0] != 0
        if ok and math.isfinite(value):
            out += ["<!-- readme -->",
                    f"mem0 with `{model}`: set `memory.search(..., threshold={value:.2f})` (the certified MODERATE "
                    "cut: precision >= 0.80 over the train split's users, users as the unit) instead of 0.1.",
                    "<!-- /readme -->", ""]
        else:
            out.append(f"- `{model}`: no MODERATE cut could be certified on its scores here (see above); "
                       "no threshold to recommend.")
    out.append("- mem0's own default embedders do not load offline here: `openai` (text-embedding-3-small, an "
               "API) and `huggingface`'s default `multi-qa-MiniLM-L6-cos-v1` (a hub download); its huggingface "
               "embedder loads any sentence-transformers folder, i.e. the packaged MiniLM (and mpnet-base after "
               "`make venv-extended`).")
    stale = t[(t["metric"].isin(["stale_first", "results_with_duplicates"]))]
    figures = "; ".join(f"{a} ({m}): stale first {_pct(float(d.loc[d['metric'] == 'stale_first', 'value'].iloc[0]))}, "
                        f"answers holding a duplicate {_pct(float(d.loc[d['metric'] == 'results_with_duplicates', 'value'].iloc[0]))}"
                        for (a, m), d in stale.groupby(["adapter", "model"], sort=False) if len(d) == 2)
    out.append("- mem0 (`infer=False`) stores every add as a new memory: a restated fact is stored twice (the same "
               "text fills two of the top-k places) and a changed fact keeps its old value beside the new one, "
               "so on `stale_probe` questions the superseded value can rank first. widemem and the engine drop "
               "identical text and, with the pass-through LLM / append resolver, resolve no contradiction either; "
               "their recency weight is what ranks the newer value first more often: "
               f"{figures}.")
    return out


@report_section("peer", order=80)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """Markdown for reports/README.md from the latest peer run."""
    if results.empty:
        return ""
    if "skipped" in set(results["metric"]):
        return ("## Peers: widemem 2.0.2 and mem0 (`peer`)\n\nSkipped: widemem-ai 2.0.2 is not installed "
                f"(`make venv-peers`, then `{COMMAND} force=true`).")
    run_dir = Path(str(records[-1].get("run_dir", ""))) if records else None
    skipped = ((records[-1].get("extra") or {}).get("peer") or {}).get("adapters_skipped") if records else None
    out = ["## Peers: widemem 2.0.2 and mem0 (`peer`)", ""]
    out += agreement_lines(results, run_dir)
    out += grid_lines(run_dir)
    out += adapter_lines(run_dir)
    out += mem0_lines(run_dir)
    if skipped:
        out += ["", "Not run here: " + "; ".join(skipped)]
    out += ["", f"Command: `{COMMAND}` (one adapter: `{COMMAND} adapter=mem0`)"]
    return "\n".join(out)
