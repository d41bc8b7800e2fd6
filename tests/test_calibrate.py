"""`widemem-bench calibrate`: params, one embedder end to end, labels files, committed files, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _runcfg import BASE

from widemem_bench.answerability import AnswerabilityModel, set_scorer
from widemem_bench.calibration import (
    CalibrationNotFoundError,
    available_calibrations,
    calibration_dir,
    check_reachable,
    env_lines,
    load_calibration,
    read_calibration,
    save_calibration,
)
from widemem_bench.calibration.options import DEFAULT_EMBEDDERS, Options, from_params
from widemem_bench.calibration.tradeoff import ci_text, format_tradeoff
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig
from widemem_bench.experiments import calibrate_pipeline as pipeline
from widemem_bench.experiments.runner import execute
from widemem_bench.harness import build_engine
from widemem_bench.reports.sections import calibration as report
from widemem_bench.timelines import GENERATOR_VERSION

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "fixtures" / "calibration_labels.csv"
# hash-test is a bag-of-hashed-words embedder: like tfidf, many answerable questions share
# no word with the stored fact, so it needs tfidf-like settings for a reachable ladder.
HASH_PARAMS = {"targets": {"high": 0.85}, "none_answerable": 0.5}
TIMELINES = {**BASE["dataset"], "name": "timelines", "n_users": 300}


def test_from_params() -> None:
    o = from_params({"targets": {"high": 0.9, "moderate": None}, "delta": 0.05, "none_answerable": 0.04,
                     "cap": {"hard_negative": 0.2, "other_person": 0.3}, "holdout": True,
                     "write_package_files": True})
    assert o.targets == {"high": 0.9} and o.delta == 0.05 and o.none_answerable == 0.04
    assert o.cap == {"hard_negative": 0.2, "other_person": 0.3} and o.write_package_files and o.holdout
    assert o.resolved("minilm-l6")["targets"] == {"high": 0.9, "moderate": 0.8}
    assert from_params({}).cap is None and from_params({"cap": {"hard_negative": None}}).cap == {}
    assert from_params({"none_answerable": "none"}).resolved()["none_answerable"] is None
    # Presets act unless a key is given, and are recorded.
    tf = Options().resolved("tfidf")
    assert tf["none_answerable"] == 0.5 and tf["targets"]["high"] == 0.85
    assert from_params({"none_answerable": 0.1}).resolved("tfidf")["none_answerable"] == 0.1
    for bad, msg in (({"targets": {"top": 0.9}}, r"params\.targets\.top: unknown band"),
                     ({"targets": {"low": 0.5}}, "params.none_answerable"),
                     ({"cap": {"answerable": 0.1}}, r"params\.cap\.answerable"),
                     ({"delta": "abc"}, r"params\.delta: expected a number"),
                     ({"method": "exact"}, r"params\.method"),
                     ({"write_package_files": True}, r"params\.holdout=true"),
                     ({"data": "x.csv", "write_package_files": True, "holdout": True}, "outputs/")):
        with pytest.raises(ValueError, match=msg):
            from_params(bad)
    # A labels file is a path: the front door lets it through and keeps it out of the run folder's name.
    from widemem_bench.harness.keys import check_value

    assert check_value("params.data", "tests/fixtures/calibration_labels.csv") is None


def _package_state() -> dict[str, float]:
    return {p.name: p.stat().st_mtime_ns for p in calibration_dir().iterdir()}


@pytest.fixture(scope="module")
def hash_result():
    opts = from_params({"n_boot": 50, "holdout": True, **HASH_PARAMS})
    return pipeline.calibrate_embedder("hash-test", opts)


def test_end_to_end_on_the_timelines(hash_result, tmp_path, monkeypatch) -> None:
    r = hash_result
    c = r.calibration
    h, m, lo = c.thresholds
    assert 0 < lo < m < h < 1
    assert c.env == env_lines(c.thresholds) and c.env[0].startswith("WIDEMEM_CONFIDENCE_HIGH=")
    assert c.dataset["version"] == f"v{GENERATOR_VERSION}-n300-s0" and len(c.dataset["sha256"]) == 64
    cert = c.certificate
    assert cert["unit"] == "user" and cert["delta"] == 0.1 and cert["families"] == 4
    assert set(cert["statements"]) == {"high", "moderate", "cap:hard_negative", "none"}
    assert "intra_user_correlation" in cert and c.options["none_answerable"] == 0.5
    for split in (c.validation,):
        assert {"recall_moderate_plus", "none_rate_answerable", "none_rate_never_mentioned",
                "widemem_thresholds"} <= set(split)
    a = c.answerability
    assert a is not None and set(a["bands"]) == {"high", "moderate", "low"}
    # The scorer's cut-offs are certified on users its shipped model never saw.
    assert a["split"]["fit_users"] + a["split"]["calibration_users"] == c.certificate["n_users"]
    assert a["certificate"]["n_users"] == a["split"]["calibration_users"]
    model = AnswerabilityModel.from_dict(a["model"])
    pq = r.per_query
    assert {"band_widemem", "band_calibrated", "band_answerability", "prob_answerability"} <= set(pq.columns)
    assert [row["setting"] for row in r.table] == ["widemem's thresholds", "auto-calibrated",
                                                   "answerability scorer"]
    text = format_tradeoff(r.table, "t")
    assert "NONE never-mentioned" in text and "recall MOD+" in text
    # One table, two views (issue 27): the console prints the file's holdout intervals, in the
    # column order of reports/calibration.md.
    assert r.table[1]["recall_moderate_plus"] == c.holdout["recall_moderate_plus"]
    assert r.table[0]["none_rate_answerable"] == c.holdout["widemem_thresholds"]["none_rate_answerable"]
    assert r.table[2]["false_confidence_hard_negative"] == a["holdout"]["false_confidence_hard_negative"]
    md = report.report_markdown({"hash-test": (c, "this run")})
    head = next(ln for ln in md.splitlines() if ln.startswith("| embedder | setting"))
    console_head = text.splitlines()[1]
    cols = [x.strip() for x in head.strip("|").split("|")][2:]
    assert [x for x in cols if x in console_head] == cols
    assert sorted(cols, key=console_head.index) == cols
    row = next(ln for ln in md.splitlines() if "| auto-calibrated |" in ln)
    assert ci_text(c.holdout["recall_moderate_plus"]) in row and ci_text(c.holdout["recall_moderate_plus"]) in text

    # Saved, read back, and used by the engine through load_calibration's folder.
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path)
    path = save_calibration(c, tmp_path)  # into the (patched) committed folder: pinned as it is written
    again = read_calibration(path)
    assert again.thresholds == c.thresholds and again.answerability_thresholds == c.answerability_thresholds
    emb = load_embedder("hash-test", cache=False)
    eng = build_engine(emb, EngineConfig(thresholds="calibrated", confidence="answerability_v1"))
    eng.add_fact("lives in Boston", "u")
    res = eng.search("where do I live?", "u")
    assert res.thresholds == c.thresholds
    assert res.confidence.value in ("high", "moderate", "low", "none")
    assert model.prob_one([0.0] * len(model.features)) >= 0
    set_scorer(None, "hash-test")


def _run(tmp_path: Path, params: dict, name: str = "run") -> dict | None:
    cfg = {**BASE, "dataset": TIMELINES, "task_name": "calibrate", "params": params}
    return execute(cfg, tmp_path / name)


def test_run_writes_its_folder_and_never_the_package(tmp_path, capsys) -> None:
    before = _package_state()
    rec = _run(tmp_path, {"n_boot": 20, **HASH_PARAMS})
    assert rec is not None and rec["status"] == "complete"
    out = capsys.readouterr().out
    assert out.count("WIDEMEM_CONFIDENCE_") == 3 and "NONE answerable" in out and "widemem's thresholds" in out
    assert "trade-off on the timelines validation" in out
    for f in ("calibration.json", "tradeoff.json", "record.json", "per_query.parquet"):
        assert (tmp_path / "run" / f).is_file()
    # Without params.holdout the sealed split is neither read nor reported.
    assert {m["split"] for m in rec["metrics"]} == {"train", "validation"}
    assert not read_calibration(tmp_path / "run" / "calibration.json").holdout
    assert _package_state() == before


def test_write_package_files_is_the_only_way_into_the_package(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path / "package")
    monkeypatch.setattr("widemem_bench.calibration.calibration_dir", lambda: tmp_path / "package")
    rec = _run(tmp_path, {"n_boot": 20, "holdout": True, "write_package_files": True, **HASH_PARAMS})
    assert rec is not None
    assert "holdout" in {m["split"] for m in rec["metrics"]}
    written = read_calibration(tmp_path / "package" / "hash-test.json")
    assert written.to_dict() == read_calibration(tmp_path / "run" / "calibration.json").to_dict()


def test_calibrated_engine_without_a_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path)
    eng = build_engine(load_embedder("hash-test", cache=False), EngineConfig(thresholds="calibrated"))
    eng.add_fact("lives in Boston", "u")
    with pytest.raises(CalibrationNotFoundError, match=r"no calibration file for embedder 'hash-test'.*calibrate"):
        eng.search("where do I live?", "u")


# --------------------------------------------------------------------------- your own labels


def test_labels_file_end_to_end(tmp_path, capsys) -> None:
    assert _run(tmp_path, {"data": str(EXAMPLE), "n_boot": 50}, "labels") is not None
    out = capsys.readouterr().out
    assert out.count("WIDEMEM_CONFIDENCE_") == 3 and "NONE never-mentioned" in out
    c = read_calibration(tmp_path / "labels" / "calibration.json")
    assert c.embedder == "calibration_labels"
    check_reachable(c.thresholds)
    assert c.dataset["n_users"] == 48 and set(c.certificate["statements"]) == {
        "high", "moderate", "cap:hard_negative", "none"}
    # JSON lines with ranked scores give the same ladder.
    import pandas as pd

    df = pd.read_csv(EXAMPLE, dtype=str, keep_default_na=False)
    jl = tmp_path / "labels.jsonl"
    with jl.open("w") as f:
        for row in df.to_dict("records"):
            scores = [float(row.pop("score")), -0.5]
            f.write(json.dumps({**row, "scores": scores}) + "\n")
    assert _run(tmp_path, {"data": str(jl), "n_boot": 20, "name": "mine"}, "mine") is not None
    mine = read_calibration(tmp_path / "mine" / "calibration.json")
    assert mine.thresholds == c.thresholds and mine.embedder == "mine"


def _bad(tmp_path: Path, name: str, edit) -> Path:
    import pandas as pd

    df = pd.read_csv(EXAMPLE, dtype=str, keep_default_na=False)
    df = edit(df)
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("name", "edit", "msg"), [
    ("no_label.csv", lambda d: d.drop(columns=["label"]), r"missing column 'label'"),
    ("bad_label.csv", lambda d: d.assign(label=d["label"].where(d.index != 6, "maybe")),
     r"line 8: label 'maybe' is not one of answerable, unanswerable"),
    ("few_users.csv", lambda d: d[d["user_id"] < "u10"], r"column 'user_id' has 10 users; the certificate needs at least 30"),
    ("bad_score.csv", lambda d: d.assign(score=d["score"].where(d.index != 11, "1.7")), r"line 13: score 1.7 is outside \[-1, 1\]"),
])
def test_bad_labels_files_give_one_line_and_write_nothing(tmp_path, capsys, monkeypatch, name, edit, msg) -> None:
    import re

    monkeypatch.delenv("WIDEMEM_BENCH_DEBUG", raising=False)

    path = _bad(tmp_path, name, edit)
    with pytest.raises(SystemExit) as exc:
        _run(tmp_path, {"data": str(path)}, "out")
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and re.search(msg, err), err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- committed files


@pytest.mark.parametrize("name", DEFAULT_EMBEDDERS)
def test_committed_calibration_files(name: str) -> None:
    assert name in available_calibrations(), f"no committed calibration for {name}; run make calibrate"
    c = load_calibration(name)
    assert c.embedder == name and c.dataset["version"] == f"v{GENERATOR_VERSION}-n300-s0" and len(c.dataset["sha256"]) == 64
    assert c.env == env_lines(c.thresholds)
    high, moderate, low = c.thresholds
    assert 0 < low < moderate < high < 1  # NONE is reachable: LOW above 0
    assert c.certificate["unit"] == "user" and c.certificate["delta"] == c.delta
    assert all(s["certified"] for s in c.certificate["statements"].values())
    assert c.answerability is not None and c.answerability_thresholds is not None
    assert c.answerability["certificate"]["unit"] == "user"
    AnswerabilityModel.from_dict(c.answerability["model"])  # valid numbers for this feature set


def test_report_lists_every_setting_of_every_embedder() -> None:
    md = report.report_markdown()
    for name in available_calibrations():
        if name in DEFAULT_EMBEDDERS:
            for label in ("widemem's thresholds", "auto-calibrated", "answerability scorer"):
                assert f"| {name} | {label} |" in md
    assert "WIDEMEM_CONFIDENCE_MODERATE=" in md and "NONE never-mentioned" in md and "Assumption:" in md


def test_calibrate_experiment_writes_the_same_sections(tmp_path) -> None:
    """The run folder's file carries the certificate and the scorer too."""
    rec = _run(tmp_path, {"n_boot": 20, **HASH_PARAMS})
    assert rec is not None and rec["status"] == "complete"
    c = read_calibration(tmp_path / "run" / "calibration.json")
    assert c.answerability is not None and c.answerability_thresholds is not None
    assert c.certificate["statements"]["cap:hard_negative"]["target"] == 0.10


