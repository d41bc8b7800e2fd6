"""The one engine node: every EngineConfig field from one key, and embedders from their node."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _runcfg import BASE, tiny_cfg

from widemem_bench.engine.config import WIDEMEM_DECAY, WIDEMEM_WEIGHTS, EngineConfig
from widemem_bench.harness.settings import (
    GROUP_FIELDS,
    batch_engine,
    embedder_from_node,
    engine_config,
    thresholds_in_force,
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
