"""Markdown pieces every report section uses: one table writer, one interval formatter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.metrics.evaluate import format_ci


def md_table(df: pd.DataFrame) -> str:
    """A GitHub markdown table of `df` (columns as headers, values as str)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def pct(v: float, lo: float, hi: float) -> str:
    """'61.2% [55.0%, 67.1%]': a rate with its interval, units on every number."""
    return format_ci(v, lo, hi, unit_in_interval=True)


def fmt(v: Any, lo: Any = np.nan, hi: Any = np.nan, percent: bool = True) -> str:
    """'61.2% [55.0, 67.1]' (percent) or '0.812 [0.790, 0.833]'; None / NaN read 'n/a'."""
    return format_ci(v, lo, hi, percent=percent, digits=1 if percent else 3)
