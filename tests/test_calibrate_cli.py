"""`python -m widemem_bench.calibrate`: arguments, --help, one embedder end to end, labels files, committed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from widemem_bench import calibrate
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
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig
from widemem_bench.harness import build_engine
from widemem_bench.timelines import GENERATOR_VERSION

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "fixtures" / "calibration_labels.csv"
# hash-test is a bag-of-hashed-words embedder: like tfidf, many answerable questions share
# no word with the stored fact, so it needs tfidf-like settings for a reachable ladder.
HASH_SETTINGS = ["targets.high=0.85", "none.answerable=0.5"]


def test_parse_args() -> None:
    cmd, o = calibrate.parse_args(["embedder=minilm-l6,tfidf", "targets.high=0.9", "delta=0.05",
                                   "cap.hard_negative=0.2", "cap.other_person=0.3", "none.answerable=0.04",
                                   "write_package_files=true"])
    assert cmd == "run" and o.embedders == ("minilm-l6", "tfidf")
    assert o.targets == {"high": 0.9} and o.delta == 0.05 and o.none_answerable == 0.04
    assert o.cap == {"hard_negative": 0.2, "other_person": 0.3} and o.write_package_files
    assert o.resolved("minilm-l6")["targets"] == {"high": 0.9, "moderate": 0.8}
    assert calibrate.parse_args(["embedder=all"])[1].embedders == calibrate.DEFAULT_EMBEDDERS
    assert calibrate.parse_args(["cap.hard_negative=none"])[1].cap == {}
    assert calibrate.parse_args(["report"])[0] == "report"
    assert calibrate.parse_args(["embedder=x", "--help"])[0] == "help"
    # Presets act unless a key is given, and are recorded.
    tf = calibrate.Options().resolved("tfidf")
    assert tf["none_answerable"] == 0.5 and tf["targets"]["high"] == 0.85
    assert calibrate.parse_args(["none.answerable=0.1"])[1].resolved("tfidf")["none_answerable"] == 0.1
    for bad, msg in ((["bogus=1"], "unknown key 'bogus'"), (["targets.top=0.9"], r"targets\.top: unknown band"),
                     (["targets.low=0.5"], "none.answerable"), (["cap.answerable=0.1"], r"cap\.answerable"),
                     (["run", "minilm-l6"], "not key=value"), (["install=true"], "write_package_files"),
                     (["data=x.csv", "write_package_files=true"], "outputs/"),
                     (["report=maybe"], "report must be true or false")):
        with pytest.raises(ValueError, match=msg):
            calibrate.parse_args(bad)


def test_help_exits_0_and_errors_exit_2(capsys) -> None:
    assert calibrate.main(["--help"]) == 0
    assert "WIDEMEM_CONFIDENCE_" in capsys.readouterr().out
    assert calibrate.main(["bogus=1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown key 'bogus'") and "\n" not in err


def _package_state() -> dict[str, float]:
    return {p.name: p.stat().st_mtime_ns for p in calibration_dir().iterdir()}


@pytest.fixture(scope="module")
def hash_result():
    opts = calibrate.parse_args(["embedder=hash-test", "n_boot=50", *HASH_SETTINGS])[1]
    return calibrate.calibrate_embedder("hash-test", opts)


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
    text = calibrate.format_tradeoff(r.table, "t")
    assert "NONE never-mentioned" in text and "recall MOD+" in text
    # One table, two views (issue 27): the console prints the file's holdout intervals, in the
    # column order of reports/calibration.md.
    assert r.table[1]["recall_moderate_plus"] == c.holdout["recall_moderate_plus"]
    assert r.table[0]["none_rate_answerable"] == c.holdout["widemem_thresholds"]["none_rate_answerable"]
    assert r.table[2]["false_confidence_hard_negative"] == a["holdout"]["false_confidence_hard_negative"]
    md = calibrate.report_markdown({"hash-test": (c, "this run")})
    head = next(ln for ln in md.splitlines() if ln.startswith("| embedder | setting"))
    console_head = text.splitlines()[1]
    cols = [x.strip() for x in head.strip("|").split("|")][2:]
    assert [x for x in cols if x in console_head] == cols
    assert sorted(cols, key=console_head.index) == cols
    row = next(ln for ln in md.splitlines() if "| auto-calibrated |" in ln)
    assert calibrate._ci(c.holdout["recall_moderate_plus"]) in row and calibrate._ci(
        c.holdout["recall_moderate_plus"]) in text

    # Saved, read back, and used by the engine through load_calibration's folder.
    path = save_calibration(c, tmp_path)
    again = read_calibration(path)
    assert again.thresholds == c.thresholds and again.answerability_thresholds == c.answerability_thresholds
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path)
    emb = load_embedder("hash-test", cache=False)
    eng = build_engine(emb, EngineConfig(thresholds="calibrated", confidence="answerability_v1"))
    eng.add_fact("lives in Boston", "u")
    res = eng.search("where do I live?", "u")
    assert res.thresholds == c.thresholds
    assert res.confidence.value in ("high", "moderate", "low", "none")
    assert model.prob_one([0.0] * len(model.features)) >= 0
    set_scorer(None, "hash-test")


def test_main_writes_under_out_and_never_in_the_package(tmp_path, capsys) -> None:
    before = _package_state()
    rc = calibrate.main(["embedder=hash-test", "n_boot=20", f"out={tmp_path}", "report=false", *HASH_SETTINGS])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.count("WIDEMEM_CONFIDENCE_") == 3 and "NONE answerable" in out and "widemem's thresholds" in out
    assert (tmp_path / "hash-test" / "calibration.json").is_file()
    assert (tmp_path / "hash-test" / "tradeoff.json").is_file()
    assert _package_state() == before


def test_calibrated_engine_without_a_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("widemem_bench.calibration.file.calibration_dir", lambda: tmp_path)
    eng = build_engine(load_embedder("hash-test", cache=False), EngineConfig(thresholds="calibrated"))
    eng.add_fact("lives in Boston", "u")
    with pytest.raises(CalibrationNotFoundError, match=r"no calibration file for embedder 'hash-test'.*calibrate"):
        eng.search("where do I live?", "u")


# --------------------------------------------------------------------------- your own labels


def test_labels_file_end_to_end(tmp_path, capsys) -> None:
    rc = calibrate.main([f"data={EXAMPLE}", f"out={tmp_path}", "n_boot=50"])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.count("WIDEMEM_CONFIDENCE_") == 3 and "NONE never-mentioned" in out
    c = read_calibration(tmp_path / "calibration_labels" / "calibration.json")
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
    assert calibrate.main([f"data={jl}", f"out={tmp_path}", "n_boot=20", "name=mine"]) == 0
    assert read_calibration(tmp_path / "mine" / "calibration.json").thresholds == c.thresholds


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
def test_bad_labels_files_give_one_line_and_write_nothing(tmp_path, capsys, name, edit, msg) -> None:
    import re

    path = _bad(tmp_path, name, edit)
    out = tmp_path / "out"
    assert calibrate.main([f"data={path}", f"out={out}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and re.search(msg, err), err
    assert not out.exists()


# --------------------------------------------------------------------------- committed files


@pytest.mark.parametrize("name", calibrate.DEFAULT_EMBEDDERS)
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
    md = calibrate.report_markdown()
    for name in available_calibrations():
        if name in calibrate.DEFAULT_EMBEDDERS:
            for label in ("widemem's thresholds", "auto-calibrated", "answerability scorer"):
                assert f"| {name} | {label} |" in md
    assert "WIDEMEM_CONFIDENCE_MODERATE=" in md and "NONE never-mentioned" in md and "Assumption:" in md


def test_calibrate_experiment_writes_the_same_sections(tmp_path) -> None:
    """`python -m widemem_bench.run experiment=calibrate` files carry the certificate and the scorer too."""
    from _runcfg import BASE

    from widemem_bench.experiments.runner import execute

    ds = {**BASE["dataset"], "name": "timelines", "n_users": 300}
    cfg = {**BASE, "dataset": ds, "task_name": "calibrate",
           "params": {"n_boot": 20, "targets": {"high": 0.85}, "none_answerable": 0.5}}
    rec = execute(cfg, tmp_path / "run")
    assert rec is not None and rec["status"] == "complete"
    c = read_calibration(tmp_path / "run" / "calibration.json")
    assert c.answerability is not None and c.answerability_thresholds is not None
    assert c.certificate["statements"]["cap:hard_negative"]["target"] == 0.10


@pytest.mark.slow
def test_minilm_l3_prints_env_and_table_and_writes_nothing_in_the_package(tmp_path, capsys) -> None:
    before = _package_state()
    assert calibrate.main(["embedder=minilm-l3", "n_boot=100", f"out={tmp_path}", "report=false"]) == 0
    out = capsys.readouterr().out
    assert out.count("WIDEMEM_CONFIDENCE_") == 3 and "NONE never-mentioned" in out
    assert _package_state() == before


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
