"""Confidence bands from the top result's raw cosine, widemem's per-model
threshold table with its WIDEMEM_CONFIDENCE_* overrides, and the uncertainty
guidance an agent gets for each band and mode.

Band codes in arrays: 3 high, 2 moderate, 1 low, 0 none (``BAND_CODES``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

Thresholds = tuple[float, float, float]
# What harness/ hands the engine for a confidence other than "similarity" (the engine
# never imports a scorer): the band of (query, ranked hits, thresholds in force), and a
# hook that sees each memory's text once, at add time (v3 parses it there).
ConfidenceFn = Callable[[str, Sequence[Any], Thresholds], "Confidence | str"]
WarmFn = Callable[[list[str]], None]
# The calibrated (high, moderate, low) of an embedder's registry name (harness/ reads the file).
CalibratedFn = Callable[[str], Thresholds]


class Confidence(StrEnum):
    HIGH = "high"
    MODERATE = "moderate"
    LOW = "low"
    NONE = "none"


class UncertaintyMode(StrEnum):
    STRICT = "strict"
    HELPFUL = "helpful"
    CREATIVE = "creative"


BAND_CODES: dict[Confidence, int] = {
    Confidence.HIGH: 3,
    Confidence.MODERATE: 2,
    Confidence.LOW: 1,
    Confidence.NONE: 0,
}
CODE_BANDS: dict[int, Confidence] = {code: band for band, code in BAND_CODES.items()}

# widemem's table, keyed by the model name's last path part, lowercased.
# MiniLM was measured by widemem on its own fixture; every other model gets the
# table calibrated for OpenAI text-embedding-3-small, whose unrelated pairs sit
# high (0.35-0.50), hence its higher moderate and low cut-offs.
DEFAULT_THRESHOLDS: Thresholds = (0.60, 0.50, 0.30)
MODEL_THRESHOLDS: dict[str, Thresholds] = {
    "all-minilm-l6-v2": (0.60, 0.30, 0.20),
}
ENV_VARS: tuple[str, str, str] = (
    "WIDEMEM_CONFIDENCE_HIGH",
    "WIDEMEM_CONFIDENCE_MODERATE",
    "WIDEMEM_CONFIDENCE_LOW",
)
CALIBRATED = "calibrated"


def model_key(model_id: object) -> str:
    """The table key widemem derives from a model name: the part after the
    last "/", stripped and lowercased. A non-string gives "" (no entry)."""
    if not isinstance(model_id, str):
        return ""
    return model_id.strip().lower().rsplit("/", 1)[-1]


def thresholds_for_model(model_id: str) -> Thresholds:
    """widemem's (high, moderate, low) for a model, without env overrides."""
    return MODEL_THRESHOLDS.get(model_key(model_id), DEFAULT_THRESHOLDS)


def validate_thresholds(thresholds: Any, name: str = "thresholds") -> Thresholds:
    """A (high, moderate, low) triple as floats with 1 >= high >= moderate >= low >= 0.

    Equal values are allowed, as widemem's ``>=`` comparisons allow them: a
    band whose two bounds are equal is simply empty.
    """
    if isinstance(thresholds, (str, bytes)) or not isinstance(thresholds, Sequence):
        raise ValueError(f"{name} must be a (high, moderate, low) sequence, got {thresholds!r}")
    if len(thresholds) != 3:
        raise ValueError(f"{name} must have 3 values (high, moderate, low), got {len(thresholds)}")
    try:
        high, moderate, low = (float(x) for x in thresholds)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers, got {thresholds!r}") from None
    for label, v in (("high", high), ("moderate", moderate), ("low", low)):
        if not math.isfinite(v) or not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} {label} must be in [0, 1], got {v!r}")
    if not high >= moderate >= low:
        raise ValueError(
            f"{name} out of order: need high >= moderate >= low, got "
            f"({high}, {moderate}, {low})"
        )
    return (high, moderate, low)


