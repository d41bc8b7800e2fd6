"""Experiment machinery without Hydra: registry, records, resume, runner, aggregation."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from widemem_bench.aggregate import aggregate, collect
from widemem_bench.experiments import (
    ExperimentResult,
    RunContext,
    available_experiments,
    experiment,
    get_experiment,
    metric_row,
)
from widemem_bench.experiments.records import (
    RECORD_NAME,
    atomic_write_text,
    config_hash,
    is_complete,
    read_record,
    write_run,
)
from widemem_bench.experiments.resume import should_skip
from widemem_bench.experiments.runner import execute

ROOT = Path(__file__).resolve().parents[1]
CFG = {"task_name": "smoke", "seed": 3, "embedder": {"name": "hash-test"},
       "params": {"n": 5}, "paths": {"output_dir": "/x"}, "progress": False}


def run_smoke(out: Path, **over) -> dict:
    cfg = {**CFG, **over}
    rec = execute(cfg, out)
    assert rec is not None
    return rec


def test_registry_lazy_import_and_unknown_name():
    fn = get_experiment("smoke")
    assert callable(fn)
    assert "smoke" in available_experiments()
    assert "records" not in available_experiments()  # machinery is not an experiment
    with pytest.raises(ValueError, match=r"^task_name: unknown experiment 'nope'"):
        get_experiment("nope")


def test_registering_two_functions_under_one_name_fails():
    @experiment("tmp_dup_test")
    def a(cfg, ctx):
        return ExperimentResult()

    with pytest.raises(ValueError, match="already registered"):
        @experiment("tmp_dup_test")
        def b(cfg, ctx):
            return ExperimentResult()


def test_record_holds_metrics_config_versions_and_timings(tmp_path):
    rec = run_smoke(tmp_path)
    assert rec["status"] == "complete" and rec["experiment"] == "smoke" and rec["seed"] == 3
    assert rec["config"]["params"] == {"n": 5}
    assert rec["config_hash"] == config_hash({**CFG})
    assert rec["packages"]["numpy"] == np.__version__
    assert "sha" in rec["git"] and rec["machine"]["nproc"] >= 1
    # the exact install: the sha256 of the committed lock the venv was built from
    lock = ROOT / "requirements.lock"
    assert rec["lock"] == {"file": "requirements.lock",
                           "sha256": hashlib.sha256(lock.read_bytes()).hexdigest()}
    assert rec["timings"]["total"] >= 0
    assert {m["metric"] for m in rec["metrics"]} == {"mean_x", "max_x"}
    pq = pd.read_parquet(tmp_path / rec["files"]["per_query"]["path"])
    assert len(pq) == 5


def test_same_seed_same_numbers(tmp_path):
    a = run_smoke(tmp_path / "a")
    b = run_smoke(tmp_path / "b")
    c = run_smoke(tmp_path / "c", seed=4)
    assert a["metrics"] == b["metrics"] != c["metrics"]


def test_resume_skips_complete_record_of_same_config(tmp_path, capsys):
    run_smoke(tmp_path)
    mtime = (tmp_path / RECORD_NAME).stat().st_mtime_ns
    assert should_skip(tmp_path, {**CFG})
    assert execute({**CFG}, tmp_path) is None
    assert "skip:" in capsys.readouterr().out
    assert (tmp_path / RECORD_NAME).stat().st_mtime_ns == mtime
    # Another config, or force, or a volatile key only: recompute / skip accordingly.
    assert not should_skip(tmp_path, {**CFG, "seed": 9})
    assert not should_skip(tmp_path, {**CFG, "force": True})
    assert should_skip(tmp_path, {**CFG, "paths": {"output_dir": "/elsewhere"}, "progress": True})


def test_half_written_runs_do_not_count_as_done(tmp_path):
    run_smoke(tmp_path)
    rec = read_record(tmp_path)
    assert rec is not None and is_complete(tmp_path)
    # A table missing (killed between files) is not complete.
    (tmp_path / rec["files"]["per_query"]["path"]).unlink()
    assert not is_complete(tmp_path)
    # A truncated record.json is not complete.
    text = json.dumps(rec)
    (tmp_path / RECORD_NAME).write_text(text[: len(text) // 2])
    assert not is_complete(tmp_path)
    assert read_record(tmp_path) is None


def test_atomic_write_leaves_old_file_when_interrupted(tmp_path, monkeypatch):
    p = tmp_path / "r.json"
    atomic_write_text(p, "old")

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(p, "new")
    assert p.read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["r.json"]  # temp file cleaned up


def test_aggregate_one_row_per_run_and_metric(tmp_path, capsys):
    for s in (1, 2, 3):
        run_smoke(tmp_path / f"seed={s}", seed=s)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / RECORD_NAME).write_text("{\"status\": \"running\"")
    out = aggregate(tmp_path)
    df = pd.read_parquet(out)
    assert len(df) == 3 * 2
    assert df.groupby(["run_dir", "metric"]).size().eq(1).all()
    assert set(df["seed"]) == {1, 2, 3}
    assert {"metric", "value", "ci_lo", "ci_hi", "embedder", "split", "kind", "setting",
            "experiment", "git_sha", "cfg_embedder"} <= set(df.columns)
    from widemem_bench.cli import main as front_door

    assert front_door(["aggregate", f"root={tmp_path}"]) == 0
    assert "3 runs, 6 metric rows" in capsys.readouterr().out
    assert front_door(["aggregate", f"root={tmp_path / 'missing'}"]) == 2
    assert "error: aggregate: root: no such folder" in capsys.readouterr().err


def test_collect_of_empty_folder_is_empty(tmp_path):
    assert collect(tmp_path).empty


def test_write_run_writes_tables_and_artifacts(tmp_path):
    ctx = RunContext(output_dir=tmp_path, seed=0, cfg={})
    art = tmp_path / "note.md"
    art.write_text("hi")
    res = ExperimentResult(metrics=[metric_row("m", 0.5, (0.4, 0.6), embedder="e")],
                           per_query=pd.DataFrame({"a": [1]}),
                           tables={"extra": pd.DataFrame({"b": [1, 2]})}, artifacts={"note": art})
    write_run(res, ctx, {"task_name": "x", "seed": 0}, experiment="x",
              started_at=dt.datetime(2026, 1, 1))
    rec = read_record(tmp_path)
    assert rec is not None
    assert rec["files"]["extra"]["rows"] == 2 and rec["files"]["note"]["path"] == "note.md"
    assert rec["metrics"][0]["ci_lo"] == 0.4


def test_bad_task_name_exits_with_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        execute({**CFG, "task_name": "nope"}, tmp_path)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: task_name:")


def test_run_module_never_writes_to_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_smoke(tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_core_modules_do_not_import_hydra():
    code = ("import sys, widemem_bench.experiments.runner, widemem_bench.aggregate, "
            "widemem_bench.engine.batch, widemem_bench.reports.writer; "
            "print('hydra' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_bench_plan_runs_core_then_registered_extras():
    from widemem_bench.bench import CORE, command, plan

    steps = plan(["minilm-l6", "tfidf"], None, {"locomo"})
    names = [n for n, _ in steps]
    assert names[: len(CORE)] == [n for n, _ in CORE]
    assert "locomo" not in names
    assert dict(steps)["compare_embedders"] == ["embedder=minilm-l6,tfidf"]
    assert dict(steps)["sweep_weights"] == []
    assert plan(["x"], {"calibrate"}, set()) == [("calibrate", ["embedder=x", "params.holdout=true"])]
    assert command("calibrate", ["embedder=x"]) == ["widemem-bench", "-m", "calibrate", "embedder=x"]
