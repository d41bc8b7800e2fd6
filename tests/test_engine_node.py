"""The one engine node: every EngineConfig field from one key, and embedders from their node."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _runcfg import BASE, tiny_cfg

from widemem_bench.engine.config import WIDEMEM_DECAY, WIDEMEM_WEIGHTS, EngineConfig
from widemem_bench.harness.engines import thresholds_in_force
from widemem_bench.harness.settings import (
    GROUP_FIELDS,
    batch_engine,
    embedder_from_node,
    engine_config,
)


def test_defaults_are_widemem_and_equal_engineconfig():
    assert engine_config(BASE) == EngineConfig()
    assert EngineConfig().weights == WIDEMEM_WEIGHTS
    assert (EngineConfig().decay_function, EngineConfig().decay_rate) == WIDEMEM_DECAY


def test_every_group_reaches_its_field():
    cfg = {**BASE, "weights": {"similarity": 0.9, "importance": 0.05, "recency": 0.05},
           "decay": {"function": "linear", "rate": 0.02},
           "thresholds": {"source": "explicit", "high": 0.7, "moderate": 0.4, "low": 0.1},
           "resolver": {"name": "rule", "candidate_k": 3, "similarity_floor": 0.5},
           "mode": "deep", "age_from": "insert",
           "engine": {"ymyl_enabled": True, "adapt_weights": False}}
    ec = engine_config(cfg)
    assert ec.weights == (0.9, 0.05, 0.05)
    assert (ec.decay_function, ec.decay_rate) == ("linear", 0.02)
    assert ec.thresholds == (0.7, 0.4, 0.1)
    assert (ec.resolver, ec.candidate_k, ec.similarity_floor) == ("rule", 3, 0.5)
    assert (ec.default_mode, ec.age_from) == ("deep", "insert")
    assert ec.ymyl_enabled and not ec.adapt_weights


@pytest.mark.parametrize("field", sorted(GROUP_FIELDS))
def test_a_group_field_in_the_engine_node_is_refused(field: str):
    with pytest.raises(ValueError, match=rf"^engine\.{field}: set it with "):
        engine_config({**BASE, "engine": {field: 1}})


def test_batched_scorer_refuses_what_it_does_not_reproduce():
    with pytest.raises(ValueError, match=r"^engine\.ymyl_enabled: the batched scorer"):
        batch_engine({**BASE, "engine": {"ymyl_enabled": True}})
    with pytest.raises(ValueError, match=r"^resolver\.candidate_k: the batched scorer"):
        batch_engine({**BASE, "resolver": {"name": "append", "candidate_k": 3, "similarity_floor": None}})
    assert batch_engine({**BASE, "engine": {"two_pass_boost": False}}).two_pass_boost is False


def test_calibrated_thresholds_look_up_the_registry_name_not_the_model_id():
    class Emb:
        name, model_id = "minilm-l6", "all-MiniLM-L6-v2"

    from widemem_bench.calibration import load_calibration

    th = thresholds_in_force(EngineConfig(thresholds="calibrated"), Emb())
    assert th == tuple(load_calibration("minilm-l6").thresholds)


def test_embedder_node_fields_act(tmp_path: Path):
    texts = [f"note number {i} about tea" for i in range(20)]
    node = {"name": "hash-test", "model_id": "hash-test", "runtime": "hash", "dim": 64,
            "batch_size": 7, "query_prefix": "", "passage_prefix": ""}
    emb = embedder_from_node(node, cache_dir=tmp_path)
    assert emb.batch_size == 7
    base = emb.encode(texts, kind="query")
    assert emb.stats.model_calls == math.ceil(20 / 7)
    pre = embedder_from_node({**node, "query_prefix": "query: "}, cache_dir=tmp_path)
    assert pre.cache is None  # departs from the registry file: never served stale vectors
    assert not np.allclose(pre.encode(texts, kind="query"), base)
    assert embedder_from_node({"name": "hash-test"}, cache_dir=tmp_path).batch_size == 64


def test_contradiction_weights_change_the_metrics(tmp_path: Path):
    from widemem_bench.experiments import RunContext, get_experiment

    def survival(weights: dict) -> list[float]:
        cfg = {**tiny_cfg(tmp_path, 4, {"floors": [], "resolvers": ["append"],
                                        "insert_age_resolvers": [], "n_boot": 10}),
               "weights": weights}
        res = get_experiment("contradiction")(cfg, RunContext(output_dir=tmp_path / "o", cfg=cfg))
        return [m["value"] for m in res.metrics if m["metric"] in ("survival", "stale_outranks", "loss")]

    default = survival({"similarity": 0.5, "importance": 0.3, "recency": 0.2})
    other = survival({"similarity": 0.9, "importance": 0.05, "recency": 0.05})
    assert default != other


def test_thresholds_of_takes_a_model_id_and_still_finds_the_calibration():
    from widemem_bench.calibration import load_calibration
    from widemem_bench.experiments.common import thresholds_of

    cfg = {**BASE, "embedder": {"name": "minilm-l6"},
           "thresholds": {"source": "calibrated", "high": None, "moderate": None, "low": None}}
    assert thresholds_of(cfg, "all-MiniLM-L6-v2") == tuple(load_calibration("minilm-l6").thresholds)


@pytest.mark.parametrize("key,value", [("ymyl_importance_floor", 20), ("ymyl_classifier", "magic"),
                                       ("topic_weights", "tea")])
def test_a_bad_engine_value_is_one_line_naming_its_key(key: str, value: object):
    from widemem_bench.harness.validate import ConfigError, validate_config

    with pytest.raises(ConfigError, match=rf"^engine\.{key}: ") as exc:
        validate_config({**BASE, "task_name": "contradiction", "engine": {key: value}})
    assert "\n" not in str(exc.value)


# ------------------------------------------------ config as the constructor (issue 24)
def _composed(overrides: list[str] | None = None) -> dict:
    """The root config as Hydra composes it from configs/ (no run)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from widemem_bench.experiments import hydra_resolvers  # noqa: F401  (wb_* resolvers)

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(Path(__file__).resolve().parents[1] / "configs"),
                               version_base="1.3"):
        cfg = compose("config", overrides=overrides or [])
    out = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(out, dict)
    return out


