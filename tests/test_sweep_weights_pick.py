"""sweep_weights picks its best mix on train + validation and reports the holdout apart."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from _runcfg import BASE

from widemem_bench.experiments.context import RunContext
from widemem_bench.experiments.registry import get_experiment
from widemem_bench.timelines import Timelines, generate


def _run(tmp_path: Path, tl: Timelines) -> tuple[pd.DataFrame, pd.DataFrame]:
    cfg = {**BASE, "params": {"step": 0.1, "adapt": [False], "n_boot": 5}}
    ctx = RunContext(output_dir=tmp_path, seed=0, cfg=cfg)
    ctx._cache["timelines"] = tl  # no build on disk
    res = get_experiment("sweep_weights")(cfg, ctx)
    return pd.DataFrame(res.metrics), res.tables["grid"]


def _best(rows: pd.DataFrame) -> tuple[float, float, float]:
    b = rows[rows["setting"] == "best_hit@1"].iloc[0]
    return (b["w_sim"], b["w_imp"], b["w_rec"])


def test_best_mix_ignores_the_holdout(tmp_path: Path) -> None:
    tl = generate(60, seed=0)
    q = tl.questions
    # the holdout's questions 30 times over: they would dominate a pick made over "all"
    # (on this set the holdout alone prefers another mix than train + validation)
    hold = q[q["split"] == "holdout"]
    heavy = pd.concat([q, *(hold.assign(question_id=hold["question_id"] + f"-r{k}") for k in range(30))],
                      ignore_index=True)
    rows, grid = _run(tmp_path / "a", Timelines(tl.events, heavy, tl.meta))
    rows_no_hold, _ = _run(tmp_path / "b", Timelines(tl.events, q[q["split"] != "holdout"].reset_index(drop=True),
                                                     tl.meta))
    rows_hold, _ = _run(tmp_path / "c", Timelines(tl.events, hold.reset_index(drop=True), tl.meta))
    assert _best(rows_hold) != _best(rows_no_hold)  # the test can tell the two picks apart
    assert _best(rows) == _best(rows_no_hold)
    best = rows[rows["setting"] == "best_hit@1"]
    assert set(best["split"]) == {"all", "holdout"}
    assert {"hit@1", "mrr"} <= set(best.loc[best["split"] == "holdout", "metric"])
    assert len(grid) == 66


def test_a_step_outside_0_1_is_refused_naming_the_key() -> None:
    """params.step=0 was 1/0: a ZeroDivisionError's traceback and a run folder (review8 A5)."""
    import math

    import pytest

    from widemem_bench.experiments.sweep_weights import simplex_grid

    for bad in (0.0, -0.1, 1.5, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^params\.step: must be in \(0, 1\]"):
            simplex_grid(bad)
    with pytest.raises(ValueError, match="is not an integer"):
        simplex_grid(0.3)
    assert len(simplex_grid(0.5)) == 6
