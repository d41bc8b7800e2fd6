"""reports/README.md: headline tables (each with the command that produced it), figures
from the run-record tables, sections registered by experiments, and markdown fragments
written by other tools (embedders.md, perf.md, locomo.md, ...).

Pure reading: it never runs an experiment. `bench.py` runs them, then calls
`write_report(...)` with each experiment's sweep folder and command.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.experiments.records import (
    find_run_dirs,
    is_complete,
    machine_info,
    metrics_frame,
    read_record,
)
from widemem_bench.provenance import REPO_ROOT, git_info
from widemem_bench.reports import plots
from widemem_bench.reports.fragments import (
    TOOL_FRAGMENTS,
    fence,
    fragment_title,
    summarise,
)
from widemem_bench.reports.markdown import fmt, md_table

# Markdown written by other tools into reports/, linked from README.md ("More reports"). A
# fragment named after an experiment (locomo.md, perf.md, ...) is linked from that
# experiment's section instead when the section is in the report.
FRAGMENTS = ("calibration.md", "transfer.md", "resolver_transfer.md", "reliability.md", "embedders.md",
             "embedders_extended.md", "contradiction.md", "ymyl_decay.md", "frustration.md", "locomo.md",
             "peer.md", "perf.md")


def _code_dirty(dirty: bool | None) -> bool | None:
    """Uncommitted changes outside reports/: the report itself is always about to change."""
    if not dirty:
        return dirty
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)reports"],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return dirty
    return bool(out.strip())


@dataclass
class Source:
    """One experiment's runs: records (with `run_dir`), long metric rows, and its command."""

    experiment: str
    command: str
    records: list[dict[str, Any]] = field(default_factory=list)
    results: pd.DataFrame = field(default_factory=pd.DataFrame)

    def table(self, name: str) -> pd.DataFrame:
        """The `<name>.parquet` tables of every run, concatenated (with `embedder` added)."""
        frames = []
        for rec in self.records:
            info = (rec.get("files") or {}).get(name)
            if not info:
                continue
            df = pd.read_parquet(Path(rec["run_dir"]) / info["path"])
            if "embedder" not in df.columns:
                df["embedder"] = ((rec.get("config") or {}).get("embedder") or {}).get("name")
            frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def load_source(experiment: str, root: Path, command: str,
                embedders: Sequence[str] | None = None,
                run_names: Sequence[str] | None = None) -> Source:
    """Complete runs of `experiment` under `root`, newest record per embedder (when several).

    `run_names` keeps only run folders of those names (e.g. "default" for the run the
    bench made without overrides), so other sweeps in the same folder stay out.
    """
    recs: dict[str, dict[str, Any]] = {}
    for run_dir in find_run_dirs(root) if Path(root).exists() else []:
        if not is_complete(run_dir) or (run_names is not None and run_dir.name not in run_names):
            continue
        rec = read_record(run_dir)
        if rec is None or rec.get("experiment") != experiment:
            continue
        emb = ((rec.get("config") or {}).get("embedder") or {}).get("name")
        if embedders is not None and emb not in embedders:
            continue
        rec["run_dir"] = str(run_dir)
        key = f"{emb}|{run_dir.name}" if experiment not in ("compare_embedders", "calibrate",
                                                             "sweep_thresholds") else str(emb)
        if key not in recs or rec["finished_at"] > recs[key]["finished_at"]:
            recs[key] = rec
    records = sorted(recs.values(), key=lambda r: str(r["run_dir"]))
    frames = [metrics_frame(r, Path(r["run_dir"])) for r in records]
    results = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Source(experiment, command, records, results)


def _cell(r: pd.DataFrame, metric: str, pct: bool = True, **where: Any) -> str:
    m = r[r["metric"] == metric]
    for k, v in where.items():
        m = m[m[k] == v]
    if m.empty:
        return "n/a"
    row = m.iloc[0]
    return fmt(row["value"], row["ci_lo"], row["ci_hi"], pct)


