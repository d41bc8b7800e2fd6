"""reports/calibration.md: the confidence calibration per embedder, from calibration files.

    widemem-bench calibration_report [out=FILE]   # rewrite reports/calibration.md (make calibrate runs it)

The files shown are the committed ones (``widemem_bench/calibration/files/``), then any
other model's `calibrate` run under ``outputs/calibrate/``; the coverage simulation and
widemem's fixture table are recomputed from them (fixed seeds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.calibration.options import CONFIDENCE_KINDS, DEFAULT_EMBEDDERS, NEGATIVE_KINDS
from widemem_bench.calibration.tradeoff import ROW_LABELS, ci_text, table_columns, th_text
from widemem_bench.provenance import REPO_ROOT

REPORT_PATH = REPO_ROOT / "reports" / "calibration.md"
OUTPUT_ROOT = REPO_ROOT / "outputs" / "calibrate"
COMMAND = "widemem-bench calibration_report"


def report_calibrations(run: Mapping[str, Any] | None = None,
                        outputs: Path = OUTPUT_ROOT) -> dict[str, tuple[Any, str]]:
    """Files the report shows: committed ones, other models' runs in outputs/, then ``run``'s."""
    from widemem_bench.calibration import available_calibrations, load_calibration, read_calibration

    out: dict[str, tuple[Any, str]] = {n: (load_calibration(n), "committed") for n in available_calibrations()}
    paths = sorted(outputs.glob("*/*/calibration.json")) if outputs.is_dir() else []
    for path in paths:
        try:
            c = read_calibration(path)
        except ValueError:
            continue  # a run of an older version: not shown rather than misread
        if c.embedder not in out and c.holdout:
            out[c.embedder] = (c, str(path.parent.relative_to(outputs.parents[1])))
    for name, c in (run or {}).items():
        same = name in out and out[name][1] == "committed" and out[name][0].to_dict() == c.to_dict()
        out[name] = (c, "committed" if same else f"outputs/calibrate/{name}")
    order = [n for n in DEFAULT_EMBEDDERS if n in out] + sorted(n for n in out if n not in DEFAULT_EMBEDDERS)
    return {n: out[n] for n in order}


def coverage_lines(icc: float, n_reps: int = 1000, delta: float = 0.1) -> list[str]:
    """The coverage simulation's table for the report (fixed seed; a few seconds)."""
    from widemem_bench.calibration.simulate import simulate_coverage

    configs = (("new: users as the unit, one delta (Bonferroni)", "cluster", True),
               ("old: i.i.d. binomial, delta per statement", "binomial", False),
               ("i.i.d. binomial, one delta (Bonferroni)", "binomial", True))
    lines = ["| certificate | statements violated (any) | HIGH | MODERATE | hard-negative cap | NONE |",
             "|---|---|---|---|---|---|"]
    for scen_icc in (icc, 0.2):
        res = simulate_coverage(n_reps=n_reps, icc=scen_icc, delta=delta, configs=configs)
        for r in res:
            ps = r.per_statement
            lines.append(f"| {r.label} (ICC {scen_icc:.3f}) | {100 * r.violation_rate:.1f}% | {100 * ps['high']:.1f}% "
                         f"| {100 * ps['moderate']:.1f}% | {100 * ps['cap:hard_negative']:.1f}% | {100 * ps['none']:.1f}% |")
    return lines


def _tradeoff(cals: Mapping[str, tuple[Any, str]]) -> list[str]:
    # the console's columns (calibration.tradeoff.format_tradeoff), for the timelines' kinds
    spec = table_columns({**{f"false_confidence_{k}": None for k in NEGATIVE_KINDS},
                          **{f"none_rate_{k}": None for k in CONFIDENCE_KINDS}})
    lines = ["## Confidence calibration per embedder", "",
             "Timelines holdout split (users and phrasings never seen in fitting), questions whose answer is "
             "or is not stored. Recall = answerable questions at MODERATE or above; \"X MOD+\" = questions of "
             "kind X at MODERATE or above (false confidence); \"NONE X\" = questions of kind X that read NONE. "
             f"95% intervals: cluster bootstrap by user. Written by `{COMMAND}` from the calibration files "
             "(`widemem-bench calibrate embedder=<name>` runs one; `make calibrate` writes the committed ones).", "",
             "| embedder | setting | thresholds (high / moderate / low) | "
             + " | ".join(h for h, _ in spec) + " |", "|---|---|---|" + "---|" * len(spec)]
    for n, (c, source) in cals.items():
        h = c.holdout
        if not h:
            continue
        label = n if source.startswith("committed") else f"{n} ({source})"
        rows = [(ROW_LABELS["widemem"], h["widemem_thresholds"]["thresholds"], h["widemem_thresholds"]),
                (ROW_LABELS["calibrated"], c.thresholds, h),
                (ROW_LABELS["answerability"], c.answerability_thresholds, (c.answerability or {}).get("holdout", {}))]
        for setting, th, f in rows:
            lines.append(f"| {label} | {setting} | {th_text(th or ())} | "
                         + " | ".join(ci_text(f.get(k)) for _, k in spec) + " |")
    return lines


