"""resolver_transfer: false-update and survival verdicts on a hand-made timeline, and a tiny run."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
from _embedders import make_test_embedder
from _runcfg import run_and_render, tiny_cfg

from widemem_bench.experiments.resolver_transfer import rate_with_ci, replay
from widemem_bench.reports.sections.resolver_transfer import render

T0 = dt.datetime(2025, 1, 1, 12)


def _ev(fid: str, day: int, fact: str, attr: str, value: str, *, valid_to: int | None = None,
        oblique: bool = False, subject: str = "user", multi: bool = False) -> dict:
    return {"fact_id": fid, "user_id": "u1", "split": "train", "at": T0 + dt.timedelta(days=day),
            "fact_stripped": fact, "importance": 7, "subject": subject, "attribute": attr, "value": value,
            "valid_from": T0 + dt.timedelta(days=day),
            "valid_to": None if valid_to is None else T0 + dt.timedelta(days=valid_to), "oblique": oblique,
            "multi_valued": multi}


def _events() -> pd.DataFrame:
    return pd.DataFrame([
        _ev("f0", 0, "has a dog named Rex", "pet", "Rex", multi=True),
        _ev("f1", 1, "lives in Leeds", "city", "Leeds", valid_to=20),
        _ev("f2", 2, "sister lives in Leeds", "city", "Leeds", subject="sister"),
        _ev("f3", 5, "adopted a cat named Luna", "pet", "Luna", multi=True),
        _ev("f4", 20, "moved to York", "city", "York"),
    ])


def test_rule_keeps_the_pets_and_retires_the_move():
    updates, sup, facts = replay(_events(), ["u1"], make_test_embedder(), "rule")
    assert updates["verdict"].tolist() == ["retired"]
    assert sup[["fact_id", "kind", "survived"]].values.tolist() == [["f1", "direct", 0.0]]
    assert facts.loc["u1"] == 5


def test_oracle_overwrites_a_coexisting_pet_and_it_counts_as_a_false_update():
    # The oracle knows (subject, attribute), not that pets coexist: Rex is overwritten by Luna.
    updates, _, _ = replay(_events(), ["u1"], make_test_embedder(), "oracle")
    assert "false_update" in updates["verdict"].tolist()
    append_updates, sup, _ = replay(_events(), ["u1"], make_test_embedder(), "append")
    assert append_updates.empty and sup["survived"].tolist() == [1.0]


def test_rate_with_ci_and_render():
    v, lo, hi = rate_with_ci([1, 0, 2], [10, 10, 10], ["a", "b", "c"], n_boot=200, seed=0)
    assert v == pytest.approx(0.1) and 0.0 <= lo <= v <= hi
    table = pd.DataFrame([
        {"set": "w", "split": "all", "resolver": "rule", "users": 1, "metric": m, "kind": k, "value": 0.0,
         "ci_lo": 0.0, "ci_hi": 0.0, "count": 0, "n": 4}
        for m, k in (("false_update_rate", "all"), ("survival", "direct"), ("survival", "oblique"))
    ])
    text = render(table, "hash-test", 5, {"rule resolver": {"w holdout": ["R4"]}})
    assert "| w † | all | development | rule | 1 | 4 | 0.0% [0.0%, 0.0%] (0) | 0.0% [0.0%, 0.0%] (0/4)" in text
    # the committed log: rule on world A's holdout and world B carries †, held-out rows first
    both = pd.concat([table.assign(set="world_b"), table.assign(set="timelines", split="holdout"),
                      table.assign(set="timelines", split="train")])
    text = render(both, "hash-test", 5)
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and "rule" in ln]
    assert rows[0].startswith("| timelines † | holdout | measuring | rule")
    assert rows[1].startswith("| world_b † | all | development | rule")
    assert rows[2].startswith("| timelines | train | development | rule")


def test_experiment_end_to_end_on_a_tiny_timeline(tmp_path: Path):
    from widemem_bench.experiments import RunContext, get_experiment

    cfg = tiny_cfg(tmp_path, 4, {"n_boot": 50, "resolvers": ["append", "rule"]})
    ctx = RunContext(output_dir=tmp_path / "run", seed=0, cfg=cfg)
    res = get_experiment("resolver_transfer")(cfg, ctx)
    rule = {(m["metric"], m["kind"]): m["value"] for m in res.metrics if m["setting"] == "rule"}
    assert rule[("false_update_rate", "all")] == 0.0
    append = {(m["metric"], m["kind"]): m["value"] for m in res.metrics if m["setting"] == "append"}
    assert append[("survival", "direct")] == 1.0
    assert not (tmp_path / "run" / "resolver_transfer.md").exists()  # only reports/ renders
    # The section renders the fragment from the run's record and tables (as make bench does).
    _, text = run_and_render("resolver_transfer", cfg, tmp_path / "bench")
    assert text.startswith("## Resolver transfer") and "Data: " in text
    assert (tmp_path / "bench" / "reports" / "resolver_transfer.md").read_text() == text


@pytest.mark.parametrize(("params", "match"), [
    ({"resolvers": ["llm"]}, r"params\.resolvers"),
    ({"n_boot": 0}, r"params\.n_boot"),
    ({"sets": [{"name": "no_such_world"}]}, r"params\.sets: unknown data set 'no_such_world'"),
])
def test_bad_params_are_named(tmp_path: Path, params: dict, match: str):
    from widemem_bench.experiments import RunContext, get_experiment

    cfg = tiny_cfg(tmp_path, 2, params)
    with pytest.raises(ValueError, match=match):
        get_experiment("resolver_transfer")(cfg, RunContext(output_dir=tmp_path / "run", seed=0, cfg=cfg))


def test_a_false_update_is_told_apart_by_its_cause():
    from widemem_bench.evaluation.replay import GoldFact
    from widemem_bench.evaluation.replay import false_update_cause as _cause

    def g(subject: str, attr: str, value: str, multi: bool = False) -> GoldFact:
        return GoldFact(subject, attr, value, T0, None, False, multi=multi)

    t = T0 + dt.timedelta(days=1)
    assert _cause([g("user", "pet", "Rex", True)], [g("user", "pet", "Luna", True)], t) == "coexisting"
    # worlds C and N name each coexisting value: a second medication is one family's second value
    assert _cause([g("user", "medication:amlodipine", "5mg", True)],
                  [g("user", "medication:ramipril", "10mg", True)], t) == "coexisting"
    assert _cause([g("sister", "city", "Leeds")], [g("user", "city", "York")], t) == "other_person"
    assert _cause([g("user", "job", "nurse")], [g("user", "city", "York")], t) == "other_attribute"
    assert _cause([g("user", "job", "nurse")], [], t) == "unknown"
    # an old wording stating the new value and another attribute lost the attribute, not a coexisting value
    assert _cause([g("user", "city", "York"), g("user", "job", "nurse")], [g("user", "city", "York")], t) \
        == "other_attribute"
    # the gold holding two values of a one-valued attribute at once is the generator's slip: unclassified
    assert _cause([g("user", "dose", "40mg")], [g("user", "dose", "20mg")], t) == "unknown"
    # world N's slip: one medication at two doses, both true by the gold, is no coexisting value either
    assert _cause([g("user", "medication:fluoxetine", "fluoxetine 40mg", True)],
                  [g("user", "medication:fluoxetine", "fluoxetine 20mg", True)], t) == "unknown"
    # the oracle's overwrite of a coexisting pet is counted as one, and the report says so
    updates, _, _ = replay(_events(), ["u1"], make_test_embedder(), "oracle")
    assert updates.loc[updates["verdict"] == "false_update", "cause"].tolist() == ["coexisting"]
    from widemem_bench.experiments.resolver_transfer import _summarise

    facts = pd.Series({"u1": 5.0})
    rows = pd.DataFrame(_summarise(updates, pd.DataFrame(columns=["kind", "survived", "user_id"]), facts, ["u1"], 20, 0))
    table = rows.assign(set="w", split="all", resolver="oracle", users=1)
    assert "| 1/0/0 |" in render(table, "hash-test", 5, {})
