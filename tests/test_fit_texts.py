"""A lexical embedder (tfidf) learns its vocabulary from world A train memories only:
never from validation, the sealed holdout or world B (issue 13 review)."""

from __future__ import annotations

from pathlib import Path

import pytest

from widemem_bench.experiments import common
from widemem_bench.experiments.context import RunContext
from widemem_bench.timelines import Timelines, generate

N = 20


@pytest.fixture(scope="module")
def world_a() -> Timelines:
    return generate(N, seed=0)


def _ctx(tmp_path: Path, tl: Timelines) -> RunContext:
    ctx = RunContext(output_dir=tmp_path, seed=0, cfg={"embedder": {"name": "tfidf"}})
    ctx._cache["timelines"] = tl  # the loaded data set, without a build on disk
    return ctx


def _vocab(texts: list[str]) -> set[str]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return set(TfidfVectorizer().fit(texts).vocabulary_)


def test_tfidf_fits_on_world_a_train_only(tmp_path: Path, world_a: Timelines) -> None:
    ev = world_a.events
    train = ev.loc[ev["split"] == "train", "fact_stripped"].dropna().astype(str).tolist()
    sealed = ev.loc[ev["split"] != "train", "fact_stripped"].dropna().astype(str).tolist()
    only_sealed = _vocab(sealed) - _vocab(train)
    assert only_sealed  # the holdout's own phrasings bring words train never has
    emb = common.load_embedder_for(_ctx(tmp_path, world_a), "tfidf")
    assert not set(emb.vectorizer.vocabulary_) & only_sealed
    assert set(emb.vectorizer.vocabulary_) == _vocab(train)
    assert common.fit_texts(_ctx(tmp_path, world_a)) == train


def test_tfidf_on_world_b_reads_no_world_b_text(tmp_path: Path, world_a: Timelines) -> None:
    wb = generate(N, seed=0, world="b")
    texts = common.fit_texts(_ctx(tmp_path, wb))
    ev = world_a.events
    assert texts == ev.loc[ev["split"] == "train", "fact_stripped"].dropna().astype(str).tolist()
    assert not set(texts) & set(wb.events["fact_stripped"].dropna())
