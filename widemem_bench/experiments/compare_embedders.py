"""`compare_embedders`: one embedder per run (the embedder list is a Hydra multirun).

    widemem-bench -m compare_embedders \\
        embedder=minilm-l6,minilm-l6-int8,minilm-l3,bge-small,tfidf

For the configured embedder, scores every timeline question once under the configured
engine settings (batched scorer) and reports, per split: band shares per question kind,
recall at MODERATE or above, false confidence per negative kind, band precision, AUROC /
AURC of the top-1 cosine, hit@k and MRR of the gold memory, all with cluster-bootstrap
95% intervals. Tables: `per_query` (one row per question), `score_hist` (top-1 cosine
histogram per kind, for plots).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.experiments import common
from widemem_bench.experiments.context import ExperimentResult, RunContext
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.keys import BATCH, DATA


def score_histogram(pq: pd.DataFrame, bins: int = 40) -> pd.DataFrame:
    """Counts of top-1 cosine per question kind in `bins` equal bins over [-0.2, 1]."""
    edges = np.linspace(-0.2, 1.0, bins + 1)
    rows = []
    for kind, part in pq.groupby("kind"):
        counts, _ = np.histogram(part["top1_sim"].dropna().clip(-0.2, 1.0), bins=edges)
        rows += [{"kind": kind, "lo": edges[i], "hi": edges[i + 1], "count": int(c)}
                 for i, c in enumerate(counts)]
    return pd.DataFrame(rows)


@experiment("compare_embedders", honours=(*DATA, *BATCH, "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    name = str(cfg["embedder"]["name"])
    emb = common.load_embedder_for(ctx, name)
    ec = common.batch_engine(cfg)
    prep = common.prepare(ctx, emb, ec=ec)
    th = common.thresholds_in_force(ec, emb)
    with ctx.timer("score"):
        scored = common.score(prep, ec, th)
    pq = common.per_query_frame(prep, scored, ctx.timelines().questions, name)
    with ctx.timer("metrics"):
        rows = common.metric_rows(pq, embedder=name, n_boot=int(p.get("n_boot", 1000)),
                                  n_boot_slow=int(p.get("n_boot_slow", 200)), seed=ctx.seed)
    ctx.info["thresholds"] = list(th)
    ctx.info["model_id"] = emb.model_id
    ctx.info["fingerprint"] = getattr(emb, "fingerprint", None)
    return ExperimentResult(metrics=rows, per_query=pq, tables={"score_hist": score_histogram(pq)})
