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


# ------------------------------------------------------- experiment runs (review8, A1 and A2)


def _ad_hoc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str) -> Path:
    """No purpose, a temp ledger, the front door's command line: what a user's ad hoc run sees."""
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(path))
    monkeypatch.delenv(sealed.PURPOSE_ENV)
    monkeypatch.setenv(sealed.COMMAND_ENV, command)
    return path


def _run(tmp_path: Path, name: str, world: str, n_users: int = 6, **params: object) -> dict:
    from _runcfg import tiny_cfg

    from widemem_bench.experiments.runner import execute

    cfg = tiny_cfg(tmp_path, n_users, {"n_boot": 5, "n_boot_slow": 5, **params})
    cfg["dataset"]["world"] = world
    rec = execute({"seed": 0, "progress": False, **cfg, "task_name": name}, tmp_path / f"run-{world}")
    assert rec is not None
    return rec


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize(("world", "set_name"), [("a", "world A holdout"), ("n", "world N holdout")])
def test_an_ad_hoc_experiment_run_logs_each_measuring_set_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                world: str, set_name: str) -> None:
    """compare_embedders reads its data set's holdout rows (ctx.timelines): one line, naming
    the set, the experiment and the data set, whatever the number of loads."""
    path = _ad_hoc(monkeypatch, tmp_path, "widemem-bench compare_embedders embedder=hash-test")
    rec = _run(tmp_path, "compare_embedders", world)
    assert any(m["split"] == "holdout" for m in rec["metrics"])
    lines = _lines(path)
    assert [ln["set"] for ln in lines] == [set_name]
    assert lines[0]["purpose"] == "ad hoc: widemem-bench compare_embedders embedder=hash-test"
    assert lines[0]["caller"].startswith("experiment compare_embedders: RunContext.timelines, dataset ")
    assert sealed.SETS[lines[0]["set"]] == "measuring"


def test_a_measuring_run_writes_no_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = _ad_hoc(monkeypatch, tmp_path, "widemem-bench compare_embedders")
    monkeypatch.setenv(sealed.PURPOSE_ENV, sealed.MEASURE)
    _run(tmp_path, "compare_embedders", "a")
    assert not path.exists()


def test_a_world_without_a_sealed_holdout_writes_no_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = _ad_hoc(monkeypatch, tmp_path, "widemem-bench compare_embedders dataset=world_c")
    _run(tmp_path, "compare_embedders", "c")   # world C: development, holdout split or not
    assert not path.exists()


def test_a_run_refused_after_the_load_writes_no_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A bad input found after the data set was loaded: one line on stderr, the ledger untouched."""
    from widemem_bench.experiments import common

    def refuse(*a: object, **k: object) -> None:
        raise ValueError("params.x: refused after the load")

    path = _ad_hoc(monkeypatch, tmp_path, "widemem-bench compare_embedders")
    monkeypatch.setattr(common, "score", refuse)   # compare_embedders scores after ctx.timelines()
    with pytest.raises(SystemExit) as exc:
        _run(tmp_path, "compare_embedders", "a")
    assert exc.value.code == 2
    assert not path.exists()


def test_held_reads_write_once_at_a_clean_end(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(path))
    monkeypatch.delenv(sealed.PURPOSE_ENV)
    with sealed.held_reads():
        sealed.open_split("world A holdout", world=_world())
        with sealed.held_reads():   # an inner block hands its lines to the outer one
            sealed.open_split("world A holdout", world=_world())
            sealed.open_split("world N holdout", "why", world=_world())
        assert not path.exists()
    assert [ln["set"] for ln in _lines(path)] == ["world A holdout", "world N holdout"]
    with pytest.raises(RuntimeError), sealed.held_reads():
        sealed.open_split("world A holdout", world=_world())
        raise RuntimeError("refused")
    assert len(_lines(path)) == 2


def test_a_missing_file_logs_no_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The loader runs first: a missing LoCoMo or fixture file is refused with no ledger line."""
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(path))
    monkeypatch.delenv(sealed.PURPOSE_ENV)
    for name in ("LoCoMo", "widemem fixture"):
        with pytest.raises((FileNotFoundError, ValueError)):
            sealed.open_split(name, path=tmp_path / "nope.json")
    assert not path.exists()


def test_the_front_door_refuses_a_missing_locomo_file_without_a_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "ledger.jsonl"
    env = {k: v for k, v in os.environ.items() if k != sealed.PURPOSE_ENV} | {sealed.LEDGER_ENV: str(path)}
    proc = subprocess.run([sys.executable, "-m", "widemem_bench.cli", "locomo", "params.locomo_path=/nope.json",
                           f"paths.output_dir={tmp_path / 'out'}"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not path.exists() and not (tmp_path / "out").exists()
