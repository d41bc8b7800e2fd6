"""Figure helpers that choose what a figure marks: tick labels, the best weight mix."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from widemem_bench.experiments.sweep_weights import PICK
from widemem_bench.reports import plots

DAYS = (1, 7, 14, 30, 45, 60, 75, 90, 120, 180, 273, 365)


def test_spaced_ticks_labels_round_days_only_when_crowded():
    assert plots.spaced_ticks(DAYS) == [1, 7, 14, 30, 60, 90, 180, 365]
    # no round day among them: kept in order while far enough apart
    assert plots.spaced_ticks((45, 50, 75, 273)) == [45, 75, 273]


def _grid() -> pd.DataFrame:
    # hit@1 over all splits peaks at the first point, train + validation at the second
    return pd.DataFrame({"w_sim": [0.9, 0.85, 0.5], "w_imp": [0.1, 0.15, 0.3], "w_rec": [0.0, 0.0, 0.2],
                         "adapt": [True] * 3, "hit@1": [0.90, 0.88, 0.6], PICK: [0.86, 0.87, 0.6]})


def test_best_mix_is_picked_on_train_validation_like_the_table():
    best, on = plots.best_mix(_grid())
    assert (best["w_sim"], best["w_imp"]) == (0.85, 0.15)
    assert on == "train + validation"


def test_best_mix_says_when_an_old_grid_picks_on_all_splits():
    best, on = plots.best_mix(_grid().drop(columns=[PICK]))
    assert best["w_sim"] == 0.9
    assert "holdout" in on


def test_weight_grid_renders(tmp_path: Path):
    assert plots.plot_weight_grid(_grid(), tmp_path / "w.png").stat().st_size > 0
