"""What an experiment receives (`RunContext`) and returns (`ExperimentResult`).

Plain Python: no Hydra here, so a notebook can build a context by hand::

    ctx = RunContext(output_dir=Path("/tmp/x"), seed=0, cfg=cfg_dict)
    result = get_experiment("compare_embedders")(cfg_dict, ctx)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.metrics.rows import METRIC_COLUMNS, ExperimentResult, metric_row

__all__ = ["METRIC_COLUMNS", "ExperimentResult", "RunContext", "metric_row"]


@dataclass
class RunContext:
    """Per-run services: output folder, seed, progress bars, timings, shared loaders.

    `cfg` is the resolved config as a plain dict. Loaders cache within the run, so an
    experiment can call `ctx.timelines()` and `ctx.embedder()` as often as it likes; the
    first `timelines()` of a world holding a sealed holdout records the read
    (`widemem_bench.sealed.record_world`).
    """

    output_dir: Path
    seed: int = 0
    cfg: dict[str, Any] = field(default_factory=dict)
    progress: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # extra record fields (dataset sha...)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.output_dir = Path(self.output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)

    @property
    def rng(self) -> np.random.Generator:
        """A generator seeded from the run's seed (fresh stream on every access)."""
        return np.random.default_rng(self.seed)

    @contextlib.contextmanager
    def timer(self, name: str) -> Iterator[None]:
        """Adds wall seconds of the block to `timings[name]` (recorded in record.json)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0

    def bar(self, items: Any, desc: str, total: int | None = None) -> Any:
        """`items` wrapped in a tqdm bar (stderr) when `progress` is on, else unchanged."""
        if not self.progress:
            return items
        from tqdm import tqdm

        return tqdm(items, desc=desc, total=total, leave=False, mininterval=1.0)

    def timelines(self) -> Any:
        """The data set named by `cfg["dataset"]`, built on first use (see `data.py`)."""
        if "timelines" not in self._cache:
            from widemem_bench.timelines.loading import load_dataset

            with self.timer("load_dataset"):
                tl, meta = load_dataset(self.cfg.get("dataset") or {}, self.cfg.get("paths") or {})
            # Every experiment's data set comes through here, holdout rows included: world A's
            # or world N's holdout is a measuring set, so the read goes to the seal ledger
            # (the runner holds the line until the run ends without an error).
            from widemem_bench import sealed

            sealed.record_world(tl, f"experiment {self.cfg.get('task_name', '?')}: RunContext.timelines, "
                                    f"dataset {meta.get('name')} ({meta['version']})")
            self._cache["timelines"] = tl
            self.info["dataset"] = meta
        return self._cache["timelines"]

    def embedder(self, name: str | None = None) -> Any:
        """The embedder of the composed `embedder` node (every field of it acts), or
        registry entry `name` when an experiment compares others; cache folder from
        `cfg["paths"]["cache_dir"]`."""
        node = self.cfg.get("embedder") or {}
        name = name or str(node.get("name"))
        key = f"embedder:{name}"
        if key not in self._cache:
            from widemem_bench.embedders import load_embedder
            from widemem_bench.harness.settings import embedder_from_node

            cache_dir = (self.cfg.get("paths") or {}).get("cache_dir")
            with self.timer("load_embedder"):
                if name == node.get("name"):
                    emb = self._cache[key] = embedder_from_node(node, cache_dir=cache_dir,
                                                                   progress=None if self.progress else False)
                    # What actually encodes (a node departing from its registry file runs
                    # without the disk cache): recorded in record.json under "extra".
                    self.info["embedder"] = {"name": emb.name, "model_id": emb.model_id,
                                             "batch_size": int(getattr(emb, "batch_size", 0)),
                                             "disk_cache": getattr(emb, "cache", None) is not None}
                else:
                    self._cache[key] = load_embedder(name, cache_dir=cache_dir,
                                                     progress=None if self.progress else False)
        return self._cache[key]
