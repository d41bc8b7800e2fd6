"""`make check-report`: re-render reports/ from the run records and diff it against git.

    widemem-bench check_report [outputs=outputs] [reports=reports] [only=[a,b]]

The report is rendered into a temporary copy of ``reports/`` (so fragments written by
other tools, such as calibration.md, are there as committed), from the records under
``outputs/<experiment>/multiruns/`` that `make bench` left, exactly as the bench renders
it. Every markdown file is then compared with the committed one after masking what may
differ between two faithful runs:

- the header line (commit, date, machine, bench wall time);
- timings: a number followed by a time unit (``0.15 ms``, ``328 s``, ``8.0 min``) or a
  rate (``287 texts/s``);
- whole timing reports: ``perf.md``, ``embedders.md``, ``embedders_extended.md`` and their
  blocks inside README.md (from their ``<!-- section|fragment: ... -->`` marker to the
  next marker).

Any other difference, one digit included, prints a unified diff and exits 1. With
``only``, only those experiments' records are required and only files naming them
(``<experiment>.md``) are compared: a partial check after running a few experiments.
"""

from __future__ import annotations

import difflib
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT

# Reports that are timings from top to bottom: not reproducible by nature.
TIMING_FILES = ("perf.md", "embedders.md", "embedders_extended.md")
HEADER = re.compile(r"^Written by `make bench`.*$", re.M)
_UNIT = r"(?:ms|s|sec|min|us|µs|h)"
TIMING = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?\s?" + _UNIT + r"\b")
RATE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:[A-Za-z]+)?/s\b")
MARKER = re.compile(r"^<!-- (?:section|fragment): (\S+?)(?:\.md)? -->$")


class ReportCheckError(ValueError):
    """Missing run records or report folder: one line naming what is missing."""


def mask(text: str) -> str:
    """The report text with header, timings and timing blocks replaced by placeholders."""
    text = HEADER.sub("Written by `make bench` <header masked>", text)
    out: list[str] = []
    skipping = False
    own_heading = False
    for line in text.splitlines():
        m = MARKER.match(line)
        if m:
            skipping = own_heading = f"{m.group(1)}.md" in TIMING_FILES
            out.append(line + (" <timing block masked>" if skipping else ""))
            continue
        if skipping and line.startswith("## "):
            if own_heading:  # the block's own heading, right under its marker
                own_heading = False
            else:  # the next top-level part of the report
                skipping = False
        if skipping:
            continue
        out.append(RATE.sub("<rate>", TIMING.sub("<time>", line)))
    return "\n".join(out) + "\n"


def compare(committed: Path, rendered: Path, names: Sequence[str]) -> list[str]:
    """Unified diff lines (masked) between the two report folders for files ``names``."""
    diff: list[str] = []
    for name in names:
        a, b = committed / name, rendered / name
        if not b.is_file():
            continue
        old = mask(a.read_text()) if a.is_file() else ""
        new = mask(b.read_text())
        if old != new:
            diff += difflib.unified_diff(old.splitlines(), new.splitlines(),
                                         f"committed/{name}", f"rendered/{name}", lineterm="", n=1)
    return diff


def check(output_dir: Path, reports_dir: Path, only: set[str] | None = None) -> list[str]:
    """Render into a temporary copy of ``reports_dir`` and return the masked diff lines."""
    from widemem_bench.reports import plan as bench  # the bench's plan, without importing bench

    if not reports_dir.is_dir():
        raise ReportCheckError(f"reports folder {reports_dir} not found")
    embedders = list(bench.DEFAULT_EMBEDDERS)
    steps = bench.plan(embedders, only, set())  # ValueError: one line for a name not in the plan
    missing = [name for name, src in bench.sources_for(output_dir, embedders, steps).items()
               if not src.records]
    if missing:
        raise ReportCheckError(
            f"no complete run records for {', '.join(missing)} under {output_dir}: run `make bench` first")
    with tempfile.TemporaryDirectory(prefix="check-report-") as tmp:
        rendered = Path(tmp) / "reports"
        shutil.copytree(reports_dir, rendered)
        bench.render_report(output_dir, rendered, embedders, steps)
        names = sorted(p.name for p in rendered.glob("*.md") if p.name not in TIMING_FILES)
        if only is not None:
            names = [n for n in names if Path(n).stem in only]
        return compare(reports_dir, rendered, names)


def tool(cfg: dict[str, Any]) -> int:
    """Exit 0 when the re-rendered report matches the committed one, 1 on a difference, 2 without records."""
    outputs, reports = REPO_ROOT / str(cfg["outputs"]), REPO_ROOT / str(cfg["reports"])
    only = {str(x) for x in cfg["only"]} or None
    try:
        diff = check(outputs, reports, only)
    except ReportCheckError as exc:
        print(f"check-report: {exc}", file=sys.stderr)
        return 2
    if diff:
        print("\n".join(diff))
        print(f"check-report: the rendered report differs from {reports} "
              "(timings and header masked)", file=sys.stderr)
        return 1
    print(f"check-report: {reports} matches the run records (timings and header masked)")
    return 0