def section_embedders(src: Source, figures: Path, order: Sequence[str]) -> str:
    r = src.results
    if r.empty:
        return ""
    embs = [e for e in order if e in set(r["embedder"])]
    rows = []
    for e in embs:
        x = r[(r["embedder"] == e) & (r["split"] == "all")]
        rows.append({
            "embedder": e,
            "recall at MODERATE+": _cell(x, "recall_moderate_plus"),
            "false conf. hard negative": _cell(x, "false_confidence_hard_negative"),
            "false conf. never mentioned": _cell(x, "false_confidence_never_mentioned"),
            "false conf. other person": _cell(x, "false_confidence_other_person"),
            "precision MODERATE+": _cell(x, "precision_moderate_plus"),
            "AUROC": _cell(x, "auroc", pct=False),
            "hit@1": _cell(x, "hit@1"),
            "MRR": _cell(x, "mrr", pct=False),
        })
    pq = src.table("per_query")
    th = {str(((rec.get("config") or {}).get("embedder") or {}).get("name")): (rec.get("extra") or {}).get("thresholds")
          for rec in src.records}
    figs = [plots.plot_band_shares(r, figures / "band_shares.png", embedders=embs)]
    if not pq.empty:
        figs.append(plots.plot_risk_coverage(pq, figures / "risk_coverage.png"))
        figs.append(plots.plot_reliability(pq, figures / "reliability.png"))
    th_line = "; ".join(f"{e}: {tuple(round(v, 2) for v in (th.get(e) or []))}" for e in embs if th.get(e))
    out = [
        "## Embedder comparison: does the memory know when it doesn't know?",
        "",
        fence(src.command),
        "",
        "All splits of the timelines, widemem 2.0.2 engine settings (weights 0.5/0.3/0.2 with "
        "per-query adaptation, exponential decay 0.01, balanced mode), widemem's threshold table "
        f"per model (high, moderate, low: {th_line}). 95% cluster-bootstrap intervals by user. "
        "Recall and false confidence = share at MODERATE or above; hit@1 / MRR over answerable "
        "questions whose gold memory is stored.",
        "",
        md_table(pd.DataFrame(rows)),
        "",
    ]
    out += [f"![{p.stem}](figures/{p.name})" for p in figs]
    return "\n".join(out) + "\n"


def section_calibrate(src: Source) -> str:
    r = src.results
    if r.empty:
        return ""
    rows = []
    for rec in src.records:
        e = str(((rec.get("config") or {}).get("embedder") or {}).get("name"))
        x = r[(r["embedder"] == e) & (r["split"] == "holdout")]
        cal = (rec.get("extra") or {}).get("thresholds") or [np.nan] * 3
        wm = (rec.get("extra") or {}).get("widemem_thresholds") or [np.nan] * 3
        rows.append({
            "embedder": e,
            "calibrated (high/mod/low)": "/".join(f"{v:.3f}" for v in cal),
            "widemem (high/mod/low)": "/".join(f"{v:.2f}" for v in wm),
            "holdout precision MOD+ (cal.)": _cell(x, "precision_moderate_plus", setting="calibrated"),
            "holdout precision MOD+ (widemem)": _cell(x, "precision_moderate_plus", setting="widemem"),
            "holdout recall MOD+ (cal.)": _cell(x, "recall_moderate_plus", setting="calibrated"),
            "holdout recall MOD+ (widemem)": _cell(x, "recall_moderate_plus", setting="widemem"),
            "holdout false conf. hard neg. (cal.)": _cell(x, "false_confidence_hard_negative", setting="calibrated"),
            "holdout false conf. hard neg. (widemem)": _cell(x, "false_confidence_hard_negative", setting="widemem"),
        })
    return "\n".join([
        "## Per-model calibrated thresholds",
        "",
        fence(src.command),
        "",
        "Certified on the train split with users as the unit and one delta (0.1) for every "
        "statement: precision of HIGH >= 0.95, MODERATE or above >= 0.80, hard negatives at "
        "MODERATE or above <= 10 %, answerable questions at NONE <= 5 % (this sets LOW); see "
        "reports/calibration.md. Figures on the holdout split (users and phrasings never seen in "
        "training). Each run folder holds its `calibration.json`.",
        "",
        md_table(pd.DataFrame(rows)),
        "",
    ])


def _calibrated_moderate(embedders: Mapping[str, Any]) -> dict[str, float]:
    """The committed calibrated moderate threshold of each embedder that has a file."""
    from widemem_bench.calibration import load_calibration

    out: dict[str, float] = {}
    for e in embedders:
        try:
            out[str(e)] = float(load_calibration(str(e)).thresholds[1])
        except (ValueError, OSError):  # no calibration file for this embedder
            continue
    return out


