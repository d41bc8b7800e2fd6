"""Metrics against hand-computed cases; bootstrap intervals reproducible and sensible."""

from __future__ import annotations

import math

import numpy as np
import pytest

from widemem_bench.metrics import (
    METRICS,
    band_share_table,
    bootstrap_replicates,
    compute,
    get_metric,
    gold_ranks,
    gold_ranks_from_sets,
    metric_table,
    risk_coverage,
    with_ci,
)

# 8 questions: 3 answerable, 2 hard negatives, 1 never mentioned, 2 other person.
BANDS = np.array([3, 2, 1, 2, 0, 3, 1, 2])
KINDS = np.array(
    [
        "answerable",
        "answerable",
        "answerable",
        "hard_negative",
        "hard_negative",
        "never_mentioned",
        "other_person",
        "other_person",
    ]
)
TOP1 = np.array([True, False, True, False, False, False, False, False])


def test_registry_has_directions_and_descriptions() -> None:
    table = metric_table()
    assert set(table["direction"]) == {"higher", "lower"}
    assert (table["description"].str.len() > 10).all()
    assert get_metric("recall_moderate_plus").direction == "higher"
    assert get_metric("false_confidence_hard_negative").direction == "lower"
    assert get_metric("aurc").better(0.1, 0.2)
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        get_metric("nope")


def test_recall_and_false_confidence_by_hand() -> None:
    assert compute("recall_moderate_plus", BANDS, KINDS) == pytest.approx(2 / 3)
    assert compute("recall_high", BANDS, KINDS) == pytest.approx(1 / 3)
    # Only the first answerable question is both >= moderate and gold at top-1.
    assert compute("recall_moderate_plus_top1", BANDS, KINDS, TOP1) == pytest.approx(1 / 3)
    assert compute("false_confidence_hard_negative", BANDS, KINDS) == pytest.approx(1 / 2)
    assert compute("false_confidence_never_mentioned", BANDS, KINDS) == pytest.approx(1.0)
    assert compute("false_confidence_other_person", BANDS, KINDS) == pytest.approx(1 / 2)
    # A kind absent from the split is undefined, not a perfect zero.
    assert math.isnan(compute("false_confidence_hard_negative", BANDS[:3], KINDS[:3]))
    # A boolean answerable array works as well as kind strings.
    assert compute("recall_moderate_plus", BANDS, KINDS == "answerable") == pytest.approx(2 / 3)


def test_band_precision_by_hand() -> None:
    # high: questions 0 (answerable) and 5 (never mentioned).
    assert compute("precision_high", BANDS, KINDS) == pytest.approx(1 / 2)
    # moderate exactly: 1 (answerable), 3 (hard negative), 7 (other person).
    assert compute("precision_moderate", BANDS, KINDS) == pytest.approx(1 / 3)
    # moderate or above: 0, 1, 3, 5, 7 -> 2 answerable of 5.
    assert compute("precision_moderate_plus", BANDS, KINDS) == pytest.approx(2 / 5)
    # low or above: 7 questions, 3 answerable.
    assert compute("precision_low_plus", BANDS, KINDS) == pytest.approx(3 / 7)


def test_band_share_table_rows_sum_to_one() -> None:
    table = band_share_table(BANDS, KINDS).set_index("kind")
    assert list(table.loc["answerable", ["high", "moderate", "low", "none"]]) == pytest.approx(
        [1 / 3, 1 / 3, 1 / 3, 0.0]
    )
    assert table[["high", "moderate", "low", "none"]].sum(axis=1).tolist() == pytest.approx([1.0] * 4)
    assert compute("share_hard_negative_none", BANDS, KINDS) == pytest.approx(0.5)


def test_bad_bands_are_rejected() -> None:
    with pytest.raises(ValueError, match="band codes 0"):
        compute("recall_moderate_plus", np.array([4, 2]), np.array(["answerable", "answerable"]))


