"""One versioned record per run (MTEB / lm-evaluation-harness style).

A run folder holds `per_query.parquet`, one `<table>.parquet` per named table, any
artifacts, and `record.json`. record.json is written LAST, through a temp file and
`os.replace`, so a run killed at any point leaves either no record or a complete one;
`is_complete` is what resume trusts. It re-hashes every file the record lists against
the sha256 stored at write time, so a truncated or edited output is recomputed, never
skipped as done (issue 17).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import platform
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench import provenance
from widemem_bench.experiments.context import METRIC_COLUMNS, ExperimentResult, RunContext
from widemem_bench.provenance import file_sha256, git_info

RECORD_NAME = "record.json"
SCHEMA_VERSION = 1

# Config keys that say where or how verbosely to run, not what to compute: they do not
# enter the config hash, so moving the output folder or turning off bars keeps resume valid.
VOLATILE_KEYS = ("paths", "progress", "force", "hydra")

_PACKAGES = (
    "widemem_bench", "numpy", "pandas", "pyarrow", "scipy", "scikit-learn", "torch",
    "sentence-transformers", "onnxruntime", "tokenizers", "hydra-core", "omegaconf",
)


def config_hash(cfg: dict[str, Any]) -> str:
    """sha256 of the config without `VOLATILE_KEYS` (stable key order)."""
    core = {k: v for k, v in cfg.items() if k not in VOLATILE_KEYS}
    blob = json.dumps(core, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


# Code that only reads records (report writer, bench driver, aggregation) cannot change
# what a run computes: editing it must not invalidate finished runs.
_NOT_RESULT_CODE = frozenset({"reports", "bench.py", "aggregate.py"})


@lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the package's .py sources: a record made by other code is not reused.

    Covers uncommitted edits too, which a git sha would miss.
    """
    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parents[1]
    for p in sorted(pkg.rglob("*.py")):
        if p.relative_to(pkg).parts[0] in _NOT_RESULT_CODE:
            continue
        h.update(str(p.relative_to(pkg)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    return provenance.package_versions(_PACKAGES)


def machine_info() -> dict[str, Any]:
    return {"host": platform.node(), "cpu": provenance.cpu_model(), "nproc": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None  # JSON has no NaN; readers turn None back into NaN
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, dt.datetime | dt.date):
        return x.isoformat()
    return x


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same folder + fsync + os.replace (all or nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; records are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_table(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def write_run(
    result: ExperimentResult,
    ctx: RunContext,
    cfg: dict[str, Any],
    *,
    experiment: str,
    started_at: dt.datetime,
) -> Path:
    """Write tables, then record.json (last). Returns the record path."""
    out = ctx.output_dir
    files: dict[str, dict[str, Any]] = {}
    tables = dict(result.tables)
    if result.per_query is not None:
        tables = {"per_query": result.per_query, **tables}
    for name, df in tables.items():
        p = out / f"{name}.parquet"
        _write_table(df, p)
        files[name] = {"path": p.name, "rows": len(df), "sha256": file_sha256(p)}
    for name, p in result.artifacts.items():
        p = Path(p)
        rel = os.path.relpath(p, out) if p.is_absolute() else str(p)
        files[name] = {"path": rel, "sha256": file_sha256(p) if p.exists() else None}
    metrics = [{**{c: None for c in METRIC_COLUMNS}, **m} for m in result.metrics]
    record = {
        "schema_version": SCHEMA_VERSION,
        "status": "complete",
        "experiment": experiment,
        "seed": ctx.seed,
        "config_hash": config_hash(cfg),
        "code_hash": code_hash(),
        "config": cfg,
        "git": git_info(),
        "packages": package_versions(),
        # The exact install: every package's version and file hash (`make lock`).
        "lock": {"file": provenance.LOCK_FILE.name, "sha256": provenance.lock_sha256()},
        "machine": machine_info(),
        "dataset": ctx.info.get("dataset"),
        "extra": {k: v for k, v in ctx.info.items() if k != "dataset"},
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds"),
        "timings": ctx.timings,
        "files": files,
        "metrics": metrics,
    }
    path = out / RECORD_NAME
    atomic_write_text(path, json.dumps(_jsonable(record), indent=1, sort_keys=False))
    return path


def read_record(run_dir: Path) -> dict[str, Any] | None:
    """The record of `run_dir`, or None when absent or unreadable."""
    try:
        rec = json.loads((Path(run_dir) / RECORD_NAME).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def incomplete_reason(run_dir: Path, cfg: dict[str, Any] | None = None) -> str | None:
    """None when `run_dir` holds a complete record whose files all exist and match the
    sha256 it stored (and, with `cfg`, made from this config by this code; see
    `code_hash`); else one line saying what is missing or wrong."""
    rec = read_record(run_dir)
    if rec is None:
        return "no readable record.json"
    if rec.get("status") != "complete":
        return f"record status is {rec.get('status')!r}"
    files = rec.get("files") or {}
    if not isinstance(files, dict):
        return "record lists no files"
    for name, info in files.items():
        if not isinstance(info, dict) or not isinstance(info.get("path"), str):
            return f"record entry {name!r} names no file"
        path = Path(run_dir) / info["path"]
        if not path.is_file():
            return f"{info['path']} is missing"
        want = info.get("sha256")
        if want is None:  # an artifact absent when the run wrote its record
            continue
        if file_sha256(path) != want:
            return f"{info['path']} does not match the sha256 in its record (truncated or edited)"
    if cfg is None:
        return None
    if rec.get("config_hash") != config_hash(cfg):
        return "record was made from another config"
    if rec.get("code_hash") != code_hash():
        return "record was made by other code"
    return None


def is_complete(run_dir: Path, cfg: dict[str, Any] | None = None) -> bool:
    """True when `incomplete_reason` finds nothing wrong."""
    return incomplete_reason(run_dir, cfg) is None


def find_run_dirs(root: Path) -> list[Path]:
    """Every folder under `root` holding a record.json (sorted; skips hidden folders)."""
    root = Path(root)
    return sorted(p.parent for p in root.rglob(RECORD_NAME) if not any(
        part.startswith(".") for part in p.relative_to(root).parts[:-1]))


def metrics_frame(rec: dict[str, Any], run_dir: Path | None = None) -> pd.DataFrame:
    """The record's metric rows as a DataFrame, with run-level columns added."""
    df = pd.DataFrame(rec.get("metrics") or [])
    if df.empty:
        df = pd.DataFrame(columns=list(METRIC_COLUMNS))
    for c in ("value", "ci_lo", "ci_hi"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    df.insert(0, "experiment", rec.get("experiment"))
    df["seed"] = rec.get("seed")
    df["run_dir"] = str(run_dir) if run_dir is not None else None
    df["git_sha"] = (rec.get("git") or {}).get("sha")
    ds = rec.get("dataset") or {}
    df["dataset_version"] = ds.get("version")
    return df
