"""`sweep_thresholds`: precision and recall vs a single confidence threshold.

For each threshold t on a grid, a question counts as "confident" when its top-1 cosine
is >= t (bands computed with (t, t, t), so MODERATE or above means cosine >= t). Reports
recall at MODERATE or above, precision of MODERATE or above and false confidence per
negative kind, per split, with bootstrap CIs; columns `threshold`. Table `curve`: the
same in wide form. The thresholds in force (widemem's table or the calibrated ones) are
stored in record.json `extra.thresholds` so plots can mark them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import band_codes
from widemem_bench.experiments import common
from widemem_bench.experiments.context import ExperimentResult, RunContext
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.keys import BATCH, DATA

CURVE_METRICS = ("recall_moderate_plus", "precision_moderate_plus",
                 *(f"false_confidence_{k}" for k in common.NEGATIVE_KINDS))


@experiment("sweep_thresholds", honours=(*DATA, *BATCH, "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    name = str(cfg["embedder"]["name"])
    emb = common.load_embedder_for(ctx, name)
    ec = common.batch_engine(cfg)
    th = common.thresholds_in_force(ec, emb)  # bands of per_query.parquet
    prep = common.prepare(ctx, emb, ec=ec)
    with ctx.timer("score"):
        scored = common.score(prep, ec, th)
    base = common.per_query_frame(prep, scored, ctx.timelines().questions, name)
    grid = np.round(np.arange(float(p.get("start", 0.0)), float(p.get("stop", 1.0)) + 1e-9,
                              float(p.get("step", 0.02))), 6)
    rows: list[dict[str, Any]] = []
    wide: list[dict[str, Any]] = []
    sim = base["top1_sim"].fillna(-1.0).to_numpy()
    for t in ctx.bar(grid, "sweep_thresholds"):
        pq = base.copy()
        pq["band"] = band_codes(sim, (float(t), float(t), float(t)))
        with ctx.timer("metrics"):
            r = common.metric_rows(pq, embedder=name, setting=f"t{t:.2f}", n_boot=int(p.get("n_boot", 200)),
                                   seed=ctx.seed, splits=tuple(p.get("splits", ["all", "holdout"])),
                                   band_metrics=CURVE_METRICS, score_metrics=(), rank_metrics=(),
                                   threshold=float(t))
        rows += r
        for split in {m["split"] for m in r}:
            wide.append({"threshold": float(t), "split": split,
                         **{m["metric"]: m["value"] for m in r if m["split"] == split}})
    ctx.info["thresholds"] = list(th)
    ctx.info["model_id"] = emb.model_id
    return ExperimentResult(metrics=rows, per_query=base, tables={"curve": pd.DataFrame(wide)})