def test_auroc_aurc_by_hand() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    kinds = np.array(["answerable", "hard_negative", "answerable", "hard_negative"])
    # Pairs (pos, neg): (0.9, 0.8) ok, (0.9, 0.6) ok, (0.7, 0.8) wrong, (0.7, 0.6) ok.
    assert compute("auroc", scores, kinds) == pytest.approx(3 / 4)
    # Risk at coverage 1..4: 0/1, 1/2, 1/3, 2/4.
    assert compute("aurc", scores, kinds) == pytest.approx((0 + 1 / 2 + 1 / 3 + 1 / 2) / 4)
    # Oracle: 0, 0, 1/3, 2/4.
    assert compute("e_aurc", scores, kinds) == pytest.approx((1 / 2) / 4)
    assert compute("e_aurc", np.array([1.0, 0.2, 0.9, 0.1]), kinds) == pytest.approx(0.0)
    # Top-1 risk uses its own label.
    assert compute("aurc_top1", scores, np.array([True, True, True, True])) == 0.0
    assert math.isnan(compute("auroc", scores, np.array(["answerable"] * 4)))


def test_aurc_ties_do_not_depend_on_order() -> None:
    scores = np.array([0.5, 0.5, 0.5, 0.1])
    good_a = np.array([True, False, False, True])
    good_b = np.array([False, False, True, True])
    _, risk_a = risk_coverage(scores, good_a)
    _, risk_b = risk_coverage(scores, good_b)
    assert risk_a.tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3, 2 / 4])
    assert risk_a.tolist() == pytest.approx(risk_b.tolist())


def test_ece_and_brier_by_hand() -> None:
    probs = np.array([0.1, 0.2, 0.8, 0.9])
    labels = np.array([0, 1, 1, 1])
    # Two equal-mass bins: {0.1, 0.2} mean 0.15 vs 0.5; {0.8, 0.9} mean 0.85 vs 1.0.
    assert compute("adaptive_ece", probs, labels, n_bins=2) == pytest.approx((0.35 * 2 + 0.15 * 2) / 4)
    assert compute("brier", probs, labels) == pytest.approx((0.01 + 0.64 + 0.04 + 0.01) / 4)
    assert compute("adaptive_ece", np.array([0.0, 1.0]), np.array([0, 1])) == 0.0
    with pytest.raises(ValueError, match="probs must lie"):
        compute("brier", np.array([1.2]), np.array([1]))


def test_gold_ranks_hit_mrr() -> None:
    ranked = np.array([[5, 7, 9], [1, 2, 3], [4, 8, -1]])
    ranks = gold_ranks(ranked, np.array([7, 6, 4]))
    assert ranks.tolist() == [2.0, math.inf, 1.0]
    # Several gold ids per query: first one found counts.
    multi = gold_ranks(ranked, np.array([[9, 7], [3, -2], [-2, -2]]))
    assert multi.tolist() == [2.0, 3.0, math.inf]
    assert gold_ranks_from_sets([[5, 7], [1]], [{7, 5}, 2]).tolist() == [1.0, math.inf]
    assert compute("hit@1", ranks) == pytest.approx(1 / 3)
    assert compute("hit@3", ranks) == pytest.approx(2 / 3)
    assert compute("mrr", ranks) == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert compute("mrr@10", np.array([1.0, 11.0])) == pytest.approx(0.5)


def test_bootstrap_ci_contains_value_and_is_reproducible() -> None:
    rng = np.random.default_rng(3)
    n = 400
    kinds = np.where(rng.uniform(size=n) < 0.6, "answerable", "hard_negative")
    bands = rng.integers(0, 4, size=n)
    scores = rng.normal(size=n) + (kinds == "answerable")
    for name, arrays in (
        ("recall_moderate_plus", (bands, kinds)),
        ("false_confidence_hard_negative", (bands, kinds)),
        ("auroc", (scores, kinds)),
        ("aurc", (scores, kinds)),
    ):
        value, lo, hi = with_ci(name, *arrays, seed=7, n_boot=300)
        assert lo <= value <= hi, name
        assert 0 < hi - lo < 0.25, name
        assert with_ci(name, *arrays, seed=7, n_boot=300) == (value, lo, hi)
        assert with_ci(name, *arrays, seed=8, n_boot=300) != (value, lo, hi)


