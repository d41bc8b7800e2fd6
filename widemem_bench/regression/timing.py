"""Warm wall time of the gate (`make perf`): the "Regression gate, warm" section of reports/perf.md."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.regression.baseline import git_commit
from widemem_bench.regression.gate import RESOLVERS

BENCH_HEADER = "## Regression gate, warm"
BUDGET_S = 60.0


def bench(out: Path, rounds: int = 3) -> str:
    """Time warm gate runs (each its own process, after one warm-up) and write the
    section `BENCH_HEADER` of ``out`` (a benchmark: nothing asserts on it)."""
    import resource

    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "widemem_bench.cli", "regression"]
    walls, cpus, codes = [], [], []
    load0 = os.getloadavg()
    for i in range(rounds + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i == 0:
            continue  # the warm-up fills the embedding cache if it was cold
        walls.append(wall)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        codes.append(r.returncode)
    load1 = os.getloadavg()
    med, cpu = float(np.median(walls)), float(np.median(cpus))
    section = "\n".join([
        BENCH_HEADER, "",
        "`widemem-bench regression` (the gate of `make test`: the gate users, "
        f"MemoryEngine replays of {len(RESOLVERS)} resolvers), warm embedding cache, "
        f"each run its own process, {rounds} rounds after one warm-up; written by "
        "`widemem-bench regression bench=true` (part of `make perf`).",
        "",
        f"- wall time: median **{med:.1f} s** (rounds {', '.join(f'{w:.1f}' for w in walls)}); "
        f"{med / BUDGET_S:.2f} of the 60 s budget; exit codes {codes}",
        f"- CPU time: median {cpu:.1f} s (the rest is waiting on a shared machine)",
        f"- load average at start {[round(x, 2) for x in load0]}, at the end {[round(x, 2) for x in load1]}",
        f"- {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, commit {git_commit()}",
        "",
    ])
    out.write_text(replace_section(out.read_text(encoding="utf-8") if out.is_file() else "", section),
                   encoding="utf-8")
    return section


def replace_section(text: str, section: str) -> str:
    """`text` with its `BENCH_HEADER` section replaced by `section` (appended when absent). The
    section ends at the next header or at the next block marker (``<!-- name -->``: another
    writer's block of the same file, which must survive)."""
    if BENCH_HEADER not in text:
        return text.rstrip("\n") + "\n\n" + section
    head, _, rest = text.partition(BENCH_HEADER)
    ends = [i for i in (rest.find("\n## "), rest.find("\n<!-- ")) if i >= 0]
    return head + (section.rstrip("\n") + "\n\n" + rest[min(ends) + 1:] if ends else section)
