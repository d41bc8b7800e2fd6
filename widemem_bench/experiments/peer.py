"""The `peer` experiment: other memory layers through the same timelines as this engine.

    widemem-bench peer                  # everything below
    widemem-bench peer adapter=mem0     # one adapter only

Three parts (each can be switched off in `params`):

1. `agreement`: this engine with widemem's options (`age_from=insert`) against widemem
   2.0.2 as it ships (its own MiniLM provider, wall-clock ages), answer by answer
   (`peers.compare`);
2. `agreement_grid`: the same on the timeline clock over every setting of
   `peers.agreement.SETTINGS` (four decays, YMYL on, fast / deep, pin, topic weights),
   both sides on the run's embedder;
3. `adapters`: each adapter (`configs/adapter/`) driven through the timelines
   (`peers.evaluate`): recall per band, false confidence per kind, a threshold ladder
   certified on its own scores (`calibration.certify_ladder`, users as the unit; a band it
   cannot reach is recorded, not raised), hit@k, speed, contradiction survival. mem0 runs once per model in
   `mem0_models` (the sentence-transformers folders its huggingface embedder can load).

With `adapter=<name>`, only part 3 runs, for that adapter. The report section is
`reports/sections/peer.py`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.peers.compare import (  # re-exported: the comparison's public names
    band_confusion,
    compare,
    explain,
    run_comparison,
    summary_metrics,
)
from widemem_bench.peers.replay import replay_steps, select_users

__all__ = ["band_confusion", "compare", "explain", "resolve_params", "run", "run_comparison",
           "run_peer", "summary_metrics"]

DEFAULTS: dict[str, Any] = {
    "n_users": 20,  # part 1: timeline users replayed through both (widemem's own encoder, ~40 ops/s)
    "seed": 0,
    "mode": "balanced",
    "top_k": None,  # None: the mode's top_k (25 for balanced)
    "tie_eps": 1e-6,
    "float_eps": 1e-4,
    "engine": {"age_from": "insert"},  # part 1's EngineConfig overrides: widemem's options
    "agreement": True,
    "agreement_grid": True,
    "grid_users": 100,  # part 2
    "grid_settings": None,  # None: every setting of peers.agreement.SETTINGS
    "adapters": ["engine", "widemem", "mem0"],  # part 3 (when no `adapter` is chosen)
    "adapter_users": 100,
    "adapter_top_k": 10,
    "mem0_models": ["minilm-l6", "mpnet-base"],
    "adapter_options": {},  # per adapter name: options (configs/adapter/<name>.yaml)
}
MEM0_DEFAULT = {"mem0_default": (0.1, 0.1, 0.1)}  # mem0's threshold: anything returned counts


def resolve_params(params: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(DEFAULTS)
    for key, value in (params or {}).items():
        if key not in DEFAULTS:
            raise ValueError(f"params.{key}: unknown peer parameter (known: {', '.join(DEFAULTS)})")
        out[key] = value
    for key in ("n_users", "grid_users", "adapter_users", "adapter_top_k"):
        if int(out[key]) < 1:
            raise ValueError(f"params.{key}: must be >= 1, got {out[key]}")
    for key in ("tie_eps", "float_eps"):
        if not float(out[key]) >= 0:
            raise ValueError(f"params.{key}: must be >= 0, got {out[key]}")
    return out


def _steps(ctx: RunContext, n_users: int, seed: int) -> list[Any]:
    tl = ctx.timelines()
    return replay_steps(tl.events, tl.questions, select_users(tl.events, n_users, seed))


def part_agreement(ctx: RunContext, p: dict[str, Any], embedder: Any) -> ExperimentResult:
    """Part 1: widemem as it ships (its own provider on the packaged MiniLM)."""
    peer_embedder = None if embedder.name == "minilm-l6" else embedder
    with ctx.timer("agreement"):
        return run_comparison(_steps(ctx, int(p["n_users"]), int(p["seed"])), embedder, p=p,
                              peer_embedder=peer_embedder)


def part_grid(ctx: RunContext, p: dict[str, Any], embedder: Any) -> tuple[list[dict[str, Any]], dict]:
    from widemem_bench.peers.agreement import run_agreement

    steps = _steps(ctx, int(p["grid_users"]), int(p["seed"]))
    with ctx.timer("agreement_grid"):
        table, per_query = run_agreement(steps, embedder, p["grid_settings"], peer_embedder=embedder)
    metrics = [metric_row(m, float(r[m]), embedder=embedder.name, setting=str(r["setting"]))
               for _, r in table.iterrows() for m in ("band_agreement", "top1_agreement", "topk_order_agreement")]
    disagreeing = per_query[(per_query["cause"] != "") | (per_query["order_cause"] != "")]
    return metrics, {"agreement_grid": table, "grid_disagreements": disagreeing.reset_index(drop=True)}


def _runs(p: dict[str, Any], chosen: dict[str, Any] | None, embedder: Any) -> list[tuple[str, str, dict]]:
    """(adapter, model, options) for every adapter evaluation of this run."""
    if chosen:
        name = str(chosen.get("name") or str(chosen.get("factory", "")).rpartition(":")[2] or "adapter")
        names, opts = [name], {name: dict(chosen.get("options") or {})}
    else:
        names, opts = list(p["adapters"]), dict(p["adapter_options"] or {})
    runs = []
    for name in names:
        options = dict(opts.get(name) or {})
        models = [str(options.pop("model"))] if name == "mem0" and "model" in options else (
            list(p["mem0_models"]) if name == "mem0" else [embedder.name])
        runs += [(name, model, {**options, "model": model} if name == "mem0" else options) for model in models]
    return runs


def part_adapters(ctx: RunContext, p: dict[str, Any], embedder: Any,
                  chosen: dict[str, Any] | None) -> tuple[list[dict[str, Any]], pd.DataFrame, list[str]]:
    from widemem_bench.peers.adapters import build_adapter
    from widemem_bench.peers.evaluate import adapter_metrics, drive, score_answers

    tl = ctx.timelines()
    steps = _steps(ctx, int(p["adapter_users"]), int(p["seed"]))
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    factory = (chosen or {}).get("factory")
    for name, model, options in _runs(p, chosen, embedder):
        try:
            adapter = build_adapter(name, embedder, options, work_dir=ctx.output_dir, factory=factory)
        except (ImportError, ValueError) as exc:
            if chosen:
                raise
            skipped.append(f"{name} ({model}): {exc}".splitlines()[0])
            continue
        with ctx.timer(f"adapter_{name}_{model}"), contextlib.closing(adapter):
            answers, add_s = drive(adapter, steps, top_k=int(p["adapter_top_k"]))
        scored = score_answers(answers, tl.events, tl.questions)
        metrics, _ = adapter_metrics(scored, add_s, fixed=MEM0_DEFAULT if name == "mem0" else None)
        rows += [{**m, "adapter": name, "model": model} for m in metrics]
        if chosen:  # one adapter asked for by name: its table on the console
            from widemem_bench.peers.evaluate import console_lines

            print(f"{name} ({model}), validation users:", flush=True)
            for line in console_lines(metrics):
                print(f"  {line}", flush=True)
    return rows, pd.DataFrame(rows), skipped


# Not the top-level `mode`: parts 1 and 2 take params.mode (always composed), adapters their options.mode.
@experiment("peer", honours=("embedder", "dataset", "adapter", "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = resolve_params(dict(cfg.get("params") or {}))
    chosen = cfg.get("adapter") or None
    from widemem_bench.peers import widemem_available

    needs_widemem = not chosen and (p["agreement"] or p["agreement_grid"])
    if needs_widemem and not widemem_available():
        # `make bench` on a plain venv: say so in the record and the report, do not fail.
        ctx.info["skipped"] = "widemem-ai 2.0.2 not installed (make venv-peers)"
        return ExperimentResult(metrics=[metric_row("skipped", 1.0, kind="widemem_missing")])
    embedder = ctx.embedder()
    result = ExperimentResult()
    if not chosen and p["agreement"]:
        result = part_agreement(ctx, p, embedder)
    if not chosen and p["agreement_grid"]:
        metrics, tables = part_grid(ctx, p, embedder)
        result.metrics += metrics
        result.tables.update(tables)
    rows, table, skipped = part_adapters(ctx, p, embedder, chosen)
    result.metrics += [metric_row(r["metric"], r["value"], embedder=r["model"], kind=r["kind"],
                                  setting=f"{r['adapter']}:{r.get('thresholds', 'all')}") for r in rows]
    result.tables["adapters"] = table
    ctx.info["peer"] = {"widemem": "2.0.2", "params": {k: p[k] for k in ("n_users", "grid_users", "adapter_users")},
                        "adapters_skipped": skipped, "adapter": chosen}
    return result


def run_peer(cfg: dict[str, Any], out_dir: str | Path) -> ExperimentResult:
    """Plain entry (no Hydra): `cfg` as the resolved config dict, outputs under `out_dir`."""
    ctx = RunContext(output_dir=Path(out_dir), seed=int(cfg.get("seed", 0)), cfg=cfg)
    return run(cfg, ctx)
