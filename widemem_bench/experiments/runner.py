"""Run one experiment from a resolved config dict: validate, resume check, run, record.

No Hydra here: `run.py` hands over the plain config and Hydra's output folder.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from widemem_bench import feedback, sealed
from widemem_bench.experiments.context import RunContext
from widemem_bench.experiments.records import read_record, write_run
from widemem_bench.experiments.registry import check_config, get_experiment
from widemem_bench.experiments.resume import should_skip
from widemem_bench.harness.keys import name_bad_value
from widemem_bench.harness.validate import validate_config


def fail(msg: str) -> None:
    """One line on stderr and exit code 2: no traceback wall for a bad config."""
    print(f"error: {msg}", file=sys.stderr, flush=True)
    raise SystemExit(2)


# What Hydra writes into a run's folder before the run starts.
HYDRA_FILES = (".hydra", "run.log")


def discard_refused(output_dir: Path, cfg: dict[str, Any]) -> None:
    """A refused run writes nothing: remove what Hydra put in its folder, then the folder
    and its parents up to the output root while they are empty. A folder that already
    held a run (anything beside Hydra's files) is left untouched."""
    if not output_dir.is_dir() or any(p.name not in HYDRA_FILES for p in output_dir.iterdir()):
        return
    for name in HYDRA_FILES:
        p = output_dir / name
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()
    root = Path(str((cfg.get("paths") or {}).get("output_dir") or output_dir)).resolve()
    folder = output_dir.resolve()
    while folder != root.parent and folder.is_relative_to(root):
        try:
            folder.rmdir()  # only an empty folder goes: a sibling run's is kept
        except OSError:
            break
        folder = folder.parent


def execute(cfg: dict[str, Any], output_dir: Path) -> dict[str, Any] | None:
    """Run `cfg["task_name"]` into `output_dir`; returns the record (None when skipped)."""
    output_dir = Path(output_dir)
    try:
        validate_config(cfg)
        fn = get_experiment(str(cfg["task_name"]))
        check_config(str(cfg["task_name"]), cfg)  # the experiment's own checks, before any model loads
    except ValueError as exc:  # a ConfigError, an unknown experiment, a param the experiment refuses
        discard_refused(output_dir, cfg)
        fail(str(exc))
        return None
    if should_skip(output_dir, cfg):
        print(f"skip: {output_dir} already holds a complete record of this config", flush=True)
        return None
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    ctx = RunContext(output_dir=output_dir, seed=int(cfg["seed"]), cfg=cfg,
                     progress=feedback.progress_enabled(cfg.get("progress")))
    try:
        # the seal ledger's lines of the run wait for its end: a refused run writes none
        with ctx.timer("total"), sealed.held_reads():
            result = fn(cfg, ctx)
    except ValueError as exc:
        # Bad input found by the experiment itself (a key it cannot honour, a missing
        # calibration file): one line, like a config error, and the run's folder is left
        # as it was found. WIDEMEM_BENCH_DEBUG=1 re-raises.
        if os.environ.get("WIDEMEM_BENCH_DEBUG"):
            raise
        discard_refused(output_dir, cfg)
        named = name_bad_value(exc, cfg)
        fail(named or f"{exc} (WIDEMEM_BENCH_DEBUG=1 shows the traceback)")
        return None
    path = write_run(result, ctx, cfg, experiment=str(cfg["task_name"]), started_at=started)
    print(f"record: {path}", flush=True)
    record = read_record(path.parent)
    if record is not None:
        feedback.report_headline(record)
    return record
