"""Experiments: registry, run context, records, batch scorer; one module per experiment.

See `registry` for how to add an experiment. Nothing here imports Hydra except the
`hydra_*` modules.
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
    get_report_sections,
    report_section,
)

__all__ = [
    "METRIC_COLUMNS",
    "ExperimentResult",
    "RunContext",
    "available_experiments",
    "experiment",
    "get_experiment",
    "get_report_sections",
    "metric_row",
    "report_section",
]
