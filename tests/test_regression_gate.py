"""Regression gate (issue 23): the code's defaults on the gate users against the blessed
baseline, two-sided, paired over users, beyond each metric's declared minimal effect.

A change that moves a gated metric on purpose is blessed with `make golden REASON='...'`
and committed with it (README, "Regression gate").
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from widemem_bench import regression
from widemem_bench.metrics import get_metric
from widemem_bench.timelines.dataset import check_fittable


def _ratio(metric: str, num: list[float], den: list[float]) -> regression.Measure:
    n, d = np.asarray(num, float), np.asarray(den, float)
    return regression.Measure(metric, float(n.sum() / d.sum()), n, d)


def _baseline(**measures: regression.Measure) -> dict:
    return {"metrics": {k: m.to_json() for k, m in measures.items()}}


def test_judge_is_two_sided_and_names_the_metric() -> None:
    den = [20.0] * 100
    base = _ratio("recall_moderate_plus", [16.0] * 100, den)  # 0.80
    same = regression.judge({"a/recall_moderate_plus": base}, _baseline(**{"a/recall_moderate_plus": base}))
    assert same[1] == [] and same[2] == []
    # Worse by 5 points on every user: beyond the 0.02 minimal effect, interval excludes 0.
    worse = _ratio("recall_moderate_plus", [15.0] * 100, den)
    _, bad, good = regression.judge({"a/recall_moderate_plus": worse}, _baseline(**{"a/recall_moderate_plus": base}))
    assert len(bad) == 1 and bad[0].startswith("a/recall_moderate_plus: 0.8000 -> 0.7500") and not good
    # Better by as much: fails too, asking for a re-bless.
    better = _ratio("recall_moderate_plus", [17.0] * 100, den)
    _, bad, good = regression.judge({"a/recall_moderate_plus": better}, _baseline(**{"a/recall_moderate_plus": base}))
    assert not bad and len(good) == 1 and "make golden REASON=" in good[0]
    # A move inside the minimal effect passes, even when the interval excludes 0.
    small = _ratio("recall_moderate_plus", [16.0] * 99 + [15.0], den)
    _, bad, good = regression.judge({"a/recall_moderate_plus": small}, _baseline(**{"a/recall_moderate_plus": base}))
    assert not bad and not good


def test_a_large_but_noisy_change_does_not_fail() -> None:
    # One user of 100 moves the metric by 0.1: the paired interval straddles 0.
    den = [1.0] * 100
    base = _ratio("stale_survival", [0.0] * 100, den)
    noisy = _ratio("stale_survival", [10.0] + [0.0] * 99, [1.0] * 100)
    lo, hi = regression.paired_interval(noisy, base)
    assert lo <= 0.0 <= hi
    assert regression.judge({"r/stale_survival": noisy}, _baseline(**{"r/stale_survival": base}))[1] == []


def test_auroc_is_paired_over_users() -> None:
    rng = np.random.default_rng(0)
    user = np.repeat(np.arange(60), 20)
    labels = (rng.random(user.size) < 0.5).astype(float)
    score = labels + rng.normal(0, 0.7, user.size)
    kinds = np.where(labels > 0, "answerable", "hard_negative")
    base = regression.auroc_measure(user, score, kinds)
    blurred = regression.auroc_measure(user, score + rng.normal(0, 1.5, user.size), kinds)
    stored = regression.Measure.from_json(base.to_json())  # ranks, not scores, are stored
    assert math.isclose(stored.value, base.value)
    _, bad, _ = regression.judge({"x/auroc": blurred}, {"metrics": {"x/auroc": base.to_json()}})
    assert len(bad) == 1 and bad[0].startswith("x/auroc:")
    assert regression.judge({"x/auroc": base}, {"metrics": {"x/auroc": base.to_json()}})[1] == []


def test_missing_and_extra_metrics_fail() -> None:
    m = _ratio("mrr", [1.0], [1.0])
    _, bad, _ = regression.judge({"r/mrr": m}, {"metrics": {}})
    assert "not in the baseline" in bad[0]
    _, bad, _ = regression.judge({}, _baseline(**{"r/mrr": m}))
    assert "no longer measured" in bad[0]


def test_setting_differences_are_one_line_each() -> None:
    now = {"engine": {"weights": [0.2, 0.5, 0.3], "decay_rate": 0.01}, "embedder": "minilm-l6"}
    base = {"engine": {"weights": [0.5, 0.3, 0.2], "decay_rate": 0.01}, "embedder": "minilm-l6"}
    lines = regression.setting_diffs(now, base)
    assert lines == ["settings: engine.weights is [0.2, 0.5, 0.3] in the code but [0.5, 0.3, 0.2] in the baseline"]


def test_bad_input_is_one_line_naming_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(regression.GateInputError, match=r"make golden REASON="):
        regression.load_baseline(tmp_path / "none.json")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"config": {}, "metrics": {}}))
    with pytest.raises(regression.GateInputError, match=r"stale .*make golden"):
        regression.load_baseline(old)
    base = {"blessed": {"lock_sha256": "ab" * 32}, "evaluated": {"gate_data": {"sha256": "x"}}}
    monkeypatch.setattr("widemem_bench.regression.baseline.lock_sha256", lambda: None)
    with pytest.raises(regression.GateInputError, match=r"blessed under lock (ab)+.*make golden"):
        regression.check_inputs(base, {"gate_data": {"sha256": "x"}})
    base["blessed"]["lock_sha256"] = None
    with pytest.raises(regression.GateInputError, match=r"gate users differ"):
        regression.check_inputs(base, {"gate_data": {"sha256": "y"}})
    with pytest.raises(regression.GateInputError, match=r"needs a reason"):
        regression.write_baseline("  ", tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists()
    with pytest.raises(regression.GateInputError, match=r"^weights: not a key of regression; accepted: write, bench"):
        regression.main(["weights=0.2,0.5,0.3"])
    with pytest.raises(regression.GateInputError, match=r"^basline: .*did you mean 'baseline'\? accepted: write"):
        regression.main(["basline=x.json"])
    with pytest.raises(regression.GateInputError, match=r"^adapter\.nosuch: adapter takes one value"):
        regression.main(["adapter.nosuch=1"])
    with pytest.raises(regression.GateInputError, match=r"'--write' is not key=value"):
        regression.main(["--write", "why"])
    with pytest.raises(regression.GateInputError, match=r"^bench: "):
        regression.main(["bench=maybe"])
    with pytest.raises(regression.GateInputError, match=r"options: only with adapter"):
        regression.main(["options.k=1"])


def test_gate_users_are_their_own_split_and_never_fitted() -> None:
    tl = regression.gate_timelines()
    assert set(tl.events["split"]) == {"gate"} and set(tl.questions["split"]) == {"gate"}
    assert tl.events["user_id"].str.startswith("g").all()
    assert "holdout" not in set(tl.events["family_split"])  # the sealed wording is never read
    with pytest.raises(ValueError, match="gate users"):
        check_fittable(tl, "calibration")
    with pytest.raises(ValueError, match="gate users"):
        check_fittable(tl.meta, "answerability v2")
    check_fittable("a")  # world A itself stays fittable


def test_every_gated_metric_declares_a_detectable_minimal_effect() -> None:
    """Each ratio metric of the committed baseline: a change of 1.5x its minimal effect,
    spread over every user in proportion to their questions, is caught by the gate."""
    base = regression.load_baseline()
    for key, entry in base["metrics"].items():
        m = get_metric(entry["metric"])
        assert m.min_effect is not None, f"{key}: no min_effect in the metric registry"
        b = regression.Measure.from_json(entry)
        if b.num is None or b.den is None:
            continue
        step = 1.5 * m.min_effect * (1 if m.direction == "lower" else -1)
        target = np.clip(b.num + step * b.den, 0, b.den)
        if abs(target.sum() - b.num.sum()) < m.min_effect * b.den.sum():
            # the metric sits at its bound (e.g. 0 false updates, shifted down): shift the other way
            target = np.clip(b.num - step * b.den, 0, b.den)
        cur = regression.Measure(b.metric, float(target.sum() / b.den.sum()), target, b.den)
        _, bad, good = regression.judge({key: cur}, {"metrics": {key: entry}})
        assert len(bad) + len(good) == 1, f"{key}: a change of 1.5x min_effect is not detectable on the gate users"


@pytest.mark.models
def test_the_code_as_it_stands_passes_the_gate() -> None:
    lines: list[str] = []
    code, failures = regression.run_gate(progress=lines.append)
    assert any(line.startswith("evaluated (the code's defaults):") for line in lines)
    assert code == 0, "gate failed (if intended: make golden REASON='...'):\n" + "\n".join(failures)


@pytest.mark.slow
@pytest.mark.models
def test_a_peer_is_gated_against_the_baseline_its_user_blesses(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "adapter-engine.json"
    assert regression.main(["adapter=engine", f"baseline={path}", "write=first baseline"]) == 0
    assert json.loads(path.read_text())["blessed"]["reason"] == "first baseline"
    assert regression.main(["adapter=engine", f"baseline={path}"]) == 0
    capsys.readouterr()
    code = regression.main(["adapter=engine", f"baseline={path}",
                            "options.engine={weights: [0.2, 0.5, 0.3]}"])
    out = capsys.readouterr().out
    assert code == 1 and "settings: options.engine" in out and "REGRESSION engine/" in out


def test_the_warm_gate_section_keeps_the_next_writers_block() -> None:
    """`regression bench=true` rewrites its section of reports/perf.md only: the marker that
    opens perf_v3's block right after it survives (it used to be eaten with the section)."""
    from widemem_bench.regression.timing import BENCH_HEADER, replace_section

    text = f"# perf\n\n{BENCH_HEADER}\n\nold\n\n<!-- answerability-v3 -->\n## v3\n\nx\n<!-- /answerability-v3 -->\n"
    new = replace_section(text, f"{BENCH_HEADER}\n\nnew\n")
    assert new == f"# perf\n\n{BENCH_HEADER}\n\nnew\n\n<!-- answerability-v3 -->\n## v3\n\nx\n<!-- /answerability-v3 -->\n"
    assert replace_section("# perf\n", f"{BENCH_HEADER}\n") == f"# perf\n\n{BENCH_HEADER}\n"
    tail = f"{BENCH_HEADER}\n\nold\n\n## next\n"
    assert replace_section(tail, f"{BENCH_HEADER}\n\nnew\n") == f"{BENCH_HEADER}\n\nnew\n\n## next\n"
