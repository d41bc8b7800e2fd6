"""Resume: a run whose folder already holds a complete record for the same config is skipped.

Complete means verified: every output the record lists must still hash to the sha256
the record stored (`records.incomplete_reason`), so a truncated `per_query.parquet` is
recomputed rather than trusted because it exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from widemem_bench.experiments.records import RECORD_NAME, incomplete_reason


def should_skip(run_dir: Path, cfg: dict[str, Any]) -> bool:
    """True when `run_dir` has a verified complete record of this very config and `force` is off."""
    if cfg.get("force"):
        return False
    reason = incomplete_reason(run_dir, cfg)
    if reason is not None and (Path(run_dir) / RECORD_NAME).exists():
        # A record is there but cannot be trusted: say why it is being recomputed.
        print(f"rerun: {run_dir}: {reason}", flush=True)
    return reason is None
