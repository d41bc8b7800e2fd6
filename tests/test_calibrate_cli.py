"""`python -m widemem_bench.calibrate`: arguments, one embedder end to end, the committed files."""

from __future__ import annotations

import pytest

from widemem_bench import calibrate
from widemem_bench.answerability import AnswerabilityModel, set_scorer
from widemem_bench.calibration import (
    CalibrationNotFoundError,
    available_calibrations,
    env_lines,
    load_calibration,
    read_calibration,
    save_calibration,
)
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.timelines import GENERATOR_VERSION


def test_parse_args() -> None:
    cmd, o = calibrate.parse_args(["embedder=minilm-l6,tfidf", "targets.high=0.9", "delta=0.05",
                                   "cap.hard_negative=0.2", "cap.other_person=0.3", "install=false"])
    assert cmd == "run" and o.embedders == ("minilm-l6", "tfidf")
    assert o.targets == {"high": 0.9, "moderate": 0.8, "low": 0.5} and o.delta == 0.05
    assert o.cap == {"hard_negative": 0.2, "other_person": 0.3} and not o.install
    assert calibrate.parse_args(["embedder=all"])[1].embedders == calibrate.DEFAULT_EMBEDDERS
    assert calibrate.parse_args(["cap.hard_negative=none"])[1].cap == {}
    assert calibrate.parse_args(["report"])[0] == "report"
    with pytest.raises(ValueError, match="unknown key 'bogus'"):
        calibrate.parse_args(["bogus=1"])
    with pytest.raises(ValueError, match=r"targets\.top: unknown band"):
        calibrate.parse_args(["targets.top=0.9"])
    with pytest.raises(ValueError, match=r"cap\.answerable: unknown kind"):
        calibrate.parse_args(["cap.answerable=0.1"])
    with pytest.raises(ValueError, match="not key=value"):
        calibrate.parse_args(["run", "minilm-l6"])


@pytest.fixture(scope="module")
def small_result():
    opts = calibrate.Options(embedders=("hash-test",), dataset="timelines_small", n_boot=50)
    return calibrate.calibrate_embedder("hash-test", opts)


def test_end_to_end_on_the_small_set(small_result, tmp_path, monkeypatch) -> None:
    r = small_result
    c = r.calibration
    h, m, lo = c.thresholds
    assert 0 <= lo <= m <= h <= 1
    assert c.env == env_lines(c.thresholds) and c.env[0].startswith("WIDEMEM_CONFIDENCE_HIGH=")
    assert c.dataset["version"] == f"v{GENERATOR_VERSION}-n30-s0" and len(c.dataset["sha256"]) == 64
    for split in (c.validation, c.holdout):
        assert {"recall_moderate_plus", "false_confidence_hard_negative", "widemem_thresholds"} <= set(split)
    a = c.answerability
    assert a is not None and set(a["bands"]) == {"high", "moderate", "low"}
    model = AnswerabilityModel.from_dict(a["model"])
    # The hard-negative cap is recorded with the MODERATE band and respected on train.
    assert c.bands["moderate"]["caps"]["hard_negative"]["max_rate"] == 0.10
    pq = r.per_query
    assert {"band_widemem", "band_calibrated", "band_answerability", "prob_answerability"} <= set(pq.columns)
    train_hn = pq[(pq["split"] == "train") & (pq["kind"] == "hard_negative")]
    if a["caps"]["hard_negative"]["certified"]:
        assert (train_hn["band_answerability"] >= 2).mean() <= 0.10

    # Saved, read back, and used by the engine through load_calibration's folder.
    path = save_calibration(c, tmp_path)
    again = read_calibration(path)
    assert again.thresholds == c.thresholds and again.answerability_thresholds == c.answerability_thresholds
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path)
    emb = load_embedder("hash-test", cache=False)
    eng = MemoryEngine(emb, EngineConfig(thresholds="calibrated", confidence="answerability_v1"))
    eng.add_fact("lives in Boston", "u")
    res = eng.search("where do I live?", "u")
    assert res.thresholds == c.thresholds
    assert res.confidence.value in ("high", "moderate", "low", "none")
    assert model.prob_one([0.0] * len(model.features)) >= 0
    set_scorer(None, "hash-test")


def test_calibrated_engine_without_a_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path)
    eng = MemoryEngine(load_embedder("hash-test", cache=False), EngineConfig(thresholds="calibrated"))
    eng.add_fact("lives in Boston", "u")
    with pytest.raises(CalibrationNotFoundError, match=r"no calibration file for embedder 'hash-test'.*calibrate"):
        eng.search("where do I live?", "u")


@pytest.mark.parametrize("name", calibrate.DEFAULT_EMBEDDERS)
def test_committed_calibration_files(name: str) -> None:
    assert name in available_calibrations(), f"no committed calibration for {name}; run make calibrate"
    c = load_calibration(name)
    assert c.embedder == name and c.dataset["version"] == "v1-n300-s0" and len(c.dataset["sha256"]) == 64
    assert c.env == env_lines(c.thresholds)
    assert c.answerability is not None and c.answerability_thresholds is not None
    AnswerabilityModel.from_dict(c.answerability["model"])  # valid numbers for this feature set
    for section in (c.holdout, c.answerability["holdout"]):
        value, lo, hi = section["recall_moderate_plus"]
        assert lo <= value <= hi


def test_report_lists_every_setting_of_every_embedder() -> None:
    md = calibrate.report_markdown()
    for name in available_calibrations():
        if name in calibrate.DEFAULT_EMBEDDERS:
            for label in ("widemem's thresholds", "auto-calibrated", "answerability scorer"):
                assert f"| {name} | {label} |" in md
    assert "WIDEMEM_CONFIDENCE_MODERATE=" in md


def test_calibrate_experiment_writes_the_same_sections(tmp_path) -> None:
    """`python -m widemem_bench.run experiment=calibrate` files carry the cap and the scorer too."""
    from _runcfg import BASE

    from widemem_bench.experiments.runner import execute

    cfg = {**BASE, "task_name": "calibrate", "params": {"n_boot": 20}}
    rec = execute(cfg, tmp_path / "run")
    assert rec is not None and rec["status"] == "complete"
    c = read_calibration(tmp_path / "run" / "calibration.json")
    assert c.answerability is not None and c.answerability_thresholds is not None
    assert c.bands["moderate"]["caps"]["hard_negative"]["max_rate"] == 0.10
