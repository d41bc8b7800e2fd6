"""The engine as a run builds it: `MemoryEngine` handed its confidence function, its
add-time warm-up and its calibrated thresholds, built here from `EngineConfig` so that
engine/ never imports answerability/ or calibration/ (docs/ARCHITECTURE.md, "Floors")."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from widemem_bench.engine.confidence import (
    CALIBRATED,
    ConfidenceFn,
    Thresholds,
    WarmFn,
    resolve_thresholds,
    validate_thresholds,
)
from widemem_bench.engine.config import EngineConfig
from widemem_bench.engine.engine import MemoryEngine


def calibrated_thresholds(embedder_name: str) -> Thresholds:
    """(high, moderate, low) of the committed calibration file of `embedder_name` (its
    registry name); a one-line error naming the command that writes one when there is none."""
    calibration = importlib.import_module("widemem_bench.calibration")
    fitted = calibration.load_calibration(embedder_name)
    return validate_thresholds(fitted.thresholds, name=f"calibrated thresholds of {embedder_name!r}")


def thresholds_in_force(ec: EngineConfig, embedder: Any) -> Thresholds:
    """(high, moderate, low) that `MemoryEngine` would use with `ec` for `embedder`:
    widemem's table (+ env) by model id, an explicit triple, or the committed calibration
    of the embedder's registry NAME (a model id is not a calibration file name)."""
    return resolve_thresholds(str(embedder.model_id), ec.thresholds, embedder_name=str(embedder.name),
                              calibrated=calibrated_thresholds)


def confidence_hooks(ec: EngineConfig, embedder: Any) -> tuple[ConfidenceFn | None, WarmFn | None]:
    """(confidence_fn, warm_fn) for `ec.confidence`: none for "similarity" (the engine bands
    the top cosine itself), the answerability scorer's for every "answerability*" version."""
    if ec.confidence == "similarity":
        return None, None
    try:
        answerability = importlib.import_module("widemem_bench.answerability")
    except ImportError as exc:
        raise ValueError(f"confidence: {ec.confidence!r} needs widemem_bench.answerability ({exc})") from None
    assess = getattr(answerability, "assess_confidence", None)
    if assess is None:
        raise ValueError(f"confidence: {ec.confidence!r} needs widemem_bench.answerability.assess_confidence")
    version = ec.confidence

    def confidence_fn(query: str, ranked: Sequence[Any], thresholds: Thresholds) -> str:
        # embedder= (registry name): calibration files, which hold the scorer, are named by it.
        return str(assess(query, ranked, model_id=embedder.model_id, thresholds=thresholds,
                          embedder=embedder.name, version=version, encoder=embedder))

    warm = None
    if version in ("answerability_v3", "answerability_v4"):  # both read each memory's parse
        try:
            warm = importlib.import_module("widemem_bench.answerability.v3").warm
        except ImportError:
            warm = None  # the search that needs the scorer says so in one line
    return confidence_fn, warm


def build_engine(embedder: Any, config: EngineConfig | None = None, store_path: str | Path | None = None,
                 **options: Any) -> MemoryEngine:
    """`MemoryEngine(embedder, config, store_path, **options)` with the hooks `config` needs."""
    ec = config if config is not None else EngineConfig()
    if not isinstance(ec, EngineConfig):
        raise ValueError(f"config: expected an EngineConfig, got {type(config).__name__}")
    confidence_fn, warm_fn = confidence_hooks(ec, embedder)
    calibrated = None
    if ec.thresholds == CALIBRATED:
        def calibrated() -> Thresholds:
            return calibrated_thresholds(str(embedder.name))
    return MemoryEngine(embedder, ec, store_path, confidence_fn=confidence_fn, warm_fn=warm_fn,
                        calibrated_fn=calibrated, **options)
