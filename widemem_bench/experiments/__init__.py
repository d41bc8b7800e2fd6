"""Experiments: registry, run context, records; one module per experiment.

See `registry` for how to add an experiment. Nothing here imports Hydra except the
`hydra_resolvers` (the Hydra callback is `widemem_bench.hydra_callbacks`).
"""

from widemem_bench.experiments.context import (
    METRIC_COLUMNS,
    ExperimentResult,
    RunContext,
    metric_row,
)
from widemem_bench.experiments.registry import (
    available_experiments,
    experiment,
    get_experiment,
)

__all__ = [
    "METRIC_COLUMNS",
    "ExperimentResult",
    "RunContext",
    "available_experiments",
    "experiment",
    "get_experiment",
    "metric_row",
]