def _scores(cals: Mapping[str, tuple[Any, str]]) -> list[str]:
    lines = ["", "NONE against widemem's defaults: widemem's LOW (0.20 for all-MiniLM-L6-v2, 0.30 for other "
             "models) reaches its NONE rate on never-mentioned questions by also sending answerable questions to "
             "NONE (the \"NONE answerable\" column). The certified LOW keeps answerable questions at NONE under "
             "5 % (tfidf: 50 %, its preset), so on a top-1 cosine it says NONE to fewer never-mentioned questions "
             "than widemem's LOW does wherever widemem's LOW costs more than 5 % of answerable questions; the "
             "answerability scorer, which separates the kinds far better, does both. `low_cap.never_mentioned=<rate>` "
             "certifies the other side of the trade-off instead (with `none.answerable=none`), or fails with a "
             "one-line error when both are asked and no LOW meets both.", "",
             "Answerability scorer against similarity alone (holdout; similarity's probability = Platt "
             "scaling of the top-1 cosine on the train split):", "",
             "| embedder | score | AUROC | AURC | adaptive ECE | Brier |", "|---|---|---|---|---|---|"]
    for n, (c, _) in cals.items():
        a = (c.answerability or {}).get("holdout", {})
        if not c.holdout:
            continue
        for setting, f in (("similarity", c.holdout), ("answerability", a)):
            lines.append(f"| {n} | {setting} | {ci_text(f.get('auroc'), False)} | {ci_text(f.get('aurc'), False)} "
                         f"| {ci_text(f.get('adaptive_ece'), False)} | {ci_text(f.get('brier'), False)} |")
    return lines


def _certificate(cals: Mapping[str, tuple[Any, str]], simulation: Sequence[str] | None) -> list[str]:
    from widemem_bench.calibration.certify import ASSUMPTION

    lines = ["", "### The certificate", "",
             "Each file certifies, on the timelines' train split (210 users), with one delta = 0.1 for all "
             "statements together (Bonferroni: delta / 4 each): HIGH precision >= 0.95; precision of MODERATE or "
             "above >= 0.80; hard negatives at MODERATE or above <= 10 %; answerable questions reading NONE "
             "<= 5 % (LOW is the highest threshold certified for this, so NONE means \"below what all but a "
             "certified 5 % of answerable questions score\"). The answerability scorer's cut-offs are certified "
             "the same way on half of the train users, which the shipped model never saw (it is fitted on the "
             "other half). tfidf uses `targets.high=0.85` and `none.answerable=0.5`, recorded in its file: its "
             "cosine is exactly 0 for every question sharing no word with the stored facts (46 % of answerable "
             "train questions).", "", f"Assumption: {ASSUMPTION}", ""]
    icc_rows = [(n, c.certificate.get("intra_user_correlation")) for n, (c, _) in cals.items() if c.certificate]
    if icc_rows:
        lines += ["Intra-user correlation of the top-1 cosine within a question kind (one-way ANOVA over users, "
                  "train split): " + ", ".join(f"{n} {v:.4f}" for n, v in icc_rows if v is not None) + ".", ""]
    if simulation:
        lines += ["Coverage simulation (`widemem_bench.calibration.simulate.simulate_coverage`, 1,000 simulated "
                  "calibrations of 210 users x 27 questions each, kinds and score spreads of minilm-l6 on the "
                  "timelines, a per-user score offset giving the intra-user correlation shown; delta = 0.1): share "
                  "of calibrations in which a certified statement is false at the exported thresholds.", "",
                  *simulation, "",
                  "Reading: the old certificate fails mostly because each of its statements spent its own delta; "
                  "at the timelines' weak intra-user correlation an i.i.d. binomial test with the delta split over "
                  "the statements also stays within delta. Testing per-user totals costs little here and does not "
                  "rely on questions being independent, which real users' repeated questions are not.", ""]
    return lines


