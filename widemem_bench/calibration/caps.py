"""Caps for `fit_thresholds` fits: the lowest threshold at which a kind's rate is certified, and MODERATE raised to it.

The i.i.d. per-question version (e.g. the answerability tests); the calibrate pipeline's
caps are statements of `calibration.certify_ladder`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from widemem_bench.calibration.ltt import binomial_p_value, clopper_pearson_lower


def cap_threshold(scores: Any, is_kind: Any, max_rate: float, delta: float) -> dict[str, Any]:
    """Lowest threshold at which P(score >= t | kind) <= max_rate is certified at level ``delta``.

    The i.i.d. per-question version, for `fit_thresholds` fits (e.g. the answerability
    tests); the pipeline's caps are statements of `calibration.certify_ladder`.

    The same fixed-sequence test as `calibration.fit_thresholds`: candidate thresholds
    are the kind's distinct scores plus one above them all, tested from the strictest
    down; H_t: rate(t) > max_rate is rejected when P(Binom(n, max_rate) <= k) <= delta,
    with k of the n questions of that kind at or above t. Testing stops at the first
    failure. Returns threshold, certified, rate (empirical, on these scores),
    upper_bound (one-sided Clopper-Pearson at ``delta``), n.
    """
    s = np.sort(np.asarray(scores, dtype=float)[np.asarray(is_kind, dtype=bool)])[::-1]
    n = int(s.size)
    if not 0 < max_rate < 1:
        raise ValueError(f"cap rate must lie in (0, 1), got {max_rate}")
    if n == 0:
        return {"threshold": 0.0, "certified": False, "rate": None, "upper_bound": None, "n": 0, "max_rate": max_rate}
    # Candidate t = just above the (k+1)-th largest score, so exactly k questions reach it.
    uniq = np.unique(s)[::-1]
    cands = [float(np.nextafter(uniq[0], np.inf))] + [float(u) for u in uniq]
    best: tuple[float, int] | None = None
    for t in cands:
        k = int(np.sum(s >= t))
        p = float(stats.binom.cdf(k, n, max_rate))
        if p > delta:
            break
        best = (t, k)
    if best is None:
        return {"threshold": 1.0, "certified": False, "rate": None, "upper_bound": None, "n": n, "max_rate": max_rate}
    t, k = best
    ub = 1.0 if k == n else float(stats.beta.ppf(1 - delta, k + 1, n - k))
    return {"threshold": t, "certified": True, "rate": k / n, "upper_bound": ub, "n": n, "max_rate": max_rate}


def apply_cap(fit: Any, scores: Any, answerable: Any, kinds: Any, cap: Mapping[str, float]) -> tuple[Any, dict[str, Any]]:
    """Raise MODERATE (and HIGH, to stay monotone) to every cap's certified threshold.

    Returns the new `ThresholdFit` (band figures recomputed on the same data; a band
    stays ``certified`` when its precision test still passes at the raised threshold)
    and the caps' figures.
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(answerable, dtype=bool)
    k = np.asarray(kinds).astype(str)
    caps = {kind: cap_threshold(s, k == kind, float(rate), fit.delta) for kind, rate in cap.items()}
    floor = max((c["threshold"] for c in caps.values()), default=-np.inf)
    bands = dict(fit.bands)
    for b in ("moderate", "high"):
        bf = bands[b]
        if bf.threshold >= floor:
            continue
        reach = s >= floor
        n_i, k_i = int(reach.sum()), int((reach & y).sum())
        pval = float(binomial_p_value(np.array([k_i]), np.array([n_i]), bf.target)[0]) if n_i else 1.0
        bands[b] = dataclasses.replace(
            bf, threshold=float(floor), certified=bool(n_i and pval <= fit.delta),
            precision=k_i / n_i if n_i else float("nan"),
            precision_lower_bound=clopper_pearson_lower(k_i, n_i, fit.delta),
            coverage=n_i / s.size, recall=k_i / y.sum() if y.any() else float("nan"), n=n_i, p_value=pval,
        )
    for b, bf in bands.items():
        if bf.threshold < 0.0:
            # A certified band reaching every question (even "nothing stored", scored -1):
            # the file keeps thresholds in [0, 1], so the band starts at cosine 0.
            bands[b] = dataclasses.replace(bf, threshold=0.0)
    return dataclasses.replace(fit, bands=bands), caps