# Validated triples by (defaults, raw env values): the environment is still read at every
# call, only the parsing and checks of values already seen are skipped (every search
# resolves its thresholds). Failures are never kept, so a bad value raises every time.
_ENV_SEEN: dict[tuple[Thresholds, tuple[str | None, ...]], Thresholds] = {}
_ENV_SEEN_MAX = 64
def _env_thresholds(defaults: Thresholds) -> Thresholds:
    values = (os.environ.get(ENV_VARS[0]), os.environ.get(ENV_VARS[1]), os.environ.get(ENV_VARS[2]))
    key = (defaults, values)
    seen = _ENV_SEEN.get(key)
    if seen is not None:
        return seen
    if len(_ENV_SEEN) >= _ENV_SEEN_MAX:
        _ENV_SEEN.clear()
    _ENV_SEEN[key] = out = _parse_env_thresholds(defaults, values)
    return out


def _parse_env_thresholds(defaults: Thresholds, raws: tuple[str | None, ...]) -> Thresholds:
    values = []
    for var, default, raw in zip(ENV_VARS, defaults, raws, strict=True):
        if raw is None:
            values.append(default)
            continue
        try:
            values.append(float(raw))
        except ValueError:
            raise ValueError(f"{var} must be a number, got {raw!r}") from None
    return validate_thresholds(values, name="WIDEMEM_CONFIDENCE_* thresholds")


def resolve_thresholds(
    model_id: str, override: Any = None, *, embedder_name: str | None = None,
    calibrated: CalibratedFn | None = None,
) -> Thresholds:
    """The (high, moderate, low) cut-offs in force for ``model_id``.

    - ``override=None``: widemem's table for the model, then each
      ``WIDEMEM_CONFIDENCE_HIGH/MODERATE/LOW`` set in the environment replaces
      its value. The environment is read at every call, as in widemem.
    - a (high, moderate, low) triple: used as given; the environment is NOT
      consulted, so a configured sweep value cannot be silently replaced by a
      variable left in a shell. (widemem 2.0.2 has no config setting, only the
      environment over its table.)
    - ``"calibrated"``: ``calibrated(embedder_name)`` (``model_id`` when no name), the
      committed calibration file of the embedder's registry name (e.g. "minilm-l6"),
      read by ``harness.calibrated_thresholds``: the engine does not import calibration/.

    Unlike widemem, which crashes on an unparsable variable and only logs a
    warning for out-of-order values, both are a ValueError naming the problem.
    """
    if override is None:
        return _env_thresholds(thresholds_for_model(model_id))
    if isinstance(override, str):
        if override == CALIBRATED:
            name = embedder_name or model_id
            if calibrated is None:
                raise ValueError(f"thresholds: 'calibrated' for {name!r} needs its calibration file: "
                                 "use widemem_bench.harness.thresholds_in_force")
            return validate_thresholds(calibrated(name), name=f"calibrated thresholds for {name!r}")
        raise ValueError(f"thresholds must be None, 'calibrated' or (high, moderate, low), got {override!r}")
    return validate_thresholds(override)


def band_count(score, high: float, moderate: float, low: float):
    """The one band rule: how many of (low, moderate, high) ``score`` reaches (``>=``),
    3 HIGH .. 0 NONE. Works on a float (an int) and on arrays (int8); NaN reaches none."""
    if isinstance(score, np.ndarray):
        with np.errstate(invalid="ignore"):
            return ((score >= low).astype(np.int8) + (score >= moderate) + (score >= high)).astype(np.int8)
    return (score >= low) + (score >= moderate) + (score >= high)


_CODE_BANDS = (Confidence.NONE, Confidence.LOW, Confidence.MODERATE, Confidence.HIGH)


def confidence_from_similarity(similarity: float | None, thresholds: Thresholds) -> Confidence:
    """Band of one raw cosine: ``>= high`` HIGH, ``>= moderate`` MODERATE,
    ``>= low`` LOW, else NONE. ``None`` (no results) and NaN give NONE."""
    if similarity is None:
        return Confidence.NONE
    high, moderate, low = thresholds
    return _CODE_BANDS[int(band_count(float(similarity), high, moderate, low))]


def band_codes(similarity, thresholds: Thresholds) -> np.ndarray:
    """Vectorised bands as int8 codes (3 high ... 0 none); NaN gives 0.

    Relies on ordered thresholds (``validate_thresholds``): the code is the
    number of cut-offs the similarity reaches.
    """
    high, moderate, low = validate_thresholds(thresholds)
    return np.asarray(band_count(np.asarray(similarity, dtype=np.float64), high, moderate, low), dtype=np.int8)