def section_thresholds(src: Source, figures: Path, calibrated: Mapping[str, float]) -> str:
    curve = src.table("curve")
    if curve.empty:
        return ""
    marks = {str(((rec.get("config") or {}).get("embedder") or {}).get("name")):
             ((rec.get("extra") or {}).get("thresholds") or [np.nan] * 3)[1] for rec in src.records}
    cal = dict(calibrated) or _calibrated_moderate(marks)
    p = plots.plot_threshold_curves(curve, figures / "threshold_curves.png", marks=marks, calibrated=cal,
                                    results=src.results)
    rows = []
    for e, part in curve[curve["split"] == "all"].groupby("embedder"):
        ok = part[part["precision_moderate_plus"] >= 0.8].sort_values("threshold")
        t80 = ok.iloc[0] if len(ok) else None
        rows.append({
            "embedder": e,
            "moderate in force": f"{marks.get(str(e), np.nan):.2f}",
            "lowest t with precision >= 80%": f"{t80['threshold']:.2f}" if t80 is not None else "none",
            "recall there": fmt(t80["recall_moderate_plus"]) if t80 is not None else "n/a",
            "false conf. hard neg. there": fmt(t80["false_confidence_hard_negative"]) if t80 is not None else "n/a",
        })
    return "\n".join([
        "## Precision and recall vs threshold",
        "",
        fence(src.command),
        "",
        "A question counts as confident when its top-1 cosine reaches the threshold "
        "(empirical, all splits; the calibrated thresholds above add a finite-sample guarantee).",
        "",
        md_table(pd.DataFrame(rows)),
        "",
        f"![{p.stem}](figures/{p.name})",
        "",
    ])


def section_decay(src: Source, figures: Path) -> str:
    curve, surv = src.table("age_curve"), src.table("survival")
    if surv.empty and curve.empty:
        return ""
    figs = []
    if not curve.empty:
        sim = (((src.records[0].get("config") or {}).get("params") or {}).get("curve_similarity", 0.5)
               if src.records else None)
        figs.append(plots.plot_score_vs_age(curve, figures / "score_vs_age.png",
                                            rates={"exponential": 0.01, "linear": 0.005}, similarity=sim))
    table = ""
    if not surv.empty:
        figs.append(plots.plot_survival(surv, figures / "decay_survival.png", results=src.results))
        buckets = list(dict.fromkeys(surv["age_bucket"]))
        wide = surv.pivot_table(index=["decay", "rate"], columns="age_bucket", values="hit@1")
        wide = wide[[b for b in buckets if b in wide.columns]].map(fmt).reset_index()
        order = {f: i for i, f in enumerate(("exponential", "linear", "step", "none"))}
        wide = wide.sort_values(["decay", "rate"], key=lambda c: c.map(order) if c.name == "decay" else c)
        wide["rate"] = wide["rate"].map(lambda v: f"{v:g}")
        table = md_table(wide)
    return "\n".join([
        "## Decay: score vs age, and survival of old but true facts",
        "",
        fence(src.command),
        "",
        "hit@1 of answerable questions by the age of their gold memory at question time "
        "(MiniLM-L6, widemem weights). Bars: 95% cluster-bootstrap intervals by user.",
        "",
        table,
        "",
        *[f"![{p.stem}](figures/{p.name})" for p in figs],
        "",
    ])


def section_weights(src: Source, figures: Path) -> str:
    grid = src.table("grid")
    r = src.results
    if grid.empty:
        return ""
    p = plots.plot_weight_grid(grid, figures / "weight_grid.png")
    rows = []
    for adapt in (True, False):
        for setting in ("widemem", "best_hit@1"):
            x = r[(r["setting"] == setting) & (r["adapt"] == adapt)] if "adapt" in r else r.iloc[0:0]
            if x.empty:
                continue
            w = x.iloc[0]
            rows.append({
                "adaptation": "on" if adapt else "off",
                "mix": setting,
                "weights (sim/imp/rec)": f"{w['w_sim']:.2f}/{w['w_imp']:.2f}/{w['w_rec']:.2f}",
                "hit@1": _cell(x, "hit@1"),
                "MRR": _cell(x, "mrr", pct=False),
                "recall at MODERATE+": _cell(x, "recall_moderate_plus"),
                "false conf. hard neg.": _cell(x, "false_confidence_hard_negative"),
            })
    return "\n".join([
        "## Weight mixes over the simplex",
        "",
        fence(src.command),
        "",
        f"{len(grid)} grid points (step 0.05, with widemem's per-query adaptation on and off), "
        "each scored over the whole data set in one process by the batched scorer.",
        "",
        md_table(pd.DataFrame(rows)),
        "",
        f"![{p.stem}](figures/{p.name})",
        "",
    ])


def _demote(md: str) -> str:
    return re.sub(r"^(#+)", lambda m: "#" + m.group(1), md, flags=re.M)


