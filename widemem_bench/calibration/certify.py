"""A certificate for a whole HIGH / MODERATE / LOW ladder that holds when questions cluster by user.

What is certified (one family per line, every family tested at ``delta / K``,
Bonferroni over the K families, so that with probability at least ``1 - delta``
every statement below holds at once):

- HIGH: precision of "HIGH" (answerable among questions scoring >= HIGH) >= ``targets.high``;
- MODERATE: precision of "MODERATE or above" >= ``targets.moderate``;
- each cap ``caps.<kind> = r``: questions of that kind scoring MODERATE or above <= r;
- NONE: answerable questions scoring below LOW (so read NONE) <= ``none_answerable``.
  LOW is the highest threshold for which this is certified: NONE then means
  "scores below what all but a certified few percent of answerable questions reach";
- optionally each ``low_caps.<kind> = r``: questions of that kind at LOW or above <= r
  (false confidence at LOW, e.g. never-mentioned questions), which sets a floor under
  LOW; with both rules LOW is the highest threshold meeting both, and none is an error.

Assumption (users are the unit): calibration users are independent draws from the
users the thresholds will serve; questions of one user may depend on each other in
any way (shared phrasing, shared facts, repeated slots). Every rate above is a ratio
of per-user expectations (question-weighted, as the figures are reported).

Test (``method="cluster"``): for a rate of the form E[good_u] / E[count_u] >= p (every
family above can be written so), the null "rate < p" says E[good_u - p * count_u] < 0.
The per-user values Z_u = good_u - p * count_u are i.i.d. over users whatever the
dependence inside a user, so a one-sided t-test on the mean of Z_u over users (users
with no question reaching the threshold count with Z_u = 0) gives a p-value that is
valid as the number of users grows (central limit theorem over users). To keep it
honest with few users reaching a threshold, the p-value is the larger of that t-test
and the exact i.i.d. binomial tail (taking the larger of two p-values is valid when
either is), candidates reached by fewer than ``min_users_reach`` users are not
tested, and at least ``MIN_USERS`` users are required. ``method="binomial"`` is the
old i.i.d. binomial test alone (kept to show, in the coverage simulation, that it
fails under clustering).

Within a family, candidate thresholds are tested in a fixed sequence (from the
threshold where the statement is easiest to the hardest, stopping at the first
failure; a precision band starts where enough questions reach for a perfect record
to pass, see `n_min`): every threshold before the stop is certified, and the ladder takes the
least strict one. Candidates are the distinct scores, thinned to at most
``MAX_CANDIDATES`` by the scores alone (never the labels).

A ladder that leaves a band unreachable (LOW <= 0: NONE never comes back; LOW >=
MODERATE or MODERATE >= HIGH: a band is empty; HIGH >= 1 or nothing certified) is an
`UnreachableBandError` that names the band, the reason and the setting to change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

DEFAULT_DELTA = 0.1
DEFAULT_LADDER_TARGETS: dict[str, float] = {"high": 0.95, "moderate": 0.80}
DEFAULT_NONE_ANSWERABLE = 0.05
MIN_USERS = 30
MIN_USERS_REACH = 10
MAX_CANDIDATES = 2000
POSITIVE = "answerable"
METHODS = ("cluster", "binomial")
ASSUMPTION = (
    "users are independent draws from the users the thresholds will serve; questions of one user may "
    "depend on each other in any way. Per-user totals are tested (one-sided t-test over users, never "
    "below the i.i.d. binomial p-value), each of the K statements at delta/K (Bonferroni), so all hold "
    "together with probability >= 1 - delta, up to the normal approximation over users."
)


class UnreachableBandError(ValueError):
    """A calibrated ladder would leave a confidence band that no score can reach."""


# --------------------------------------------------------------------------- p-values


def ratio_p_values(good: np.ndarray, count: np.ndarray, target: float, method: str = "cluster") -> np.ndarray:
    """p-values of H0: sum(good) / sum(count) < target in expectation, per candidate.

    ``good`` and ``count`` are per-user totals shaped (..., U, G): U users, G
    candidates (any leading axes, e.g. simulated replicates). Returns (..., G).
    """
    g = np.asarray(good, dtype=float)
    c = np.asarray(count, dtype=float)
    k_tot = g.sum(axis=-2)
    n_tot = c.sum(axis=-2)
    # Exact i.i.d. tail P(Binom(n, target) >= k); n = 0 gives 1 (no evidence).
    p_binom = np.where(n_tot > 0, stats.binom.sf(k_tot - 1, np.maximum(n_tot, 1), target), 1.0)
    if method == "binomial":
        return np.asarray(p_binom, dtype=float)
    if method != "cluster":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    z = g - target * c
    n_users = z.shape[-2]
    mean = z.mean(axis=-2)
    sd = z.std(axis=-2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = mean / (sd / math.sqrt(n_users))
    p_t = np.where(sd > 0, stats.t.sf(tstat, df=n_users - 1), np.where(mean > 0, 0.0, 1.0))
    return np.asarray(np.maximum(p_t, p_binom), dtype=float)


def ratio_lower_bound(good: np.ndarray, count: np.ndarray, level: float, method: str = "cluster") -> float:
    """One-sided (1 - level) lower bound of sum(good) / sum(count) from per-user totals (U,)."""
    g, c = np.asarray(good, dtype=float), np.asarray(count, dtype=float)
    k, n = float(g.sum()), float(c.sum())
    if n == 0:
        return 0.0
    cp = 0.0 if k == 0 else float(stats.beta.ppf(level, k, n - k + 1))
    if method == "binomial":
        return cp
    u = g.size
    ratio = k / n
    # Linearised ratio estimator: se of mean(g - ratio * c) / mean(c), users as the unit.
    se = float(np.std(g - ratio * c, ddof=1)) / math.sqrt(u) / (n / u)
    return max(0.0, min(cp, ratio - float(stats.t.ppf(1 - level, df=u - 1)) * se))


def n_min(target: float, level: float) -> int:
    """Fewest questions at which a perfect record passes at ``level``: stricter candidates are skipped.

    Looks at the target and level only, never at the labels, so the sequence is fixed
    before the labels are seen.
    """
    return max(1, math.ceil(math.log(level) / math.log(target)))


def fixed_sequence(p_values: np.ndarray, level: float, testable: np.ndarray | None = None) -> np.ndarray:
    """Number of certified candidates per row: tested in order, stop at the first p > level.

    ``p_values`` (..., G) in test order; ``testable`` (..., G) marks candidates in the
    sequence (the rest are skipped, as decided before the labels were seen).
    """
    p = np.asarray(p_values, dtype=float)
    ok = p <= level
    if testable is not None:
        ok = ok | ~np.asarray(testable, dtype=bool)
    fail = ~ok
    any_fail = fail.any(axis=-1)
    first = np.where(any_fail, fail.argmax(axis=-1), p.shape[-1])
    return np.asarray(first)


# --------------------------------------------------------------------------- per-user counts


def reach_counts(rank: np.ndarray, users: np.ndarray, weights: np.ndarray, n_users: int, n_cand: int) -> np.ndarray:
    """(U, G) per-user sums of ``weights`` over questions reaching candidate g (ascending candidates).

    ``rank`` is, per question, how many ascending candidates it reaches (a question
    reaches candidate g when g < rank).
    """
    flat = users * (n_cand + 1) + rank
    hist = np.bincount(flat, weights=weights, minlength=n_users * (n_cand + 1)).reshape(n_users, n_cand + 1)
    # reach(g) = sum over rank > g: reverse cumulative sum, dropping rank 0.
    rev = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]
    return rev[:, 1:]


def candidates_of(scores: np.ndarray) -> np.ndarray:
    """Ascending candidate thresholds: the distinct scores, thinned by the scores alone."""
    uniq = np.unique(scores)
    if uniq.size > MAX_CANDIDATES:
        uniq = uniq[np.unique(np.linspace(0, uniq.size - 1, MAX_CANDIDATES).round().astype(int))]
    return uniq


# --------------------------------------------------------------------------- the ladder


@dataclass(frozen=True)
class Statement:
    """One certified family: its threshold, whether it was certified, and its figures on the data."""

    name: str          # "high", "moderate", "cap:<kind>", "none:answerable"
    kind: str          # "precision", "cap", "low_cap", "none"
    target: float      # precision target, or the cap / NONE maximum rate
    threshold: float
    certified: bool
    value: float | None        # empirical precision / rate at the threshold
    bound: float | None        # one-sided bound at the family's level (lower for precision, upper for rates)
    n: int                     # questions the rate is over (reaching, or of the kind)
    n_users: int               # users with at least one of those questions
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Ladder:
    """A certified (high, moderate, low) triple and every statement it rests on."""

    thresholds: tuple[float, float, float]
    statements: dict[str, Statement]
    delta: float
    level: float
    method: str
    n: int
    n_users: int
    n_answerable: int
    bands: dict[str, dict[str, Any]] = field(default_factory=dict)

    def certificate(self) -> dict[str, Any]:
        return {
            "delta": self.delta,
            "families": len(self.statements),
            "level_per_family": self.level,
            "method": self.method,
            "unit": "user",
            "n_users": self.n_users,
            "n_questions": self.n,
            "assumption": ASSUMPTION,
            "statements": {k: s.to_dict() for k, s in self.statements.items()},
        }


def pd_factorize(values: np.ndarray) -> tuple[np.ndarray, int]:
    _, codes = np.unique(values.astype(str), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if codes.size else 0


def _checked_settings(s: np.ndarray, k: np.ndarray, users: Any, targets: Mapping[str, float] | None,
                      caps: Mapping[str, float] | None, none_answerable: float | None,
                      low_caps: Mapping[str, float] | None, delta: float,
                      method: str) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """The targets, caps and low caps in force; ValueError (one line) for anything out of range."""
    if s.ndim != 1 or k.shape != s.shape or np.asarray(users).shape != s.shape:
        raise ValueError("scores, kinds and users must be 1-D of equal length")
    if s.size == 0 or np.isnan(s).any():
        raise ValueError("scores must be non-empty and free of NaN")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    tgt = {**DEFAULT_LADDER_TARGETS, **{b: float(v) for b, v in (targets or {}).items()}}
    unknown = sorted(set(tgt) - set(DEFAULT_LADDER_TARGETS))
    if unknown:
        raise ValueError(f"targets has unknown band(s) {unknown}; LOW is set by none.answerable, not a precision")
    for b, v in tgt.items():
        if not 0 < v < 1:
            raise ValueError(f"targets.{b} must lie in (0, 1), got {v}")
    if tgt["high"] < tgt["moderate"]:
        raise ValueError(f"targets.high ({tgt['high']}) must be >= targets.moderate ({tgt['moderate']})")
    if none_answerable is not None and not 0 < none_answerable < 1:
        raise ValueError(f"none.answerable must lie in (0, 1), got {none_answerable}")
    cap_d, low_d = dict(caps or {}), dict(low_caps or {})
    if none_answerable is None and not low_d:
        raise ValueError("LOW needs a rule: none.answerable=<rate> and/or low_cap.<kind>=<rate>")
    for prefix, family in (("cap", cap_d), ("low_cap", low_d)):
        for kind, rate in family.items():
            if not 0 < float(rate) < 1:
                raise ValueError(f"{prefix}.{kind} must lie in (0, 1), got {rate}")
            if kind == POSITIVE or not (k == kind).any():
                raise ValueError(f"{prefix}.{kind}: no unanswerable calibration question has kind {kind!r} "
                                 f"(kinds: {sorted(set(k.tolist()))})")
    return tgt, cap_d, low_d


@dataclass
class _Reach:
    """Per user and candidate threshold: how many questions (and answerable ones) reach it."""

    s: np.ndarray
    k: np.ndarray
    y: np.ndarray
    u_idx: np.ndarray
    n_users: int
    level: float
    method: str
    asc: np.ndarray = field(init=False)
    rank: np.ndarray = field(init=False)
    reach_n: np.ndarray = field(init=False)
    reach_y: np.ndarray = field(init=False)
    users_reach: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.asc = candidates_of(self.s)
        self.rank = np.searchsorted(self.asc, self.s, side="right")  # candidates each question reaches
        self.reach_n = reach_counts(self.rank, self.u_idx, np.ones(self.s.size), self.n_users, self.g)
        self.reach_y = reach_counts(self.rank, self.u_idx, self.y.astype(float), self.n_users, self.g)
        self.users_reach = (self.reach_n > 0).sum(axis=0)

    @property
    def g(self) -> int:
        return int(self.asc.size)


def _precision_statement(r: _Reach, band: str, p: float) -> tuple[Statement, float | None]:
    """A precision band, strictest (highest) candidate first; and the strictest candidate tested."""
    desc = slice(None, None, -1)
    pv = ratio_p_values(r.reach_y[:, desc], r.reach_n[:, desc], p, r.method)
    testable = r.reach_n.sum(axis=0)[desc] >= n_min(p, r.level)
    if r.method == "cluster":
        testable &= r.users_reach[desc] >= MIN_USERS_REACH
    n_cert = int(fixed_sequence(pv, r.level, testable))
    tested = np.flatnonzero(testable[:n_cert])
    if tested.size == 0:
        return Statement(band, "precision", p, 1.0, False, None, None, 0, 0,
                         float(pv[testable][0]) if testable.any() else 1.0), None
    j = int(tested[-1])           # the least strict certified candidate (descending index)
    gi = r.g - 1 - j
    st = Statement(band, "precision", p, float(r.asc[gi]), True,
                   float(r.reach_y[:, gi].sum() / r.reach_n[:, gi].sum()),
                   ratio_lower_bound(r.reach_y[:, gi], r.reach_n[:, gi], r.level, r.method),
                   int(r.reach_n[:, gi].sum()), int(r.users_reach[gi]), float(pv[j]))
    return st, float(r.asc[r.g - 1 - int(tested[0])])


def _cap_statement(r: _Reach, kind: str, rate: float, prefix: str) -> Statement:
    """A kind at MODERATE (cap) or LOW (low_cap) or above: the kind's "not reaching" share
    >= 1 - rate, strictest first. One extra candidate above every score (nothing reaches)
    starts the sequence."""
    g, n_users = r.g, r.n_users
    is_kind = (r.k == kind).astype(float)
    cnt_u = np.bincount(r.u_idx, weights=is_kind, minlength=n_users)
    kind_reach = reach_counts(r.rank, r.u_idx, is_kind, n_users, g)
    kr = np.concatenate([np.zeros((n_users, 1)), kind_reach[:, ::-1]], axis=1)  # descending, + "above all"
    good = cnt_u[:, None] - kr
    pv = ratio_p_values(good, np.repeat(cnt_u[:, None], g + 1, axis=1), 1 - rate, r.method)
    n_cert = int(fixed_sequence(pv, r.level))
    name = f"{prefix}:{kind}"
    if n_cert == 0:
        return Statement(name, prefix, rate, 1.0, False, None, None, int(cnt_u.sum()),
                         int((cnt_u > 0).sum()), float(pv[0]))
    j = n_cert - 1
    thr = float(np.nextafter(r.asc[-1], np.inf)) if j == 0 else float(r.asc[g - j])
    return Statement(name, prefix, rate, thr, True, float(kr[:, j].sum() / cnt_u.sum()),
                     1.0 - ratio_lower_bound(good[:, j], cnt_u, r.level, r.method),
                     int(cnt_u.sum()), int((cnt_u > 0).sum()), float(pv[j]))


def _none_statement(r: _Reach, none_answerable: float) -> Statement:
    """NONE: answerable questions below LOW <= none_answerable; least strict (lowest) first."""
    y = r.y
    n_ans_u = np.bincount(r.u_idx, weights=y.astype(float), minlength=r.n_users)
    pv = ratio_p_values(r.reach_y, np.repeat(n_ans_u[:, None], r.g, axis=1), 1 - none_answerable, r.method)
    n_cert = int(fixed_sequence(pv, r.level))
    if n_cert == 0:
        return Statement("none", "none", none_answerable, float(r.asc[0]), False, None, None,
                         int(y.sum()), int((n_ans_u > 0).sum()), float(pv[0]))
    j = n_cert - 1
    return Statement("none", "none", none_answerable, float(r.asc[j]), True,
                     float(1 - r.reach_y[:, j].sum() / y.sum()),
                     1.0 - ratio_lower_bound(r.reach_y[:, j], n_ans_u, r.level, r.method),
                     int(y.sum()), int((n_ans_u > 0).sum()), float(pv[j]))


def _ladder_thresholds(r: _Reach, st: Mapping[str, Statement], caps: Mapping[str, float],
                       low_caps: Mapping[str, float], strictest_high: float | None, strict: bool,
                       score_name: str) -> tuple[float, float, float]:
    """(high, moderate, low) from the statements: MODERATE raised to every cap, LOW between
    the low caps' floor and the NONE statement's ceiling, each band kept non-empty."""
    asc = r.asc
    high = st["high"].threshold
    moderate = max([st["moderate"].threshold] + [st[f"cap:{c}"].threshold for c in caps])
    # LOW: at least every low cap's threshold (its certified region is [floor, inf)), at most
    # the NONE statement's (its certified region is (-inf, ceiling]); the highest such.
    floor = max((st[f"low_cap:{c}"].threshold for c in low_caps), default=-np.inf)
    low = st["none"].threshold if "none" in st else float(floor)
    if "none" in st and low < floor and strict and st["none"].certified:
        raise UnreachableBandError(
            f"{score_name}: no LOW satisfies both none.answerable (LOW <= {low:.4g}) and the low caps "
            f"(LOW >= {floor:.4g}); loosen one of them")
    above = asc[(asc > moderate) & (asc <= (strictest_high if strictest_high is not None else -np.inf))]
    if st["high"].certified and high <= moderate and above.size:
        # Every tested threshold from HIGH's up to the strictest tested one is certified,
        # so HIGH moves just above a MODERATE that a cap raised, and stays certified.
        high = float(above[0])
    below = asc[(asc < moderate) & (asc >= floor)]
    if "none" in st and st["none"].certified and low >= moderate and below.size:
        # Any threshold below a certified LOW keeps the NONE statement (fewer answerable
        # questions fall below it), so LOW moves just under MODERATE and stays certified.
        low = float(below[-1])
    return high, moderate, low


def certify_ladder(
    scores: Any,
    kinds: Any,
    users: Any,
    *,
    targets: Mapping[str, float] | None = None,
    caps: Mapping[str, float] | None = None,
    none_answerable: float | None = DEFAULT_NONE_ANSWERABLE,
    low_caps: Mapping[str, float] | None = None,
    delta: float = DEFAULT_DELTA,
    method: str = "cluster",
    score_name: str = "score",
    strict: bool = True,
) -> Ladder:
    """Certify a ladder on one calibration set (see the module docstring).

    ``kinds``: "answerable" for questions whose answer is stored, anything else for
    the rest (e.g. "hard_negative"); caps name such kinds. ``users``: one id per
    question. ``strict``: raise `UnreachableBandError` when a band is unreachable
    (False returns the ladder anyway, for simulations and diagnostics).
    """
    s = np.asarray(scores, dtype=float)
    k = np.asarray(kinds).astype(str)
    tgt, cap_d, low_d = _checked_settings(s, k, users, targets, caps, none_answerable, low_caps, delta, method)
    u_idx, n_users = pd_factorize(np.asarray(users))
    if method == "cluster" and n_users < MIN_USERS:
        raise ValueError(f"{n_users} users: the certificate needs at least {MIN_USERS} (users are the unit)")
    y = k == POSITIVE
    if not y.any() or y.all():
        raise ValueError("calibration data needs both answerable and unanswerable questions")
    level = delta / (2 + len(cap_d) + len(low_d) + (none_answerable is not None))
    r = _Reach(s, k, y, u_idx, n_users, level, method)
    statements: dict[str, Statement] = {}
    statements["high"], top_high = _precision_statement(r, "high", tgt["high"])  # + its certified region's top
    statements["moderate"], _ = _precision_statement(r, "moderate", tgt["moderate"])
    for kind, rate in cap_d.items():
        statements[f"cap:{kind}"] = _cap_statement(r, kind, float(rate), "cap")
    for kind, rate in low_d.items():
        statements[f"low_cap:{kind}"] = _cap_statement(r, kind, float(rate), "low_cap")
    if none_answerable is not None:
        statements["none"] = _none_statement(r, none_answerable)
    ths = _ladder_thresholds(r, statements, cap_d, low_d, top_high, strict, score_name)
    ladder = Ladder(ths, statements, delta, level, method, int(s.size), n_users, int(y.sum()))
    bands = _band_summary(ladder, s, y, u_idx, n_users, level)
    ladder = Ladder(ladder.thresholds, statements, delta, level, method, ladder.n, n_users, ladder.n_answerable, bands)
    if strict:
        check_reachable(ladder, score_name=score_name)
    return ladder


def _band_summary(ladder: Ladder, s: np.ndarray, y: np.ndarray, u_idx: np.ndarray, n_users: int,
                  level: float) -> dict[str, dict[str, Any]]:
    """The calibration file's ``bands`` section: per band its threshold and figures on this data."""
    out: dict[str, dict[str, Any]] = {}
    st = ladder.statements
    for band, thr in zip(("high", "moderate", "low"), ladder.thresholds, strict=True):
        reach = s >= thr
        n_i, k_i = int(reach.sum()), int((reach & y).sum())
        g_u = np.bincount(u_idx, weights=(reach & y).astype(float), minlength=n_users)
        c_u = np.bincount(u_idx, weights=reach.astype(float), minlength=n_users)
        if band == "low":
            low_st = [v for v in st.values() if v.kind in ("none", "low_cap")]
            certified = all(v.certified for v in low_st)
            target = 1.0 - st["none"].target if "none" in st else None
        else:
            caps_ok = all(v.certified for v in st.values() if v.kind == "cap") if band == "moderate" else True
            certified, target = st[band].certified and caps_ok, st[band].target
        out[band] = {
            "threshold": float(thr),
            "target": target,
            "certified": bool(certified),
            "inherited": False,
            "precision": k_i / n_i if n_i else None,
            "precision_lower_bound": ratio_lower_bound(g_u, c_u, level, ladder.method) if n_i else 0.0,
            "coverage": n_i / s.size,
            "recall": k_i / int(y.sum()),
            "n": n_i,
            "p_value": max(v.p_value for v in low_st) if band == "low" else st[band].p_value,
        }
    return out


