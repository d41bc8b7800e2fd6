"""Coverage simulation: how often does a certificate's statement fail under clustered users?

Each simulated calibration draws ``n_users`` users with ``q_per_user`` questions.
A question's kind is drawn with the timelines' shares; its score is the kind's mean
plus a per-user offset b_u ~ N(0, sigma_b^2) plus noise ~ N(0, sigma_k^2). The offset
makes a user's questions score high or low together: the intra-user correlation of
the score within a kind is ``icc`` = sigma_b^2 / (sigma_b^2 + sigma^2), with sigma^2
the pooled within-kind variance. The true rates at any threshold follow in closed form
(normal tails), so a violation is exact: a certified statement whose true rate misses
its target at the exported threshold.

Everything is vectorised over replicates (a replicate axis in front of the per-user
count matrices), on a fixed grid of candidate thresholds chosen from the model alone.
``measure_icc`` estimates the same correlation on real per-question data (one-way
ANOVA over users on the score minus its kind's mean).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from widemem_bench.calibration.certify import (
    MIN_USERS_REACH,
    fixed_sequence,
    n_min,
    ratio_p_values,
)

# Measured on the timelines train split, minilm-l6 top-1 cosine (v1-n300-s0):
# share, mean, sd of each kind; see `measure_kinds` and reports/calibration.md.
TIMELINE_KINDS: dict[str, tuple[float, float, float]] = {
    "answerable": (0.512, 0.392, 0.177),
    "hard_negative": (0.211, 0.217, 0.157),
    "never_mentioned": (0.153, 0.129, 0.139),
    "other_person": (0.124, 0.344, 0.136),
}
# Intra-user correlation of the minilm-l6 top-1 cosine within a kind, timelines train
# split (210 users): `measure_icc(top1_sim, user_id, kind)` = 0.0098; every calibration
# file records its own value under certificate.intra_user_correlation.
TIMELINES_ICC = 0.0098


def measure_icc(values: Any, users: Any, kinds: Any | None = None) -> float:
    """One-way ANOVA intra-class correlation of ``values`` over ``users`` (kind means removed)."""
    v = np.asarray(values, dtype=float)
    u = np.unique(np.asarray(users).astype(str), return_inverse=True)[1]
    if kinds is not None:
        kd = np.unique(np.asarray(kinds).astype(str), return_inverse=True)[1]
        v = v - (np.bincount(kd, weights=v) / np.bincount(kd))[kd]
    n, a = v.size, int(u.max()) + 1
    cnt = np.bincount(u, minlength=a).astype(float)
    gm = np.bincount(u, weights=v, minlength=a) / cnt
    m = v.mean()
    msb = float((cnt * (gm - m) ** 2).sum()) / (a - 1)
    msw = float(((v - gm[u]) ** 2).sum()) / (n - a)
    k0 = (n - (cnt ** 2).sum() / n) / (a - 1)
    return (msb - msw) / (msb + (k0 - 1) * msw)


@dataclass(frozen=True)
class Coverage:
    """Violation rates of one certificate configuration over ``n_reps`` simulated calibrations."""

    label: str
    method: str
    bonferroni: bool
    violation_rate: float                  # any statement false (the whole certificate)
    per_statement: dict[str, float]
    n_reps: int


def _truth(kinds: Mapping[str, tuple[float, float, float]], sigma_b: float) -> dict[str, Any]:
    names = list(kinds)
    share = np.array([kinds[k][0] for k in names])
    share = share / share.sum()
    mu = np.array([kinds[k][1] for k in names])
    sd = np.sqrt(np.array([kinds[k][2] for k in names]) ** 2 + sigma_b ** 2)
    return {"names": names, "share": share, "mu": mu, "sd": sd}


def _tail(tr: dict[str, Any], kind: str, t: np.ndarray) -> np.ndarray:
    i = tr["names"].index(kind)
    return np.asarray(stats.norm.sf((t - tr["mu"][i]) / tr["sd"][i]))


def _per_user(flat_u: np.ndarray, weights: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """(r, U, G): per replicate and user, the weight of the questions reaching each grid point."""
    r, n_users, n_cells = shape
    h = np.bincount(flat_u.ravel(), weights=weights.ravel().astype(float),
                    minlength=r * n_users * n_cells).reshape(r, n_users, n_cells)
    return np.cumsum(h[..., ::-1], axis=-1)[..., ::-1][..., 1:]


def _draw(rng: np.random.Generator, r: int, tr: dict[str, Any], sigma_b: float, sd_within: np.ndarray,
          n_users: int, q_per_user: int, grid: np.ndarray, caps: Mapping[str, float]) -> dict[str, Any]:
    """``r`` simulated calibrations: per user and grid point, the questions (and answerable ones,
    and each capped kind) reaching it."""
    n_grid = grid.size
    ans = tr["names"].index("answerable")
    kind_idx = rng.choice(len(tr["names"]), size=(r, n_users, q_per_user), p=tr["share"])
    b = rng.normal(0.0, sigma_b, size=(r, n_users, 1))
    s = tr["mu"][kind_idx] + b + rng.normal(size=kind_idx.shape) * sd_within[kind_idx]
    s = np.clip(s, -1.0, 1.0)
    rank = np.searchsorted(grid, s, side="right")  # grid points each question reaches
    flat_u = (np.arange(r)[:, None, None] * n_users + np.arange(n_users)[None, :, None]) * (n_grid + 1) + rank
    shape = (r, n_users, n_grid + 1)
    y = kind_idx == ans
    reach_n = _per_user(flat_u, np.ones_like(s), shape)
    return {"reach_n": reach_n, "reach_y": _per_user(flat_u, y, shape), "users_reach": (reach_n > 0).sum(axis=1),
            "kind_reach": {k: _per_user(flat_u, kind_idx == tr["names"].index(k), shape) for k in caps},
            "kind_cnt": {k: (kind_idx == tr["names"].index(k)).sum(axis=2).astype(float) for k in caps},
            "n_ans": y.sum(axis=2).astype(float)}


def _exported(d: Mapping[str, Any], grid: np.ndarray, tg: Mapping[str, float], caps: Mapping[str, float],
              none_answerable: float, method: str, level: float) -> dict[str, np.ndarray]:
    """Per replicate, the thresholds a certificate exports (``mod``: MODERATE raised to the caps)."""
    n_grid = grid.size
    reach_n, reach_y = d["reach_n"], d["reach_y"]
    th: dict[str, np.ndarray] = {}
    for band in ("high", "moderate"):
        p = tg[band]
        pv = ratio_p_values(reach_y[..., ::-1], reach_n[..., ::-1], p, method)
        testable = reach_n.sum(axis=1)[..., ::-1] >= n_min(p, level)
        if method == "cluster":
            testable &= d["users_reach"][..., ::-1] >= MIN_USERS_REACH
        n_cert = fixed_sequence(pv, level, testable)
        # Lowest certified tested candidate: last testable index below n_cert.
        idx = np.arange(n_grid)[None, :]
        cand = np.where(testable & (idx < n_cert[:, None]), idx, -1).max(axis=1)
        th[band] = np.where(cand >= 0, grid[n_grid - 1 - np.maximum(cand, 0)], np.inf)
    mod = th["moderate"].copy()
    for k, rate in caps.items():
        good = d["kind_cnt"][k][..., None] - d["kind_reach"][k][..., ::-1]
        pv = ratio_p_values(good, np.broadcast_to(d["kind_cnt"][k][..., None], good.shape), 1 - rate, method)
        n_cert = fixed_sequence(pv, level)
        t_cap = np.where(n_cert > 0, grid[n_grid - np.maximum(n_cert, 1)], np.inf)
        th[f"cap:{k}"] = t_cap
        mod = np.maximum(mod, t_cap)
    pv = ratio_p_values(reach_y, np.broadcast_to(d["n_ans"][..., None], reach_y.shape), 1 - none_answerable, method)
    n_cert = fixed_sequence(pv, level)
    th["none"] = np.where(n_cert > 0, grid[np.maximum(n_cert - 1, 0)], -np.inf)
    th["mod"] = mod
    return th


def _violations(th: Mapping[str, np.ndarray], truth: Mapping[str, Any], grid: np.ndarray, tg: Mapping[str, float],
                caps: Mapping[str, float], none_answerable: float) -> dict[str, np.ndarray]:
    """Per statement and replicate: is it false at the exported thresholds (the true curves)?"""
    n_grid = grid.size

    def at(curve: np.ndarray, t: np.ndarray) -> np.ndarray:
        j = np.clip(np.searchsorted(grid, t), 0, n_grid - 1)
        return curve[j]

    bad: dict[str, np.ndarray] = {}
    for band, t in (("high", th["high"]), ("moderate", th["mod"])):
        ok_t = np.isfinite(t)
        bad[band] = ok_t & (at(truth["prec"], np.where(ok_t, t, 0.0)) < tg[band])
    for k, rate in caps.items():
        ok_t = np.isfinite(th["mod"])
        bad[f"cap:{k}"] = ok_t & (at(_tail(truth["tr"], k, grid), np.where(ok_t, th["mod"], 0.0)) > rate)
    ok_t = np.isfinite(th["none"])
    bad["none"] = ok_t & (at(truth["miss"], np.where(ok_t, th["none"], 0.0)) > none_answerable)
    return bad


def simulate_coverage(
    *,
    n_reps: int = 1000,
    n_users: int = 210,
    q_per_user: int = 27,
    icc: float = 0.03,
    kinds: Mapping[str, tuple[float, float, float]] | None = None,
    targets: Mapping[str, float] | None = None,
    caps: Mapping[str, float] | None = None,
    none_answerable: float = 0.05,
    delta: float = 0.1,
    configs: Sequence[tuple[str, str, bool]] = (("new: cluster t-test, Bonferroni", "cluster", True),
                                               ("old: i.i.d. binomial, delta per statement", "binomial", False)),
    n_grid: int = 200,
    chunk: int = 100,
    seed: int = 0,
) -> list[Coverage]:
    """Violation rates of each (label, method, bonferroni) configuration on the same simulated data."""
    kinds = dict(kinds or TIMELINE_KINDS)
    tg = {"high": 0.95, "moderate": 0.80, **dict(targets or {})}
    caps = {"hard_negative": 0.10} if caps is None else dict(caps)
    pooled = math.sqrt(sum(v[0] * v[2] ** 2 for v in kinds.values()) / sum(v[0] for v in kinds.values()))
    sigma_b = pooled * math.sqrt(icc / (1 - icc))
    tr = _truth(kinds, sigma_b)
    # Candidate grid: quantiles of the model's score distribution (no sample is looked at).
    grid = np.linspace(float(min(tr["mu"] - 4 * tr["sd"])), float(max(tr["mu"] + 4 * tr["sd"])), n_grid)
    tail = {k: _tail(tr, k, grid) for k in tr["names"]}
    num = tr["share"][tr["names"].index("answerable")] * tail["answerable"]
    den = sum(tr["share"][i] * tail[k] for i, k in enumerate(tr["names"]))
    truth = {"tr": tr, "prec": np.where(den > 0, num / np.maximum(den, 1e-300), 1.0), "miss": 1 - tail["answerable"]}
    sd_within = np.array([kinds[k][2] for k in tr["names"]])
    rng = np.random.default_rng(seed)
    n_fam = 2 + len(caps) + 1
    viol = {c[0]: {"any": 0, **dict.fromkeys(["high", "moderate", *[f"cap:{k}" for k in caps], "none"], 0)}
            for c in configs}
    done = 0
    while done < n_reps:
        r = min(chunk, n_reps - done)
        d = _draw(rng, r, tr, sigma_b, sd_within, n_users, q_per_user, grid, caps)
        for label, method, bonf in configs:
            th = _exported(d, grid, tg, caps, none_answerable, method, delta / n_fam if bonf else delta)
            anyb = np.zeros(r, dtype=bool)
            for name, v in _violations(th, truth, grid, tg, caps, none_answerable).items():
                viol[label][name] += int(v.sum())
                anyb |= v
            viol[label]["any"] += int(anyb.sum())
        done += r
    return [Coverage(label, method, bonf, viol[label]["any"] / n_reps,
                     {k: c / n_reps for k, c in viol[label].items() if k != "any"}, n_reps)
            for label, method, bonf in configs]
