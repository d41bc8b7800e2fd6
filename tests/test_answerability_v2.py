"""Answerability v2: subject reading and masking, features, file round trip, engine hook.

Every text here is written for these tests (no generator, holdout or world-B phrasing).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from widemem_bench.answerability.features_v2 import (
    FEATURES_V2,
    N_FEATURES_V2,
    fit_prototypes,
    query_features_v2,
)
from widemem_bench.answerability.model import AnswerabilityModel, fit_model
from widemem_bench.answerability.subject import (
    agreement,
    mask_subject,
    memory_subject,
    query_subject,
)
from widemem_bench.answerability.v2 import (
    ScorerV2,
    encoder_fn,
    feature_rows,
    load_scorer_v2,
    save_scorer_v2,
    set_scorer_v2,
)
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig
from widemem_bench.harness import build_engine

F = {name: i for i, name in enumerate(FEATURES_V2)}


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("how old is my nephew?", ("rel", "nephew")),
        ("Which team does Oskar coach?", ("name", "oskar")),
        ("what instrument do I play?", ("self", "")),
        ("which team is coached there?", ("none", "")),
    ],
)
def test_query_subject(text, subject) -> None:
    assert query_subject(text) == subject


def test_lower_case_name_found_through_the_memories() -> None:
    assert query_subject("which team does oskar coach?") == ("none", "")
    assert query_subject("which team does oskar coach?", frozenset({"oskar"})) == ("name", "oskar")


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("nephew plays the cello", ("rel", "nephew")),
        ("Oskar coaches a rowing team", ("name", "oskar")),
        ("Oskar's aunt sells pottery", ("rel", "aunt")),
        ("plays the cello", ("self", "")),
        ("Plays the cello on Sundays", ("self", "")),  # a capital at the start is no name by itself
        ("Lena: I finally fixed my bike", ("name", "lena")),
        ("Lena: you fixed your bike, wow", ("addressee", "lena")),
    ],
)
def test_memory_subject(text, subject) -> None:
    assert memory_subject(text) == subject


def test_agreement_table() -> None:
    assert agreement(("self", ""), ("self", "")) == 1.0
    assert agreement(("self", ""), ("rel", "aunt")) == 0.0
    assert agreement(("rel", "aunt"), ("rel", "aunt")) == 1.0
    assert agreement(("rel", "aunt"), ("rel", "nephew")) == 0.0
    assert agreement(("name", "oskar"), ("name", "oskar")) == 1.0
    assert agreement(("name", "oskar"), ("name", "lena")) == 0.0
    assert agreement(("name", "oskar"), ("self", "")) == 0.5  # a note that dropped the name
    assert agreement(("name", "lena"), ("addressee", "lena")) == 0.0
    assert agreement(("name", "oskar"), ("addressee", "lena")) == 0.5
    assert agreement(("none", ""), ("rel", "aunt")) == 0.5


def test_masking_drops_the_subject_only() -> None:
    assert mask_subject("how old is my nephew?") == "how old is"
    assert mask_subject("Oskar coaches a rowing team") == "coaches a rowing team"
    assert mask_subject("Lena: I finally fixed my bike") == "finally fixed bike"
    assert mask_subject("which team does oskar coach?", frozenset({"oskar"})) == "which team does coach"
    assert mask_subject("my") == "my"  # all subject: unchanged rather than empty


@pytest.fixture(scope="module")
def emb():
    return load_embedder("hash-test", cache=False)


def test_features_shape_order_and_empty(emb) -> None:
    enc = encoder_fn(emb)
    empty = query_features_v2("what instrument do I play?", [], [], enc, None)
    assert empty.shape == (N_FEATURES_V2,)
    assert empty[F["top1_cosine"]] == -1 and empty[F["masked_possible"]] == 0
    f = query_features_v2("what instrument do I play?", ["collects stamps", "plays the cello"], [0.2, 0.5], enc, None)
    assert f[F["top1_cosine"]] == pytest.approx(0.2)
    assert f[F["max_cosine"]] == pytest.approx(0.5)
    assert f[F["cosine_gap"]] == pytest.approx(0.15)
    assert f[F["share_other"]] == 0.0 and f[F["best_is_other"]] == 0.0


def test_someone_elses_memory_is_not_possible(emb) -> None:
    enc = encoder_fn(emb)
    mems = ["nephew plays the cello"]
    mine = query_features_v2("what instrument do I play?", mems, [0.6], enc, None)
    # The only memory is about the nephew: nothing left that could answer for the user.
    assert mine[F["share_other"]] == 1.0 and mine[F["best_is_other"]] == 1.0
    assert mine[F["masked_possible"]] == 0.0
    his = query_features_v2("what instrument does my nephew play?", mems, [0.6], enc, None)
    assert his[F["share_other"]] == 0.0 and his[F["masked_possible"]] > 0.0


def test_name_in_both_texts_is_masked_out(emb) -> None:
    """A shared name must not make a question about another attribute look answered."""
    enc = encoder_fn(emb)
    q = "which team does Oskar coach?"
    named = query_features_v2(q, ["Oskar grows tomatoes"], [0.5], enc, None)
    bare = query_features_v2(q, ["grows tomatoes"], [0.5], enc, None)
    assert named[F["masked_max"]] == pytest.approx(bare[F["masked_max"]])


def test_batched_rows_equal_single_rows(emb) -> None:
    queries = ["what instrument do I play?", "how old is my nephew?", "which team does Oskar coach?"]
    contents = [["plays the cello", "nephew is seven"], ["nephew is seven"], ["Oskar coaches a rowing team"]]
    cosines = [[0.5, 0.1], [0.7], [0.4]]
    protos = fit_prototypes(np.eye(3, emb.dim, dtype=np.float32), ["a", "b", "c"], np.eye(3, emb.dim, dtype=np.float32),
                            ["a", "b", "c"])
    batch = feature_rows(queries, contents, cosines, emb, protos)
    for i, q in enumerate(queries):
        one = query_features_v2(q, contents[i], cosines[i], encoder_fn(emb), protos)
        np.testing.assert_allclose(batch[i], one, atol=1e-6)


def test_prototypes_agreement() -> None:
    v = np.eye(2, 4, dtype=np.float32)
    p = fit_prototypes(v, ["x", "y"], v, ["x", "y"], tau=50.0)
    agree = p.agreement(v[0], v)
    assert agree[0] > 0.9 and agree[1] < 0.1
    with pytest.raises(ValueError, match="both"):
        fit_prototypes(v, ["x", "y"], v, ["z", "w"])


def _toy_scorer(embedder: str = "hash-test") -> ScorerV2:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, N_FEATURES_V2))
    y = x[:, F["masked_possible"]] + 0.3 * rng.normal(size=200) > 0
    model, _ = fit_model(x, y, np.arange(200) % 10, features=FEATURES_V2)
    return ScorerV2(embedder, model, None, (0.9, 0.5, 0.2))


def test_file_round_trip_and_bad_files(tmp_path) -> None:
    s = _toy_scorer()
    path = save_scorer_v2(s, tmp_path / "hash-test.json")
    back = load_scorer_v2("hash-test", tmp_path)
    assert back.cutoffs == s.cutoffs and back.model.coef == s.model.coef
    bad = json.loads(path.read_text())
    bad["cutoffs"] = [0.2, 0.5, 0.9]
    (tmp_path / "b.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="cutoffs"):
        load_scorer_v2("b", tmp_path)
    (tmp_path / "c.json").write_text("{")
    with pytest.raises(ValueError, match=r"c\.json"):
        load_scorer_v2("c", tmp_path)
    with pytest.raises(ValueError, match=r"widemem-bench fit_v2 embedder=nothing"):
        load_scorer_v2("nothing", tmp_path)
    v1_features = {**s.model.to_dict(), "features": ["x"] * N_FEATURES_V2}
    with pytest.raises(ValueError, match="features"):
        AnswerabilityModel.from_dict(v1_features)


def test_engine_v2_and_v1_by_name(emb) -> None:
    set_scorer_v2(_toy_scorer())
    try:
        eng = build_engine(emb, EngineConfig(confidence="answerability_v2"))
        eng.add_fact("nephew plays the cello", "u1")
        res = eng.search("what instrument do I play?", "u1")
        s = load_scorer_v2("hash-test")
        p = s.probability("what instrument do I play?", [r.memory.content for r in res],
                          [r.raw_similarity_score for r in res], encoder_fn(emb))
        assert res.confidence.value == s.band(p)
    finally:
        set_scorer_v2(None)
    with pytest.raises(ValueError, match="confidence"):
        EngineConfig(confidence="answerability_v9")
    assert EngineConfig(confidence="answerability_v1").confidence == "answerability_v1"


def test_committed_v2_file_loads() -> None:
    s = load_scorer_v2("minilm-l6")
    assert s.model.features == FEATURES_V2
    assert s.meta["dataset"]["fitted_on"] == "train"
    assert s.cutoffs[0] >= s.cutoffs[1] >= s.cutoffs[2]


def test_fit_refuses_world_b_and_bad_keys() -> None:
    from widemem_bench.answerability.fit import FitOptions, options, tool
    from widemem_bench.cli import UsageError, compose_tool

    with pytest.raises(ValueError, match="evaluation-only"):
        tool(compose_tool("fit_v2", ["embedder=minilm-l6", "dataset=world_b", "install=false"]))
    with pytest.raises(UsageError, match="holdout: not a key of fit_v2"):
        compose_tool("fit_v2", ["holdout=true"])
    assert options(compose_tool("fit_v2", ["embedder=a,b", "prototypes=true"])).embedders == ("a", "b")
    assert options(compose_tool("fit_v2", ["out=/tmp/v2"])).out == Path("/tmp/v2")
    assert options(compose_tool("fit_v2", [])) == FitOptions()  # configs/tool/fit_v2.yaml is the code's defaults


def test_fit_searches_never_read_the_holdout() -> None:
    """The fit path's searches embed no holdout question or fact (the holdout is sealed)."""
    from widemem_bench.answerability.sets import load_world, world_searches

    tl, _ = load_world("timelines_small")
    seen: list[str] = []

    class Recorder:
        def __init__(self, inner: object) -> None:
            self.inner = inner
            self.model_id = inner.model_id  # type: ignore[attr-defined]

        def encode(self, texts: list[str], kind: str = "passage") -> object:
            seen.extend(texts)
            return self.inner.encode(texts, kind=kind)  # type: ignore[attr-defined]

    inner = load_embedder("hash-test", cache=False)
    s = world_searches(tl, Recorder(inner), "timelines_small", splits=("train", "validation"))
    assert set(s.frame["split"]) == {"train", "validation"}
    hold_users = set(tl.questions.loc[tl.questions["split"] == "holdout", "user_id"])
    hold_q = set(tl.questions.loc[tl.questions["split"] == "holdout", "text"].astype(str))
    hold_f = set(tl.events.loc[tl.events["split"] == "holdout", "fact_stripped"].dropna().astype(str))
    kept_f = set(tl.events.loc[tl.events["split"] != "holdout", "fact_stripped"].dropna().astype(str))
    assert hold_users and not (set(seen) & (hold_q | (hold_f - kept_f)))
    # Same searches for the kept users as when every split is searched.
    full = world_searches(tl, inner, "timelines_small")
    full = full.subset(full.frame["split"].isin(("train", "validation")).to_numpy())
    assert full.frame["qid"].tolist() == s.frame["qid"].tolist()
    assert full.contents == s.contents
    assert np.allclose(np.concatenate([np.asarray(c) for c in full.cosines if c]),
                       np.concatenate([np.asarray(c) for c in s.cosines if c]))


