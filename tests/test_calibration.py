"""Learn-then-Test thresholds: guarantee on synthetic data, monotonicity, edge cases, calibration files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from widemem_bench.calibration import (
    CalibrationFile,
    CalibrationNotFoundError,
    assign_bands,
    binomial_p_value,
    calibration_dir,
    clopper_pearson_lower,
    fit_thresholds,
    hb_p_value,
    load_calibration,
    read_calibration,
    save_calibration,
)


def synthetic(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """score ~ U(0, 1), P(answerable | score) = score, so precision(t) = P(y | s >= t) = (1 + t) / 2."""
    s = rng.uniform(size=n)
    return s, rng.uniform(size=n) < s


def true_precision(t: float) -> float:
    return (1 + min(t, 1.0)) / 2


def test_guarantee_holds_in_at_least_1_minus_delta_of_repetitions() -> None:
    rng = np.random.default_rng(0)
    delta, reps = 0.1, 200
    targets = {"high": 0.95, "moderate": 0.80, "low": 0.60}
    misses = dict.fromkeys(targets, 0)
    naive_misses = 0
    fresh_s, fresh_y = synthetic(50_000, rng)
    for _ in range(reps):
        s, y = synthetic(400, rng)
        fit = fit_thresholds(s, y, targets=targets, delta=delta)
        for band, target in targets.items():
            if true_precision(fit.bands[band].threshold) < target:
                misses[band] += 1
        naive = fit_thresholds(s, y, targets=targets, method="empirical")
        naive_misses += true_precision(naive.bands["moderate"].threshold) < targets["moderate"]
    for band in targets:
        assert misses[band] / reps <= delta, (band, misses)
    # Without the bound, the plain empirical choice misses far more often.
    assert naive_misses / reps > 2 * delta
    # On a fresh sample the last fit's MODERATE threshold still meets its target (up to noise).
    t = fit.bands["moderate"].threshold
    assert fresh_y[fresh_s >= t].mean() >= targets["moderate"] - 0.01


def test_fit_reports_band_figures() -> None:
    rng = np.random.default_rng(1)
    s = rng.uniform(size=2000)
    # Steeper than ``synthetic``: every score above 0.8 is answerable, so HIGH is certifiable.
    y = rng.uniform(size=2000) < np.clip(1.5 * s - 0.2, 0, 1)
    fit = fit_thresholds(s, y)
    high, moderate, low = fit.thresholds
    assert 1.0 > high >= moderate >= low > 0.0
    mod = fit.bands["moderate"]
    assert mod.certified and mod.p_value <= 0.1
    reach = s >= mod.threshold
    assert mod.n == reach.sum()
    assert mod.precision == pytest.approx(y[reach].mean())
    assert mod.coverage == pytest.approx(reach.mean())
    assert mod.recall == pytest.approx(y[reach].sum() / y.sum())
    assert mod.precision_lower_bound <= mod.precision
    assert mod.precision_lower_bound >= mod.target - 0.05
    assert list(fit.to_frame()["band"]) == ["high", "moderate", "low"]
    # The Hoeffding-Bentkus p-value is more conservative: its thresholds are never lower.
    hb = fit_thresholds(s, y, method="hb")
    assert all(a >= b for a, b in zip(hb.thresholds, fit.thresholds, strict=True))


def test_uncertifiable_band_gets_threshold_one_and_a_flag() -> None:
    rng = np.random.default_rng(2)
    s = rng.uniform(size=300)
    y = rng.uniform(size=300) < 0.3  # precision 0.3 everywhere, whatever the score
    fit = fit_thresholds(s, y)
    for band in ("high", "moderate", "low"):
        assert fit.bands[band].threshold == 1.0
        assert not fit.bands[band].certified
    assert not fit.all_certified
    assert assign_bands(s, fit.thresholds).max() == 0
    # Too few questions to certify 0.95 at all, even with perfect labels.
    tiny = fit_thresholds(np.linspace(0, 1, 20), np.ones(20, dtype=bool))
    assert not tiny.bands["high"].certified
    assert tiny.bands["low"].certified


def test_thresholds_are_monotone_on_random_data() -> None:
    # A lower target certifies at least the prefix a higher one does, so high >= moderate >= low
    # should come out of the tests themselves; the inheritance step is only a safety net.
    rng = np.random.default_rng(6)
    for _ in range(60):
        n = int(rng.integers(20, 400))
        s = np.round(rng.uniform(size=n), int(rng.integers(1, 4)))  # ties included
        y = rng.uniform(size=n) < rng.uniform(0.2, 1.0) * s ** rng.uniform(0.2, 3)
        lo = rng.uniform(0.3, 0.7)
        targets = {"high": rng.uniform(0.9, 0.99), "moderate": rng.uniform(lo, 0.9), "low": lo}
        for method in ("binomial", "hb", "empirical"):
            fit = fit_thresholds(s, y, targets=targets, method=method)
            high, moderate, low = fit.thresholds
            assert high >= moderate >= low, (method, fit.thresholds)
            for band in fit.bands.values():
                if band.certified and method != "empirical":
                    reach = s >= band.threshold
                    assert band.n == reach.sum()
                    assert band.p_value <= 0.1 or band.inherited


def test_targets_and_inputs_are_validated() -> None:
    s, y = np.array([0.1, 0.2]), np.array([True, False])
    with pytest.raises(ValueError, match="high >= moderate >= low"):
        fit_thresholds(s, y, targets={"moderate": 0.99})
    with pytest.raises(ValueError, match="unknown band 'medium'"):
        fit_thresholds(s, y, targets={"medium": 0.5})
    with pytest.raises(ValueError, match="delta"):
        fit_thresholds(s, y, delta=0)
    with pytest.raises(ValueError, match="equal length"):
        fit_thresholds(s, y[:1])


def test_p_values_and_bounds_by_hand() -> None:
    # 10 of 10 answerable under precision 0.8: p = 0.8**10.
    assert binomial_p_value(np.array([10]), np.array([10]), 0.8)[0] == pytest.approx(0.8**10)
    # HB is the smaller of Hoeffding ((1 - alpha)**n here) and Bentkus: never below the exact tail.
    assert hb_p_value(np.array([10]), np.array([10]), 0.8)[0] == pytest.approx(0.8**10)
    assert hb_p_value(np.array([45]), np.array([50]), 0.8)[0] > binomial_p_value(np.array([45]), np.array([50]), 0.8)[0]
    assert clopper_pearson_lower(10, 10, 0.1) == pytest.approx(0.1 ** (1 / 10))
    assert clopper_pearson_lower(0, 10, 0.1) == 0.0


def test_assign_bands_uses_greater_or_equal() -> None:
    assert assign_bands(np.array([0.6, 0.59, 0.3, 0.2, 0.19]), (0.6, 0.3, 0.2)).tolist() == [3, 2, 2, 1, 0]


def _file(tmp: Path | None = None) -> CalibrationFile:
    rng = np.random.default_rng(4)
    # Steep enough that every band is certified below 1 and LOW stays above 0 (reachable).
    s = rng.uniform(size=2000)
    y = rng.uniform(size=2000) < np.clip(1.5 * s - 0.2, 0, 1)
    return CalibrationFile.from_fit(
        fit_thresholds(s, y),
        embedder="hash-test",
        model_id="hash-test",
        fingerprint="abc123",
        dataset={"name": "timelines", "version": "1", "sha256": "0" * 64, "split": "train"},
        validation={"recall_moderate_plus": 0.9},
        holdout={"recall_moderate_plus": 0.88, "false_confidence_hard_negative": 0.1},
    )


def test_calibration_file_round_trip(tmp_path: Path) -> None:
    cal = _file()
    path = save_calibration(cal, tmp_path)
    assert path.name == "hash-test.json"
    data = json.loads(path.read_text())
    assert data["env"][0].startswith("WIDEMEM_CONFIDENCE_HIGH=")
    back = load_calibration("hash-test", directory=tmp_path)
    assert back == cal
    assert back.thresholds == cal.thresholds
    # The env lines carry the exact thresholds, never rounded below them.
    env = dict(line.split("=") for line in back.env)
    assert float(env["WIDEMEM_CONFIDENCE_MODERATE"]) == cal.thresholds[1]
    assert read_calibration(path).holdout["false_confidence_hard_negative"] == 0.1


def test_missing_calibration_names_embedder_and_command(tmp_path: Path) -> None:
    with pytest.raises(CalibrationNotFoundError, match=r"'no-such-model'.*widemem-bench calibrate"):
        load_calibration("no-such-model", directory=tmp_path)
    with pytest.raises(ValueError, match="no calibration file"):
        load_calibration("no-such-model")
    assert calibration_dir().is_dir()


def test_bad_calibration_files_are_rejected(tmp_path: Path) -> None:
    data = _file().to_dict()
    (tmp_path / "hash-test.json").write_text(json.dumps({**data, "colour": 1}))
    with pytest.raises(ValueError, match="unknown keys"):
        load_calibration("hash-test", directory=tmp_path)
    bad = {**data, "bands": {**data["bands"], "low": {**data["bands"]["low"], "threshold": 0.99}}}
    (tmp_path / "hash-test.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="low <= moderate <= high"):
        load_calibration("hash-test", directory=tmp_path)
    with pytest.raises(ValueError, match="embedder name"):
        load_calibration("../etc/passwd")


def test_band_figures_and_answerability_section(tmp_path: Path) -> None:
    from widemem_bench.calibration import answerability_section, band_figures

    scores = np.array([0.9, 0.7, 0.5, 0.8, 0.2, 0.6])
    kinds = np.array(["answerable", "answerable", "answerable", "hard_negative", "hard_negative", "other_person"])
    fig = band_figures(scores, kinds, (0.85, 0.55, 0.3))
    assert fig["recall_moderate_plus"] == pytest.approx(2 / 3)
    assert fig["false_confidence_hard_negative"] == pytest.approx(1 / 2)
    assert fig["false_confidence_other_person"] == pytest.approx(1.0)
    assert fig["precision_moderate_plus"] == pytest.approx(2 / 4)
    assert "false_confidence_never_mentioned" not in fig
    with_ci = band_figures(scores, kinds, (0.85, 0.55, 0.3), ci=True, n_boot=50)
    assert with_ci["recall_moderate_plus"][0] == pytest.approx(2 / 3)

    rng = np.random.default_rng(8)
    p = rng.uniform(size=1500)
    prob_fit = fit_thresholds(p, rng.uniform(size=1500) < np.clip(1.5 * p - 0.2, 0, 1))
    cal = _file()
    cal.answerability = answerability_section(prob_fit, model={"kind": "logistic", "features": ["top1"]})
    cal.holdout = {**cal.holdout, **fig, "auroc": np.float64("nan"), "n_boot": np.int64(5)}
    back = load_calibration("hash-test", directory=save_calibration(cal, tmp_path).parent)
    assert back.answerability_thresholds == prob_fit.thresholds
    assert back.holdout["false_confidence_other_person"] == 1.0
    assert back.holdout["auroc"] is None and back.holdout["n_boot"] == 5