def test_calibration_report_takes_no_keys() -> None:
    with pytest.raises(ValueError, match="takes no arguments"):
        report.main(["embedder=x"])
    assert report.main(["--help"]) == 0


@pytest.mark.slow
def test_minilm_l3_front_door_leaves_git_status_clean(tmp_path, capsys) -> None:
    """`widemem-bench calibrate embedder=minilm-l3` prints the env lines and the table, and
    writes nothing outside its output folder (no package file, no report, no ledger line)."""
    import subprocess

    from widemem_bench import cli

    def status() -> str:
        return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout

    before, files = status(), _package_state()
    assert cli.main(["calibrate", "embedder=minilm-l3", "params.n_boot=100", f"paths.output_dir={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert out.count("WIDEMEM_CONFIDENCE_") == 3 and "NONE never-mentioned" in out
    assert _package_state() == files and status() == before
    assert len(list(tmp_path.glob("calibrate/runs/*/calibration.json"))) == 1


def test_label_errors_name_the_line_an_editor_shows(tmp_path) -> None:
    """A CSV's header is line 1 and a quoted field may span lines; JSONL skips blank lines
    but still counts them: the error names the line the editor shows, not a row index."""
    from widemem_bench.calibration.labels import read_labels

    rows = ["user_id,query,label,score", 'u0,"two\nline query",answerable,0.5', "u1,q,maybe,0.4"]
    csv_path = tmp_path / "l.csv"
    csv_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"l\.csv line 4: label 'maybe'"):
        read_labels(csv_path)
    jl = tmp_path / "l.jsonl"
    jl.write_text('{"user_id": "u0", "query": "q", "label": "answerable", "score": 0.5}\n\n'
                  '{"user_id": "u1", "query": "q", "label": "answerable", "score": 3}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"l\.jsonl line 3: score 3.0 is outside"):
        read_labels(jl)


def test_a_missing_label_file_names_the_key(tmp_path) -> None:
    from widemem_bench.calibration.labels import read_labels

    with pytest.raises(ValueError, match=r"^params\.data=.*nope\.csv: no such file$"):
        read_labels(tmp_path / "nope.csv")
