"""Gather the run records under a folder into one long-format table.

    widemem-bench aggregate root=outputs/compare_embedders/multiruns

writes `<DIR>/results.parquet`: one row per run x metric row, with the metric columns
(metric, value, ci_lo, ci_hi, embedder, split, kind, setting, ...), run-level columns
(experiment, seed, run_dir, git_sha, dataset_version, overrides) and the swept config
choices (cfg_embedder, cfg_decay, cfg_weights, ...). Incomplete runs are skipped.
The Hydra `on_multirun_end` callback calls the same `aggregate`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from widemem_bench.experiments.records import find_run_dirs, is_complete, metrics_frame, read_record

RESULTS_NAME = "results.parquet"


def _overrides(run_dir: Path) -> str:
    try:
        ov = yaml.safe_load((run_dir / ".hydra" / "overrides.yaml").read_text()) or []
    except (OSError, yaml.YAMLError):
        return ""
    return ",".join(str(o) for o in ov)


def _config_columns(cfg: dict) -> dict[str, Any]:
    def g(*keys: str) -> Any:
        node: Any = cfg
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        return node

    w = g("weights") or {}
    return {
        "cfg_embedder": g("embedder", "name"),
        "cfg_dataset": g("dataset", "name"),
        "cfg_decay": g("decay", "function"),
        "cfg_decay_rate": g("decay", "rate"),
        "cfg_weights": "/".join(f"{w.get(k)}" for k in ("similarity", "importance", "recency"))
        if isinstance(w, dict) and w else None,
        "cfg_thresholds": g("thresholds", "source"),
        "cfg_resolver": g("resolver", "name"),
        "cfg_mode": g("mode"),
    }


def collect(root: Path) -> pd.DataFrame:
    """Long-format metric rows of every complete run under `root` (empty frame when none)."""
    frames = []
    for run_dir in find_run_dirs(root):
        if not is_complete(run_dir):
            continue
        rec = read_record(run_dir)
        assert rec is not None
        df = metrics_frame(rec, run_dir)
        df["overrides"] = _overrides(run_dir)
        for k, v in _config_columns(rec.get("config") or {}).items():
            df[k] = v
        frames.append(df)
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    # Mixed-type object columns (None next to str) trip parquet; store them as strings.
    for c in out.columns:
        if out[c].dtype == object and c not in ("value", "ci_lo", "ci_hi"):
            out[c] = out[c].map(lambda v: None if v is None or v != v else str(v))
    return out


def aggregate(root: Path, out: Path | None = None) -> Path:
    """Write `collect(root)` to `out` (default `<root>/results.parquet`) atomically."""
    root = Path(root)
    out = Path(out) if out is not None else root / RESULTS_NAME
    df = collect(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, out)
    return out


def tool(cfg: dict[str, Any]) -> int:
    """Write ROOT/results.parquet (or `out`) from the complete run records under `root`."""
    root = Path(str(cfg["root"]))
    if not root.is_dir():
        raise ValueError(f"root: no such folder {root}")
    path = aggregate(root, Path(str(cfg["out"])) if cfg.get("out") else None)
    df = pd.read_parquet(path)
    n_runs = df["run_dir"].nunique() if len(df) else 0
    print(f"{n_runs} runs, {len(df)} metric rows -> {path}")
    return 0
