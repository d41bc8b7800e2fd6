"""Transfer table: one cell's figures, the searches of a set, the markdown, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from widemem_bench.answerability.sets import Searches, strip_name
from widemem_bench.experiments.transfer import METHODS, cell, method_scores, transfer_markdown


def test_cell_counts_and_intervals() -> None:
    kinds = np.array(["answerable"] * 4 + ["hard_negative"] * 2 + ["never_mentioned"] * 2)
    score = np.array([0.9, 0.8, 0.7, 0.2, 0.6, 0.1, 0.3, 0.05])
    bands = np.array([3, 2, 2, 0, 2, 0, 1, 0])
    groups = np.array(["u1", "u1", "u2", "u2", "u1", "u2", "u1", "u2"])
    r = cell(score, bands, kinds, groups, n_boot=50, seed=0)
    assert r["recall"] == pytest.approx(3 / 4)
    assert r["false_confidence"] == pytest.approx(1 / 4)  # one of four unanswerable at MODERATE+
    assert r["hard_negative_moderate_plus"] == 1 and r["n_hard_negative"] == 2
    assert r["answerable_moderate_plus"] == 3
    # AUROC: 14 of 16 (answerable, unanswerable) pairs ordered right (0.2 sits below 0.6 and 0.3).
    assert r["auroc"] == pytest.approx(14 / 16)
    assert r["auroc_lo"] <= r["auroc"] <= r["auroc_hi"]


def test_strip_name() -> None:
    assert strip_name("Oskar coaches a rowing team", "oskar") == "coaches a rowing team"
    assert strip_name("Oskar's aunt sells pottery", "oskar") == "aunt sells pottery"
    assert strip_name("Oskar", "oskar") == "Oskar"  # nothing left: unchanged
    assert strip_name("Oskarina bakes", "oskar") == "Oskarina bakes"  # whole words only


def test_method_scores_similarity_rows() -> None:
    from widemem_bench.embedders import load_embedder

    emb = load_embedder("hash-test", cache=False)
    frame = pd.DataFrame({"query": ["q1", "q2"], "top1": [0.65, 0.25], "kind": ["answerable", "hard_negative"],
                          "group": ["a", "b"]})
    s = Searches("toy", frame, [["m"], ["m"]], [[0.65], [0.25]])

    class Cal:
        thresholds = (0.7, 0.5, 0.2)

    out = method_scores(s, emb, cal=Cal(), v1=None, v2=None)
    assert set(out) == {"widemem bands", "calibrated thresholds"}
    # hash-test has no entry in widemem's table: its default 0.60 / 0.50 / 0.30.
    assert out["widemem bands"][1].tolist() == [3, 0]
    assert out["calibrated thresholds"][1].tolist() == [2, 1]


def test_searches_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        Searches("x", pd.DataFrame({"query": ["a"]}), [], [])


def _table() -> pd.DataFrame:
    rows = []
    for m in METHODS:
        for s in ("world A holdout", "fixture stripped, train", "LoCoMo"):
            rows.append({"set": s, "method": m, "embedder": "e", "n_answerable": 3, "n_unanswerable": 2,
                         "auroc": 0.7, "auroc_lo": 0.6, "auroc_hi": 0.8, "recall": 0.5, "recall_lo": 0.4,
                         "recall_hi": 0.6, "false_confidence": 0.1, "false_confidence_lo": 0.0,
                         "false_confidence_hi": 0.2, "hard_negative_moderate_plus": 1, "n_hard_negative": 2,
                         "answerable_moderate_plus": 3})
    return pd.DataFrame(rows)


def test_markdown_has_every_method_and_set() -> None:
    md = transfer_markdown(_table(), command="cmd")
    for m in METHODS:
        assert f"| {m} |" in md
    assert "| method | world A holdout | fixture stripped, train | LoCoMo |" in md
    assert "0.700 [0.600, 0.800]" in md and "50% [40, 60]" in md
    assert "1/2 · 3/3" in md
    assert "`cmd`" in md
    # v2's cells on sets a logged design decision saw are marked (reports/DESIGN_LOG.md headers:
    # entries 4 and 8 saw world A's holdout, the fixture and LoCoMo); widemem's bands never are.
    assert "| answerability v2 | 0.700 [0.600, 0.800] † | 0.700 [0.600, 0.800] † | 0.700 [0.600, 0.800] † |" in md
    assert "| widemem bands | 0.700 [0.600, 0.800] | 0.700 [0.600, 0.800] | 0.700 [0.600, 0.800] |" in md
    assert "answerability v2: world A holdout (DESIGN_LOG 4, 8)" in md
    # marks follow the log given: with no decision logged, nothing is marked
    assert "†" not in transfer_markdown(_table(), command="cmd", seen={}).split("Command:")[1]
    assert transfer_markdown(pd.DataFrame()) == ""


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    """An unknown embedder or a bad n_boot is a one-line error (exit 2), no traceback, no file."""
    import subprocess
    import sys

    from widemem_bench.cli import compose_tool
    from widemem_bench.experiments.transfer import tool

    out = tmp_path / "t.md"
    proc = subprocess.run([sys.executable, "-m", "widemem_bench.cli", "transfer_report", "embedder=nope",
                           f"out={out}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: transfer_report: ") and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()
    with pytest.raises(ValueError, match="nope"):
        tool(compose_tool("transfer_report", ["embedder=nope", f"out={out}"]))
    with pytest.raises(ValueError, match="n_boot"):
        tool(compose_tool("transfer_report", ["n_boot=0", f"out={out}"]))


def test_hydra_run_names_its_n_boot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The experiment's markdown states the n_boot and seed that made its intervals."""
    from widemem_bench.experiments import transfer as T

    seen: dict[str, object] = {}

    def fake_compute(emb: object, **kw: object) -> pd.DataFrame:
        seen.update(kw)
        return _table()

    monkeypatch.setattr(T, "compute_transfer", fake_compute)
    monkeypatch.setattr(T, "_world_b", lambda paths: None)
    T.run({"params": {"n_boot": 7, **HASH_DIRS}}, _ctx(tmp_path, seed=3))  # type: ignore[arg-type]
    md = (tmp_path / "transfer.md").read_text(encoding="utf-8")
    assert seen["n_boot"] == 7 and seen["seed"] == 3
    assert f"embedder=hash-test params.n_boot=7 seed=3 params.calibration_dir={HASH_DIRS['calibration_dir']}" in md
    # the methods come from the folders the params name (the package ships no hash-test files)
    cal, v1, v2 = seen["methods"]  # type: ignore[misc]
    assert cal.embedder == v2.embedder == "hash-test" and v1 is not None