def write_report(
    out_dir: Path,
    sources: Mapping[str, Source],
    *,
    embedders: Sequence[str],
    extra_sections: Sequence[tuple[str, Any]] = (),
    wall_seconds: float | None = None,
    fragments: Sequence[str] = FRAGMENTS,
    calibration_dir: str | Path | None = None,
) -> Path:
    """Write `out_dir/README.md`, `out_dir/<experiment>.md` (each section in full) and
    `out_dir/figures/*.png`; returns the README path.

    README.md opens with the takeaway and the thresholds to ship (`reports.summary`), then
    one short block per experiment (first paragraph, figures, link to its fragment).
    """
    out_dir = Path(out_dir)
    figures = out_dir / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    head = _header(wall_seconds) + _lead(sources, embedders, calibration_dir, out_dir)
    body, written = _sections(sources, embedders, out_dir, figures, extra_sections)
    # Fragments no section of this report wrote (tools' reports, older runs): linked.
    links = [f"- [{f}]({f}): {fragment_title(out_dir / f)}" for f in fragments
             if (out_dir / f).is_file() and Path(f).stem not in written]
    if links:
        body.append("## More reports\n\n" + "\n".join(links) + "\n")
    path = out_dir / "README.md"
    path.write_text("\n".join(head + [b for b in body if b]).rstrip() + "\n")
    return path


def _header(wall_seconds: float | None) -> list[str]:
    """The title and the provenance line (commit, date, machine, the bench's wall time)."""
    g, m = git_info(), machine_info()
    g["dirty"] = _code_dirty(g.get("dirty"))
    return [
        "# widemem_bench report",
        "",
        f"Written by `make bench` (`widemem-bench bench`) at commit "
        f"`{(g.get('sha') or 'unknown')[:12]}`{' (uncommitted changes)' if g.get('dirty') else ''}, "
        f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}, on {m['cpu']} "
        f"({m['nproc']} cores), Python {m['python']}"
        + (f"; the bench took {wall_seconds / 60:.1f} min." if wall_seconds else "."),
        "",
    ]


def _lead(sources: Mapping[str, Source], embedders: Sequence[str], calibration_dir: str | Path | None,
          out_dir: Path) -> list[str]:
    """What README.md opens with: the takeaway, the thresholds to ship, the ledger."""
    from widemem_bench.reports import summary

    head: list[str] = []
    recs = summary.recommendations(sources, embedders, calibration_dir)
    take = summary.takeaway(sources, embedders, recs)
    if take:
        head += ["## Takeaway", "", take, ""]
    rec_md = summary.recommendation_table(recs)
    if rec_md:
        head.append(rec_md)
    head.append(summary.ledger_section())
    if "calibrate" in sources:
        # its table (holdout precision per model) repeats the one above: only in calibrate.md
        md = section_calibrate(sources["calibrate"])
        if md:
            summarise("calibrate", md, out_dir, sources["calibrate"].command)
            head += ["Holdout precision of the calibrate runs, per model: [calibrate.md](calibrate.md).", ""]
    head += [
        "Every table and figure comes from the run records (`record.json`, `per_query.parquet` and the named "
        "tables) under `outputs/<experiment>/multiruns/`; each section gives the command that produced them and "
        "links its full tables (`reports/<experiment>.md`). `widemem-bench aggregate "
        "root=outputs/<experiment>/multiruns` gathers a sweep into one `results.parquet`.",
        "",
    ]
    return head


def _sections(sources: Mapping[str, Source], embedders: Sequence[str], out_dir: Path, figures: Path,
              extra_sections: Sequence[tuple[str, Any]]) -> tuple[list[str], set[str]]:
    """The markdown block of each experiment with records, in report order, and the names of
    the experiment sections written (the built-in ones own no fragment link)."""
    body: list[str] = []
    if "compare_embedders" in sources:
        body.append(section_embedders(sources["compare_embedders"], figures, embedders))
    if "sweep_thresholds" in sources:
        body.append(section_thresholds(sources["sweep_thresholds"], figures, {}))
    if "sweep_decay" in sources:
        md = section_decay(sources["sweep_decay"], figures)
        if md:
            body.append(summarise("sweep_decay", md, out_dir, sources["sweep_decay"].command))
    if "sweep_weights" in sources:
        body.append(section_weights(sources["sweep_weights"], figures))
    written: set[str] = set()
    for name, fn in extra_sections:
        src = sources.get(name)
        if src is None or not src.records:
            continue
        try:
            md = fn(src.results, src.records, figures)
        except Exception as exc:  # one broken section must not lose the whole report
            md = f"_section {name} failed: {type(exc).__name__}: {exc}_"
        if md:
            short = summarise(name, md, out_dir, src.command, owned=name not in TOOL_FRAGMENTS)
            body.append(f"<!-- section: {name} -->\n{short}")
            written.add(name)
    return body, written
