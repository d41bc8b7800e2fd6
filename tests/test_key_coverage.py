"""Every key of every experiment's composed config either acts or is refused.

For each experiment, its config is composed as `widemem-bench <name> ...`
experiment=<name>` would compose it (hash-test embedder, a 4-user timeline), the run is
executed on a read-tracking copy of the config, and for every leaf key:

- a key the experiment honours must have been read by the run (through the one engine
  node, the embedder node, the data set loader or the experiment's own params);
- any other key must be refused when set, with one line naming it and the experiment.

A config field that no code reads fails here: add `params.unused: 1` to an experiment's
yaml and its run reports `params.unused` as honoured but never read. A second test holds
every engine key to changing the EngineConfig a run is given (its inputs).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from widemem_bench.experiments import (
    RunContext,
    available_experiments,
    get_experiment,
    hydra_resolvers,  # noqa: F401  (registers resolvers)
)
from widemem_bench.experiments.registry import honours_of
from widemem_bench.harness.keys import HARNESS, check_key, covered, honoured, leaf_keys
from widemem_bench.harness.settings import engine_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
# hash-test's calibration and answerability v2 files (the package ships none for it).
HASH_FILES = Path(__file__).resolve().parent / "fixtures" / "hash-test"
# Small settings so each run takes seconds; they are keys like any other (and so read).
TINY: dict[str, list[str]] = {
    "smoke": [],
    "compare_embedders": ["params.n_boot=10", "params.n_boot_slow=5"],
    "sweep_decay": ["params.n_boot=5"],
    "sweep_weights": ["params.step=0.25", "params.n_boot=5"],
    "sweep_thresholds": ["params.step=0.25", "params.n_boot=5"],
    # the certificate needs >= 30 users on each side of the scorer's fit / certify split;
    # hash-test needs tfidf-like settings for a reachable ladder (tests/test_calibrate.py)
    "calibrate": ["params.n_boot=10", "dataset.n_users=300", "dataset.questions_per_user=40", "params.targets.high=0.85",
                  "params.none_answerable=0.5"],
    "contradiction": ["params.floors=[0.5]", "params.n_boot=10"],
    "frustration": ["params.n_boot=10", "params.window_sweep=[60]", "params.cost_store_size=30"],
    "ymyl_decay": ["params.days=[1,60]", "params.decays=[{function: exponential, rate: 0.01}]",
                   "params.store_sizes=[null]", "params.n_boot=10"],
    "locomo": ["params.conversations=[conv-26]", "params.n_boot=10"],
    "peer": ["params.n_users=2"],
    "perf": [],
    "transfer": ["params.n_boot=5", f"params.calibration_dir={HASH_FILES / 'calibration'}",
                 f"params.answerability_dir={HASH_FILES / 'answerability'}"],
    # 10 users: the 4-user timeline has no validation user, and params.sets reports that split
    "resolver_transfer": ["dataset.n_users=10", "params.n_users=2", "params.n_boot=5"],
}
# Minutes, not seconds (real LoCoMo data, widemem itself, timing stages): full tier only.
SLOW = {"locomo", "peer", "perf", "transfer", "resolver_transfer"}


class Tracked(dict):  # type: ignore[type-arg]
    """A dict that records which dotted keys were read (item access, get, items, values)."""

    def __init__(self, data: Mapping[str, Any], seen: set[str], prefix: str = "") -> None:
        super().__init__(data)
        self._seen, self._prefix = seen, prefix

    def _wrap(self, key: str, value: Any) -> Any:
        self._seen.add(f"{self._prefix}{key}")
        if isinstance(value, Mapping) and not isinstance(value, Tracked):
            return Tracked(value, self._seen, f"{self._prefix}{key}.")
        return value

    def __getitem__(self, key: str) -> Any:
        return self._wrap(key, super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(dict.keys(self)))

    def keys(self):  # type: ignore[no-untyped-def]
        return list(dict.keys(self))

    def items(self):  # type: ignore[no-untyped-def]
        return [(k, self[k]) for k in dict.keys(self)]

    def values(self):  # type: ignore[no-untyped-def]
        return [self[k] for k in dict.keys(self)]

    def copy(self) -> Tracked:
        return Tracked(dict(self.items()), self._seen, self._prefix)


def composed(name: str, tmp: Path, extra: list[str] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    tiny = [*TINY.get(name, []), *extra]
    mine = {o.split("=", 1)[0] for o in tiny}
    base = [f"experiment={name}", "embedder=hash-test", "dataset.n_users=4",
            "dataset.questions_per_user=20", f"dataset.root={tmp / 'data'}",
            f"paths.cache_dir={tmp / 'cache'}"]
    # an experiment's own tiny setting replaces the shared default of the same key
    overrides = [o for o in base if o.split("=", 1)[0] not in mine] + tiny
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        cfg = OmegaConf.to_container(compose("config", overrides=overrides), resolve=True)
    GlobalHydra.instance().clear()
    assert isinstance(cfg, dict)
    return cfg  # type: ignore[return-value]


def unread_keys(name: str, cfg: dict[str, Any], out: Path) -> list[str]:
    """Honoured leaf keys of `cfg` that a run of experiment `name` never read."""
    seen: set[str] = set()
    tracked = Tracked(cfg, seen)
    fn = get_experiment(name)
    ctx = RunContext(output_dir=out, seed=int(cfg["seed"]), cfg=tracked)
    fn(tracked, ctx)
    honours = honours_of(name)
    return [k for k in leaf_keys(cfg)
            if honoured(k, honours) and not covered(k, HARNESS) and k not in seen]


def refused_unless_honoured(name: str, cfg: dict[str, Any]) -> list[str]:
    """Leaf keys that are neither honoured nor refused when set (must be none)."""
    honours = honours_of(name)
    return [k for k in leaf_keys(cfg) if not honoured(k, honours)
            and check_key(k, name, honours, cfg) is None]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in available_experiments()])
def test_every_key_acts_or_is_refused(name: str, tmp_path: Path) -> None:
    cfg = composed(name, tmp_path)
    assert refused_unless_honoured(name, cfg) == []
    assert unread_keys(name, cfg, tmp_path / "run") == [], f"experiment {name}"


def test_every_experiment_has_a_tiny_setting() -> None:
    missing = set(available_experiments()) - set(TINY)
    assert not missing, f"add the overrides that make a run of {sorted(missing)} take seconds to TINY"


def test_an_unread_config_field_fails(tmp_path: Path) -> None:
    """What the coverage test reports when a field is added that no code reads."""
    cfg = composed("smoke", tmp_path, ["+params.unused_field=1"])
    assert unread_keys("smoke", cfg, tmp_path / "run") == ["params.unused_field"]


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, float):
        return value / 2 if value else 0.5
    if isinstance(value, int):
        return value // 2 or 2
    if value is None:
        return "http://localhost:1"
    if isinstance(value, list):
        return value[:1] if len(value) > 1 else [["tea", 2.0]]
    return {"similarity": "answerability", "widemem": "lexicon", "verbatim": "rule"}[value]


ENGINE_NODE = OmegaConf.to_container(OmegaConf.load(CONFIGS / "engine" / "default.yaml"))


# `_target_` names the class the node builds (tests/test_engine_node.py), not a field.
@pytest.mark.parametrize("key", sorted(set(ENGINE_NODE) - {"_target_"}))  # type: ignore[arg-type]
def test_every_engine_key_changes_the_engine_config(key: str) -> None:
    base = {"engine": dict(ENGINE_NODE)}  # type: ignore[arg-type]
    changed = {"engine": {**base["engine"], key: _other(base["engine"][key])}}
    assert engine_config(changed) != engine_config(base)


@pytest.mark.parametrize("key,value", [
    ("weights", {"similarity": 0.9, "importance": 0.05, "recency": 0.05}),
    ("decay", {"function": "linear", "rate": 0.005}),
    ("thresholds", {"source": "explicit", "high": 0.7, "moderate": 0.4, "low": 0.1}),
    ("resolver", {"name": "append", "candidate_k": 3, "similarity_floor": None}),
    ("resolver", {"name": "append", "candidate_k": 5, "similarity_floor": 0.5}),
    ("resolver", {"name": "rule", "candidate_k": 5, "similarity_floor": None}),
    ("mode", "deep"), ("age_from", "insert"),
])
def test_every_group_key_changes_the_engine_config(key: str, value: Any) -> None:
    assert engine_config({key: value}) != engine_config({})


@pytest.mark.parametrize("argv,expected", [
    (["experiment=sweep_weights", "weights=equal"],
     r"^weights: experiment sweep_weights does not honour this key"),
    (["experiment=compare_embedders", "params.nboot=3"], r"did you mean params\.n_boot\?\); params has: n_boot, "),
    (["experiment=smoke", "nosuch=1"],
     r"^nosuch: no such key in the config of experiment smoke; accepted: embedder\.name, params, task_name, .*"
     r"`widemem-bench run smoke --help`"),
    (["experiment=peer", "params.nosuch=1"], r"^params\.nosuch: no such key .*; params has: n_users, seed, "),
    (["experiment=peer", "params.adapter_options.mem0.model=x"],
     r"; params\.adapter_options is empty by default: set it whole, e\.g\. '\+\+params\.adapter_options=\{name: "),
    (["experiment=compare_embedders", "weigths.similarity=0.3"], r"did you mean weights\.similarity\?"),
    (["experiment=compare_embedders", "embedder.pooling=cls"],
     r"^embedder\.pooling: does not apply to runtime sentence-transformers"),
    (["experiment=contradiction", "params.k=../x"], r"^params\.k: value '\.\./x' has a path separator"),
    (["-m", "experiment=compare_embedders,contradiction", "resolver=rule"],
     r"^resolver: experiment compare_embedders does not honour"),
    (["experiment=contradiction", "weights.similarity=0.9", "resolver.candidate_k=3"], None),
    (["experiment=locomo", "params.locomo_path=/data/locomo10.json"], None),
])
def test_cli_refuses_with_one_line(argv: list[str], expected: str | None) -> None:
    import re

    from widemem_bench.run import check_keys, expand_weight_triples

    msg = check_keys(expand_weight_triples(argv))
    if expected is None:
        assert msg is None
    else:
        assert msg is not None and "\n" not in msg and re.search(expected, msg), msg


def test_weight_triple_shorthand() -> None:
    from widemem_bench.run import expand_weight_triples

    assert expand_weight_triples(["weights=0.9,0.05,0.05", "weights=equal"]) == [
        "weights.similarity=0.9", "weights.importance=0.05", "weights.recency=0.05", "weights=equal"]


@pytest.mark.parametrize("embedder", sorted(p.stem for p in (CONFIGS / "embedder").glob("*.yaml")))
def test_embedder_fields_act_for_their_runtime_or_are_refused(embedder: str, tmp_path: Path) -> None:
    """Reading a node is not acting on it: a field its runtime never uses (`pooling` of a
    sentence-transformers folder) must be refused when set, whatever the experiment."""
    from widemem_bench.harness.settings import embedder_fields

    cfg = composed("compare_embedders", tmp_path, [f"embedder={embedder}"])
    node = cfg["embedder"]
    honours = honours_of("compare_embedders")
    for key in leaf_keys(node, "embedder."):
        field = key.split(".")[1]
        refused = check_key(key, "compare_embedders", honours, cfg)
        assert (field in embedder_fields(str(node["runtime"]))) == (refused is None), (key, refused)
