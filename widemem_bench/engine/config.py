"""EngineConfig: every scoring and pipeline choice of the reference engine as
one flat, frozen, validated record. Defaults are widemem 2.0.2's values; the
fields where the project departs from widemem say so.

Flat on purpose: a Hydra override stays one short ``key=value``. Lists (as
Hydra hands them over) are accepted wherever a tuple is expected.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from widemem_bench.engine.confidence import CALIBRATED, validate_thresholds
from widemem_bench.engine.modes import validate_mode
from widemem_bench.engine.recency import WIDEMEM_DECAY, validate_decay
from widemem_bench.engine.ymyl import YMYL_CATEGORIES, validate_categories, validate_classifier

RESOLVERS: tuple[str, ...] = ("append", "rule", "structure", "pair", "oracle", "llm")
EXTRACTORS: tuple[str, ...] = ("verbatim", "rule", "llm")
CONFIDENCE_SOURCES: tuple[str, ...] = ("similarity", "answerability", "answerability_v2", "answerability_v3",
                                       "answerability_v4", "answerability_v1")
AGE_SOURCES: tuple[str, ...] = ("clock", "insert")
UNCERTAINTY_MODES: tuple[str, ...] = ("strict", "helpful", "creative")
WEIGHT_SUM_TOLERANCE = 1e-6
# widemem 2.0.2's scoring defaults, defined once: final = 0.5 similarity + 0.3 importance/10
# + 0.2 recency, recency exp(-0.01 * days) (WIDEMEM_DECAY, defined beside the decay in
# recency.py); thresholds: confidence.MODEL_THRESHOLDS / DEFAULT_THRESHOLDS. Everything else
# imports these; the YAML copies Hydra needs are pinned to them by tests/test_engine_node.py.
__all__ = ["WIDEMEM_DECAY", "WIDEMEM_WEIGHTS", "EngineConfig"]
WIDEMEM_WEIGHTS: tuple[float, float, float] = (0.5, 0.3, 0.2)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


def _in_range(name: str, value: Any, lo: float, hi: float) -> float:
    out = _number(name, value)
    if not lo <= out <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    return out


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    value = getattr(value, "value", value)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _optional_str(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or null, got {value!r}")
    return value


def _topic_pairs(value: Any) -> tuple[tuple[str, float], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    if isinstance(items, (str, bytes)):
        raise ValueError(f"topic_weights must be (topic, weight) pairs or a mapping, got {value!r}")
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    try:
        pairs = list(items)
    except TypeError:
        raise ValueError(f"topic_weights must be (topic, weight) pairs or a mapping, got {value!r}") from None
    for pair in pairs:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"topic_weights entries must be (topic, weight) pairs, got {pair!r}")
        topic, weight = pair
        if not isinstance(topic, str) or not topic.strip():
            raise ValueError(f"topic_weights topic must be a non-empty string, got {topic!r}")
        if topic.lower() in seen:
            raise ValueError(f"topic_weights has topic {topic!r} twice")
        seen.add(topic.lower())
        w = _number(f"topic_weights[{topic!r}]", weight)
        if w < 0:
            raise ValueError(f"topic_weights[{topic!r}] must be >= 0, got {weight!r}")
        out.append((topic, w))
    return tuple(out)


@dataclass(frozen=True)
class EngineConfig:
    """Settings of the reference engine (widemem 2.0.2 defaults).

    Scoring
    - ``weights``: (similarity, importance, recency), each in [0, 1], summing
      to 1 within 1e-6.
    - ``decay_function``: exponential | linear | step | none; ``decay_rate``
      per day, >= 0 (0.01 gives a ~69.3-day half-life).
    - ``adapt_weights``: widemem's per-query weight switch (temporal
      0.40/0.10/0.50, factual 0.75/0.10/0.15).
    - ``two_pass_boost``: widemem's top-5-by-similarity boost on factual queries.
    - ``topic_weights``: (topic, weight) pairs; a memory's final score is
      multiplied by the largest weight among topics that occur in its content
      (case-insensitive substring), never below 1, as widemem does.
    - ``age_from``: "clock" ages a memory from its ``at`` to the search's
      ``now`` (the timeline clock; the project's choice); "insert" is
      widemem's behaviour, age from the wall-clock insert time.
    - ``default_mode``: fast | balanced | deep | auto.

    Confidence
    - ``thresholds``: None (widemem's per-model table plus
      WIDEMEM_CONFIDENCE_* env overrides), "calibrated" (the committed
      per-model calibration), or (high, moderate, low) with
      1 >= high >= moderate >= low >= 0. Equal values are allowed (an empty
      band), as widemem compares with ``>=``. An explicit triple is not
      overridden by the environment.
    - ``confidence``: "similarity" (widemem: raw cosine of the top result),
      "answerability" (the project's scorer, v2: subject-masked similarity, no topic
      lists; also "answerability_v2"), "answerability_v3" (opt-in: v2's features plus the
      language layer's parse of the question against its top memories; below v2 on
      world B and LoCoMo, DESIGN_LOG M1), "answerability_v4" (opt-in: v3's features plus a
      cross-encoder fine-tuned on development pairs, built by `make answer-cross`) or
      "answerability_v1" (the first scorer).
    - ``uncertainty_mode``: strict | helpful | creative (widemem: helpful).

    YMYL (off by default, as in widemem)
    - ``ymyl_importance_floor`` 8.0 for strong matches,
      ``ymyl_decay_immunity`` (full recency at any age),
      ``ymyl_contradiction_threshold`` 0.6 (cosine gate of the contradiction
      check), ``ymyl_categories`` in widemem's order.
    - ``ymyl_classifier``: "widemem" (its regex rule) or "lexicon" (the
      project's: widemem's rule plus drug names, condition names and medical
      usage patterns, ``engine.ymyl_lexicon``; a stand-in for the tag
      widemem's extraction LLM gives).

    Pipeline
    - ``resolver``: append | rule | structure | pair | oracle | llm (``RESOLVERS``;
      structure: version 3.2, the parse and a pair scorer; pair: structure's gate and a
      cross-encoder over (old, new), ``make resolver-cross``, opt-in); ``candidate_k`` nearest
      memories of the same user (5); ``similarity_floor`` None (widemem has
      none; the seed text describes 0.6) or a cosine in [0, 1].
    - ``extractor``: verbatim | rule | llm.
    - ``max_text_chars``: longest accepted text, widemem's 50,000.
    - ``llm_url`` / ``llm_model`` / ``llm_api_key`` / ``llm_timeout`` (s):
      the optional OpenAI-compatible endpoint.
    """

    weights: tuple[float, float, float] = WIDEMEM_WEIGHTS
    decay_function: str = WIDEMEM_DECAY[0]
    decay_rate: float = WIDEMEM_DECAY[1]
    adapt_weights: bool = True
    two_pass_boost: bool = True
    topic_weights: tuple[tuple[str, float], ...] = ()
    age_from: str = "clock"
    default_mode: str = "balanced"
    thresholds: tuple[float, float, float] | str | None = None
    confidence: str = "similarity"
    uncertainty_mode: str = "helpful"
    ymyl_enabled: bool = False
    ymyl_importance_floor: float = 8.0
    ymyl_decay_immunity: bool = True
    ymyl_contradiction_threshold: float = 0.6
    ymyl_categories: tuple[str, ...] = YMYL_CATEGORIES
    ymyl_classifier: str = "widemem"
    resolver: str = "append"
    candidate_k: int = 5
    similarity_floor: float | None = None
    extractor: str = "verbatim"
    max_text_chars: int = 50_000
    llm_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)
    llm_timeout: float = 30.0

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        w = self.weights
        if isinstance(w, (str, bytes)) or not hasattr(w, "__len__") or len(w) != 3:
            raise ValueError(f"weights must be 3 numbers (similarity, importance, recency), got {w!r}")
        ws = tuple(_in_range(f"weights[{i}]", x, 0.0, 1.0) for i, x in enumerate(w))
        if abs(sum(ws) - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise ValueError(f"weights must sum to 1 within 1e-6, got {ws} (sum {sum(ws)!r})")
        put("weights", ws)

        name, rate = validate_decay(self.decay_function, self.decay_rate)
        put("decay_function", name)
        put("decay_rate", rate)
        for flag in ("adapt_weights", "two_pass_boost", "ymyl_enabled", "ymyl_decay_immunity"):
            _flag(flag, getattr(self, flag))
        put("topic_weights", _topic_pairs(self.topic_weights))
        put("age_from", _choice("age_from", self.age_from, AGE_SOURCES))
        mode = getattr(self.default_mode, "value", self.default_mode)
        try:
            validate_mode(mode)
        except ValueError:
            raise ValueError(
                f"default_mode must be one of fast, balanced, deep, auto, got {self.default_mode!r}"
            ) from None
        put("default_mode", str(mode))

        t = self.thresholds
        if isinstance(t, str):
            if t != CALIBRATED:
                raise ValueError(f"thresholds must be null, 'calibrated' or [high, moderate, low], got {t!r}")
        elif t is not None:
            put("thresholds", validate_thresholds(t))
        put("confidence", _choice("confidence", self.confidence, CONFIDENCE_SOURCES))
        put("uncertainty_mode", _choice("uncertainty_mode", self.uncertainty_mode, UNCERTAINTY_MODES))

        put("ymyl_importance_floor", _in_range("ymyl_importance_floor", self.ymyl_importance_floor, 0.0, 10.0))
        put(
            "ymyl_contradiction_threshold",
            _in_range("ymyl_contradiction_threshold", self.ymyl_contradiction_threshold, -1.0, 1.0),
        )
        put("ymyl_categories", validate_categories(self.ymyl_categories, "ymyl_categories"))
        put("ymyl_classifier", validate_classifier(self.ymyl_classifier))

        put("resolver", _choice("resolver", self.resolver, RESOLVERS))
        _positive_int("candidate_k", self.candidate_k)
        if self.similarity_floor is not None:
            put("similarity_floor", _in_range("similarity_floor", self.similarity_floor, 0.0, 1.0))
        put("extractor", _choice("extractor", self.extractor, EXTRACTORS))
        _positive_int("max_text_chars", self.max_text_chars)
        for name in ("llm_url", "llm_model", "llm_api_key"):
            _optional_str(name, getattr(self, name))
        timeout = _number("llm_timeout", self.llm_timeout)
        if timeout <= 0:
            raise ValueError(f"llm_timeout must be > 0 seconds, got {self.llm_timeout!r}")
        put("llm_timeout", timeout)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> EngineConfig:
        """Build from a plain mapping (e.g. a resolved Hydra node); an unknown
        key is a ValueError naming it. Missing keys keep their defaults."""
        if d is None:
            return cls()
        if not isinstance(d, Mapping):
            raise ValueError(f"engine config must be a mapping, got {type(d).__name__}")
        known = set(cls.field_names())
        for key in d:
            if key not in known:
                raise ValueError(f"unknown EngineConfig key {key!r}")
        return cls(**dict(d))

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready dict for run records; the API key is redacted."""
        out = dataclasses.asdict(self)
        for key in ("weights", "ymyl_categories"):
            out[key] = list(out[key])
        if isinstance(out["thresholds"], tuple):
            out["thresholds"] = list(out["thresholds"])
        out["topic_weights"] = [list(p) for p in self.topic_weights]
        if out["llm_api_key"] is not None:
            out["llm_api_key"] = "***"
        return out

    def replace(self, **changes: Any) -> EngineConfig:
        """A copy with some fields changed (validated again); unknown names are a ValueError."""
        known = set(self.field_names())
        for key in changes:
            if key not in known:
                raise ValueError(f"unknown EngineConfig key {key!r}")
        return dataclasses.replace(self, **changes)
