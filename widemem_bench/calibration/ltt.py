"""Choose HIGH / MODERATE / LOW thresholds with a finite-sample precision guarantee.

Learn-then-Test (Angelopoulos, Bates, Candès, Jordan, Lei 2021). For a band with
target precision ``p*`` and a candidate threshold ``t``, the null hypothesis is

    H_t: P(answerable | score >= t) < p*     ("band or above" precision too low).

Conditional on which calibration questions reach ``t``, their labels are i.i.d.
Bernoulli(precision(t)), so with k answerable among n reaching ``t`` the exact
binomial tail ``P(Binom(n, p*) >= k)`` is a valid p-value (``method="binomial"``);
``method="hb"`` uses the Hoeffding-Bentkus p-value of the LTT paper instead (valid
for any bounded loss, a little more conservative here). ``method="empirical"`` is
the naive baseline with NO guarantee, for comparison only: the lowest threshold
whose plain empirical precision meets the target.

Fixed-sequence testing: candidates are tested from the strictest (highest)
threshold downward, each at level ``delta``, and testing stops at the first
failure. Every threshold before the stop is certified, and the probability that
any certified threshold actually has precision < p* is at most ``delta`` (the
family-wise error). The chosen threshold is the lowest certified one, i.e. the
widest band that still meets its target.

Candidates are the distinct calibration scores. Thresholds reached by fewer than
``n_min = ceil(log(delta) / log(p*))`` questions are skipped, because even a
perfect record there could not be certified and testing them would stop the
sequence at once. This pre-filter looks at the scores only, never the labels, so
the sequence is fixed before the labels are seen, as fixed-sequence testing requires.

Each band is its own family at level ``delta`` (``joint=True`` splits delta
over the three bands, Bonferroni, for a guarantee on all three at once).
When nothing can be certified the threshold is 1.0 (no ordinary score reaches
the band) and ``certified`` is False. Thresholds are then made monotone,
high >= moderate >= low: a lower band whose own threshold came out above the
band above it takes that band's threshold, which is certified at a precision
at least as high as its own target.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from widemem_bench.engine.confidence import band_count

BANDS = ("high", "moderate", "low")
DEFAULT_TARGETS: dict[str, float] = {"high": 0.95, "moderate": 0.80, "low": 0.50}
DEFAULT_DELTA = 0.1
UNCERTIFIED_THRESHOLD = 1.0
PValueMethod = Literal["binomial", "hb", "empirical"]


@dataclass(frozen=True)
class BandFit:
    """One band's chosen threshold and its figures on the calibration data.

    ``precision`` and ``precision_lower_bound`` are "band or above" precisions:
    P(answerable | score >= threshold), the latter a one-sided Clopper-Pearson bound
    at level ``delta``. ``coverage`` is the share of all questions reaching the
    threshold, ``recall`` the share of answerable ones, ``n`` the count reaching it.
    ``inherited`` is True when monotonicity replaced the band's own threshold by
    the one of the band above.
    """

    band: str
    target: float
    threshold: float
    certified: bool
    precision: float
    precision_lower_bound: float
    coverage: float
    recall: float
    n: int
    p_value: float
    inherited: bool = False


@dataclass(frozen=True)
class ThresholdFit:
    """Result of ``fit_thresholds``: one ``BandFit`` per band plus the test settings."""

    bands: dict[str, BandFit]
    delta: float
    method: str
    joint: bool
    n: int
    n_answerable: int

    @property
    def thresholds(self) -> tuple[float, float, float]:
        """(high, moderate, low), the order ``engine.resolve_thresholds`` uses."""
        return (
            self.bands["high"].threshold,
            self.bands["moderate"].threshold,
            self.bands["low"].threshold,
        )

    @property
    def all_certified(self) -> bool:
        return all(b.certified for b in self.bands.values())

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(self.bands[b]) for b in BANDS])


def _validate_targets(targets: Mapping[str, float] | None) -> dict[str, float]:
    merged = dict(DEFAULT_TARGETS)
    for key, value in (targets or {}).items():
        if key not in DEFAULT_TARGETS:
            raise ValueError(f"targets has unknown band {key!r}; expected high, moderate, low")
        merged[key] = float(value)
    for key, value in merged.items():
        if not 0 < value < 1:
            raise ValueError(f"targets.{key} must lie in (0, 1), got {value}")
    if not merged["high"] >= merged["moderate"] >= merged["low"]:
        raise ValueError(f"targets must satisfy high >= moderate >= low, got {merged}")
    return merged


def binomial_p_value(k: np.ndarray, n: np.ndarray, target: float) -> np.ndarray:
    """P(Binom(n, target) >= k): small when k answerable of n is unlikely under precision <= target."""
    return np.asarray(stats.binom.sf(np.asarray(k) - 1, n, target), dtype=float)


def hb_p_value(k: np.ndarray, n: np.ndarray, target: float) -> np.ndarray:
    """Hoeffding-Bentkus p-value (LTT paper, eq. for bounded losses) for risk 1 - precision."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    alpha = 1.0 - target
    risk = np.where(n > 0, 1.0 - k / np.maximum(n, 1), 1.0)
    r = np.minimum(risk, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        h1 = r * np.log(r / alpha) + (1 - r) * np.log((1 - r) / (1 - alpha))
    h1 = np.nan_to_num(np.where(r <= 0, np.log(1 / (1 - alpha)), h1))
    hoeffding = np.exp(-n * h1)
    bentkus = math.e * stats.binom.cdf(np.ceil(n * risk), n, alpha)
    return np.minimum(np.minimum(hoeffding, bentkus), 1.0)


def clopper_pearson_lower(k: int, n: int, delta: float) -> float:
    """One-sided (1 - delta) lower confidence bound of a binomial proportion."""
    if n == 0 or k == 0:
        return 0.0
    return float(stats.beta.ppf(delta, k, n - k + 1))


def n_min(target: float, delta: float) -> int:
    """Fewest questions at which a perfect record (all answerable) is certifiable at ``delta``."""
    return max(1, math.ceil(math.log(delta) / math.log(target)))


def _fit_band(
    band: str,
    target: float,
    delta: float,
    method: str,
    s_desc: np.ndarray,
    cum_pos: np.ndarray,
    n_total: int,
    n_pos: int,
) -> BandFit:
    # Distinct candidate thresholds, strictest first; n and k reaching each one.
    uniq_idx = np.flatnonzero(np.r_[s_desc[1:] != s_desc[:-1], True])
    cand = s_desc[uniq_idx]
    n_reach = uniq_idx + 1
    k_reach = cum_pos[uniq_idx]
    if method == "empirical":
        meets = np.flatnonzero(k_reach >= target * n_reach)
        if meets.size == 0:
            return BandFit(band, target, UNCERTIFIED_THRESHOLD, False, float("nan"), 0.0, 0.0, 0.0, 0, 1.0)
        j = int(meets[-1])
        nj, kj = int(n_reach[j]), int(k_reach[j])
        return BandFit(
            band, target, float(cand[j]), True, kj / nj, clopper_pearson_lower(kj, nj, delta),
            nj / n_total, kj / n_pos if n_pos else float("nan"), nj, float("nan"),
        )
    keep = n_reach >= n_min(target, delta)
    cand, n_reach, k_reach = cand[keep], n_reach[keep], k_reach[keep]
    pfun = binomial_p_value if method == "binomial" else hb_p_value
    pvals = pfun(k_reach, n_reach, target) if cand.size else np.empty(0)
    fails = np.flatnonzero(pvals > delta)
    n_cert = int(fails[0]) if fails.size else int(cand.size)
    if n_cert == 0:
        # Figures of the first tested candidate (or nothing) explain why it failed.
        first_p = float(pvals[0]) if pvals.size else 1.0
        return BandFit(band, target, UNCERTIFIED_THRESHOLD, False, float("nan"), 0.0, 0.0, 0.0, 0, first_p)
    i = n_cert - 1
    n_i, k_i = int(n_reach[i]), int(k_reach[i])
    return BandFit(
        band=band,
        target=target,
        threshold=float(cand[i]),
        certified=True,
        precision=k_i / n_i,
        precision_lower_bound=clopper_pearson_lower(k_i, n_i, delta),
        coverage=n_i / n_total,
        recall=k_i / n_pos if n_pos else float("nan"),
        n=n_i,
        p_value=float(pvals[i]),
    )


def fit_thresholds(
    scores: Any,
    answerable: Any,
    *,
    targets: Mapping[str, float] | None = None,
    delta: float = DEFAULT_DELTA,
    method: PValueMethod | str = "binomial",
    joint: bool = False,
) -> ThresholdFit:
    """Fit HIGH / MODERATE / LOW thresholds on ``scores`` (top-1 cosine or a probability).

    ``answerable`` is a boolean array: the question's answer is stored (or, for a
    "correct" calibration, the top-1 memory is gold). Returns the lowest certified
    threshold per band (see the module docstring for the guarantee).
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(answerable)
    if s.ndim != 1 or y.shape != s.shape:
        raise ValueError(f"scores and answerable must be 1-D of equal length, got {s.shape} and {y.shape}")
    if s.size == 0:
        raise ValueError("scores is empty; nothing to calibrate on")
    if np.isnan(s).any():
        raise ValueError("scores must not contain NaN")
    if y.dtype != bool:
        if not np.isin(y, (0, 1)).all():
            raise ValueError("answerable must be boolean (or 0/1)")
        y = y.astype(bool)
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if method not in ("binomial", "hb", "empirical"):
        raise ValueError(f"method must be 'binomial', 'hb' or 'empirical', got {method!r}")
    tgt = _validate_targets(targets)
    level = delta / len(BANDS) if joint else delta

    order = np.argsort(-s, kind="stable")
    s_desc = s[order]
    cum_pos = np.cumsum(y[order])
    n_total, n_pos = int(s.size), int(y.sum())
    raw = {b: _fit_band(b, tgt[b], level, method, s_desc, cum_pos, n_total, n_pos) for b in BANDS}

    fitted: dict[str, BandFit] = {}
    above: BandFit | None = None
    for b in BANDS:
        fit = raw[b]
        if above is not None and above.certified and (not fit.certified or fit.threshold > above.threshold):
            # The band above is certified at a precision >= this band's target.
            fit = BandFit(**{**asdict(above), "band": b, "target": fit.target, "inherited": True})
        elif above is not None and fit.threshold > above.threshold:
            fit = BandFit(**{**asdict(fit), "threshold": above.threshold})
        fitted[b] = fit
        above = fit
    return ThresholdFit(fitted, delta, method, joint, n_total, n_pos)


def assign_bands(scores: Any, thresholds: tuple[float, float, float]) -> np.ndarray:
    """Band codes (3 high, 2 moderate, 1 low, 0 none) for ``scores`` under (high, moderate, low)."""
    high, moderate, low = (float(t) for t in thresholds)
    return np.asarray(band_count(np.asarray(scores, dtype=float), high, moderate, low), dtype=np.int8)
