"""Answerability v2's transfer targets (issue 13), measured with the committed minilm-l6 file.

Slow: loads MiniLM, builds world B, embeds LoCoMo. Every cut-off and weight comes from
world A; these sets are only measured here.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup():
    from widemem_bench.answerability.v2 import load_scorer_v2
    from widemem_bench.embedders import load_embedder
    from widemem_bench.external.locomo import DEFAULT_LOCOMO_PATH
    from widemem_bench.external.widemem_fixture import DEFAULT_FIXTURE_PATH

    if not DEFAULT_LOCOMO_PATH.is_file() or not DEFAULT_FIXTURE_PATH.is_file():
        pytest.skip("LoCoMo or widemem's fixture is not in ../shared/data")
    return load_embedder("minilm-l6"), load_scorer_v2("minilm-l6")


def _prob(s, emb, scorer) -> np.ndarray:
    from widemem_bench.answerability.v2 import feature_rows

    x = feature_rows(s.frame["query"].tolist(), s.contents, s.cosines, emb, scorer.prototypes)
    return scorer.model.predict_proba(x)


def test_world_b_auroc(setup) -> None:
    from widemem_bench.answerability.sets import world_searches
    from widemem_bench.experiments.transfer import _world_b
    from widemem_bench.metrics import auroc

    emb, scorer = setup
    tl = _world_b({})
    if tl is None:
        pytest.skip("no world B dataset config")
    s = world_searches(tl, emb, "world_b")
    kinds = s.frame["kind"].to_numpy(dtype=str)
    v2 = auroc(_prob(s, emb, scorer), kinds)
    top1 = auroc(s.frame["top1"].to_numpy(), kinds)
    assert v2 >= 0.85 and v2 - top1 >= 0.10, (v2, top1)


def test_fixture_stripped_counts(setup) -> None:
    from widemem_bench.answerability.sets import fixture_searches

    emb, scorer = setup
    s = fixture_searches(emb, "stripped")
    moderate_plus = _prob(s, emb, scorer) >= scorer.cutoffs[1]
    f = s.frame
    hn = int((moderate_plus & (f["kind"] == "hard_negative")).sum())
    ans = (f["kind"] == "answerable").to_numpy()
    recall = {sp: int((moderate_plus & ans & (f["split"] == sp).to_numpy()).sum()) for sp in ("train", "holdout")}
    assert hn <= 4 and recall["train"] >= 20 and recall["holdout"] >= 7, (hn, recall)


def _locomo(setup):
    from widemem_bench.answerability.sets import locomo_searches
    from widemem_bench.metrics import auroc

    emb, scorer = setup
    s = locomo_searches(emb)
    kinds = s.frame["kind"].to_numpy(dtype=str)
    return auroc(_prob(s, emb, scorer), kinds), auroc(s.frame["top1"].to_numpy(), kinds)


def test_locomo_beats_top1(setup) -> None:
    v2, top1 = _locomo(setup)
    assert v2 - top1 >= 0.05, (v2, top1)


@pytest.mark.xfail(strict=True, reason="issue 13 target 0.65; v2 as committed measures 0.641 (reports/transfer.md)")
def test_locomo_target(setup) -> None:
    v2, _ = _locomo(setup)
    assert v2 >= 0.65, v2
