"""Every config of every group composes and validates; a bad value is one line naming the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from widemem_bench.experiments import hydra_resolvers  # noqa: F401  (registers wb_root, wb_dirname)
from widemem_bench.harness.validate import ConfigError, validate_config
from widemem_bench.run import check_group_choices

pytestmark = pytest.mark.filterwarnings("ignore:(?s).*validated against ConfigStore schema")

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
GROUPS = ("embedder", "dataset", "decay", "weights", "thresholds", "resolver", "paths")


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


def compose_cfg(overrides: list[str], hydra_cfg: bool = False):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=hydra_cfg)


def plain(cfg) -> dict:
    c = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(c, dict)
    c.pop("hydra", None)
    return c


# Every option of every group, picked up from the folder: new files are tested automatically.
CASES = [(g, o) for g in GROUPS for o in options(g)]


@pytest.mark.parametrize(("group", "option"), CASES, ids=[f"{g}={o}" for g, o in CASES])
def test_group_option_composes_and_validates(group, option):
    cfg = plain(compose_cfg(["experiment=smoke", f"{group}={option}"]))
    validate_config(cfg)
    assert cfg[group] is not None


@pytest.mark.parametrize("name", options("experiment"))
def test_experiment_composes_and_validates(name):
    assert (CONFIGS / "experiment" / f"{name}.yaml").read_text().startswith("# @package _global_")
    cfg = plain(compose_cfg([f"experiment={name}"]))
    validate_config(cfg)
    assert cfg["task_name"] == name  # the registry name is the file name


@pytest.mark.parametrize("launcher", ["joblib", "ray", "submitit_slurm", "basic"])
def test_launchers_compose(launcher):
    cfg = compose_cfg(["experiment=smoke", f"hydra/launcher={launcher}"], hydra_cfg=True)
    assert "_target_" in cfg.hydra.launcher


def test_default_launcher_is_joblib_and_sweep_dir_is_deterministic():
    cfg = compose_cfg(["experiment=smoke"], hydra_cfg=True)
    assert cfg.hydra.launcher._target_.endswith("JoblibLauncher")
    assert "${now:" not in OmegaConf.to_yaml(cfg.hydra.sweep)
    assert str(cfg.hydra.sweep.dir).endswith("/multiruns")


def test_paths_stay_out_of_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = plain(compose_cfg(["experiment=smoke"]))
    assert Path(cfg["paths"]["output_dir"]) == ROOT / "outputs"


def test_weights_files_sum_to_one():
    for o in options("weights"):
        w = OmegaConf.load(CONFIGS / "weights" / f"{o}.yaml")
        assert set(w) == {"similarity", "importance", "recency"}
        assert abs(w.similarity + w.importance + w.recency - 1) < 1e-9, o


def test_unknown_group_option_is_caught_before_hydra():
    msg = check_group_choices(["-m", "experiment=smoke", "embedder=minilm-l6,nope"])
    assert msg is not None and msg.startswith("embedder: unknown option 'nope'")
    assert check_group_choices(["experiment=smoke", "embedder=minilm-l6", "seed=3"]) is None


BAD = [  # run end to end in a subprocess
    (["weights.similarity=0.9"], "weights:"),
    (["thresholds=minilm_widemem", "thresholds.low=0.5"], "thresholds.low:"),
    (["embedder=no-such-model"], "embedder:"),
    (["decay.function=cubic"], "decay.function:"),
    (["decay=cubic"], "decay:"),
]
BAD_IN_PROCESS = [
    (["thresholds=minilm_widemem", "thresholds.high=1.5"], "thresholds.high:"),
    (["thresholds=minilm_widemem", "thresholds.moderate=0.7"], "thresholds.moderate:"),
    (["thresholds.high=0.5"], "thresholds:"),
    (["embedder.name=no-such-model"], "embedder.name:"),
    (["decay.rate=-1"], "decay.rate:"),
    (["resolver.candidate_k=0"], "resolver.candidate_k:"),
    (["resolver.name=magic"], "resolver.name:"),
    (["mode=turbo"], "mode:"),
    (["weights.recency=-0.2", "weights.similarity=0.9"], "weights.recency:"),
]


@pytest.mark.parametrize(("overrides", "key"), BAD_IN_PROCESS, ids=[b[1] + b[0][-1] for b in BAD_IN_PROCESS])
def test_bad_value_error_names_the_key(overrides, key):
    cfg = plain(compose_cfg(["experiment=smoke", *overrides]))
    with pytest.raises(ConfigError) as exc:
        validate_config(cfg)
    msg = str(exc.value)
    assert msg.startswith(key) and "\n" not in msg


@pytest.mark.parametrize(("overrides", "key"), BAD, ids=[b[1] + b[0][-1] for b in BAD])
def test_bad_config_is_one_line_naming_the_key(tmp_path, overrides, key):
    proc = subprocess.run(
        [sys.executable, "-m", "widemem_bench.cli", "experiment=compare_embedders",
         f"paths.output_dir={tmp_path}", *overrides],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode != 0
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert lines[-1].startswith(f"error: {key}"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not any(tmp_path.rglob("record.json"))  # nothing ran


def test_bad_job_of_a_sweep_stops_the_sweep_before_any_job(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "widemem_bench.cli", "-m", "experiment=compare_embedders",
         "weights.similarity=0.5,0.9",
         f"paths.output_dir={tmp_path}", "hydra/launcher=basic"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: weights:") and "weights.similarity=0.9" in last
    assert not any(tmp_path.rglob("record.json"))
