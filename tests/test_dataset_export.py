"""The saved timelines load with Hugging Face `datasets` (every split) and BEIR's loader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from widemem_bench.timelines import Timelines, generate, load
from widemem_bench.timelines.dataset import BEIR_SPLITS, beir_scope, beir_user, split_file
from widemem_bench.timelines.templates import SPLITS


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Timelines, Path]:
    tl = generate(20, seed=0, questions_per_user=10)
    return tl, tl.save(tmp_path_factory.mktemp("tl"))


def _rows(tl: Timelines, table: str) -> dict[str, int]:
    df = tl.table(table)
    return {s: int((df["split"] == s).sum()) for s in SPLITS}


@pytest.mark.parametrize("table", ["questions", "events"])
def test_every_split_loads_with_datasets(saved: tuple[Timelines, Path], table: str,
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    tl, path = saved
    want = _rows(tl, table)
    assert all(want.values()), want  # every split has rows, or the check proves nothing
    calls = {
        "config": {"path": str(path), "name": table},
        "data_dir": {"path": str(path), "data_dir": table},
        "parquet data_dir": {"path": "parquet", "data_dir": str(path / table)},
    }
    for how, kwargs in calls.items():
        got = datasets.load_dataset(**kwargs, cache_dir=str(tmp_path / "hf"))
        assert {s: got[s].num_rows for s in got} == want, how


def test_load_reads_the_old_layout_too(saved: tuple[Timelines, Path], tmp_path: Path) -> None:
    _, path = saved
    old = tmp_path / path.name
    shutil.copytree(path, old)
    for table in ("events", "questions"):
        for s in SPLITS:
            (old / split_file(table, s)).rename(old / table / f"{s}.parquet")
        (old / table / "data").rmdir()
    back = load(old)
    pd.testing.assert_frame_equal(back.questions, load(path).questions)


def _check_beir_layout(beir: Path) -> None:
    """What BEIR's GenericDataLoader documents: corpus.jsonl (_id, title, text),
    queries.jsonl (_id, text), qrels/<split>.tsv with a header, split "test" by default."""
    for line in (beir / "corpus.jsonl").read_text().splitlines():
        doc = json.loads(line)
        assert {"_id", "title", "text"} <= set(doc) and beir_user(doc["_id"]) == doc["user_id"]
    for line in (beir / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        assert {"_id", "text"} <= set(q) and beir_user(q["_id"]) == q["user_id"]
    for name in BEIR_SPLITS.values():
        head = (beir / "qrels" / f"{name}.tsv").read_text().splitlines()[0]
        assert head == "query-id\tcorpus-id\tscore"


def test_beir_export_loads_in_generic_data_loader(saved: tuple[Timelines, Path]) -> None:
    tl, path = saved
    _check_beir_layout(path / "beir")
    loader = pytest.importorskip("beir.datasets.data_loader")
    corpus, queries, qrels = loader.GenericDataLoader(str(path / "beir")).load(split="test")
    hold = tl.questions[(tl.questions["split"] == "holdout") & (tl.questions["gold_fact_ids"].map(len) > 0)]
    assert set(queries) == set(hold["question_id"]) == set(qrels)
    assert len(corpus) == int(tl.events["fact_stripped"].notna().sum())
    # every gold memory is the query's own user's
    assert all(beir_user(d) == beir_user(q) for q, docs in qrels.items() for d in docs)
    dev = loader.GenericDataLoader(str(path / "beir")).load(split="dev")[1]
    assert set(dev) <= set(tl.questions.loc[tl.questions["split"] == "validation", "question_id"])


def test_beir_scope_keeps_only_the_users_own_memories() -> None:
    run = {"u0001-q003": {"u0001-f000": 0.9, "u0002-f004": 0.95, "u0001-f007": 0.1},
           "u0002-q000": {"u0001-f000": 0.8}}
    assert beir_scope(run) == {"u0001-q003": {"u0001-f000": 0.9, "u0001-f007": 0.1}, "u0002-q000": {}}
