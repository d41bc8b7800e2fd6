"""Seeded synthetic user timelines with known ground truth (issue 4).

``generate(n_users, seed)`` returns a :class:`Timelines` with ``.events`` and
``.questions`` DataFrames; ``.save(root)`` writes parquet + card + BEIR under
``root/<version>/``; ``load(path)`` reads it back.
"""

from widemem_bench.timelines.dataset import (
    WORLDS,
    Timelines,
    check_fittable,
    check_world,
    generate,
    load,
    version_name,
)
from widemem_bench.timelines.generator import (
    EVENT_KINDS,
    GENERATOR_VERSION,
    GOLD_ACTIONS,
    QUESTION_KINDS,
    quiet_days,
)
from widemem_bench.timelines.materialize import dataset_path, ensure_built, load_from_config

__all__ = [
    "EVENT_KINDS",
    "GENERATOR_VERSION",
    "GOLD_ACTIONS",
    "QUESTION_KINDS",
    "WORLDS",
    "Timelines",
    "check_fittable",
    "check_world",
    "dataset_path",
    "ensure_built",
    "generate",
    "load",
    "load_from_config",
    "quiet_days",
    "version_name",
]
