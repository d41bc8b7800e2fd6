"""reports/outside.md reproduces from main (a stale row once stayed committed: DESIGN_LOG O1).

The outside answer sets are measuring sets: this test never prints their texts, only compares
the table's point figures (J, recall, false confidence, AUROC: none depends on the bootstrap)
with the committed report's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "reports" / "outside.md"
_ROW = re.compile(r"^\| (answer_set\d+) \| ([^|]+) \| (-?\d\.\d{3}) \[[^]]*\] \| (\d\.\d\d) \| (\d\.\d\d) \|"
                  r".*\| (\d\.\d{3}) \|$")


def committed_rows() -> dict[tuple[str, str], tuple[str, str, str, str]]:
    rows = {}
    for line in REPORT.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            rows[(m[1], m[2].strip())] = (m[3], m[4], m[5], m[6])
    return rows


def test_the_committed_outside_table_parses() -> None:
    rows = committed_rows()
    assert {s for s, _ in rows} == {f"answer_set{i}" for i in range(1, 12)}
    assert ("answer_set2", "answerability v2") in rows


@pytest.mark.slow
def test_outside_report_reproduces_from_main(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from widemem_bench.embedders import load_embedder
    from widemem_bench.experiments.outside import outside_table

    try:
        table = outside_table(load_embedder("minilm-l6"), REPO / "datasets" / "outside", n_boot=2, seed=0)
    except (FileNotFoundError, RuntimeError, ValueError) as e:  # v4's cross-encoder not built here
        pytest.skip(f"outside table needs its models: {e}")
    got = {(r.set, r.method): (f"{r.j:.3f}", f"{r.recall:.2f}", f"{r.false_confidence:.2f}", f"{r.auroc:.3f}")
           for r in table.itertuples()}
    assert got == committed_rows()


def test_the_summary_covers_the_measuring_sets_only() -> None:
    import pandas as pd

    from widemem_bench.experiments.outside import outside_markdown

    def row(s: str, j: float) -> dict[str, object]:
        return {"set": s, "method": "m", "j": j, "j_lo": j - 0.1, "j_hi": j + 0.1, "recall": 0.5,
                "false_confidence": 0.1, "fc_hard_negative": 0.1, "fc_other_person": 0.1, "fc_unrelated": 0.1,
                "auroc": 0.5 + j}

    md = outside_markdown(pd.DataFrame([row("answer_set1", 0.9), row("answer_set3", 0.2), row("answer_set10", 0.4),
                                        row("answer_set4", 0.3)]), "cmd")
    assert "Sets 3 to 10 are the measuring sets" in md
    assert "| m | 3 | 0.300 | 0.200 (answer_set3) | 0.800 |" in md  # set 1 (development) left out


def test_the_update_summary_sums_the_measuring_sets_only() -> None:
    from widemem_bench.evaluation.outside import render

    def sc(s: str, kind: str, right: bool, lost: int, oblique: bool = False) -> dict[str, object]:
        return {"set": s, "resolver": "r", "kind": kind, "right": right, "oblique": oblique, "true_lost": lost}

    rows = [sc("updates_set1", "update", True, 0), sc("updates_set3", "update", True, 0, True),
            sc("updates_set3", "keep", False, 1), sc("updates_set12", "update", False, 0),
            sc("updates_set12", "keep", True, 0), sc("mine", "update", True, 0)]
    md = render(rows, "cmd")
    assert "| r | 2 | 1/2 | 1/1 | 1 | 1/2 |" in md  # sets 3 and 12; set 1 and a user's own file left out
    assert "measuring" not in render([sc("mine", "update", True, 0)], "cmd")


def test_outside_updates_refuses_an_out_that_would_overwrite_an_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from widemem_bench.evaluation.outside import tool

    src = tmp_path / "mine.jsonl"
    shutil.copy(REPO / "datasets" / "handwritten" / "updates_w1.jsonl", src)
    before = src.read_bytes()
    with pytest.raises(ValueError, match="would overwrite the input file"):
        tool({"files": [str(src)], "resolvers": ["append"], "embedder": "minilm-l6", "candidate_k": 5,
              "out": str(tmp_path / "mine.md")})
    assert src.read_bytes() == before


def test_a_folder_of_the_users_own_sets_gets_no_claim_from_the_projects_history() -> None:
    import pandas as pd

    from widemem_bench.experiments.outside import outside_markdown

    def row(s: str, j: float) -> dict[str, object]:
        return {"set": s, "method": "m", "j": j, "j_lo": j - 0.1, "j_hi": j + 0.1, "recall": 0.5,
                "false_confidence": 0.1, "fc_hard_negative": 0.1, "fc_other_person": 0.1, "fc_unrelated": 0.1,
                "auroc": 0.5 + j}

    table = pd.DataFrame([row("answer_set1", 0.9), row("answer_set2", 0.2), row("answer_set3", 0.4),
                          row("answer_set5", 0.1)])
    mine = outside_markdown(table, "cmd", {"answer_set1": (), "answer_set2": ("w2",), "answer_set3": ("set 4",),
                                           "answer_set5": ("set 1", "set 7")})
    assert "Sets 1 and 2 are development" not in mine and "V7" not in mine
    assert "answer_set1: a file of your own" in mine and "Over the files that hold" in mine
    assert "answer_set2 holds cases of the project's hand-written development file w2" in mine
    assert "answer_set3 holds cases of the project's outside set 4 (measuring: this read is logged)" in mine
    assert "outside set 1 (development), outside set 7 (measuring" in mine and "in-sample" in mine
    assert "| m | 1 | 0.400 | 0.400 (answer_set3) | 0.900 |" in mine  # only a file of measuring cases alone
    ours = outside_markdown(table.iloc[:3], "cmd", {"answer_set1": ("set 1",), "answer_set2": ("set 2",),
                                                    "answer_set3": ("set 3",)})
    assert ours == outside_markdown(table.iloc[:3], "cmd") and "Sets 1 and 2 are development" in ours


def test_the_update_summary_leaves_out_a_users_file_named_like_a_set() -> None:
    from widemem_bench.evaluation.outside import render

    rows = [{"set": "updates_set12", "resolver": "r", "kind": "update", "right": True, "oblique": False,
             "true_lost": 0}]
    assert "measuring" in render(rows, "cmd")  # by name alone, set 12 would be a committed measuring set
    mine = render(rows, "cmd", {"updates_set12": ()})  # the tool knows it is the user's
    assert "Over the" not in mine and "updates_set12: a file of your own" in mine
    copy = render([{**rows[0], "set": "updates_mine"}], "cmd", {"updates_mine": ("set 4",)})
    assert "updates_mine holds cases of the project's outside set 4" in copy and "| r | 1 | 1/1 |" in copy


def test_outside_report_refuses_to_write_a_users_sets_over_the_committed_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from widemem_bench.experiments.outside import tool

    shutil.copy(REPO / "datasets" / "handwritten" / "answer_w1.jsonl", tmp_path / "answer_set1.jsonl")
    before = (REPO / "reports" / "outside.md").read_bytes()
    with pytest.raises(ValueError, match="is the committed report"):
        tool({"dir": str(tmp_path), "out": str(REPO / "reports" / "outside.md"), "embedder": "hash-test",
              "n_boot": 2, "seed": 0})
    assert (REPO / "reports" / "outside.md").read_bytes() == before