HASH_FILES = Path(__file__).resolve().parent / "fixtures" / "hash-test"
HASH_DIRS = {"calibration_dir": str(HASH_FILES / "calibration"),
             "answerability_dir": str(HASH_FILES / "answerability")}


def _ctx(out: Path, seed: int = 0, data: bool = True) -> object:
    import contextlib
    from types import SimpleNamespace

    def timelines() -> None:
        assert data, "a data set was built before the files were checked"

    return SimpleNamespace(embedder=lambda: SimpleNamespace(name="hash-test"), timelines=timelines,
                           timer=lambda name: contextlib.nullcontext(), output_dir=out, seed=seed)


@pytest.mark.parametrize(("params", "file", "command"), [
    ({}, "widemem_bench/calibration/files/hash-test.json",
     "widemem-bench calibrate embedder=hash-test params.holdout=true params.write_package_files=true"),
    ({"calibration_dir": "{tmp}"}, "{tmp}/hash-test.json",
     "widemem-bench calibrate embedder=hash-test, then copy outputs/calibrate/runs/embedder=hash-test/calibration.json"),
    ({"calibration_dir": HASH_DIRS["calibration_dir"], "answerability_dir": "{tmp}"}, "{tmp}/hash-test.json",
     "widemem-bench fit_v2 embedder=hash-test out={tmp}"),
])
def test_a_missing_file_stops_the_run_in_one_line(tmp_path: Path, params: dict, file: str,
                                                  command: str) -> None:
    """Before any data is built: one line naming the file looked for and the command making it."""
    from widemem_bench.experiments import transfer as T

    params = {k: v.format(tmp=tmp_path) for k, v in params.items()}
    with pytest.raises(ValueError) as err:
        T.run({"params": params}, _ctx(tmp_path, data=False))  # type: ignore[arg-type]
    msg = str(err.value)
    assert "\n" not in msg and file.format(tmp=tmp_path) in msg and command.format(tmp=tmp_path) in msg, msg


def test_re_render_from_a_saved_table_reads_no_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """from_table= re-renders the markdown from the long table of an earlier run: no set is built or read."""
    import widemem_bench.experiments.transfer as T
    from widemem_bench.cli import compose_tool

    def no_read(*a, **k):
        raise AssertionError("a re-render must not build the searches")

    monkeypatch.setattr(T, "compute_transfer", no_read)
    monkeypatch.setattr(T, "_searches", no_read)
    src = tmp_path / "t.parquet"
    _table().assign(embedder="minilm-l6").to_parquet(src)
    out = tmp_path / "t.md"
    assert T.tool(compose_tool("transfer_report", [f"from_table={src}", f"out={out}"])) == 0
    md = out.read_text()
    assert "| answerability v4 |" in md and "from_table" not in md
    assert f"`widemem-bench transfer_report embedder=minilm-l6 out={out} n_boot=1000 seed=0`" in md
    with pytest.raises(ValueError, match=r"from_table: .* not found"):
        T.tool(compose_tool("transfer_report", [f"from_table={tmp_path / 'none.parquet'}", f"out={out}"]))
    with pytest.raises(ValueError, match="not tfidf"):
        T.tool(compose_tool("transfer_report", [f"from_table={src}", "embedder=tfidf", f"out={out}"]))
