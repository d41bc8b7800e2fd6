"""`widemem-bench`: one front door (tested through `python -m widemem_bench.cli`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from widemem_bench import cli


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "widemem_bench.cli", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_overview_lists_experiments_and_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("compare_embedders", "contradiction", "calibrate", "regression", "aggregate", "perf"):
        assert name in out


@pytest.mark.parametrize("name", ["contradiction", "compare_embedders", "smoke"])
def test_experiment_help_names_its_keys(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: widemem-bench {name}") and "honours:" in out and "params." in out


@pytest.mark.parametrize("tool", ["regression", "aggregate", "perf", "bench"])
def test_tool_help_exits_zero(tool: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:  # argparse tools exit after --help
        assert cli.main([tool, "--help"]) == 0
        raise SystemExit(0)
    assert exc.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_tools_get_their_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    import widemem_bench.reports.sections.calibration as calibration_report

    seen: list[list[str] | None] = []
    monkeypatch.setattr(calibration_report, "main", lambda argv=None: seen.append(argv) or 0)
    assert cli.main(["calibration_report", "--help"]) == 0
    assert seen == [["--help"]]


def test_run_names_the_experiment_where_a_tool_has_the_same_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "calibrate", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: widemem-bench calibrate")


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: nope: unknown command") and "\n" not in err


def test_experiment_runs_through_the_front_door(tmp_path: Path) -> None:
    proc = _cli("smoke", "params.n=3", f"paths.output_dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(next(tmp_path.rglob("record.json")).read_text())
    assert rec["config"]["params"]["n"] == 3
    bad = _cli("smoke", "weights=equal", f"paths.output_dir={tmp_path / 'b'}", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("error: weights: experiment smoke does not honour")


def test_unknown_command_suggests_the_near_name_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["contradictoin"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'contradiction'?" in err and "\n" not in err.rstrip("\n")
    assert err.count("calibrate") == 1 and err.count(" perf") == 1  # experiment and tool: one name


def test_a_bad_value_names_its_key_and_a_refused_run_writes_nothing(tmp_path: Path) -> None:
    """A typed default is checked before the run; a refusal inside the run (here numpy's,
    for a negative count) removes the folder Hydra made for it."""
    out = tmp_path / "out"
    bad = _cli("smoke", "params.n=abc", f"paths.output_dir={out}", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == "error: params.n: expected an integer, got 'abc'"
    late = _cli("smoke", "params.n=-1", f"paths.output_dir={out}", cwd=tmp_path)
    assert late.returncode == 2 and late.stderr.strip().startswith("error: ")
    assert not out.exists(), sorted(out.rglob("*"))
    # A folder that already holds a run keeps it.
    assert _cli("smoke", "params.n=2", f"paths.output_dir={out}", cwd=tmp_path).returncode == 0
    again = _cli("smoke", "params.n=2", "params.sleep=-1", f"paths.output_dir={out}", cwd=tmp_path)
    assert again.returncode == 2 and any(out.rglob("record.json"))


def test_a_null_default_s_conversion_error_names_its_key() -> None:
    from widemem_bench.harness.keys import name_bad_value

    cfg = {"params": {"n_users": "abc", "n_boot": 10}, "seed": 0}
    try:
        int(cfg["params"]["n_users"])
    except ValueError as exc:
        assert name_bad_value(exc, cfg) == "params.n_users: expected an integer, got 'abc'"
    assert name_bad_value(ValueError("something else"), cfg) is None
