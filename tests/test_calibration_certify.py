"""The certificate over users: coverage under clustering, the ladder, unreachable bands, labels files."""

from __future__ import annotations

import numpy as np
import pytest

from widemem_bench.calibration import (
    MIN_USERS,
    CalibrationFile,
    UnreachableBandError,
    certify_ladder,
    check_reachable,
)
from widemem_bench.calibration.certify import ratio_p_values
from widemem_bench.calibration.simulate import TIMELINES_ICC, measure_icc, simulate_coverage


def test_coverage_simulation_new_holds_and_old_fails() -> None:
    """1,000 clustered calibrations at the timelines' intra-user correlation."""
    new, old = simulate_coverage(n_reps=1000, icc=TIMELINES_ICC, delta=0.1, seed=0)
    assert new.method == "cluster" and old.method == "binomial"
    assert new.violation_rate <= 0.1, new
    assert old.violation_rate > 0.1, old  # the old certificate fails its own delta: the test can fail


def test_measure_icc_recovers_a_known_correlation() -> None:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(400), 25)
    v = rng.normal(0, np.sqrt(0.2), 400)[users] + rng.normal(0, np.sqrt(0.8), users.size)
    assert measure_icc(v, users) == pytest.approx(0.2, abs=0.04)
    assert abs(measure_icc(rng.normal(size=users.size), users)) < 0.03


def synthetic(n_users: int, q: int, rng: np.random.Generator, icc_sd: float = 0.05):
    users = np.repeat([f"u{i}" for i in range(n_users)], q)
    kind = rng.choice(["answerable", "hard_negative", "never_mentioned"], size=users.size, p=[0.5, 0.3, 0.2])
    mu = np.select([kind == "answerable", kind == "hard_negative"], [0.62, 0.40], 0.14)
    off = rng.normal(0, icc_sd, n_users).repeat(q)
    return np.clip(mu + off + rng.normal(0, 0.12, users.size), -1, 1), kind, users


def test_ladder_certifies_every_statement_and_orders_the_bands() -> None:
    s, kind, users = synthetic(200, 30, np.random.default_rng(1))
    lad = certify_ladder(s, kind, users, caps={"hard_negative": 0.1})
    high, moderate, low = lad.thresholds
    assert 0 < low < moderate < high < 1
    assert set(lad.statements) == {"high", "moderate", "cap:hard_negative", "none"}
    assert lad.level == pytest.approx(0.1 / 4)
    for st in lad.statements.values():
        assert st.certified and st.p_value <= lad.level
    y = kind == "answerable"
    assert y[s >= high].mean() >= 0.95 - 0.02
    assert (s[kind == "hard_negative"] >= moderate).mean() <= 0.1
    assert (s[y] < low).mean() <= 0.05
    cert = lad.certificate()
    assert cert["unit"] == "user" and cert["families"] == 4 and "independent" in cert["assumption"]


def test_cluster_test_refuses_what_one_user_says_many_times() -> None:
    # 40 users; one of them asks 300 questions, all answerable and high-scoring. The i.i.d.
    # binomial test takes that as 300 independent successes; per-user totals do not.
    good = np.zeros((40, 1))
    count = np.zeros((40, 1))
    good[0], count[0] = 300, 300
    good[1:], count[1:] = 1, 2  # everyone else: half right
    assert ratio_p_values(good, count, 0.8, "binomial")[0] < 0.01
    assert ratio_p_values(good, count, 0.8, "cluster")[0] > 0.1


def test_low_caps_set_a_floor_under_low_and_conflicts_are_errors() -> None:
    s, kind, users = synthetic(200, 30, np.random.default_rng(1))
    only_cap = certify_ladder(s, kind, users, none_answerable=None, low_caps={"never_mentioned": 0.1})
    assert set(only_cap.statements) == {"high", "moderate", "low_cap:never_mentioned"}
    low = only_cap.thresholds[2]
    assert (s[kind == "never_mentioned"] >= low).mean() <= 0.1
    both = certify_ladder(s, kind, users, low_caps={"never_mentioned": 0.5})
    floor = both.statements["low_cap:never_mentioned"].threshold
    assert both.thresholds[2] == both.statements["none"].threshold >= floor
    with pytest.raises(UnreachableBandError, match=r"no LOW satisfies both none\.answerable"):
        certify_ladder(s, kind, users, none_answerable=0.01, low_caps={"never_mentioned": 0.01})
    with pytest.raises(ValueError, match="LOW needs a rule"):
        certify_ladder(s, kind, users, none_answerable=None)


def test_too_few_users_and_bad_settings_are_one_line_errors() -> None:
    s, kind, users = synthetic(MIN_USERS - 1, 30, np.random.default_rng(2))
    with pytest.raises(ValueError, match=f"{MIN_USERS - 1} users: the certificate needs at least {MIN_USERS}"):
        certify_ladder(s, kind, users)
    s, kind, users = synthetic(60, 20, np.random.default_rng(3))
    with pytest.raises(ValueError, match=r"LOW is set by none\.answerable"):
        certify_ladder(s, kind, users, targets={"low": 0.5})
    with pytest.raises(ValueError, match=r"cap\.other_person: no unanswerable calibration question"):
        certify_ladder(s, kind, users, caps={"other_person": 0.1})


def test_unreachable_bands_explain_themselves() -> None:
    with pytest.raises(UnreachableBandError, match=r"LOW = 0 <= 0 leaves NONE unreachable.*none.answerable"):
        check_reachable((0.65, 0.48, 0.0))
    with pytest.raises(UnreachableBandError, match="leaves LOW empty"):
        check_reachable((0.65, 0.48, 0.48))
    with pytest.raises(UnreachableBandError, match="leaves MODERATE empty"):
        check_reachable((0.5, 0.5, 0.1))
    with pytest.raises(UnreachableBandError, match=">= 1 is unreachable"):
        check_reachable((1.0, 0.5, 0.1))
    check_reachable((0.65, 0.48, 0.1))
    # Scores that cannot tell answerable from not: NONE would cost every answerable question.
    rng = np.random.default_rng(4)
    users = np.repeat(np.arange(60), 20)
    kind = rng.choice(["answerable", "never_mentioned"], size=users.size)
    s = np.where(kind == "answerable", rng.uniform(0.7, 1.0, users.size), 0.0)
    s[(kind == "answerable") & (rng.uniform(size=users.size) < 0.3)] = 0.0
    with pytest.raises(UnreachableBandError, match="NONE unreachable"):
        certify_ladder(s, kind, users)


def test_a_file_cannot_hold_an_unreachable_triple() -> None:
    s, kind, users = synthetic(100, 25, np.random.default_rng(5))
    lad = certify_ladder(s, kind, users)
    cal = CalibrationFile.from_ladder(lad, embedder="hash-test", model_id="hash-test", fingerprint="x")
    assert cal.certificate["delta"] == 0.1 and cal.env[2].startswith("WIDEMEM_CONFIDENCE_LOW=")
    data = cal.to_dict()
    data["bands"]["low"]["threshold"] = 0.0
    with pytest.raises(UnreachableBandError, match="NONE unreachable"):
        CalibrationFile.from_dict(data)
