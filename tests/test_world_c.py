"""World C (widemem_bench.timelines.world_c), the development world for the resolvers:
deterministic, consistent ground truth, and the update mix it promises."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from _embedders import make_test_embedder

from widemem_bench.experiments.resolver_transfer import replay
from widemem_bench.timelines import check_fittable, generate, load, materialize
from widemem_bench.timelines import world_c_vocab as W
from widemem_bench.timelines.world_c import THIRD_PERSON, render

N = 60


@pytest.fixture(scope="module")
def wc() -> pd.DataFrame:
    return generate(N, seed=0, world="c").events


def _style(ev: pd.DataFrame) -> pd.Series:
    return ev["utterance_family"].str.split(".").str[2]


def test_deterministic_from_the_seed_and_prefix_stable() -> None:
    a, b = generate(8, seed=5, world="c"), generate(8, seed=5, world="c")
    pd.testing.assert_frame_equal(a.events, b.events)
    pd.testing.assert_frame_equal(a.questions, b.questions)
    other = generate(8, seed=6, world="c").events
    assert not a.events["fact_stripped"].equals(other["fact_stripped"])
    # user u0002 is the same whatever the set's size
    big = generate(12, seed=5, world="c").events
    pd.testing.assert_frame_equal(a.events[a.events.user_id == "u0002"].reset_index(drop=True),
                                  big[big.user_id == "u0002"].reset_index(drop=True))


def test_superseded_fact_ends_when_its_successor_starts(wc: pd.DataFrame) -> None:
    ended = wc[wc["valid_to"].notna()]
    assert len(ended) > 500
    for r in ended.itertuples():
        slot = wc[(wc.user_id == r.user_id) & (wc.subject == r.subject) & (wc.attribute == r.attribute)]
        nxt = slot[(slot["valid_from"] == r.valid_to) & ~slot["restatement"]]
        assert len(nxt) == 1, r.fact_id  # exactly one new statement of the slot at that minute
        assert r.restatement or nxt["supersedes"].iloc[0] == r.fact_id
    sup = wc[wc["supersedes"].notna()]
    by_id = wc.set_index("fact_id")
    assert (by_id.loc[sup["supersedes"], "valid_to"].to_numpy() == sup["valid_from"].to_numpy()).all()


def test_one_true_value_per_slot_at_any_time(wc: pd.DataFrame) -> None:
    canon = wc[~wc["restatement"]]
    for (_, _, _), g in canon.groupby(["user_id", "subject", "attribute"]):
        g = g.sort_values("valid_from")
        ends = g["valid_to"].iloc[:-1]
        assert ends.notna().all() and (ends.to_numpy() == g["valid_from"].iloc[1:].to_numpy()).all()


def test_multi_valued_values_coexist(wc: pd.DataFrame) -> None:
    multi = wc[wc["multi_valued"]]
    fam = multi["attribute"].str.split(":").str[0]
    assert set(fam) <= set(W.MULTI) and len(set(fam)) >= 8
    # a second pet is its own slot: adding it ends nothing
    adds = multi[(multi["update_kind"] == "coexists")]
    assert len(adds) > 100 and adds["supersedes"].isna().all()
    # only an explicit ending retires a value, and it says so
    ends = multi[multi["supersedes"].notna()]
    assert len(ends) > 0 and (ends["value"] == "ended").all()
    assert (multi["attribute"] == multi["attribute"].str.split(":").str[0] + ":"
            + multi["value"].where(multi["value"] != "ended", multi["attribute"].str.split(":").str[1])).all()


def test_update_styles_and_oblique_flag(wc: pd.DataFrame) -> None:
    upd = wc[(wc["update_kind"] == "supersedes") & ~wc["multi_valued"]]
    share = _style(upd).value_counts(normalize=True)
    assert 0.33 <= share["plain"] <= 0.5, share  # unmarked restatements: ~40%
    assert 0.2 <= share["marked"] <= 0.4 and 0.2 <= share["oblique"] <= 0.4, share
    assert (upd["oblique"] == (_style(upd) == "oblique")).all()
    assert not wc.loc[upd.index[_style(upd) != "oblique"], "oblique"].any()
    # a plain update carries no change word
    plain = upd[_style(upd) == "plain"]["fact_stripped"].str.lower()
    for word in ("moved", "switched", " now", "no longer", "these days", "changed"):
        assert not plain.str.contains(word).any(), word


def test_voices_and_other_subjects(wc: pd.DataFrame) -> None:
    user = wc[(wc["subject"] == "user") & (wc["attribute"] != "name")]
    text = user["fact_stripped"]
    third = (text.str.startswith(tuple(user["user_name"].unique()))
             | text.str.startswith(("User ", "User's", "The user")))
    first = text.str.match(r"^(I|My) ")
    bare = text.str.match(r"^[a-z]")
    assert 0.3 <= third.mean() <= 0.5, third.mean()
    assert first.mean() >= 0.2 and bare.mean() >= 0.2
    assert set(THIRD_PERSON) < {"first", "bare", "named", "User", "the user"}
    others = wc[wc["subject"] != "user"]
    assert set(others["subject"]) <= set(W.RELATIVES) and len(others) > 200
    # the same attribute for another person, often with a value the user has had too
    mine = set(zip(wc.loc[wc.subject == "user", "user_id"], wc.loc[wc.subject == "user", "value"], strict=True))
    shared = [(u, v) in mine for u, v, a in zip(others.user_id, others.value, others.attribute, strict=True)
              if a == "home_city"]
    assert 0.1 < sum(shared) / len(shared) < 0.9


def test_pet_names_never_the_users_name(wc: pd.DataFrame) -> None:
    pets = wc[wc["attribute"].str.startswith("pet:") & (wc["value"] != "ended")]
    assert len(pets) > 20 and (pets["value"] != pets["user_name"]).all()
    names = wc[wc["attribute"] == "name"]
    assert (names["value"] == names["user_name"]).all()


def test_restatements_keep_the_value(wc: pd.DataFrame) -> None:
    rest = wc[wc["restatement"]]
    assert len(rest) > 300 and (rest["update_kind"] == "restates").all()
    for r in rest.itertuples():
        slot = wc[(wc.user_id == r.user_id) & (wc.subject == r.subject) & (wc.attribute == r.attribute)
                  & ~wc["restatement"] & (wc["valid_from"] < r.valid_from)]
        assert slot.sort_values("valid_from")["value"].iloc[-1] == r.value, r.fact_id


def test_render_voices() -> None:
    tpl = "{S} [live|lives] in {v}"
    assert render(tpl, "I", "my", True, {"v": "Porto"}) == "I live in Porto"
    assert render(tpl, "", "", False, {"v": "Porto"}, cap=False) == "lives in Porto"
    assert render("{P} car is a {v}", "the user", "the user's", False, {"v": "Rook"}) == "The user's car is a Rook"


def test_registered_builds_fast_and_is_fittable(tmp_path: Path) -> None:
    cfg = materialize.read_config("world_c")
    assert cfg["world"] == "c" and cfg["n_users"] == 200 and cfg["seed"] == 0
    check_fittable("c")  # a development world: no refusal
    with pytest.raises(ValueError, match="evaluation-only"):
        check_fittable("b")
    t0 = time.perf_counter()
    tl = generate(cfg["n_users"], cfg["seed"], world="c")
    assert time.perf_counter() - t0 < 15.0
    path = tl.save(tmp_path)
    assert path.name == "c1v4-n200-s0"
    back = load(path)
    assert back.world == "c"
    pd.testing.assert_frame_equal(back.events, tl.events)
    assert "World C" in (path / "README.md").read_text()
    q = back.questions
    assert set(q["kind"]) == {"answerable", "stale_probe", "never_mentioned"}
    ids = set(tl.events["fact_id"])
    assert all(set(g) <= ids for g in q["gold_fact_ids"])


def test_oracle_with_every_memory_as_candidate_is_perfect(wc: pd.DataFrame) -> None:
    # The gold slots, read by the oracle, must retire every stale fact and nothing true;
    # with all memories as candidates nearest-neighbour retrieval cannot hide one.
    users = sorted(wc["user_id"].unique())[:12]
    upd, sup, _ = replay(wc[wc["user_id"].isin(users)], users, make_test_embedder(), "oracle",
                         candidate_k=1000)
    assert len(sup) > 50 and set(sup["kind"]) == {"direct", "oblique"}
    assert sup["survived"].sum() == 0
    assert (upd["verdict"] != "false_update").all() and (upd["verdict"] == "merge").any()
