"""Every committed scorer and calibration file is pinned: a hand edit is refused in one line.

Answerability v2's and v3's files and the calibration files gained pins after a stranger's
check found that a hand-edited cut-off in them was read silently (v4's and the resolvers'
files were pinned already). A copy outside the committed folder is its owner's and loads as is.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from widemem_bench.answerability import v2, v3
from widemem_bench.calibration import file as calfile
from widemem_bench.engine.pins import pins, sha256


def _every_committed_file_is_pinned(folder: Path) -> None:
    table = pins(folder / "pins.json")
    for f in sorted(folder.glob("*.json")):
        if f.name != "pins.json":
            assert table.get(f.name) == sha256(f.read_bytes()), f"{f} is not pinned (or its pin is stale)"


def test_the_answerability_and_calibration_folders_pin_every_file() -> None:
    _every_committed_file_is_pinned(Path(v2.FILES_DIR))
    _every_committed_file_is_pinned(calfile.calibration_dir())


def _tamper(path: Path) -> None:
    text = path.read_text("utf-8")  # any change of bytes, as a cut-off edited by hand, still valid JSON
    path.write_text(text.replace("{", "{ ", 1), "utf-8")
    json.loads(path.read_text("utf-8"))


def _copy_folder(src: Path, dst: Path, name: str) -> Path:
    dst.mkdir()
    shutil.copy(src / name, dst / name)
    shutil.copy(src / "pins.json", dst / "pins.json")
    return dst / name


@pytest.mark.parametrize("mod, name, load, reset, target", [
    (v2, "minilm-l6.json", v2.load_scorer_v2, v2.set_scorer_v2, "widemem-bench fit_v2 embedder=minilm-l6"),
    (v3, "minilm-l6.v3.json", v3.load_scorer_v3, v3.set_scorer_v3, "make fit-v3"),
])
def test_a_hand_edited_scorer_file_is_refused_in_one_line(tmp_path, monkeypatch, mod, name, load, reset,
                                                          target) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "files"
    copy = _copy_folder(Path(v2.FILES_DIR), folder, name)
    monkeypatch.setattr(mod, "FILES_DIR", folder)
    reset(None)
    assert load("minilm-l6").cutoffs[0] > 0  # the pinned bytes load
    reset(None)
    _tamper(copy)
    with pytest.raises(ValueError, match=rf"answerability v\d: .*`{target}`") as err:
        load("minilm-l6")
    assert "\n" not in str(err.value)
    reset(None)
    own = tmp_path / "mine"
    own.mkdir()
    shutil.copy(copy, own / name)  # the same edited bytes outside the committed folder: the owner's
    assert load("minilm-l6", own).cutoffs[0] > 0
    reset(None)


def test_a_hand_edited_calibration_file_is_refused_in_one_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "files"
    copy = _copy_folder(calfile.calibration_dir(), folder, "minilm-l6.json")
    monkeypatch.setattr(calfile, "calibration_dir", lambda: folder)
    assert calfile.load_calibration("minilm-l6").thresholds[0] > 0
    assert calfile.available_calibrations() == ["minilm-l6"]  # the pins file is no calibration
    _tamper(copy)
    with pytest.raises(ValueError, match=r"calibration: .*`make calibrate`") as err:
        calfile.load_calibration("minilm-l6")
    assert "\n" not in str(err.value)
    own = tmp_path / "mine"
    own.mkdir()
    shutil.copy(copy, own / "minilm-l6.json")
    assert calfile.load_calibration("minilm-l6", own).thresholds[0] > 0
    saved = calfile.save_calibration(calfile.read_calibration(own / "minilm-l6.json"), folder / "minilm-l6.json")
    assert calfile.load_calibration("minilm-l6").thresholds == calfile.read_calibration(saved).thresholds  # re-pinned
