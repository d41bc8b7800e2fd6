"""widemem's own confidence fixture: the figures of ../shared/data/README.md, to the case."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from widemem_bench.external.widemem_fixture import (
    DEFAULT_FIXTURE_PATH,
    FixtureChecksumError,
    fixture_calibration_table,
    fixture_negative_figures,
    fixture_recall_table,
    load_widemem_fixture,
)

pytestmark = pytest.mark.skipif(
    not DEFAULT_FIXTURE_PATH.is_file(), reason=f"widemem fixture not found at {DEFAULT_FIXTURE_PATH}"
)


@pytest.fixture(scope="module")
def cases() -> pd.DataFrame:
    return load_widemem_fixture()


def test_structure(cases: pd.DataFrame) -> None:
    assert len(cases) == 62
    counts = cases.groupby(["kind", "split"]).size().to_dict()
    assert counts == {
        ("answerable", "holdout"): 12,
        ("answerable", "train"): 26,
        ("hard_negative", "holdout"): 4,
        ("hard_negative", "train"): 8,
        ("unrelated", "holdout"): 4,
        ("unrelated", "train"): 8,
    }
    assert set(cases.loc[cases["split"] == "holdout", "user"]) == {"emma", "frank"}
    ans = cases[cases["kind"] == "answerable"]
    assert ans["answer_fact_similarity"].notna().all()
    assert cases.loc[cases["kind"] != "answerable", "answer_fact_similarity"].isna().all()
    # Answer similarity is a max over several answer facts, never above the top-1 over all facts.
    assert (ans["answer_fact_similarity"] <= ans["top_similarity"] + 1e-9).all()
    assert (ans["answer_facts"].map(len) >= 1).all()
    assert cases["answer_fact_texts"].iloc[0] == ["Alice moved to Boston", "Alice moved to Boston last spring"]


# (fact form, split) -> (n, hits at moderate 0.50, hits at moderate 0.30), README percent in comments.
EXPECTED = {
    ("subject stripped", "train"): (26, 5, 20),  # 19%, 77%
    ("subject stripped", "holdout"): (12, 2, 7),  # 17%, 58%
    ("answer fact as stored", "train"): (26, 12, 22),  # 46%, 85%
    ("answer fact as stored", "holdout"): (12, 6, 10),  # 50%, 83%
}
README_PERCENT = {
    ("subject stripped", "train"): (19, 77),
    ("subject stripped", "holdout"): (17, 58),
    ("answer fact as stored", "train"): (46, 85),
    ("answer fact as stored", "holdout"): (50, 83),
}


def test_recall_table_to_the_case(cases: pd.DataFrame) -> None:
    rows = {(r["fact form"], r["split"]): r for r in fixture_recall_table(cases).to_dict("records")}
    for key, (n, hits50, hits30) in EXPECTED.items():
        row = rows[key]
        assert (row["n"], row["hits@0.50"], row["hits@0.30"]) == (n, hits50, hits30), key
        assert (round(100 * row["recall@0.50"]), round(100 * row["recall@0.30"])) == README_PERCENT[key]


def test_no_case_sits_on_a_threshold(cases: pd.DataFrame) -> None:
    # With >= vs > undecided a case at exactly 0.30 or 0.50 would flip; none does.
    sims = cases[["top_similarity", "answer_fact_similarity", "subjectless_answer_similarity"]].to_numpy()
    assert not np.isin(sims, [0.30, 0.50, 0.60, 0.20]).any()


def test_negative_figures(cases: pd.DataFrame) -> None:
    fig = fixture_negative_figures(cases)
    assert fig["n_hard_negative"] == 12
    assert fig["hard_negative_moderate_plus@0.30"] == 12
    assert fig["hard_negative_moderate_plus@0.50"] == 8
    assert fig["max_unrelated_top_similarity"] == pytest.approx(0.3511, abs=0)


def test_checksum_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    data = json.loads(DEFAULT_FIXTURE_PATH.read_text())
    data["cases"][0]["top_similarity"] = 0.99
    edited = tmp_path / "fixture.json"
    edited.write_text(json.dumps(data))
    with pytest.raises(FixtureChecksumError, match="expected d884f82c"):
        load_widemem_fixture(edited)
    assert load_widemem_fixture(edited, verify=False)["top_similarity"].iloc[0] == 0.99
    with pytest.raises(ValueError, match="not found"):
        load_widemem_fixture(tmp_path / "missing.json")


def test_calibration_table_runs(cases: pd.DataFrame) -> None:
    table, fit = fixture_calibration_table(cases)
    assert set(table["thresholds"]) == {
        "widemem 0.60/0.30/0.20",
        "LTT auto-calibrated",
        "empirical precision (no guarantee)",
    }
    rows = {(r["thresholds"], r["split"]): r for r in table.to_dict("records")}
    widemem = "widemem 0.60/0.30/0.20"
    # widemem bands on top-1 over all facts: every answerable AND every hard negative reads MODERATE+.
    assert rows[widemem, "holdout"]["answerable_moderate_plus"] == 12
    assert rows[widemem, "holdout"]["hard_negative_moderate_plus"] == 4
    assert rows[widemem, "train"]["hard_negative_moderate_plus"] == 8
    # 42 train cases cannot certify MODERATE >= 0.80 when hard negatives top the ranking: LTT says so.
    assert not fit.bands["moderate"].certified
    assert fit.thresholds[0] >= fit.thresholds[1] >= fit.thresholds[2]
    assert rows["LTT auto-calibrated", "holdout"]["hard_negative_moderate_plus"] == 0
    naive = "empirical precision (no guarantee)"
    # The uncertified choice meets 0.80 on train but not on holdout.
    assert rows[naive, "train"]["precision_moderate_plus"] >= 0.80
    assert rows[naive, "holdout"]["precision_moderate_plus"] < 0.80
    assert not math.isnan(rows[naive, "holdout"]["recall_moderate_plus"])
