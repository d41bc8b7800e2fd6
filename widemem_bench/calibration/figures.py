"""Validation / holdout figures of a set of thresholds, as stored in a calibration file."""

from __future__ import annotations

from typing import Any

import numpy as np

from widemem_bench.calibration.certify import Ladder
from widemem_bench.calibration.ltt import ThresholdFit, assign_bands
from widemem_bench.metrics import NEGATIVE_KINDS, compute, with_ci


def band_figures(
    scores: Any,
    kinds: Any,
    thresholds: tuple[float, float, float],
    *,
    groups: Any = None,
    ci: bool = False,
    seed: int = 0,
    n_boot: int = 1000,
) -> dict[str, Any]:
    """Precision, recall at MODERATE or above and false confidence of ``thresholds`` on one split.

    ``kinds`` holds question kinds as strings. Keys: n, n_answerable, precision_high,
    precision_moderate_plus, recall_moderate_plus and false_confidence_<kind> for every
    unanswerable kind present. With ``ci=True`` each figure is a [value, lo, hi] list
    (cluster bootstrap over ``groups`` when given). NaN figures become None (JSON).
    """
    k = np.asarray(kinds).astype(str)
    bands = assign_bands(scores, thresholds)
    names = ["precision_high", "precision_moderate_plus", "recall_moderate_plus"]
    names += [f"false_confidence_{kind}" for kind in NEGATIVE_KINDS if (k == kind).any()]
    out: dict[str, Any] = {"n": int(k.size), "n_answerable": int((k == "answerable").sum())}
    for name in names:
        if ci:
            triple = with_ci(name, bands, k, groups=groups, seed=seed, n_boot=n_boot)
            out[name] = [None if np.isnan(v) else float(v) for v in triple]
        else:
            value = compute(name, bands, k)
            out[name] = None if np.isnan(value) else value
    return out


def answerability_section(fit: ThresholdFit | Ladder, *, model: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The ``answerability`` section of a calibration file: the scorer and its probability cut-offs.

    ``fit`` is a certified `Ladder` (its certificate is stored too) or a plain `ThresholdFit`.
    """
    from widemem_bench.calibration.file import bands_from_fit

    section: dict[str, Any] = {
        "model": dict(model),
        "score": "answerability_probability",
        "delta": fit.delta,
        "method": fit.method,
    }
    if isinstance(fit, Ladder):
        section["bands"] = {b: dict(v) for b, v in fit.bands.items()}
        section["certificate"] = fit.certificate()
    else:
        section["bands"] = bands_from_fit(fit)
    return {**section, **extra}