def test_cutoffs_are_certified_per_user_by_the_ladder() -> None:
    """LOW is set by "answerable below LOW <= 5 %" and every cut-off by `certify_ladder` with
    users as the unit; the committed file names that certificate."""
    from widemem_bench.answerability.fit import CERTIFICATE, NONE_ANSWERABLE, choose_cutoffs

    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(60), 20)
    pos = rng.uniform(0.3, 1.0, 720)
    neg = rng.uniform(0.0, 0.5, 480)  # 60 % answerable: a LOW precision target of 0.5 would hold anywhere
    prob = np.concatenate([pos, neg])
    kinds = np.where(np.arange(prob.size) < pos.size, "answerable", "hard_negative")
    (high, moderate, low), info = choose_cutoffs(prob, kinds, users, {"high": 0.95, "moderate": 0.8}, 0.1)
    assert 0.3 < low <= moderate <= high and info["low"]["certified"]
    assert (pos < low).mean() <= NONE_ANSWERABLE
    cert = info["certificate"]
    assert cert["unit"] == "user" and cert["method"] == "cluster" and cert["n_users"] == 60
    assert set(cert["statements"]) == {"high", "moderate", "cap:hard_negative", "none"}
    # Too few users for a per-user certificate: refused, not certified per question.
    with pytest.raises(ValueError, match="users"):
        choose_cutoffs(prob, kinds, users % 10, {"high": 0.95, "moderate": 0.8}, 0.1)
    committed = load_scorer_v2("minilm-l6")
    assert committed.meta["certificate"]["name"] == CERTIFICATE and committed.meta["certificate"]["unit"] == "user"
    # The committed scorer: a never-mentioned question can read NONE.
    assert committed.cutoffs[2] > 0.1
