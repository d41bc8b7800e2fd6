"""Kill a sweep mid-way, re-run it: finished runs are not recomputed, the rest complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

N_RUNS = 5


def sweep_cmd(out: Path, counter: Path) -> list[str]:
    # The basic launcher runs jobs one after another in this process group, so a kill
    # lands while some runs are finished and one is in flight.
    return [sys.executable, "-m", "widemem_bench.cli", "-m", "experiment=smoke",
            f"seed=range(0,{N_RUNS})", "params.sleep=0.4", f"params.counter_file={counter}",
            f"paths.output_dir={out}", "hydra/launcher=basic"]


def records(out: Path) -> dict[str, int]:
    return {p.parent.name: p.stat().st_mtime_ns for p in out.rglob("record.json")}


def test_killed_sweep_resumes_without_recomputing(tmp_path):
    out, counter = tmp_path / "out", tmp_path / "counter.txt"
    proc = subprocess.Popen(sweep_cmd(out, counter), cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while len(records(out)) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = records(out)
    assert 2 <= len(before) < N_RUNS, "kill came too late to test resume"
    started_before = counter.read_text().split()

    done = subprocess.run(sweep_cmd(out, counter), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = records(out)
    assert len(after) == N_RUNS
    # Finished runs untouched (same record file, never started again) ...
    for name, mtime in before.items():
        assert after[name] == mtime
    runs = counter.read_text().split()
    second = runs[len(started_before):]
    assert not set(second) & set(before)
    # ... and every unfinished run ran exactly once in the second pass.
    assert sorted(second) == sorted(set(after) - set(before))
    assert done.stdout.count("skip:") == len(before)
    # The callback gathered the whole sweep: one row per run and metric.
    df = pd.read_parquet(out / "smoke" / "multiruns" / "results.parquet")
    assert df["run_dir"].nunique() == N_RUNS
    assert df.groupby(["run_dir", "metric"]).size().eq(1).all()
