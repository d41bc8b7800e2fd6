"""What every section needs from a run: the latest record, its tables and metrics, and the
fragment file reports/<name>.md written beside the figures folder."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd


def latest_run(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last record (the report writer passes them oldest first), or None."""
    return records[-1] if records else None


def table(rec: dict[str, Any], name: str) -> pd.DataFrame | None:
    """Saved table `name` of the run (`<name>.parquet` in its folder), or None."""
    info = (rec.get("files") or {}).get(name)
    path = Path(str(rec.get("run_dir", ""))) / (info["path"] if info else f"{name}.parquet")
    return pd.read_parquet(path) if path.is_file() else None


def metric_value(rec: dict[str, Any], metric: str, **where: Any) -> float:
    """Value of the first metric row named `metric` matching `where`; NaN when absent."""
    for row in rec.get("metrics") or []:
        if row.get("metric") == metric and all(row.get(k) == v for k, v in where.items()):
            return float(row["value"]) if row.get("value") is not None else math.nan
    return math.nan


def publish_fragment(name: str, text: str, figures_dir: Path) -> str:
    """Also write the section as reports/<name>.md (beside `figures_dir`); returns `text`.

    The report writer leaves that fragment out of README.md when the section is present,
    so the text appears once.
    """
    (figures_dir.parent / f"{name}.md").write_text(text)
    return text
