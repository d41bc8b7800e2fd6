"""`smoke`: a model-free experiment that exercises the machinery (records, sweeps, resume).

It draws a few numbers from the run's seed, optionally sleeps (so a test can kill a sweep
mid-way) and appends one line per executed run to `params.counter_file` (so a test can
count which runs were recomputed).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment


def check(cfg: dict[str, Any]) -> int:
    """params.n, the number of draws; checked before a run (and before a sweep launches)."""
    n = int((cfg.get("params") or {}).get("n", 8))
    if n < 1:  # numpy's own words ("negative dimensions are not allowed") name no key
        raise ValueError(f"params.n: must be >= 1, got {n}")
    return n


@experiment("smoke", honours=("embedder.name", "params"), check=check)
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    n = check(cfg)
    if p.get("counter_file"):
        with open(Path(p["counter_file"]), "a") as f:
            f.write(f"{ctx.output_dir.name}\n")
    time.sleep(float(p.get("sleep", 0.0)))
    x = ctx.rng.random(n)
    per_query = pd.DataFrame({"i": range(len(x)), "x": x})
    emb = (cfg.get("embedder") or {}).get("name")
    metrics = [
        metric_row("mean_x", float(x.mean()), embedder=emb),
        metric_row("max_x", float(x.max()), embedder=emb),
    ]
    return ExperimentResult(metrics=metrics, per_query=per_query)
