"""Progress bars default to the terminal, and every run ends with its headline numbers."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from widemem_bench import feedback
from widemem_bench.experiments.runner import execute


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_defaults_to_whether_stderr_is_a_terminal() -> None:
    assert feedback.progress_enabled(None, _Tty()) is True
    assert feedback.progress_enabled(None, io.StringIO()) is False
    assert feedback.progress_enabled("auto", _Tty()) is True
    assert feedback.progress_enabled(False, _Tty()) is False
    assert feedback.progress_enabled("true", io.StringIO()) is True
    with pytest.raises(ValueError, match="progress: expected true, false or null"):
        feedback.progress_enabled("sometimes")


def test_bar_wraps_only_when_enabled() -> None:
    items = [1, 2, 3]
    assert feedback.bar(items, "x", enabled=False) is items
    wrapped = feedback.bar(items, "x", enabled=True)
    assert wrapped is not items and list(wrapped) == items


RECORD = {"experiment": "frustration", "metrics": [
    {"metric": "n_users", "value": 300},
    {"metric": "rephrase_recall", "value": 0.5, "split": "train", "ci_lo": 0.4, "ci_hi": 0.6},
    {"metric": "rephrase_recall", "value": 0.647, "split": "eval", "ci_lo": 0.471, "ci_hi": 0.794},
    {"metric": "rephrase_threshold", "value": 0.5368, "embedder": "minilm-l6"},
    {"metric": "false_confidence_hard_negative", "value": 0.288, "kind": "hard_negative",
     "split": "all", "ci_lo": 0.265, "ci_hi": 0.311},
]}


def test_headline_picks_the_headline_metrics_in_order() -> None:
    lines = feedback.headline(RECORD)
    assert lines == [
        "false_confidence_hard_negative: 0.288 [0.265, 0.311]",
        "rephrase_threshold embedder=minilm-l6: 0.537",
        "rephrase_recall split=eval: 0.647 [0.471, 0.794]",
    ]
    # a record without any headline metric still shows its first rows
    assert feedback.headline({"metrics": [{"metric": "n_users", "value": 3}]}) == ["n_users: 3"]


def test_a_run_prints_its_headline(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # as outside Hydra
    cfg = {"task_name": "smoke", "seed": 3, "embedder": {"name": "hash-test"},
           "params": {"n": 5}, "paths": {"output_dir": "/x"}, "progress": None}
    rec = execute(cfg, tmp_path / "run")
    assert rec is not None
    out = capsys.readouterr().out
    assert "smoke: headline" in out
    first = rec["metrics"][0]
    assert f"{first['metric']}" in out.split("smoke: headline", 1)[1]


def test_under_hydra_the_headline_goes_to_the_log(tmp_path: Path) -> None:
    log_file = tmp_path / "run.log"
    handler = logging.FileHandler(log_file)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        feedback.report_headline(RECORD)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    text = log_file.read_text()
    assert "frustration: headline" in text and "rephrase_recall split=eval: 0.647" in text
