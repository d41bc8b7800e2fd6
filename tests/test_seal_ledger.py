"""The ledger of reads of measuring splits (issue 27): "measure" leaves no line, any other
purpose appends {time, commit, caller, purpose, set} to reports/seal_ledger.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from widemem_bench import sealed


def _world() -> object:
    from widemem_bench.timelines.dataset import Timelines

    ev = pd.DataFrame({"user_id": ["a", "b", "c"], "split": ["train", "holdout", "holdout"], "x": [1, 2, 3]})
    q = pd.DataFrame({"user_id": ["a", "b"], "split": ["train", "holdout"], "text": ["q1", "q2"]})
    return Timelines(ev, q, {"world": "a"})


def test_the_suite_measures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """conftest passes "measure": a test's read writes nothing."""
    monkeypatch.setenv(sealed.LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    assert sealed.current_purpose() == sealed.MEASURE
    hold = sealed.open_split("world A holdout", world=_world())
    assert set(hold.events["user_id"]) == {"b", "c"} and list(hold.questions["text"]) == ["q2"]
    assert not (tmp_path / "ledger.jsonl").exists()


def test_a_read_outside_measurement_is_logged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(path))
    monkeypatch.delenv(sealed.PURPOSE_ENV)
    sealed.open_split("world A holdout", world=_world())             # ad hoc: the command line
    sealed.open_split("world A holdout", "look at a failure", world=_world())
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [ln["purpose"].split(":")[0] for ln in lines] == ["ad hoc", "look at a failure"]
    assert all(set(ln) == {"time", "commit", "caller", "purpose", "set"} for ln in lines)
    assert lines[1]["caller"].startswith("test_seal_ledger.test_a_read_outside_measurement_is_logged:")
    assert lines[1]["set"] == "world A holdout"
    counts = sealed.reads_outside_measurement(sealed.read_ledger(path), {"world A holdout": lines[1]["time"]})
    assert counts["world A holdout"] == 2 - (lines[0]["time"] < lines[1]["time"])
    assert counts["LoCoMo"] == 0 and "world N holdout" in counts


def test_split_list_is_extensible_and_bad_names_refused() -> None:
    assert sealed.measuring_splits()[:4] == ("world A holdout", "world N holdout", "LoCoMo", "widemem fixture")
    with pytest.raises(ValueError, match="not a measuring split"):
        sealed.open_split("world A train")
    hold = sealed.open_split("world N holdout", world=_world())  # world N's holdout users only
    assert set(hold.events["user_id"]) == {"b", "c"}
    with pytest.raises(ValueError, match="not a measuring set"):
        sealed.register("world C", lambda: None)
