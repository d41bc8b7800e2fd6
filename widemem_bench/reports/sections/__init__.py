"""One report section per experiment: `reports/sections/<experiment>.py` renders (markdown,
figures) from the run's record and saved tables; the experiment module only computes.

Each module registers `@report_section("<experiment>", order=...)`:
`fn(results: pd.DataFrame, records: list[dict], figures_dir: Path) -> str`, a markdown
section for reports/README.md (`results` = the long-format metric rows of every run of
that experiment, `records` = their record.json dicts with a `run_dir` key added).
Sections are written in `order`, then by name. `get_report_sections` imports the section
module of every experiment that has one (the registry lives here, in reports/, so the run
layer never imports a renderer).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

SectionFn = Callable[[pd.DataFrame, list[dict[str, Any]], Path], str]

_SECTIONS: dict[str, tuple[int, SectionFn]] = {}


def report_section(name: str, order: int = 50) -> Callable[[SectionFn], SectionFn]:
    """Register the markdown section writer of experiment `name` (see module docstring)."""

    def deco(fn: SectionFn) -> SectionFn:
        _SECTIONS[name] = (order, fn)
        return fn

    return deco


def get_report_sections() -> list[tuple[str, SectionFn]]:
    """Every registered report section, importing the section module of every experiment
    (`configs/experiment/<name>.yaml`) that has one first."""
    from widemem_bench.experiments.registry import available_experiments

    here = Path(__file__).resolve().parent
    for name in available_experiments():
        module = name.replace("-", "_")
        if not (here / f"{module}.py").is_file():
            continue
        try:
            importlib.import_module(f"widemem_bench.reports.sections.{module}")
        except Exception:  # a broken peer module must not break the report of the others
            continue
    return [(n, fn) for n, (_, fn) in sorted(_SECTIONS.items(), key=lambda kv: (kv[1][0], kv[0]))]
