"""`calibrate`: per-embedder HIGH / MODERATE / LOW thresholds (thin wrapper).

The algorithm is `widemem_bench.calibration.fit_thresholds` (Learn-then-Test). This
experiment only supplies the data: top-1 cosine of each train-split question of the
timelines under the configured engine settings, label = the question is answerable
(population: answerable + never-mentioned + hard-negative + other-person questions).
It then reports validation and holdout figures for the fitted thresholds and for
widemem's own table side by side (`setting` = "calibrated" / "widemem"), and writes the
calibration file into the run folder (`calibration.json`); with `params.install=true`
it also writes the package copy that `EngineConfig(thresholds="calibrated")` reads.
The false-confidence cap and the answerability section come from `widemem_bench.calibrate`
(the CLI's pipeline; its scorer is fitted under widemem's default scoring).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

    p = cfg.get("params") or {}
    name = str(cfg["embedder"]["name"])
    emb = common.load_embedder_for(ctx, name)
    ec = common.batch_engine(cfg)
    prep = common.prepare(ctx, emb, ec=ec)
    widemem_th = thresholds_for_model(emb.model_id)
    with ctx.timer("score"):
        scored = common.score(prep, ec, widemem_th)
    pq = common.per_query_frame(prep, scored, ctx.timelines().questions, name)
    # Thresholds live in [0, 1]: a negative cosine (or no memory at all) is as good as 0.
    pq["top1_sim"] = pq["top1_sim"].fillna(0.0).clip(0.0, 1.0)
    train = pq[(pq["split"] == "train") & pq["kind"].isin(common.CONFIDENCE_KINDS)]
    with ctx.timer("fit"):
        fit = cal.fit_thresholds(train["top1_sim"].to_numpy(), (train["kind"] == "answerable").to_numpy(),
                                 targets=p.get("targets"), delta=float(p.get("delta", 0.1)),
                                 method=str(p.get("method", "binomial")))
        # Same pipeline as `python -m widemem_bench.calibrate`: the false-confidence cap
        # (params.cap, default hard negatives <= 10 %) and the answerability scorer, so an
        # installed file from either entry point holds the same sections.
        from widemem_bench import calibrate as cli

        cap = dict(cli.DEFAULT_CAP if p.get("cap", "default") == "default" else (p.get("cap") or {}))
        fit, caps = cli.apply_cap(fit, train["top1_sim"].to_numpy(), (train["kind"] == "answerable").to_numpy(),
                                  train["kind"].to_numpy(), cap)
        opts = cli.Options(dataset=str((cfg.get("dataset") or {}).get("name") or "timelines"),
                           targets={**cli.Options().targets, **(p.get("targets") or {})},
                           delta=float(p.get("delta", 0.1)), method=str(p.get("method", "binomial")),
                           cap=cap, n_boot=int(p.get("n_boot", 1000)), seed=ctx.seed)
        scorer = cli.calibrate_embedder(name, opts, ctx.timelines(), ctx.info["dataset"]).calibration
    rows: list[dict[str, Any]] = []
    figures: dict[str, dict[str, Any]] = {}
    n_boot = int(p.get("n_boot", 1000))
    for setting, th in (("calibrated", fit.thresholds), ("widemem", widemem_th)):
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
    calfile = cal.CalibrationFile.from_fit(
        fit, embedder=name, model_id=emb.model_id, fingerprint=str(getattr(emb, "fingerprint", "")),
        dataset={k: ctx.info["dataset"][k] for k in ("name", "version", "sha256")},
        validation=figures.get("validation"), holdout=figures.get("holdout"),
        answerability=scorer.answerability,
    )
    calfile.bands["moderate"]["caps"] = caps
    out = cal.save_calibration(calfile, ctx.output_dir / "calibration.json")
    artifacts: dict[str, Path] = {"calibration": Path(out)}
    if p.get("install"):
        artifacts["installed"] = Path(cal.save_calibration(calfile, cal.calibration_dir() / f"{name}.json"))
    ctx.info["thresholds"] = list(fit.thresholds)
    ctx.info["widemem_thresholds"] = list(widemem_th)
    bands = fit.to_frame()
    bands.insert(0, "embedder", name)
    return ExperimentResult(metrics=rows, per_query=pq, tables={"bands": bands}, artifacts=artifacts)

