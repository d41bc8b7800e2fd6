"""Confidence-band metrics: band shares, recall at MODERATE or above, false confidence, band precision.

Inputs are per-question arrays:

- ``bands``: int band codes, 3 high, 2 moderate, 1 low, 0 none (``engine.confidence.BAND_CODES``);
- ``kinds``: question kinds as strings ("answerable", "hard_negative", "never_mentioned",
  "other_person", ...) or a boolean "answerable" array;
- ``top1_correct``: boolean, the gold memory is the top-1 result.

Shares over an empty set (e.g. no hard negatives in a split) are NaN, never 0, so a
missing kind cannot pass for a perfect score.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.metrics.registry import register

HIGH, MODERATE, LOW, NONE = 3, 2, 1, 0
BAND_NAMES = {HIGH: "high", MODERATE: "moderate", LOW: "low", NONE: "none"}
BAND_BY_NAME = {v: k for k, v in BAND_NAMES.items()}
ANSWERABLE = "answerable"
NEGATIVE_KINDS = ("never_mentioned", "hard_negative", "other_person")


def _bands(bands: Any) -> np.ndarray:
    arr = np.asarray(bands)
    if arr.ndim != 1:
        raise ValueError(f"bands must be a 1-D array, got shape {arr.shape}")
    if arr.size and (arr.min() < NONE or arr.max() > HIGH):
        raise ValueError("bands must hold band codes 0 (none) to 3 (high)")
    return arr.astype(np.int8)


def _band_code(band: int | str) -> int:
    if isinstance(band, str):
        if band not in BAND_BY_NAME:
            raise ValueError(f"band must be one of {sorted(BAND_BY_NAME)} or 0-3, got {band!r}")
        return BAND_BY_NAME[band]
    if band not in BAND_NAMES:
        raise ValueError(f"band must be 0-3, got {band!r}")
    return int(band)


def answerable_mask(kinds: Any) -> np.ndarray:
    """Boolean answerable mask from a kind array (strings) or an already boolean array."""
    arr = np.asarray(kinds)
    if arr.dtype == bool:
        return arr
    return arr.astype(str) == ANSWERABLE


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    total = float(den.sum())
    return float(num.sum()) / total if total > 0 else float("nan")


# --- band share -------------------------------------------------------------------------


def band_share_terms(bands: Any, kinds: Any, *, kind: str, band: int | str) -> tuple[np.ndarray, np.ndarray]:
    b = _bands(bands)
    den = np.asarray(kinds).astype(str) == kind
    return den & (b == _band_code(band)), den


def band_share(bands: Any, kinds: Any, *, kind: str, band: int | str) -> float:
    """Share of questions of ``kind`` whose band is exactly ``band``."""
    return _ratio(*band_share_terms(bands, kinds, kind=kind, band=band))


def band_share_table(bands: Any, kinds: Any) -> pd.DataFrame:
    """Kind x band table of shares (each row sums to 1) with the count n per kind."""
    b = _bands(bands)
    k = np.asarray(kinds).astype(str)
    rows = []
    for kind in sorted(set(k.tolist())):
        sel = b[k == kind]
        row: dict[str, Any] = {"kind": kind, "n": int(sel.size)}
        for code in (HIGH, MODERATE, LOW, NONE):
            row[BAND_NAMES[code]] = float(np.mean(sel == code))
        rows.append(row)
    return pd.DataFrame(rows, columns=["kind", "n", "high", "moderate", "low", "none"])


# --- recall at MODERATE or above ---------------------------------------------------------


def recall_terms(bands: Any, kinds: Any, *, band: int | str = MODERATE) -> tuple[np.ndarray, np.ndarray]:
    ans = answerable_mask(kinds)
    return ans & (_bands(bands) >= _band_code(band)), ans


def recall_at_band(bands: Any, kinds: Any, *, band: int | str = MODERATE) -> float:
    """Share of answerable questions at ``band`` or above (default: recall at MODERATE or above)."""
    return _ratio(*recall_terms(bands, kinds, band=band))


def recall_top1_terms(
    bands: Any, kinds: Any, top1_correct: Any, *, band: int | str = MODERATE
) -> tuple[np.ndarray, np.ndarray]:
    hit, ans = recall_terms(bands, kinds, band=band)
    return hit & np.asarray(top1_correct, dtype=bool), ans


def recall_at_band_top1(bands: Any, kinds: Any, top1_correct: Any, *, band: int | str = MODERATE) -> float:
    """Share of answerable questions at ``band`` or above AND with the gold memory at top-1.

    Stricter than ``recall_at_band``: a confident verdict backed by the wrong memory
    does not count.
    """
    return _ratio(*recall_top1_terms(bands, kinds, top1_correct, band=band))


# --- false confidence --------------------------------------------------------------------


def false_confidence_terms(
    bands: Any, kinds: Any, *, kind: str, band: int | str = MODERATE
) -> tuple[np.ndarray, np.ndarray]:
    den = np.asarray(kinds).astype(str) == kind
    return den & (_bands(bands) >= _band_code(band)), den


def false_confidence(bands: Any, kinds: Any, *, kind: str, band: int | str = MODERATE) -> float:
    """Share of unanswerable questions of ``kind`` that read ``band`` or above (lower is better)."""
    if kind == ANSWERABLE:
        raise ValueError("kind must be an unanswerable kind for false_confidence, got 'answerable'")
    return _ratio(*false_confidence_terms(bands, kinds, kind=kind, band=band))


# --- band precision ----------------------------------------------------------------------


def precision_terms(
    bands: Any, kinds: Any, *, band: int | str, or_above: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    b = _bands(bands)
    code = _band_code(band)
    den = b >= code if or_above else b == code
    return den & answerable_mask(kinds), den


def band_precision(bands: Any, kinds: Any, *, band: int | str, or_above: bool = False) -> float:
    """Share of answerable questions among those in ``band`` (or ``band`` or above)."""
    return _ratio(*precision_terms(bands, kinds, band=band, or_above=or_above))


# --- registry ----------------------------------------------------------------------------

register(
    "recall_moderate_plus",
    recall_at_band,
    ratio=recall_terms,
    direction="higher",
    description="recall at MODERATE or above: share of answerable questions with band >= moderate",
    inputs=("bands", "kinds"),
    band=MODERATE,
    min_effect=0.02,  # 2 points of recall: ~20 answerable questions of the gate's ~1000
)
register(
    "recall_high",
    recall_at_band,
    ratio=recall_terms,
    direction="higher",
    description="share of answerable questions with band high",
    inputs=("bands", "kinds"),
    band=HIGH,
)
register(
    "recall_moderate_plus_top1",
    recall_at_band_top1,
    ratio=recall_top1_terms,
    direction="higher",
    description="share of answerable questions with band >= moderate and the gold memory at top-1",
    inputs=("bands", "kinds", "top1_correct"),
    band=MODERATE,
)
for _kind in NEGATIVE_KINDS:
    register(
        f"false_confidence_{_kind}",
        false_confidence,
        ratio=false_confidence_terms,
        direction="lower",
        description=f"false confidence: share of {_kind} questions with band >= moderate",
        inputs=("bands", "kinds"),
        kind=_kind,
        band=MODERATE,
        min_effect=0.02,
    )
for _code in (HIGH, MODERATE, LOW):
    _name = BAND_NAMES[_code]
    register(
        f"precision_{_name}",
        band_precision,
        ratio=precision_terms,
        direction="higher",
        description=f"precision of the {_name} band: share answerable among questions in that band",
        inputs=("bands", "kinds"),
        band=_code,
        or_above=False,
    )
    if _code != HIGH:  # "high or above" is the high band itself
        register(
            f"precision_{_name}_plus",
            band_precision,
            ratio=precision_terms,
            direction="higher",
            description=f"precision of {_name} or above: share answerable among questions with band >= {_name}",
            inputs=("bands", "kinds"),
            band=_code,
            or_above=True,
        )
for _kind in (ANSWERABLE, *NEGATIVE_KINDS):
    for _code in (HIGH, MODERATE, LOW, NONE):
        register(
            f"share_{_kind}_{BAND_NAMES[_code]}",
            band_share,
            ratio=band_share_terms,
            # Answerable questions should read MODERATE or above; for unanswerable kinds
            # only NONE is the right verdict.
            direction=(
                "higher"
                if (_code >= MODERATE if _kind == ANSWERABLE else _code == NONE)
                else "lower"
            ),
            description=f"share of {_kind} questions in the {BAND_NAMES[_code]} band",
            inputs=("bands", "kinds"),
            kind=_kind,
            band=_code,
            min_effect=0.02 if _code == NONE else None,  # the gate reads NONE per kind
        )
