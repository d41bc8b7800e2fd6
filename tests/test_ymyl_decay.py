"""ymyl_decay: ages as a parameter of the batched scorer, on a hand-made user."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _embedders import make_test_embedder
from _runcfg import run_and_render, tiny_cfg

from widemem_bench.experiments.ymyl_decay import category, layout, lost_by_day, score_days

T0 = dt.datetime(2025, 1, 1, 12)
W = (0.5, 0.3, 0.2)
TH = (0.6, 0.5, 0.3)


def _events() -> pd.DataFrame:
    rows = [
        ("f0", 0, "takes metformin for type 2 diabetes", 8, "medication", "metformin", "strong"),
        ("f1", 5, "had a poke bowl for lunch", 1, "lunch", "a poke bowl", None),
        ("f2", 100, "lives in Denver", 8, "city", "Denver", None),
        ("f3", 200, "usually drinks green tea", 4, "drink", "green tea", None),
        ("f4", 300, "is allergic to peanuts", 10, "allergy", "peanuts", "strong"),
        ("f5", 350, "main workout is yoga", 5, "exercise", "yoga", None),
        ("f6", 355, "works as a nurse at Mercy", 7, "employer", "Mercy", None),
    ]
    return pd.DataFrame([{
        "fact_id": f, "user_id": "u1", "split": "train", "at": T0 + dt.timedelta(days=d), "fact_stripped": c,
        "importance": imp, "subject": "user", "attribute": a, "value": v, "ymyl_strength": s,
        "restatement": False, "valid_to": pd.NaT, "event_kind": "x",
    } for f, d, c, imp, a, v, s in rows])


def test_category_split():
    assert category(8, True) == "critical"
    assert category(8, False) == "core"
    assert category(2, False) == "trivial"
    assert category(5, False) == "context"


def test_lost_by_day_counts_only_facts_in_reach_at_the_base_day():
    # Four questions (rows) of two users at days 1, 60, 365. Row 3 is never in reach at
    # day 1, so it is not counted even when it climbs into reach later.
    in_reach = {0: (True, True, False), 1: (True, False, False), 2: (True, True, True), 3: (False, True, True)}
    df = pd.DataFrame([{"row": r, "user_id": "a" if r < 2 else "b", "days": d, "in_reach": v[i]}
                       for r, v in in_reach.items() for i, d in enumerate((1.0, 60.0, 365.0))])
    lost = lost_by_day(df, "in_reach", 1.0)
    assert set(lost["row"]) == {0, 1, 2}
    share = lost.groupby("days")["lost"].mean()
    assert share[1.0] == 0.0
    assert share[60.0] == pytest.approx(1 / 3)   # row 1
    assert share[365.0] == pytest.approx(2 / 3)  # rows 0 and 1
    assert set(lost.loc[lost["days"] == 365.0, "user_id"]) == {"a", "b"}
    with pytest.raises(ValueError, match="base day 7"):
        lost_by_day(df, "in_reach", 7.0)
    with pytest.raises(ValueError, match="twice"):
        lost_by_day(pd.concat([df, df]), "in_reach", 1.0)


def test_ranks_fall_with_age_unless_immune():
    lay = layout(_events(), make_test_embedder(), questions_per_fact=3, seed=0)
    assert set(lay.rows["fact_id"]) == {"f0", "f1", "f2", "f3", "f4", "f5", "f6"}
    assert (lay.target_col >= 0).all()
    ranks = {n: score_days(lay, n, "exponential", 0.05, "off", W, TH).gold_rank for n in (1, 30, 365)}
    # Ageing only the target can never lift it.
    assert (ranks[1] <= ranks[30]).all() and (ranks[30] <= ranks[365]).all()
    assert (ranks[1] < ranks[365]).any()
    # With no decay, age is irrelevant.
    flat = [score_days(lay, n, "none", 0.0, "off", W, TH).gold_rank for n in (1, 365)]
    np.testing.assert_array_equal(flat[0], flat[1])
    # YMYL by the timeline's labels: strong facts keep their rank at any age.
    strong = (lay.rows["fact_id"].isin(["f0", "f4"])).to_numpy()
    gold = [score_days(lay, n, "exponential", 0.05, "on_gold", W, TH).gold_rank for n in (1, 365)]
    np.testing.assert_array_equal(gold[0][strong], gold[1][strong])
    # widemem's regex flags "allergic to" but not "takes metformin for type 2 diabetes";
    # the lexicon classifier flags both and nothing else here.
    at_target = np.arange(len(lay.rows)), lay.target_col
    regex = dict(zip(lay.rows["fact_id"], lay.strong_regex[at_target], strict=True))
    assert regex["f4"] and not regex["f0"]
    lexicon = dict(zip(lay.rows["fact_id"], lay.strong_lexicon[at_target], strict=True))
    assert {f for f, v in lexicon.items() if v} == {"f0", "f4"}
    lex = [score_days(lay, n, "exponential", 0.05, "on_lexicon", W, TH).gold_rank for n in (1, 365)]
    np.testing.assert_array_equal(lex[0][strong], lex[1][strong])


def test_padding_fills_the_store_without_the_targets_attribute():
    ev = pd.concat([_events(), _events().assign(user_id="u2", fact_id=lambda d: "g" + d["fact_id"])],
                   ignore_index=True)
    lay = layout(ev, make_test_embedder(), questions_per_fact=1, seed=0, store_size=10)
    present = (lay.prep.mem >= 0).sum(axis=1)
    assert (present >= 7).all()
    mems = lay.prep.memories
    attr_of = dict(zip(ev["fact_stripped"], ev["attribute"], strict=True))
    for i in range(len(lay.rows)):
        cols = lay.prep.mem[i][lay.prep.mem[i] >= 0]
        foreign = mems.iloc[cols]
        foreign = foreign[foreign["user_id"] != lay.rows["user_id"].iloc[i]]
        assert len(foreign) > 0
        # padding is never a second answer (same attribute) and never a YMYL fact
        assert lay.rows["attribute"].iloc[i] not in {attr_of[c] for c in foreign["content"]}
        assert not {"is allergic to peanuts", "takes metformin for type 2 diabetes"} & set(foreign["content"])


def test_experiment_end_to_end_on_a_tiny_timeline(tmp_path: Path):
    cfg = tiny_cfg(tmp_path, 4, {"days": [1, 60, 365], "decays": [{"function": "exponential", "rate": 0.01}],
                   "store_sizes": [None, 40], "plot_store": 40, "n_boot": 30})
    _, md = run_and_render("ymyl_decay", cfg, tmp_path)
    curve = pd.read_parquet(tmp_path / "run" / "curve.parquet")
    assert set(curve["store"]) == {"own", "40"} and set(curve["ymyl"]) == {"off", "on", "on_lexicon", "on_gold"}
    crit = curve[(curve["slice"] == "critical") & (curve["ymyl"] == "on_gold")]
    for _, g in crit.groupby("store"):
        assert g["in_reach"].nunique() == 1  # immune: flat in age
        assert (g["lost_reach"].fillna(0) == 0).all() and (g["lost_top1"].fillna(0) == 0).all()
    assert set(pd.read_parquet(tmp_path / "run" / "classifier.parquet")["classifier"]) == {"widemem", "lexicon"}
    assert md.startswith("## YMYL decay")
    assert "out of reach" in md.lower() and "on_lexicon" in md


@pytest.mark.models
@pytest.mark.slow
def test_medication_fades_without_ymyl_and_not_with_it(tmp_path: Path):
    """The seed's failure and its fix on 100 MiniLM users with a 300-memory store."""
    from widemem_bench import timelines
    from widemem_bench.embedders import load_embedder
    from widemem_bench.experiments.ymyl_decay import curve

    tl = timelines.generate(100, 0)
    lay = layout(tl.events, load_embedder("minilm-l6", cache_dir=tmp_path), store_size=300)
    c = curve(lay, (1.0, 60.0, 365.0), (("exponential", 0.01),), W, (0.6, 0.3, 0.2), 3)
    med = c[c["attribute"] == "medication"].groupby(["ymyl", "days"])["top1"].mean()
    assert med[("off", 1.0)] - med[("off", 365.0)] > 0.2
    assert med[("on_gold", 1.0)] == med[("on_gold", 365.0)]
    assert med[("on_lexicon", 1.0)] == med[("on_lexicon", 365.0)]
    trivial = c[c["category"] == "trivial"].groupby(["ymyl", "days"])["in_reach"].mean()
    assert trivial[("on_gold", 1.0)] - trivial[("on_gold", 365.0)] > 0.1
