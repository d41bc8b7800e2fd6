"""Run one experiment from a resolved config dict: validate, resume check, run, record.

No Hydra here: `run.py` hands over the plain config and Hydra's output folder.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

from widemem_bench import feedback
from widemem_bench.experiments.context import RunContext
from widemem_bench.experiments.records import read_record, write_run
from widemem_bench.experiments.registry import get_experiment
from widemem_bench.experiments.resume import should_skip
from widemem_bench.experiments.validate import ConfigError, validate_config


def fail(msg: str) -> None:
    """One line on stderr and exit code 2: no traceback wall for a bad config."""
    print(f"error: {msg}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def execute(cfg: dict[str, Any], output_dir: Path) -> dict[str, Any] | None:
    """Run `cfg["task_name"]` into `output_dir`; returns the record (None when skipped)."""
    try:
        validate_config(cfg)
        fn = get_experiment(str(cfg["task_name"]))
    except ConfigError as exc:
        fail(str(exc))
        return None
    except ValueError as exc:  # unknown experiment, from the registry
        fail(str(exc))
        return None
    output_dir = Path(output_dir)
    if should_skip(output_dir, cfg):
        print(f"skip: {output_dir} already holds a complete record of this config", flush=True)
        return None
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    ctx = RunContext(output_dir=output_dir, seed=int(cfg["seed"]), cfg=cfg,
                     progress=feedback.progress_enabled(cfg.get("progress")))
    try:
        with ctx.timer("total"):
            result = fn(cfg, ctx)
    except ValueError as exc:
        # Bad input found by the experiment itself (a key it cannot honour, a missing
        # calibration file): one line, like a config error. WIDEMEM_BENCH_DEBUG=1 re-raises.
        if os.environ.get("WIDEMEM_BENCH_DEBUG"):
            raise
        fail(f"{exc} (WIDEMEM_BENCH_DEBUG=1 shows the traceback)")
        return None
    path = write_run(result, ctx, cfg, experiment=str(cfg["task_name"]), started_at=started)
    print(f"record: {path}", flush=True)
    record = read_record(path.parent)
    if record is not None:
        feedback.report_headline(record)
    return record
