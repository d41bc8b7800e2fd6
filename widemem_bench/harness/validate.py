"""Config checks at the entry point: one `ConfigError` line naming the bad key.

Runs on the resolved config (a plain dict) before any work starts. Plain Python, so
`bench.py` and tests can validate without Hydra.
"""

from __future__ import annotations

import math
from typing import Any

from widemem_bench.engine.config import RESOLVERS  # one list of the engine's resolvers

DECAY_FUNCTIONS = ("exponential", "linear", "step", "none")
MODES = ("fast", "balanced", "deep")
THRESHOLD_SOURCES = ("widemem", "calibrated", "explicit")
WEIGHT_KEYS = ("similarity", "importance", "recency")


class ConfigError(ValueError):
    """A bad config value; the message is one line that starts with the key."""


def _num(key: str, v: Any, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(float(v)):
        raise ConfigError(f"{key}: expected a number, got {v!r}")
    x = float(v)
    if lo is not None and x < lo:
        raise ConfigError(f"{key}: {x:g} is below {lo:g}")
    if hi is not None and x > hi:
        raise ConfigError(f"{key}: {x:g} is above {hi:g}")
    return x


def _int(key: str, v: Any, lo: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"{key}: expected an integer, got {v!r}")
    if lo is not None and v < lo:
        raise ConfigError(f"{key}: {v} is below {lo}")
    return v


def _choice(key: str, v: Any, options: tuple[str, ...]) -> str:
    if v not in options:
        raise ConfigError(f"{key}: unknown value {v!r} (expected one of: {', '.join(options)})")
    return str(v)


def known_embedders() -> list[str]:
    """Registry names (configs/embedder/*.yaml), as the embedder registry reads them."""
    from widemem_bench.embedders.registry import known_embedders as registry_names

    return registry_names()


def check_weights(w: dict[str, Any], key: str = "weights") -> tuple[float, float, float]:
    """(similarity, importance, recency), each in [0, 1], summing to 1 within 1e-6."""
    if not isinstance(w, dict):
        raise ConfigError(f"{key}: expected a mapping with {', '.join(WEIGHT_KEYS)}")
    vals = tuple(_num(f"{key}.{k}", w.get(k), 0.0, 1.0) for k in WEIGHT_KEYS)
    if abs(sum(vals) - 1.0) > 1e-6:
        raise ConfigError(
            f"{key}: similarity + importance + recency = {sum(vals):.4g}, must sum to 1")
    return vals  # type: ignore[return-value]


def check_thresholds(t: dict[str, Any], key: str = "thresholds") -> None:
    source = _choice(f"{key}.source", t.get("source"), THRESHOLD_SOURCES)
    vals = [t.get(k) for k in ("high", "moderate", "low")]
    if source != "explicit":
        if any(v is not None for v in vals):
            raise ConfigError(f"{key}: source={source} takes no high/moderate/low values")
        return
    h, m, lo = (_num(f"{key}.{k}", v, 0.0, 1.0)
                for k, v in zip(("high", "moderate", "low"), vals, strict=True))
    if not h >= m:
        raise ConfigError(f"{key}.moderate: {m:g} is above high {h:g} (need high >= moderate >= low)")
    if not m >= lo:
        raise ConfigError(f"{key}.low: {lo:g} is above moderate {m:g} (need high >= moderate >= low)")


def validate_config(cfg: dict[str, Any]) -> None:
    """Raise `ConfigError` on the first bad value; silent when the config is usable."""
    _int("seed", cfg.get("seed"))
    if "mode" in cfg:
        _choice("mode", cfg["mode"], MODES)
    emb = cfg.get("embedder") or {}
    name = emb.get("name") if isinstance(emb, dict) else None
    known = known_embedders()
    if name is None or (known and name not in known):
        raise ConfigError(f"embedder.name: unknown embedder {name!r} (known: {', '.join(known)})")
    if "decay" in cfg:
        d = cfg["decay"] or {}
        _choice("decay.function", d.get("function"), DECAY_FUNCTIONS)
        _num("decay.rate", d.get("rate"), 0.0)
    if "weights" in cfg:
        check_weights(cfg["weights"])
    if "thresholds" in cfg:
        check_thresholds(cfg["thresholds"] or {})
    if "resolver" in cfg:
        r = cfg["resolver"] or {}
        _choice("resolver.name", r.get("name"), RESOLVERS)
        _int("resolver.candidate_k", r.get("candidate_k"), 1)
        if r.get("similarity_floor") is not None:
            _num("resolver.similarity_floor", r["similarity_floor"], -1.0, 1.0)
    ds = cfg.get("dataset")
    if ds:
        _int("dataset.n_users", ds.get("n_users"), 1)
        _int("dataset.seed", ds.get("seed"))
        if "questions_per_user" in ds:
            _int("dataset.questions_per_user", ds.get("questions_per_user"), 1)
        if "span_days" in ds:
            _num("dataset.span_days", ds.get("span_days"), 1.0)
        if "world" in ds:  # "a" = the timelines, "b" = world B (evaluation-only), "c" = world C,
            # "n" = world N (natural register)
            _choice("dataset.world", ds.get("world"), ("a", "b", "c", "n"))
    if cfg.get("engine"):
        from widemem_bench.harness.settings import engine_config

        try:  # every EngineConfig field at once: a bad engine.* value stops the run (or sweep) here
            engine_config(cfg)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    if not cfg.get("task_name"):
        raise ConfigError("task_name: no experiment chosen (run with experiment=<name>)")


def engine_thresholds(t: dict[str, Any]) -> str | tuple[float, float, float] | None:
    """The `EngineConfig.thresholds` value for a `thresholds` config node."""
    if t.get("source") == "calibrated":
        return "calibrated"
    if t.get("source") == "explicit":
        return (float(t["high"]), float(t["moderate"]), float(t["low"]))
    return None