def _files(cals: Mapping[str, tuple[Any, str]]) -> list[str]:
    def cert(bands: Mapping[str, Any]) -> str:
        return ", ".join(f"{b} {'certified' if bands[b]['certified'] else 'uncertified'}"
                         for b in ("high", "moderate", "low"))

    lines = ["### Calibration files", ""]
    for n, (c, source) in cals.items():
        a = c.answerability or {}
        lat = a.get("latency_us")
        lines += [f"**{n}** ({source}; `{c.model_id}`; data set {c.dataset.get('version', c.dataset.get('name'))}, "
                  f"sha256 `{str(c.dataset.get('sha256'))[:12]}…`): similarity thresholds {th_text(c.thresholds)} "
                  f"({cert(c.bands)}); answerability cut-offs {th_text(c.answerability_thresholds or ())} "
                  f"({cert(a['bands']) if a else 'n/a'})"
                  + (f"; model latency {lat:.1f} µs/query" if lat is not None else "") + ".", "",
                  "```", *c.env, "```", ""]
    return lines


def _fixture(fixture: pd.DataFrame) -> list[str]:
    lines = ["### widemem's own fixture (62 cases, minilm-l6)", "",
             "Cut-offs fitted on the timelines, applied unchanged to widemem's fixture (its stored facts "
             "embedded with minilm-l6; widemem's row uses the fixture's own top-1 cosines).", "",
             "| setting | split | answerable at MODERATE+ | recall | hard negatives at MODERATE+ | unrelated at MODERATE+ |",
             "|---|---|---|---|---|---|"]
    for r in fixture.to_dict("records"):
        lines.append(f"| {r['setting']} | {r['split']} | {r['answerable_moderate_plus']} "
                     f"| {100 * float(r['recall_moderate_plus']):.0f}% "
                     f"| {r['hard_negative_moderate_plus']} | {r['unrelated_moderate_plus']} |")
    return [*lines, ""]


def report_markdown(cals: Mapping[str, tuple[Any, str]] | None = None, fixture: pd.DataFrame | None = None,
                    simulation: Sequence[str] | None = None) -> str:
    """reports/calibration.md from calibration files (default: the committed ones)."""
    cals = dict(cals if cals is not None else report_calibrations())
    lines = [*_tradeoff(cals), *_scores(cals), *_certificate(cals, simulation), *_files(cals)]
    if fixture is not None and len(fixture):
        lines += _fixture(fixture)
    return "\n".join(lines) + "\n"


def fixture_report_table() -> pd.DataFrame | None:
    """The fixture table from the committed minilm-l6 file (loads the model; None if absent)."""
    from widemem_bench.answerability import AnswerabilityModel
    from widemem_bench.calibration import available_calibrations, load_calibration
    from widemem_bench.embedders import load_embedder
    from widemem_bench.evaluation.calibration_fixture import fixture_table

    if "minilm-l6" not in available_calibrations():
        return None
    c = load_calibration("minilm-l6")
    if not c.answerability:
        return None
    return fixture_table(load_embedder("minilm-l6"), AnswerabilityModel.from_dict(c.answerability["model"]), c)


def write_report(path: Path = REPORT_PATH, fixture: pd.DataFrame | None = None,
                 run: Mapping[str, Any] | None = None, outputs: Path = OUTPUT_ROOT) -> Path:
    """Render reports/calibration.md (or ``path``) from the calibration files."""
    cals = report_calibrations(run, outputs)
    if fixture is None and "minilm-l6" not in (run or {}):
        fixture = fixture_report_table()
    icc = next((c.certificate.get("intra_user_correlation") for n, (c, _) in cals.items()
                if n == "minilm-l6" and c.certificate), None)
    simulation = coverage_lines(float(icc)) if icc is not None else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_markdown(cals, fixture=fixture, simulation=simulation), encoding="utf-8")
    return path


def tool(cfg: Mapping[str, Any]) -> int:
    """Rewrite reports/calibration.md (or ``out``) from the calibration files (configs/tool/calibration_report.yaml)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    out = cfg.get("out")
    print(f"wrote {write_report(Path(str(out)) if out else REPORT_PATH)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``widemem-bench calibration_report``: the tool with its defaults (``--help``: what it does)."""
    args = list(argv or [])
    if any(a in ("-h", "--help", "help") for a in args):
        print((__doc__ or "").strip())
        return 0
    if args:
        raise ValueError(f"takes no arguments here, got {args[0]!r}; it renders the committed calibration files")
    return tool({})
