"""The transfer section of reports/README.md: the newest transfer run's table (the
experiment, `experiments/transfer.py`, computes it and its markdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.experiments.transfer import transfer_markdown
from widemem_bench.reports.sections import report_section


@report_section("transfer", order=65)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """reports/README.md section: the newest transfer run's table."""
    parts = [pd.read_parquet(Path(r.get("run_dir", "")) / "transfer.parquet") for r in records
             if (Path(r.get("run_dir", "")) / "transfer.parquet").is_file()]
    if not parts:
        return ""
    return transfer_markdown(pd.concat(parts, ignore_index=True).drop_duplicates(["set", "method", "embedder"],
                                                                                  keep="last"))
