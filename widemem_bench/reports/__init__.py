"""Plots and the report writer: pure functions of run-record tables (matplotlib Agg)."""

from widemem_bench.reports.plots import (
    plot_band_shares,
    plot_reliability,
    plot_risk_coverage,
    plot_score_vs_age,
    plot_survival,
    plot_threshold_curves,
    plot_weight_grid,
)

__all__ = [
    "plot_band_shares",
    "plot_reliability",
    "plot_risk_coverage",
    "plot_score_vs_age",
    "plot_survival",
    "plot_threshold_curves",
    "plot_weight_grid",
]
