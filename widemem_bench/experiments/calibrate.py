"""`calibrate`: per-embedder HIGH / MODERATE / LOW thresholds (thin wrapper).

The algorithm is `widemem_bench.calibration.certify_ladder` (a certificate with users
as the unit, one delta for every statement). This experiment only supplies the data: top-1 cosine of each train-split question of the
timelines under the configured engine settings, label = the question is answerable
(population: answerable + never-mentioned + hard-negative + other-person questions).
It then reports validation and holdout figures for the fitted thresholds and for
widemem's own table side by side (`setting` = "calibrated" / "widemem"), and writes the
calibration file into the run folder (`calibration.json`); with `params.install=true`
it also writes the package copy that `EngineConfig(thresholds="calibrated")` reads.
Settings (targets, none_answerable, cap, delta, method) and the answerability section
come from `widemem_bench.calibrate` (the CLI's pipeline; its scorer is fitted under
widemem's default scoring).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.engine import band_codes, thresholds_for_model
from widemem_bench.experiments import common
from widemem_bench.experiments.context import ExperimentResult, RunContext
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.keys import BATCH, DATA

SUMMARY = ("recall_moderate_plus", "precision_moderate_plus", "precision_high",
           *(f"false_confidence_{k}" for k in common.NEGATIVE_KINDS))


# thresholds are what it fits; widemem's table is the reference it reports beside them.
@experiment("calibrate", honours=(*DATA, *(k for k in BATCH if k != "thresholds"), "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    from widemem_bench import calibration as cal
    from widemem_bench.timelines import check_fittable

    # world B is evaluation-only (issue 13): refuse before anything is fitted or written
    check_fittable(ctx.timelines(), "calibration")
    p = cfg.get("params") or {}
    name = str(cfg["embedder"]["name"])
    emb = common.load_embedder_for(ctx, name)
    ec = common.batch_engine(cfg)
    prep = common.prepare(ctx, emb, ec=ec)
    widemem_th = thresholds_for_model(emb.model_id)
    with ctx.timer("score"):
        scored = common.score(prep, ec, widemem_th)
    pq = common.per_query_frame(prep, scored, ctx.timelines().questions, name)
    # Nothing stored reads as the lowest score (-1): always NONE, as in widemem.
    pq["top1_sim"] = pq["top1_sim"].fillna(-1.0)
    train = pq[(pq["split"] == "train") & pq["kind"].isin(common.CONFIDENCE_KINDS)]
    # Same pipeline and settings as `python -m widemem_bench.calibrate`, so a file from
    # either entry point holds the same sections (the scorer's is fitted under widemem's
    # default scoring by that pipeline).
    from widemem_bench import calibrate as cli

    opts = cli.Options(dataset=str((cfg.get("dataset") or {}).get("name") or "timelines"),
                       targets={k: float(v) for k, v in (p.get("targets") or {}).items() if v is not None},
                       none_answerable=None if p.get("none_answerable") is None else float(p["none_answerable"]),
                       low_cap={k: float(v) for k, v in (p.get("low_cap") or {}).items()},
                       delta=float(p.get("delta", 0.1)), method=str(p.get("method", "cluster")),
                       cap=None if p.get("cap", "default") == "default" else dict(p.get("cap") or {}),
                       n_boot=int(p.get("n_boot", 1000)), seed=ctx.seed)
    settings = opts.resolved(name)
    with ctx.timer("fit"):
        ladder = cal.certify_ladder(train["top1_sim"].to_numpy(), train["kind"].to_numpy(), train["user_id"].to_numpy(),
                                    targets=settings["targets"], caps=settings["cap"],
                                    none_answerable=settings["none_answerable"],
                                    low_caps=settings["low_cap"], delta=opts.delta,
                                    method=opts.method, score_name=f"{name} similarity")
        scorer = cli.calibrate_embedder(name, opts, ctx.timelines(), ctx.info["dataset"]).calibration
    rows: list[dict[str, Any]] = []
    figures: dict[str, dict[str, Any]] = {}
    n_boot = int(p.get("n_boot", 1000))
    for setting, th in (("calibrated", ladder.thresholds), ("widemem", widemem_th)):
        part = pq.copy()
        part["band"] = band_codes(part["top1_sim"].to_numpy(), th)
        with ctx.timer("metrics"):
            r = common.metric_rows(part, embedder=name, setting=setting, n_boot=n_boot, seed=ctx.seed,
                                   splits=("train", "validation", "holdout"), band_metrics=SUMMARY,
                                   score_metrics=(), rank_metrics=(),
                                   high=th[0], moderate=th[1], low=th[2])
        rows += r
        if setting == "calibrated":
            for split in ("validation", "holdout"):
                figures[split] = {m["metric"]: m["value"] for m in r if m["split"] == split}
    calfile = cal.CalibrationFile.from_ladder(
        ladder, embedder=name, model_id=emb.model_id, fingerprint=str(getattr(emb, "fingerprint", "")),
        dataset={k: ctx.info["dataset"][k] for k in ("name", "version", "sha256")},
        validation=figures.get("validation"), holdout=figures.get("holdout"),
        answerability=scorer.answerability, options=cli._options_record(settings, opts),
    )
    out = cal.save_calibration(calfile, ctx.output_dir / "calibration.json")
    artifacts: dict[str, Path] = {"calibration": Path(out)}
    if p.get("install"):
        artifacts["installed"] = Path(cal.save_calibration(calfile, cal.calibration_dir() / f"{name}.json"))
    ctx.info["thresholds"] = list(ladder.thresholds)
    ctx.info["widemem_thresholds"] = list(widemem_th)
    bands = pd.DataFrame([{"embedder": name, "statement": k, **v.to_dict()} for k, v in ladder.statements.items()])
    return ExperimentResult(metrics=rows, per_query=pq, tables={"bands": bands}, artifacts=artifacts)

