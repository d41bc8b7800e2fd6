"""`sweep_decay`: decay function x rate x age.

Two tables:
- `age_curve` (analytic, engine functions only): recency and the final score of a memory
  with a fixed cosine (`params.curve_similarity`) vs its age, per decay function, rate and
  importance, under the configured weights; the "score vs age" plot.
- `survival` (timelines, batched scorer): for answerable questions, the share whose gold
  memory is still the top-1 result (hit@1) and still in the top 5, by the gold memory's age
  bucket, per decay setting: how well each decay keeps old but still true facts alive.
Metric rows: hit@1, hit@5, MRR and recall at MODERATE or above per decay setting and age
bucket (bootstrap CIs by user), columns `decay`, `rate`, `age_bucket`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import batch, combine, compute_recency
from widemem_bench.experiments import common
from widemem_bench.experiments.context import ExperimentResult, RunContext
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.keys import BATCH, DATA

AGE_EDGES = (0.0, 7.0, 30.0, 90.0, 180.0, np.inf)
AGE_LABELS = ("0-7d", "7-30d", "30-90d", "90-180d", "180d+")


def decay_settings(functions: dict[str, list[float]]) -> list[tuple[str, float]]:
    """(function, rate) pairs; step and none ignore the rate and get one entry."""
    out: list[tuple[str, float]] = []
    for fn, rates in functions.items():
        for r in ([0.0] if fn in ("step", "none") else rates):
            out.append((fn, float(r)))
    return out


def age_curve(settings: list[tuple[str, float]], weights: tuple[float, float, float],
              similarity: float, importances: list[float], max_age: float) -> pd.DataFrame:
    ages = np.linspace(0.0, max_age, 181)
    rows = []
    for fn, rate in settings:
        rec = np.asarray(compute_recency(ages, fn, rate))
        for imp in importances:
            final = combine(similarity, imp, rec, weights)
            rows.append(pd.DataFrame({"decay": fn, "rate": rate, "importance": imp, "age_days": ages,
                                      "recency": rec, "final": final}))
    return pd.concat(rows, ignore_index=True)


# The decay functions and rates are the swept axis (params.functions).
@experiment("sweep_decay", honours=(*DATA, *(k for k in BATCH if k != "decay"), "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    name = str(cfg["embedder"]["name"])
    ec = common.batch_engine(cfg)
    weights = ec.weights
    settings = decay_settings(p.get("functions") or {"exponential": [0.01], "linear": [0.005],
                                                      "step": [0.0], "none": [0.0]})
    curve = age_curve(settings, weights, float(p.get("curve_similarity", 0.5)),
                      [float(x) for x in p.get("importances", [1, 3, 5, 8, 10])],
                      float(p.get("max_age_days", 365)))
    emb = common.load_embedder_for(ctx, name)
    th = common.thresholds_in_force(ec, emb)
    prep = common.prepare(ctx, emb, ec=ec)
    questions = ctx.timelines().questions
    # Age of the best-placed gold memory does not depend on the setting: use the youngest gold.
    gold_age = np.where(prep.gold, prep.age, np.inf).min(axis=1)
    bucket = pd.cut(gold_age, AGE_EDGES, labels=list(AGE_LABELS), right=False).astype(str)
    rows: list[dict[str, Any]] = []
    surv: list[dict[str, Any]] = []
    n_boot = int(p.get("n_boot", 200))
    for fn, rate in ctx.bar(settings, "sweep_decay"):
        with ctx.timer("score"):
            scored = batch.score(prep, weights, fn, rate, th, two_pass=ec.two_pass_boost)
        pq = common.per_query_frame(prep, scored, questions, name, age_bucket=bucket)
        pq = pq[(pq["kind"] == "answerable") & pq["gold_stored"]]
        setting = f"{fn}@{rate:g}"
        for b in AGE_LABELS:
            part = pq[pq["age_bucket"] == b]
            if part.empty:
                continue
            with ctx.timer("metrics"):
                r = common.metric_rows(part, embedder=name, setting=setting, n_boot=n_boot,
                                       seed=ctx.seed, splits=("all",),
                                       band_metrics=("recall_moderate_plus",), score_metrics=(),
                                       rank_metrics=("hit@1", "hit@5", "mrr"),
                                       decay=fn, rate=rate, age_bucket=b)
            rows += r
            surv.append({"decay": fn, "rate": rate, "age_bucket": b, "n": len(part),
                         **{m["metric"]: m["value"] for m in r}})
    return ExperimentResult(metrics=rows, tables={"age_curve": curve, "survival": pd.DataFrame(surv)})
