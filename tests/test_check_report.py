"""make check-report: masking keeps timings and the header out, and any other digit counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from widemem_bench.reports import check

REPORT = """# widemem_bench report

Written by `make bench` (`python -m widemem_bench.bench`) at commit `02937ead13b2`, 2026-11-30 04:01 UTC; the bench took 8.0 min.

| embedder | recall |
|---|---|
| minilm-l6 | 64.7% [47.1%, 79.4%] |

Cost: median search 0.15 ms vs 0.14 ms; 287 texts/s; LoCoMo ran 328 s.

<!-- section: perf -->
## Speed

| stage | median s | texts/s |
|---|---|---|
| encode | 2.17 | 345 |

<!-- section: frustration -->
## Frustration

threshold 0.537, false alarms 184
"""


def _write(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(text)
    return root


def test_timings_header_and_timing_blocks_are_masked(tmp_path: Path) -> None:
    other = (REPORT.replace("02937ead13b2", "9fe8ea3aaaaa").replace("8.0 min", "13.1 min")
             .replace("0.15 ms", "0.21 ms").replace("287 texts/s", "301 texts/s")
             .replace("328 s", "402 s").replace("| 2.17 | 345 |", "| 2.54 | 301 |"))
    a, b = _write(tmp_path / "a", REPORT), _write(tmp_path / "b", other)
    assert check.compare(a, b, ["README.md"]) == []


@pytest.mark.parametrize("edit", [("64.7%", "64.8%"), ("0.537", "0.538"), ("184", "185"), ("[47.1%", "[47.2%")])
def test_one_edited_number_is_a_difference(tmp_path: Path, edit: tuple[str, str]) -> None:
    a, b = _write(tmp_path / "a", REPORT), _write(tmp_path / "b", REPORT.replace(*edit))
    diff = check.compare(a, b, ["README.md"])
    assert any(line.startswith("-") and edit[0] in line for line in diff)
    assert any(line.startswith("+") and edit[1] in line for line in diff)


def test_missing_records_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    with pytest.raises(check.ReportCheckError, match="no complete run records for frustration"):
        check.check(tmp_path / "outputs", tmp_path / "reports", {"frustration"})
    from widemem_bench.cli import main as front_door

    assert front_door(["check_report", f"outputs={tmp_path / 'outputs'}", f"reports={tmp_path / 'nope'}"]) == 2
