"""Hydra callback: gather a finished sweep into one results.parquet (same code as
`widemem-bench aggregate root=DIR`). Beside `run.py`, above `aggregate` (floors:
docs/ARCHITECTURE.md), since the run layer (experiments/) never imports the tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig


class AggregateCallback(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from widemem_bench.aggregate import aggregate

        sweep_dir = Path(str(config.hydra.sweep.dir))
        if sweep_dir.exists():
            out = aggregate(sweep_dir)
            print(f"aggregated {sweep_dir} -> {out}")
