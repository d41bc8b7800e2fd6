"""`make bench`: run the default experiments on the default embedder set, write reports/.

    python -m widemem_bench.bench [--embedders a,b] [--only x,y] [--skip z] [--jobs 2]

Each experiment is one Hydra multirun (`python -m widemem_bench.run -m ...`) into its
deterministic sweep folder `outputs/<experiment>/multiruns/`, so a second bench skips
every run whose record is complete (same config, same code) and only rewrites the
report. The data set and the embedding cache are built on first use. Experiments added
by other modules (contradiction, ymyl_decay, frustration, locomo) run when their config
file exists. Exit code 1 when any experiment failed (the report is still written).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

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

__all__ = ["CORE", "DEFAULT_EMBEDDERS", "OPTIONAL", "command", "main", "plan", "render_report", "sources_for"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m widemem_bench.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedders", default=",".join(DEFAULT_EMBEDDERS))
    ap.add_argument("--only", default=None, help="comma-separated experiments to run")
    ap.add_argument("--skip", default="", help="comma-separated experiments to leave out")
    ap.add_argument("--jobs", type=int, default=2, help="parallel Hydra jobs (joblib)")
    ap.add_argument("--output-dir", type=Path, default=REPO_ROOT / "outputs")
    ap.add_argument("--reports-dir", type=Path, default=REPO_ROOT / "reports")
    ap.add_argument("--force", action="store_true", help="recompute runs that have a record")
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args(argv)

    embedders = [e for e in args.embedders.split(",") if e]
    only = {x for x in args.only.split(",") if x} if args.only else None
    steps = plan(embedders, only, {x for x in args.skip.split(",") if x})
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
        extra = [f"hydra.launcher.n_jobs={args.jobs}", "progress=true",
                 f"paths.output_dir={args.output_dir}"] + (["force=true"] if args.force else [])
        t = time.perf_counter()
        tqdm.write(f"$ {commands[name]}", file=sys.stderr)
        rc = subprocess.run([sys.executable, *cmd[1:], *extra], cwd=REPO_ROOT, env=env).returncode
        tqdm.write(f"  {name}: exit {rc} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        if rc != 0:
            failed.append(name)
    wall = time.perf_counter() - t0
    if not args.no_report:
        path = render_report(args.output_dir, args.reports_dir, embedders, steps, wall_seconds=wall)
        print(f"report: {path} ({wall / 60:.1f} min)")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