def as_confidence(value: Confidence | str) -> Confidence:
    try:
        return Confidence(value)
    except ValueError:
        names = ", ".join(c.value for c in Confidence)
        raise ValueError(f"confidence must be one of {names}, got {value!r}") from None


def as_uncertainty_mode(value: UncertaintyMode | str) -> UncertaintyMode:
    try:
        return UncertaintyMode(value)
    except ValueError:
        names = ", ".join(m.value for m in UncertaintyMode)
        raise ValueError(f"mode must be one of {names}, got {value!r}") from None


# widemem's guidance table: (band, mode) -> action. HIGH needs no guidance.
GUIDANCE_ACTIONS: Mapping[tuple[Confidence, UncertaintyMode], str] = {
    (Confidence.MODERATE, UncertaintyMode.STRICT): "hedge",
    (Confidence.MODERATE, UncertaintyMode.HELPFUL): "answer",
    (Confidence.MODERATE, UncertaintyMode.CREATIVE): "answer",
    (Confidence.LOW, UncertaintyMode.STRICT): "refuse",
    (Confidence.LOW, UncertaintyMode.HELPFUL): "hedge",
    (Confidence.LOW, UncertaintyMode.CREATIVE): "offer_guess",
    (Confidence.NONE, UncertaintyMode.STRICT): "refuse",
    (Confidence.NONE, UncertaintyMode.HELPFUL): "refuse",
    (Confidence.NONE, UncertaintyMode.CREATIVE): "offer_guess",
}
# Cells that carry the top results as "related" snippets.
RELATED_CELLS = frozenset(
    {(Confidence.LOW, UncertaintyMode.HELPFUL), (Confidence.LOW, UncertaintyMode.CREATIVE)}
)
RELATED_COUNT = 3
RELATED_CHARS = 80

# Our own wording; the actions and keys follow widemem, the sentences do not
# have to match it word for word.
GUIDANCE_MESSAGES: Mapping[tuple[Confidence, UncertaintyMode], str] = {
    (Confidence.MODERATE, UncertaintyMode.STRICT): "Some stored information may fit, but I am not sure of it.",
    (Confidence.MODERATE, UncertaintyMode.HELPFUL): "From what I remember, with some doubt:",
    (Confidence.MODERATE, UncertaintyMode.CREATIVE): "From what I remember, with some doubt:",
    (Confidence.LOW, UncertaintyMode.STRICT): "I am not confident that anything I remember is relevant here.",
    (Confidence.LOW, UncertaintyMode.HELPFUL): "I have no direct answer, only some related memories.",
    (Confidence.LOW, UncertaintyMode.CREATIVE): "I am unsure, but some related memories could help me guess. Shall I try?",
    (Confidence.NONE, UncertaintyMode.STRICT): "I have nothing stored about this.",
    (Confidence.NONE, UncertaintyMode.HELPFUL): "I have no stored information on this.",
    (Confidence.NONE, UncertaintyMode.CREATIVE): "This is not in my memory; I can guess from what I do know if you like.",
}


def build_uncertainty_guidance(
    confidence: Confidence | str, mode: UncertaintyMode | str, results: Sequence[Any]
) -> dict[str, Any] | None:
    """What an agent should do with a retrieval of this band, per widemem.

    None on HIGH; else ``{"action", "message"}`` plus ``"related"`` (the first
    80 characters of each of the top 3 results' content) on LOW in helpful and
    creative modes. ``results`` are ranked objects with ``.memory.content``.
    """
    band = as_confidence(confidence)
    umode = as_uncertainty_mode(mode)
    if band == Confidence.HIGH:
        return None
    cell = (band, umode)
    out: dict[str, Any] = {"action": GUIDANCE_ACTIONS[cell], "message": GUIDANCE_MESSAGES[cell]}
    if cell in RELATED_CELLS:
        out["related"] = [r.memory.content[:RELATED_CHARS] for r in list(results or [])[:RELATED_COUNT]]
    return out
