"""The embedder comparison on a local Ray cluster through hydra-ray-launcher (slow).

ray 2.x with RAY_AUTH_MODE=token needs a token shared by the head and the client; the
test makes a throwaway one. hydra-ray-launcher 1.2.2 passes object_store_memory to
ray.init, which ray refuses when joining a running cluster, hence the `+...=null`.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow

HAS_RAY = importlib.util.find_spec("ray") is not None and importlib.util.find_spec(
    "hydra_plugins.hydra_ray_launcher") is not None


@pytest.mark.skipif(not HAS_RAY, reason='ray not installed: make venv-ray, then run pytest from .venv-ray')
def test_compare_embedders_on_local_ray_cluster(tmp_path):
    ray_bin = Path(sys.executable).with_name("ray")
    # Ray's socket paths must stay short: a /tmp folder of our own, not pytest's tmp_path.
    ray_tmp = tempfile.mkdtemp(prefix="wbray", dir="/tmp")
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "OMP_NUM_THREADS": "1"}
    start = subprocess.run([str(ray_bin), "start", "--head", "--num-cpus=2", "--include-dashboard=false",
                            "--disable-usage-stats", f"--temp-dir={ray_tmp}"],
                           env=env, capture_output=True, text=True, timeout=300)
    try:
        assert start.returncode == 0, start.stderr[-2000:]
        out = tmp_path / "out"
        cmd = [sys.executable, "-m", "widemem_bench.cli", "-m", "experiment=compare_embedders",
               "embedder=hash-test,tfidf", "dataset=timelines_small", "params.n_boot=50",
               "params.n_boot_slow=20", f"paths.output_dir={out}", "hydra/launcher=ray",
               "hydra.launcher.ray.init.address=auto", "+hydra.launcher.ray.init.object_store_memory=null"]
        proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "Connecting to existing Ray cluster" in proc.stderr + proc.stdout
        df = pd.read_parquet(out / "compare_embedders" / "multiruns" / "results.parquet")
        assert sorted(df["cfg_embedder"].unique()) == ["hash-test", "tfidf"]
        assert df.groupby(["run_dir", "metric", "split", "kind", "setting"]).size().eq(1).all()
    finally:
        subprocess.run([str(ray_bin), "stop"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(ray_tmp, ignore_errors=True)
