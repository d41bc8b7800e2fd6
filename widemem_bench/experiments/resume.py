"""Resume: a run whose folder already holds a complete record for the same config is skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from widemem_bench.experiments.records import is_complete


def should_skip(run_dir: Path, cfg: dict[str, Any]) -> bool:
    """True when `run_dir` has a complete record of this very config and `force` is off."""
    if cfg.get("force"):
        return False
    return is_complete(run_dir, cfg)
