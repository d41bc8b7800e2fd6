"""The `perf` benchmark: this engine against the batched-encode limit and against widemem.

In one run, on the same timeline texts, each stage in its own subprocess with one
thread (OMP_NUM_THREADS=1, torch.set_num_threads(1)) so that its peak RSS is its own:

1. `limit_engine` (offline replay, `perf.throughput`): batched encode alone of every
   fact and question text (the limit), interleaved with the engine's ingest + search
   fed by the bulk loader's lookahead batching;
2. `widemem` (online, `perf.throughput`): widemem 2.0.2 as it ships, the engine online
   (each add and search encodes only its own text), widemem given the engine's encoder,
   and the offline engine, back to back on the same steps;
3. `sweep`, `scaling`, `joblib` (`perf.scale`): warm-cache scoring sweep, time against
   memories per user and users, 1 vs 2 joblib workers.

Medians of `repeats` rounds. `widemem-bench perf out=reports/perf.md`
(`make perf`) writes the report (`reports/perf_tools.py`, `reports/sections/perf.py`); `run_perf(cfg, out_dir)` is the
pure entry.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench import provenance
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.perf.common import ONE_THREAD_ENV, _data_paths, median, prepare_data, step_texts
from widemem_bench.perf.scale import (
    _scaling_point,
    stage_joblib,
    stage_scaling,
    stage_sweep,
    sweep_job,
)
from widemem_bench.perf.throughput import stage_limit_engine, stage_widemem

# Re-exported for callers of the old single module (tests, scripts).
__all__ = ["STAGES", "_scaling_point", "resolve_params", "run", "run_perf",
           "stage_joblib", "stage_limit_engine", "stage_scaling", "stage_sweep", "stage_widemem",
           "step_texts", "summarise", "sweep_job"]

DEFAULTS: dict[str, Any] = {
    "embedder": "minilm-l6",  # widemem's model as widemem runs it (torch): the peer's encoder
    # What this engine encodes with: the same weights run by onnxruntime (exported once,
    # checked against torch to 1e-5). None = `embedder`.
    "engine_embedder": "minilm-l6-onnx",
    "n_users": 40,  # timeline users for stages 1-2
    # The first of those users for stage 3 (widemem runs ~40-100 calls/s). Enough of them that
    # batches are realistic and machine-load noise averages out over each run.
    "widemem_users": 20,
    "sweep_users": 300,  # users of the scoring sweep (stage 4, 6): the default data set size
    "seed": 0,
    "repeats": 5,
    "mode": "balanced",
    "memories_per_user": [100, 1000, 10000],
    "users": [10, 100, 1000, 10000],
    "scaling_queries": 50,  # questions per point of the memories-per-user curve
    "scaling_facts_per_user": 20,  # memories per user on the users curve
    "sweep_settings": 200,
    "sweep_embedders": ["minilm-l6", "minilm-l3"],
    "engine_sqlite": True,
    # (2r) also replay with these resolvers, back to back with (2) (issue 26: structure keeps >= half)
    "engine_resolvers": ["structure"],  # also time the engine on its SQLite store (durable, like widemem's history)
    "cache_dir": None,  # warm embedding cache of stages 4 and 6 (None: the project's default)
    "stages": ["limit_engine", "widemem", "sweep", "scaling", "joblib"],
    "in_process": False,  # tests: run stages in this process (no peak-RSS isolation)
    "stage_timeout_s": 1800,
}
STAGES = ("limit_engine", "widemem", "sweep", "scaling", "joblib")


def resolve_params(params: dict[str, Any] | None) -> dict[str, Any]:
    """DEFAULTS overridden by `params`; unknown keys and bad values are one-line errors."""
    out = dict(DEFAULTS)
    for key, value in (params or {}).items():
        if key not in DEFAULTS:
            raise ValueError(f"params.{key}: unknown perf parameter (known: {', '.join(DEFAULTS)})")
        out[key] = value
    for key in ("n_users", "widemem_users", "sweep_users", "repeats", "scaling_queries",
                "scaling_facts_per_user", "sweep_settings"):
        if int(out[key]) < 1:
            raise ValueError(f"params.{key}: must be >= 1, got {out[key]}")
    from widemem_bench.engine.config import RESOLVERS

    wrong = [r for r in out["engine_resolvers"] or () if r not in RESOLVERS or r == "llm"]
    if wrong:
        raise ValueError(f"params.engine_resolvers: unknown or networked resolver(s) {wrong}")
    bad = [s for s in out["stages"] if s not in STAGES]
    if bad:
        raise ValueError(f"params.stages: unknown stage(s) {bad} (known: {', '.join(STAGES)})")
    return out


STAGE_FUNCS: dict[str, Callable[[dict[str, Any], Path], dict[str, Any]]] = {
    "limit_engine": stage_limit_engine,
    "widemem": stage_widemem,
    "sweep": stage_sweep,
    "scaling": stage_scaling,
    "joblib": stage_joblib,
}


def run_stage(stage: str, p: dict[str, Any], work: Path) -> dict[str, Any]:
    """Run one stage in a fresh one-thread subprocess (or in-process when `in_process`)."""
    if stage not in STAGE_FUNCS:
        raise ValueError(f"stage: unknown or unavailable stage {stage!r}")
    if p.get("in_process"):
        return STAGE_FUNCS[stage](p, work)
    result_path = work / f"{stage}.json"
    params_path = work / f"{stage}.params.json"
    params_path.write_text(json.dumps(p))
    env = {**os.environ, **ONE_THREAD_ENV}
    call = f"stage_main({stage!r}, {str(params_path)!r}, {str(work)!r}, {str(result_path)!r})"
    cmd = [sys.executable, "-c", f"from widemem_bench.experiments.perf import stage_main; {call}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=float(p["stage_timeout_s"]))
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"perf stage {stage} failed (exit {proc.returncode}):\n{tail}")
    out: dict[str, Any] = json.loads(result_path.read_text())
    out["wall_s"] = time.perf_counter() - t0
    return out


# --------------------------------------------------------------------------- orchestration
def machine_info() -> dict[str, Any]:
    versions = provenance.package_versions(("torch", "sentence-transformers", "numpy", "widemem-ai", "faiss-cpu"))
    return {
        "cpu": provenance.cpu_model() or "",
        "cores": os.cpu_count(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "commit": (provenance.git_info()["sha"] or "")[:7],
        "dirty": provenance.git_info()["dirty"],  # tracked files differ from the commit
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": {k: v or "-" for k, v in versions.items()},
    }


def run_perf(
    cfg: dict[str, Any],
    out_dir: str | Path,
    *,
    data: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """Run every configured stage; returns the results dict (also `perf.json` in out_dir).

    `cfg` is the resolved config dict (perf settings under `params`) or the params
    themselves; `reports.perf_tools.write_perf` turns the dict into reports/perf.md.
    `data` = (events, questions) replaces the generated timelines (tests).
    """
    params = dict(cfg.get("params", cfg)) if isinstance(cfg, dict) else {}
    emb_node = cfg.get("embedder") if isinstance(cfg, dict) else None
    if "embedder" not in params and isinstance(emb_node, dict) and emb_node.get("name"):
        params["embedder"] = emb_node["name"]  # the Hydra `embedder` group
    paths = cfg.get("paths") if isinstance(cfg, dict) else None
    if "cache_dir" not in params and isinstance(paths, dict) and paths.get("cache_dir"):
        params["cache_dir"] = str(paths["cache_dir"])
    p = resolve_params(params)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"params": p, "machine": machine_info()}
    with tempfile.TemporaryDirectory(prefix="perf-", dir=out) as tmp:
        work = Path(tmp)
        if data is None:
            results["data"] = prepare_data(p, work)
        else:
            ev_path, q_path = _data_paths(work)
            data[0].to_parquet(ev_path)
            data[1].to_parquet(q_path)
            results["data"] = {"n_events": len(data[0]), "n_questions": len(data[1])}
        for stage in p["stages"]:
            if stage not in STAGE_FUNCS:
                results[stage] = {"skipped": f"stage {stage} is not available in this build"}
                continue
            results[stage] = run_stage(stage, p, work)
    results["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    results["summary"] = summarise(results)
    (out / "perf.json").write_text(json.dumps(results, indent=2, default=str))
    return results


def summarise(results: dict[str, Any]) -> dict[str, Any]:
    """The headline ratios (each a median of back-to-back per-round ratios) and their targets."""
    s: dict[str, Any] = {}
    le = results.get("limit_engine") or {}
    wm = results.get("widemem") or {}
    if "limit_texts_per_s" in le:
        s["limit_texts_per_s"] = le["limit_texts_per_s"]
        s["engine_texts_per_s"] = le["engine_texts_per_s"]
        s["engine_over_limit"] = median(le["pair_ratios"])  # offline replay / batched-encode limit
        s["engine_over_limit_of_medians"] = le["engine_texts_per_s"] / le["limit_texts_per_s"]
        if le.get("cpu_pair_ratios"):
            s["engine_over_limit_cpu"] = median(le["cpu_pair_ratios"])
        s["target_engine_over_limit"] = 0.8
        s["engine_ops_per_s"] = le["engine_ops_per_s"]
    if "widemem_s" in wm:
        s["widemem_ops_per_s"] = wm["widemem_ops_per_s"]
        s["online_over_widemem"] = median(wm["online_over_widemem"])
        s["target_online_over_widemem"] = 2.0
        s["online_over_widemem_same"] = median(wm["online_over_widemem_same"])
        s["beyond_ratio"] = median(wm["beyond_ratio"])  # engine / widemem time beyond encoding
        s["beyond_cpu_ratio"] = median(wm["beyond_cpu_ratio"])  # the same on CPU time
        s["target_beyond_ratio"] = 0.2
        s["engine_over_widemem"] = median(wm["offline_over_widemem"])  # offline, labelled as such
    sw = results.get("sweep") or {}
    if "settings_per_s" in sw:
        s["sweep_settings_per_s"] = sw["settings_per_s"]
    jb = results.get("joblib") or {}
    if "speedup" in jb:
        s["joblib_speedup_2_workers"] = jb["speedup"]
    return s


@experiment("perf", honours=("embedder.name", "params"), choices={"resolver": "params.engine_resolvers"})
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    """The perf benchmark as a registered experiment (stages in subprocesses as usual)."""
    res = run_perf(cfg, ctx.output_dir)  # perf.json; the section renders from the metrics
    embedder = res["params"]["embedder"]
    metrics = [metric_row(k, float(v), embedder=embedder) for k, v in res["summary"].items()
               if isinstance(v, (int, float))]
    tables = {}
    if (res.get("scaling") or {}).get("rows"):
        tables["scaling"] = pd.DataFrame(res["scaling"]["rows"])
    return ExperimentResult(metrics=metrics, tables=tables, artifacts={"perf_json": ctx.output_dir / "perf.json"})


def stage_main(stage: str, params: str, work: str, result: str) -> None:
    """A stage's subprocess (`run_stage`): read its params JSON, run it, write its result JSON."""
    out = STAGE_FUNCS[stage](json.loads(Path(params).read_text()), Path(work))
    Path(result).write_text(json.dumps(out, default=float))

