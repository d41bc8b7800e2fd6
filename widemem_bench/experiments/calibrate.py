"""`calibrate`: per-embedder HIGH / MODERATE / LOW thresholds and the answerability scorer's cut-offs.

    widemem-bench calibrate embedder=minilm-l3            # one embedder, writes under outputs/ only
    widemem-bench calibrate -m embedder=minilm-l6,tfidf   # several (a Hydra sweep)
    widemem-bench calibrate params.data=labels.csv        # your own labels from any memory system

On the timelines' train split (answerable, never-mentioned, hard-negative and
other-person questions, scored under the configured engine node) the similarity ladder
and the scorer's cut-offs are certified with users as the unit and one delta
(`calibration.certify_ladder`; the pipeline is `experiments/calibrate_pipeline.py`);
validation and holdout figures follow, with cluster-bootstrap 95 % intervals by user,
for widemem's own thresholds, the ladder and the scorer (the sealed holdout only with
``params.holdout=true``, which `make bench` and `make calibrate` pass: a plain run leaves
the seal ledger untouched). The run prints the three ``WIDEMEM_CONFIDENCE_*`` lines to
paste and the trade-off table of its last split, and writes its
record, ``calibration.json``, ``tradeoff.json`` (and ``fixture.csv`` for minilm-l6) into
its run folder under ``outputs/calibrate/``. Only ``params.write_package_files=true``
(what ``make calibrate`` passes) also rewrites
``widemem_bench/calibration/files/<embedder>.json``; reports/calibration.md is rendered
from those files by ``widemem-bench calibration_report``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench import calibration as cal
from widemem_bench.calibration.options import Options, from_params
from widemem_bench.calibration.tradeoff import format_tradeoff
from widemem_bench.engine import band_codes, thresholds_for_model
from widemem_bench.experiments import calibrate_pipeline as pipeline
from widemem_bench.experiments import common
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.keys import BATCH, DATA

SUMMARY = ("recall_moderate_plus", "precision_moderate_plus", "precision_high",
           *(f"false_confidence_{k}" for k in common.NEGATIVE_KINDS))


def _print_result(name: str, calfile: Any, table: list[dict[str, Any]], where: str) -> None:
    print(f"\n[{name}] paste into widemem's environment:")
    for line in calfile.env:
        print(f"  {line}")
    print(format_tradeoff(table, f"trade-off on {where} (percent, 95% cluster-bootstrap intervals by user):"),
          flush=True)


def _metric_rows(pq: pd.DataFrame, name: str, ths: dict[str, Any], n_boot: int, seed: int,
                 splits: tuple[str, ...]) -> list[dict[str, Any]]:
    """Train / validation (/ holdout) rows of the calibrated ladder and of widemem's table."""
    rows: list[dict[str, Any]] = []
    for setting, th in ths.items():
        part = pq.copy()
        part["band"] = band_codes(part["top1_sim"].to_numpy(), th)
        rows += common.metric_rows(part, embedder=name, setting=setting, n_boot=n_boot, seed=seed,
                                   splits=splits, band_metrics=SUMMARY,
                                   score_metrics=(), rank_metrics=(), high=th[0], moderate=th[1], low=th[2])
    return rows


def _embedder_run(cfg: dict[str, Any], ctx: RunContext, opts: Options) -> ExperimentResult:
    name = str(cfg["embedder"]["name"])
    emb = common.load_embedder_for(ctx, name)
    ec = common.batch_engine(cfg)
    prep = common.prepare(ctx, emb, ec=ec)
    widemem_th = thresholds_for_model(emb.model_id)
    with ctx.timer("score"):
        scored = common.score(prep, ec, widemem_th, keep_final=True)
    pq, x = pipeline.frame(prep, scored, ctx.timelines(), emb)
    splits = ("train", "validation", "holdout") if opts.holdout else ("train", "validation")
    with ctx.timer("fit"):
        res = pipeline.calibrate_embedder(name, opts, ctx.timelines(), ctx.info["dataset"], emb=emb,
                                          scored=(pq.copy(), x))
    with ctx.timer("metrics"):
        pq = pq[pq["split"].isin(splits)].reset_index(drop=True)   # the sealed holdout only when asked
        rows = _metric_rows(pq, name, {"calibrated": res.calibration.thresholds, "widemem": widemem_th},
                            opts.n_boot, ctx.seed, splits)
    out = ctx.output_dir
    artifacts: dict[str, Path] = {"calibration": Path(cal.save_calibration(res.calibration, out / "calibration.json"))}
    (out / "tradeoff.json").write_text(json.dumps(res.table, indent=1) + "\n", encoding="utf-8")
    artifacts["tradeoff"] = out / "tradeoff.json"
    if res.fixture is not None:
        res.fixture.to_csv(out / "fixture.csv", index=False)
        artifacts["fixture"] = out / "fixture.csv"
    if opts.write_package_files:   # the explicit flag: the committed copy the engine reads
        artifacts["installed"] = Path(cal.save_calibration(res.calibration, cal.calibration_dir() / f"{name}.json"))
        print(f"wrote {artifacts['installed']}")
    ctx.info["thresholds"] = list(res.calibration.thresholds)
    ctx.info["widemem_thresholds"] = list(widemem_th)
    ctx.info["seconds"] = {k: round(v, 1) for k, v in res.seconds.items()}
    _print_result(name, res.calibration, res.table, f"the timelines {splits[-1]}")
    bands = pd.DataFrame([{"embedder": name, "statement": k, **v.to_dict()} for k, v in res.ladder.statements.items()])
    return ExperimentResult(metrics=rows, per_query=pq, tables={"bands": bands}, artifacts=artifacts)


def _data_run(ctx: RunContext, opts: Options) -> ExperimentResult:
    d = pipeline.calibrate_data(opts)   # every check happens here, before anything is written
    path = Path(cal.save_calibration(d.calibration, ctx.output_dir / "calibration.json"))
    (ctx.output_dir / "tradeoff.json").write_text(json.dumps(d.table, indent=1) + "\n", encoding="utf-8")
    _print_result(d.name, d.calibration, d.table, f"{opts.data} itself (in sample; the certificate is the guarantee)")
    rows = [metric_row(k, v[0], None if v[1] is None else (v[1], v[2]), embedder=d.name, split="in_sample",
                       setting=r["setting"])
            for r in d.table for k, v in r.items() if isinstance(v, list) and len(v) == 3 and k != "thresholds"
            and v[0] is not None]
    ctx.info["thresholds"] = list(d.calibration.thresholds)
    return ExperimentResult(metrics=rows, artifacts={"calibration": path,
                                                     "tradeoff": ctx.output_dir / "tradeoff.json"})


# thresholds are what it fits; widemem's table is the reference it reports beside them.
@experiment("calibrate", honours=(*DATA, *(k for k in BATCH if k != "thresholds"), "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    from widemem_bench.timelines import check_fittable

    p = cfg.get("params") or {}
    if not p.get("data"):
        # world B is evaluation-only (issue 13): refuse before anything is fitted or written
        check_fittable(ctx.timelines(), "calibration")
    dataset = str((cfg.get("dataset") or {}).get("name") or "timelines")
    opts = from_params(p, seed=ctx.seed, dataset=dataset)
    if opts.data is not None:
        return _data_run(ctx, opts)
    return _embedder_run(cfg, ctx, opts)