def test_the_engine_node_builds_engineconfig_and_its_yaml_copy_is_the_code():
    # The defaults are written once, in EngineConfig; configs/ holds the copy Hydra needs
    # for `engine.<key>=...`, which must build exactly EngineConfig().
    cfg = _composed()
    assert cfg["engine"]["_target_"] == "widemem_bench.engine.config.EngineConfig"
    assert engine_config(cfg) == EngineConfig()
    code = EngineConfig().to_dict()
    for key, value in cfg["engine"].items():
        if key != "_target_":
            assert value == code[key], f"configs/engine/default.yaml {key}: {value!r} != code {code[key]!r}"
    assert tuple(cfg["weights"][k] for k in ("similarity", "importance", "recency")) == WIDEMEM_WEIGHTS
    assert (cfg["decay"]["function"], cfg["decay"]["rate"]) == WIDEMEM_DECAY
    assert cfg["thresholds"] == {"source": "widemem", "high": None, "moderate": None, "low": None}
    assert EngineConfig().thresholds is None  # widemem's table in code (confidence.MODEL_THRESHOLDS)


def test_the_engine_node_target_must_be_an_engineconfig():
    class Mine(EngineConfig):
        pass

    import sys
    import types

    mod = types.ModuleType("my_engine_cfg")
    mod.Mine = Mine  # type: ignore[attr-defined]
    sys.modules["my_engine_cfg"] = mod
    try:
        assert type(engine_config({**BASE, "engine": {"_target_": "my_engine_cfg.Mine"}})) is Mine
    finally:
        del sys.modules["my_engine_cfg"]
    for bad in ("builtins.dict", "no.such.Thing"):
        with pytest.raises(ValueError, match=r"^engine\._target_: "):
            engine_config({**BASE, "engine": {"_target_": bad}})


def test_the_weights_walk_from_configs_to_scoring_combine(monkeypatch):
    # docs/ARCHITECTURE.md, "The weights walk": configs/weights -> engine_config ->
    # EngineConfig.weights -> MemoryEngine.search (weights_for) -> rank_hits -> combine.
    from _embedders import make_test_embedder

    from widemem_bench.engine import scoring
    from widemem_bench.harness.engines import build_engine

    cfg = _composed(["weights=equal"])
    ec = engine_config(cfg)
    seen = []
    real = scoring.combine

    def spy(similarity, importance, recency, weights, **kw):
        seen.append(tuple(float(w) for w in weights))
        return real(similarity, importance, recency, weights, **kw)

    monkeypatch.setattr(scoring, "combine", spy)
    eng = build_engine(make_test_embedder(), ec)
    eng.add_fact("likes green apples", "u")
    eng.search("apples", "u")  # an "other" query: adapt_weights keeps the configured weights
    want = tuple(float(cfg["weights"][k]) for k in ("similarity", "importance", "recency"))
    assert seen == [want] and want != WIDEMEM_WEIGHTS
