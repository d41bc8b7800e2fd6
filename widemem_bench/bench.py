"""`make bench`: run the default experiments on the default embedder set, write reports/.

    widemem-bench bench [embedders=[a,b]] [only=[x,y]] [skip=[z]] [jobs=2]

Each experiment is one Hydra multirun (`widemem-bench <experiment> -m ...`) into its
deterministic sweep folder `outputs/<experiment>/multiruns/`, so a second bench skips
every run whose record is complete (same config, same code) and only rewrites the
report. The data set and the embedding cache are built on first use. Experiments added
by other modules (contradiction, ymyl_decay, frustration, locomo) run when their config
file exists. Exit code 1 when any experiment failed (the report is still written).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from typing import Any

from tqdm import tqdm

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.reports.plan import (
    CORE,
    DEFAULT_EMBEDDERS,
    OPTIONAL,
    command,
    plan,
    render_report,
    sources_for,
)
from widemem_bench.sealed import MEASURE, PURPOSE_ENV

__all__ = ["CORE", "DEFAULT_EMBEDDERS", "OPTIONAL", "command", "plan", "render_report", "sources_for", "tool"]

def tool(cfg: dict[str, Any]) -> int:
    """Run the planned experiments (each a Hydra multirun), then render reports/ from their records."""
    embedders = [str(e) for e in cfg["embedders"]]
    only = {str(x) for x in cfg["only"]} or None
    steps = plan(embedders, only, {str(x) for x in cfg.get("skip") or ()})
    output_dir, reports_dir = REPO_ROOT / str(cfg["output_dir"]), REPO_ROOT / str(cfg["reports_dir"])
    # Every read of a measuring split below is a measurement (widemem_bench.sealed): no ledger line.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", PURPOSE_ENV: MEASURE}
    os.environ[PURPOSE_ENV] = MEASURE  # the report rendering in this process reads no split, but say so
    t0 = time.perf_counter()
    failed: list[str] = []
    commands: dict[str, str] = {}
    bar = tqdm(steps, desc="bench", unit="experiment", file=sys.stderr)
    for name, overrides in bar:
        bar.set_postfix_str(name)
        cmd = command(name, overrides)
        commands[name] = shlex.join(cmd)
        extra = [f"hydra.launcher.n_jobs={int(cfg['jobs'])}", "progress=true",
                 f"paths.output_dir={output_dir}"] + (["force=true"] if cfg["force"] else [])
        t = time.perf_counter()
        tqdm.write(f"$ {commands[name]}", file=sys.stderr)
        rc = subprocess.run([sys.executable, "-m", "widemem_bench.cli", *cmd[1:], *extra], cwd=REPO_ROOT,
                            env=env).returncode
        tqdm.write(f"  {name}: exit {rc} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        if rc != 0:
            failed.append(name)
    wall = time.perf_counter() - t0
    if cfg["report"]:
        path = render_report(output_dir, reports_dir, embedders, steps, wall_seconds=wall)
        print(f"report: {path} ({wall / 60:.1f} min)")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0