def test_vectorised_and_looped_bootstrap_agree_in_distribution() -> None:
    rng = np.random.default_rng(0)
    bands = rng.integers(0, 4, size=300)
    kinds = np.where(rng.uniform(size=300) < 0.5, "answerable", "never_mentioned")
    fast = bootstrap_replicates("recall_moderate_plus", bands, kinds, n_boot=2000, seed=1)
    # Same metric without the ratio shortcut: loop path.
    slow_metric = METRICS["recall_moderate_plus"]
    loop_rng = np.random.default_rng(1)
    slow = np.array(
        [slow_metric(bands[i], kinds[i]) for i in loop_rng.integers(0, 300, size=(500, 300))]
    )
    assert fast.std() == pytest.approx(slow.std(), rel=0.15)
    assert fast.mean() == pytest.approx(slow.mean(), abs=0.01)


def test_cluster_bootstrap_is_wider_for_correlated_groups() -> None:
    # Every user's questions share one verdict: only 20 independent units, not 400.
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(20), 20)
    user_band = rng.integers(1, 4, size=20)
    bands = user_band[users]
    kinds = np.full(400, "answerable")
    _, lo_rows, hi_rows = with_ci("recall_moderate_plus", bands, kinds, seed=0)
    _, lo_users, hi_users = with_ci("recall_moderate_plus", bands, kinds, groups=users, seed=0)
    assert hi_users - lo_users > 2 * (hi_rows - lo_rows)
    # The loop path (non-ratio metric) accepts groups as well.
    scores = rng.normal(size=400)
    kinds2 = np.where(np.arange(400) % 2 == 0, "answerable", "hard_negative")
    value, lo, hi = with_ci("auroc", scores, kinds2, groups=users, seed=0, n_boot=200)
    assert lo <= value <= hi


def test_bootstrap_rejects_mismatched_arrays() -> None:
    with pytest.raises(ValueError, match="array 1 has 2 rows"):
        with_ci("recall_moderate_plus", np.array([1, 2, 3]), np.array(["answerable"] * 2))


def test_evaluate_groups_and_intervals() -> None:
    import pandas as pd

    from widemem_bench.metrics import evaluate_frame, format_ci

    df = pd.DataFrame(
        {
            "embedder": ["a"] * 8 + ["b"] * 8,
            "user_id": np.tile(np.repeat([0, 1, 2, 3], 2), 2),
            "bands": np.r_[BANDS, np.full(8, 3)],
            "kind": np.r_[KINDS, KINDS],
        }
    )
    out = evaluate_frame(
        df,
        ["recall_moderate_plus", "false_confidence_hard_negative"],
        by=["embedder"],
        columns={"kinds": "kind"},
        n_boot=200,
    )
    got = out.set_index(["embedder", "metric"])["value"].to_dict()
    assert got["a", "recall_moderate_plus"] == pytest.approx(2 / 3)
    assert got["b", "false_confidence_hard_negative"] == pytest.approx(1.0)
    assert set(out["direction"]) == {"higher", "lower"}
    assert (out["ci_lo"] <= out["value"]).all() and (out["value"] <= out["ci_hi"]).all()
    assert format_ci(0.5, 0.4, 0.6) == "50.0% [40.0, 60.0]"
    with pytest.raises(ValueError, match="needs columns"):
        evaluate_frame(df, ["auroc"], columns={"kinds": "kind"})


@pytest.mark.parametrize("name", ["auroc", "aurc", "e_aurc", "aurc_top1", "e_aurc_top1"])
def test_weighted_forms_equal_the_metric_on_resampled_rows(name: str) -> None:
    rng = np.random.default_rng(11)
    n = 60
    scores = np.round(rng.normal(size=n), 1)  # rounding makes ties
    kinds = np.where(rng.uniform(size=n) < 0.5, "answerable", "hard_negative")
    second = kinds if "top1" not in name else rng.uniform(size=n) < 0.6
    metric = get_metric(name)
    idx = rng.integers(0, n, size=(5, n))
    counts = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(float)
    fast = metric.weighted_values(counts, scores, second)
    assert fast is not None
    slow = [metric(scores[row], second[row]) for row in idx]
    assert fast.tolist() == pytest.approx(slow, abs=1e-12)
