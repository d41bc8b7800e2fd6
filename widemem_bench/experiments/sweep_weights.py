"""`sweep_weights`: a grid over the simplex of (similarity, importance, recency) weights.

All points run inside one process over one batch preparation (step 0.05 gives 231
points, each scored in milliseconds). Grid points get point estimates (the same
registered metrics, no resampling); widemem's default mix and the best point per
adaptation setting get bootstrap CIs in extra rows with `split` "all" and `setting`
"widemem" / "best_hit@1", and the same rows on the holdout alone (`split` "holdout").
The best point is picked by hit@1 on train + validation users only (`PICK`, a column of
the grid table): the holdout is measured, never chosen on. With widemem's per-query
adaptation on, factual and temporal questions use fixed mixes, so the grid is run with adaptation on (widemem)
and off (the configured weights apply to every question); `params.adapt` lists which.

Metric rows: one per grid point x metric (split "all"), with `w_sim`, `w_imp`, `w_rec`,
`adapt` columns. Table `grid`: the same in wide form, for the ternary plots.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import batch
from widemem_bench.engine.config import WIDEMEM_WEIGHTS
from widemem_bench.experiments import common
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.keys import DATA
from widemem_bench.metrics import compute

SWEEP_BAND = ("recall_moderate_plus", "false_confidence_hard_negative", "precision_moderate_plus")
SWEEP_RANK = ("hit@1", "mrr")
# The criterion the best mix is picked by: hit@1 over train + validation users only.
FIT_SPLITS = ("train", "validation")
PICK = "hit@1_train_validation"


def simplex_grid(step: float) -> np.ndarray:
    """Every (s, i, r) on the simplex with spacing `step` (1/step must be an integer)."""
    if not (math.isfinite(step) and 0.0 < step <= 1.0):  # 1/0 would be a ZeroDivisionError's traceback
        raise ValueError(f"params.step: must be in (0, 1], got {step:g}")
    n = round(1.0 / step)
    if abs(n * step - 1.0) > 1e-9:
        raise ValueError(f"params.step: 1/{step} is not an integer")
    pts = [(a / n, b / n, (n - a - b) / n) for a in range(n + 1) for b in range(n + 1 - a)]
    return np.round(np.asarray(pts, dtype=np.float64), 10)


def setting_name(w: tuple[float, float, float]) -> str:
    return f"s{w[0]:.2f}_i{w[1]:.2f}_r{w[2]:.2f}"


def point_metrics(pq: pd.DataFrame) -> dict[str, float]:
    """Point estimates of the sweep metrics through the metric registry (no resampling)."""
    conf = pq[pq["kind"].isin(common.CONFIDENCE_KINDS)]
    gold = pq[(pq["kind"] == "answerable") & pq["gold_stored"]]
    bands, kinds = conf["band"].to_numpy(), conf["kind"].to_numpy()
    out = {m: compute(m, bands, kinds) for m in SWEEP_BAND}
    out.update({m: compute(m, gold["gold_rank"].to_numpy()) for m in SWEEP_RANK})
    return out


def check(cfg: dict[str, Any]) -> np.ndarray:
    """The weight grid of params.step; refuses a bad step before any model loads (or sweep job launches)."""
    return simplex_grid(float((cfg.get("params") or {}).get("step", 0.05)))


# The weights and widemem's adaptation (params.adapt) are the swept axes.
@experiment("sweep_weights", honours=(*DATA, "decay", "thresholds", "mode", "age_from",
                                     "engine.two_pass_boost", "params"), check=check)
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    grid = check(cfg)
    name = str(cfg["embedder"]["name"])
    emb = common.load_embedder_for(ctx, name)
    ec = common.batch_engine(cfg)
    th = common.thresholds_in_force(ec, emb)
    decay, rate = ec.decay_function, ec.decay_rate
    n_boot = int(p.get("n_boot", 200))
    questions = ctx.timelines().questions
    rows: list[dict[str, Any]] = []
    wide: list[dict[str, Any]] = []
    for adapt in p.get("adapt", [True, False]):
        tl = ctx.timelines()
        with ctx.timer("prepare"):
            prep = batch.prepare(tl.events, questions, emb, mode=ec.default_mode,
                                 text_col=common.text_col(cfg), adapt=bool(adapt),
                                 age_from=ec.age_from)
        rec = batch.recency_matrix(prep, decay, rate)
        pq: pd.DataFrame | None = None
        for w in ctx.bar(grid, f"sweep_weights adapt={adapt}"):
            wt = (float(w[0]), float(w[1]), float(w[2]))
            with ctx.timer("score"):
                scored = batch.score(prep, wt, decay, rate, th, recency=rec,
                                     two_pass=ec.two_pass_boost)
            if pq is None:
                pq = common.per_query_frame(prep, scored, questions, name)
                fit_gold = (pq["split"].isin(FIT_SPLITS) & (pq["kind"] == "answerable")
                            & pq["gold_stored"]).to_numpy()
            else:
                common.update_frame(pq, prep, scored)
            extra: dict[str, Any] = {"w_sim": wt[0], "w_imp": wt[1], "w_rec": wt[2], "adapt": bool(adapt)}
            with ctx.timer("metrics"):
                vals = point_metrics(pq)
                pick = compute("hit@1", pq["gold_rank"].to_numpy()[fit_gold])
            rows += [metric_row(m, v, embedder=name, setting=setting_name(wt), split="all",
                                kind=common.kind_of(m), **extra) for m, v in vals.items()]
            wide.append({**extra, **vals, PICK: pick})
        assert pq is not None
        # CIs for widemem's default mix and the best grid point (by hit@1 on train +
        # validation: picking on "all" would choose on the holdout it then reports).
        here = pd.DataFrame([x for x in wide if x["adapt"] == bool(adapt)])
        best = here.iloc[int(np.argmax(here[PICK].to_numpy()))]
        for label, wt in (("widemem", WIDEMEM_WEIGHTS),
                          ("best_hit@1", (best["w_sim"], best["w_imp"], best["w_rec"]))):
            common.update_frame(pq, prep, batch.score(prep, wt, decay, rate, th, recency=rec,
                                                      two_pass=ec.two_pass_boost))
            rows += common.metric_rows(
                pq, embedder=name, setting=label, n_boot=n_boot, seed=ctx.seed, splits=("all", "holdout"),
                band_metrics=SWEEP_BAND, score_metrics=(), rank_metrics=SWEEP_RANK,
                w_sim=float(wt[0]), w_imp=float(wt[1]), w_rec=float(wt[2]), adapt=bool(adapt))
    ctx.info["thresholds"] = list(th)
    ctx.info["best_picked_by"] = f"{PICK} (splits {', '.join(FIT_SPLITS)})"
    return ExperimentResult(metrics=rows, tables={"grid": pd.DataFrame(wide)})
