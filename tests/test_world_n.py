"""World N (widemem_bench.timelines.world_n), the natural-register development world:
deterministic to the byte, consistent ground truth, and negatives that are truly negative."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from widemem_bench.timelines import check_fittable, generate, load, materialize
from widemem_bench.timelines import world_n_vocab as W
from widemem_bench.timelines.build import DEFAULT_CONFIGS
from widemem_bench.timelines.world_n import chat_noise, typo

N = 60


@pytest.fixture(scope="module")
def wn() -> tuple[pd.DataFrame, pd.DataFrame]:
    tl = generate(N, seed=0, world="n")
    return tl.events, tl.questions


def _family(attr: str) -> str:
    fam = attr.split(":")[0]
    return fam if fam in W.MULTI else attr


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f.relative_to(path).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes_and_prefix_stable(tmp_path: Path) -> None:
    a, b = generate(10, seed=4, world="n"), generate(10, seed=4, world="n")
    assert _digest(a.save(tmp_path / "a")) == _digest(b.save(tmp_path / "b"))
    other = generate(10, seed=5, world="n").events
    assert not a.events["fact_stripped"].equals(other["fact_stripped"])
    big = generate(14, seed=4, world="n").events
    pd.testing.assert_frame_equal(a.events[a.events.user_id == "u0003"].reset_index(drop=True),
                                  big[big.user_id == "u0003"].reset_index(drop=True))


def test_registered_and_builds_fast(tmp_path: Path) -> None:
    assert "world_n" in DEFAULT_CONFIGS
    cfg = materialize.read_config("world_n")
    assert cfg["world"] == "n" and cfg["n_users"] == 200 and cfg["seed"] == 0
    check_fittable("n")  # a development world
    t0 = time.perf_counter()
    tl = generate(cfg["n_users"], cfg["seed"], world="n")
    assert time.perf_counter() - t0 < 30.0
    path = tl.save(tmp_path)
    assert path.name == "n1v4-n200-s0"
    back = load(path)
    assert back.world == "n" and back.meta["world_version"] == "1"
    pd.testing.assert_frame_equal(back.events, tl.events)
    pd.testing.assert_frame_equal(back.questions, tl.questions)
    assert "World N" in (path / "README.md").read_text()
    counts = back.counts()["questions"]
    for kind in ("answerable", "stale_probe", "hard_negative", "other_person", "never_mentioned"):
        assert all(counts[kind][s] > 0 for s in ("train", "validation", "holdout")), kind


def test_splits_disjoint_by_user(wn: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    ev, q = wn
    for df in (ev, q):
        assert (df.groupby("user_id")["split"].nunique() == 1).all()
    users = ev.drop_duplicates("user_id").set_index("user_id")["split"]
    assert set(users) == {"train", "validation", "holdout"}
    assert (q["split"] == users.loc[q["user_id"]].to_numpy()).all()


def test_answerable_gold_exists_and_holds_when_asked(wn: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    ev, q = wn
    by_id = ev.set_index("fact_id")
    for r in q[q["kind"].isin(["answerable", "stale_probe"])].itertuples():
        assert r.gold_fact_ids, r.question_id
        g = by_id.loc[list(r.gold_fact_ids)]
        assert (g["user_id"] == r.user_id).all() and (g["subject"] == r.subject).all()
        assert (g["attribute"].map(_family) == r.attribute).all()
        assert (g["valid_from"] <= r.asked_at).all()
        assert (g["valid_to"].isna() | (g["valid_to"] > r.asked_at)).all()
        assert (g["value"] != "ended").all()
        if r.kind == "stale_probe":
            s = by_id.loc[list(r.stale_fact_ids)]
            assert len(s) and (s["valid_to"] <= r.asked_at).all()
        else:
            assert not r.stale_fact_ids


def test_negatives_have_nothing_stored(wn: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    ev, q = wn
    stored = set(zip(ev["user_id"], ev["subject"], ev["attribute"].map(_family), strict=True))
    by_id = ev.set_index("fact_id")
    neg = q[q["kind"].isin(["hard_negative", "other_person", "never_mentioned"])]
    assert neg["gold_fact_ids"].map(len).eq(0).all()
    hard = q[q["kind"] == "hard_negative"]
    assert len(hard) > 100
    for r in hard.itertuples():
        # slot missing: the asked detail is never stored for the subject, its entity is
        assert (r.user_id, r.subject, r.attribute) not in stored, r.question_id
        entity = W.DETAILS[r.attribute.split(":")[0]].entity
        d = by_id.loc[list(r.distractor_fact_ids)]
        assert len(d) == 1 and d["attribute"].iloc[0].split(":")[0] == entity
        assert d["valid_from"].iloc[0] <= r.asked_at
    other = q[q["kind"] == "other_person"]
    assert len(other) > 100 and (other["subject"] != "user").all()
    for r in other.itertuples():
        assert (r.user_id, r.subject, r.attribute) not in stored, r.question_id
        d = by_id.loc[list(r.distractor_fact_ids)]  # someone else's fact of that kind is stored
        assert len(d) and (d["subject"] != r.subject).all()
        assert (d["attribute"].map(_family) == r.attribute).all()
    unrelated = q[q["kind"] == "never_mentioned"]
    assert len(unrelated) and unrelated["attribute"].isna().all()
    assert not unrelated["distractor_fact_ids"].map(len).any()


def test_one_true_value_per_slot(wn: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    ev, _ = wn
    canon = ev[~ev["restatement"]]
    for _, g in canon.groupby(["user_id", "subject", "attribute"]):
        g = g.sort_values("valid_from")
        ends = g["valid_to"].iloc[:-1]
        assert ends.notna().all() and (ends.to_numpy() == g["valid_from"].iloc[1:].to_numpy()).all()
        assert pd.isna(g["valid_to"].iloc[-1])  # the last statement of a slot stands
    sup = ev[ev["supersedes"].notna()]
    by_id = ev.set_index("fact_id")
    assert (by_id.loc[sup["supersedes"], "valid_to"].to_numpy() == sup["valid_from"].to_numpy()).all()


def test_update_styles_registers_and_keeps(wn: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    ev, _ = wn
    fam = ev["utterance_family"].str.split(".")
    style, register = fam.str[2], fam.str[3]
    upd = ev[(ev["update_kind"] == "supersedes") & (ev["value"] != "ended")]
    share = style[upd.index].value_counts(normalize=True)
    assert set(share.index) == {"plain", "marked", "oblique"}
    assert 0.3 <= share["plain"] <= 0.55 and 0.2 <= share["marked"] <= 0.4 and 0.2 <= share["oblique"] <= 0.4
    assert (ev["oblique"] == (style == "oblique")).all()
    third = (register[upd.index] == "note") | (upd["subject"] != "user")
    assert 0.35 <= third.mean() <= 0.7, third.mean()
    # an oblique update never names the value it replaces
    by_id = ev.set_index("fact_id")
    for r in upd[style[upd.index] == "oblique"].itertuples():
        old, new = str(by_id.loc[str(r.supersedes), "value"]).lower(), str(r.value).lower()
        assert old not in str(r.fact_stripped).lower() or old in new, r.fact_id
    # both registers, about half the facts in the third person or about someone else
    assert set(register) == {"chat", "rel", "note"}
    assert 0.4 <= ((register == "note") | (ev["subject"] != "user")).mean() <= 0.7
    # keep scenarios: a second pet / child / allergy / medication / language retires nothing
    adds = ev[ev["update_kind"] == "coexists"]
    assert set(adds["attribute"].str.split(":").str[0]) == set(W.MULTI)
    assert adds["supersedes"].isna().all() and adds["valid_to"].isna().mean() > 0.7
    assert (ev.loc[ev["multi_valued"] & ev["supersedes"].notna(), "attribute"].str.split(":").str[0]
            .isin(["medication", "pet"])).all()  # only a dose change or an ending


def test_register_noise() -> None:
    rng = np.random.Generator(np.random.PCG64(0))
    out = [typo("we moved down to Bristol last weekend", rng, "Bristol") for _ in range(40)]
    assert all("Bristol" in t for t in out) and len(set(out)) > 3
    # a swap of two equal letters ("weekend") leaves the word as it was: rare, harmless
    assert sum(t != "we moved down to Bristol last weekend" for t in out) >= 32
    from widemem_bench.timelines.world_n import _User
    u = _User("u", "train", "Aisha", np.random.Generator(np.random.PCG64(1)), 365.0)
    msgs = [chat_noise(u, "i work at Monzo", "Monzo") for _ in range(60)]
    assert all("monzo" in m.lower() for m in msgs)
    assert any(m.islower() for m in msgs) and len(set(msgs)) > 20
