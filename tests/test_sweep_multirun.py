"""A real multirun with the joblib launcher, gathered into one long-format table (slow)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest


@pytest.mark.slow
def test_joblib_multirun_aggregates_one_row_per_run_and_metric(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "widemem_bench.cli", "-m", "experiment=compare_embedders",
           "embedder=hash-test,tfidf", "dataset=timelines_small", "params.n_boot=50",
           "params.n_boot_slow=20", f"paths.output_dir={out}", "hydra/launcher=joblib",
           "hydra.launcher.n_jobs=2"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sweep = out / "compare_embedders" / "multiruns"
    df = pd.read_parquet(sweep / "results.parquet")  # written by the on_multirun_end callback
    assert sorted(df["cfg_embedder"].unique()) == ["hash-test", "tfidf"]
    assert df["run_dir"].nunique() == 2
    key = ["run_dir", "metric", "split", "kind", "setting"]
    assert df.groupby(key).size().eq(1).all()
    # Both runs report the same metric set.
    sets = df.groupby("run_dir")["metric"].apply(lambda s: frozenset(s))
    assert sets.nunique() == 1
    assert {"recall_moderate_plus", "false_confidence_hard_negative", "auroc", "hit@1", "mrr"} <= set(sets.iloc[0])
    # The standalone command writes the same table.
    from widemem_bench.aggregate import collect

    again = collect(sweep)
    assert len(again) == len(df)