def check_reachable(ladder: Ladder | tuple[float, float, float], *, score_name: str = "score",
                    statements: Mapping[str, Statement] | None = None) -> None:
    """Raise `UnreachableBandError` (one line, naming band, reason and the setting to change)."""
    if isinstance(ladder, Ladder):
        high, moderate, low = ladder.thresholds
        statements = ladder.statements
    else:
        high, moderate, low = ladder
    st = dict(statements or {})
    pre = f"{score_name}: "
    for name, stmt in st.items():
        if not stmt.certified:
            kind = name.split(":")[-1]
            band = "LOW" if name.startswith("low_cap") else "MODERATE"
            what = {"high": "HIGH precision >= {t}", "moderate": "MODERATE precision >= {t}",
                    "none": "answerable questions at NONE <= {t}"}.get(name, f"{kind} at {band} or above <= {{t}}")
            key = {"high": "targets.high", "moderate": "targets.moderate", "none": "none.answerable"}.get(
                name, f"{name.split(':')[0]}.{kind}")
            raise UnreachableBandError(
                f"{pre}{what.format(t=stmt.target)} cannot be certified on this data "
                f"(p = {stmt.p_value:.3g}); the band would be unreachable: change {key} or add calibration users")
    if low <= 0:
        raise UnreachableBandError(
            f"{pre}LOW = {low:.4g} <= 0 leaves NONE unreachable: answerable questions score too low to keep "
            f"NONE rare at this none.answerable; raise none.answerable or use a better score")
    if low >= moderate:
        raise UnreachableBandError(
            f"{pre}LOW = {low:.4g} >= MODERATE = {moderate:.4g} leaves LOW empty; "
            f"lower none.answerable, loosen low_cap.<kind> or raise targets.moderate")
    if moderate >= high:
        raise UnreachableBandError(
            f"{pre}MODERATE = {moderate:.4g} >= HIGH = {high:.4g} leaves MODERATE empty "
            f"(a cap raised it); loosen the cap or raise targets.high")
    if high >= 1:
        raise UnreachableBandError(f"{pre}HIGH = {high:.4g} >= 1 is unreachable; lower targets.high")
