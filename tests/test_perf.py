"""The perf benchmark on tiny inputs with the hash-test embedder (fast tier)."""

from __future__ import annotations

import numpy as np
import pytest

from widemem_bench.experiments import perf
from widemem_bench.peers import widemem_available
from widemem_bench.peers.replay import PrefetchedEmbedder, replay_steps, toy_timeline
from widemem_bench.reports.perf_tools import write_perf


class CountingEmbedder:
    name = "counting"
    model_id = "counting"
    dim = 8
    fingerprint = "c"

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []

    def encode(self, texts, kind="passage"):
        self.calls.append((len(texts), kind))
        rng = np.random.default_rng(len(texts))
        x = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_prefetched_embedder_encodes_once_per_batch():
    inner = CountingEmbedder()
    pre = PrefetchedEmbedder(inner)
    assert pre.prefetch(["a", "b", "a", "c"]) == 3
    assert pre.prefetch(["a", "b"]) == 0  # already held: no model call
    assert pre.prefetch(["a"], kind="query") == 1  # kinds are separate (query prefixes)
    v = pre.encode(["c", "a"])
    assert v.shape == (2, 8) and inner.calls == [(3, "passage"), (1, "query")]
    pre.encode(["new text"])  # a miss still works, one more call
    assert pre.inner_calls == 3 and pre.inner_texts == 5
    assert pre.model_id == "counting" and pre.dim == 8


def test_resolve_params_errors_name_the_key():
    with pytest.raises(ValueError, match=r"params\.nope"):
        perf.resolve_params({"nope": 1})
    with pytest.raises(ValueError, match=r"params\.stages"):
        perf.resolve_params({"stages": ["limit_engine", "warp"]})
    with pytest.raises(ValueError, match=r"params\.repeats"):
        perf.resolve_params({"repeats": 0})


def test_scaling_point_counts():
    row = perf._scaling_point(n_users=3, per_user=7, n_queries=4, seed=0)
    assert row["memories"] == 21 and row["queries"] == 4
    assert row["ingest_s"] > 0 and row["search_ms_per_query"] > 0


@pytest.mark.skipif(not widemem_available(), reason="widemem-ai 2.0.2 not installed (make venv-peers)")
def test_report_renders_without_the_sqlite_stage(tmp_path):
    """make bench's light variant skips stage 2b; the widemem line must still render."""
    events, questions = toy_timeline(3)
    params = {
        "embedder": "hash-test",
        "engine_embedder": None,  # the engine encodes with `embedder` too
        "repeats": 1,
        "widemem_users": 2,
        "cache_dir": str(tmp_path / "cache"),
        "stages": ["limit_engine", "widemem"],
        "engine_sqlite": False,
        "in_process": True,
        "engine_resolvers": ["rule"],  # `rule` keeps the test light (`structure` loads spaCy and its scorer)
    }
    report = tmp_path / "perf.md"
    res = perf.run_perf({"params": params}, tmp_path / "out", data=(events, questions))
    write_perf(res, report)
    assert res["limit_engine"]["engine_sqlite_ops_per_s"] is None
    assert "(2)/(3)" in report.read_text()


def test_run_perf_tiny_end_to_end(tmp_path):
    events, questions = toy_timeline(3)
    stages = ["limit_engine", "scaling", "sweep"] + (["widemem"] if widemem_available() else [])
    params = {
        "embedder": "hash-test",
        "engine_embedder": None,
        "repeats": 2,
        "widemem_users": 2,
        "memories_per_user": [5, 20],
        "users": [2, 4],
        "scaling_queries": 3,
        "scaling_facts_per_user": 3,
        "sweep_users": 3,
        "sweep_settings": 7,
        "cache_dir": str(tmp_path / "cache"),
        "stages": stages,
        "in_process": True,
        # the 2r row with `rule` (the light resolver; `structure` is timed by make perf)
        # (18 minutes on one thread), which a fresh clone's `make test` does not have
        "engine_resolvers": ["rule"],
    }
    report = tmp_path / "perf.md"
    res = perf.run_perf({"params": params}, tmp_path / "out", data=(events, questions))
    write_perf(res, report)
    le = res["limit_engine"]
    n_texts = events["fact_stripped"].nunique() + questions["text"].nunique()
    assert le["n_texts"] == n_texts
    # cold cache: every text of every engine run reached the model
    assert le["texts_computed_per_engine_run"] == [n_texts, n_texts]
    assert le["n_searches"] == len(questions) and le["n_adds"] == len(events)
    assert le["single_texts_per_s"] > 0  # one-text-per-call rate: the bound on (2)/(3)
    assert len(le["limit_s"]) == 2 and all(t > 0 for t in le["engine_s"])
    assert len(le["engine_sqlite_s"]) == 2 and le["engine_sqlite_ops_per_s"] > 0  # (2b) durable store
    s = res["summary"]
    # headline: median of back-to-back pair ratios (limit time / engine time), wall and CPU
    pairs = [a / b for a, b in zip(le["limit_s"], le["engine_s"], strict=True)]
    assert s["engine_over_limit"] == pytest.approx(float(np.median(pairs)))
    assert s["engine_over_limit_of_medians"] == pytest.approx(s["engine_texts_per_s"] / s["limit_texts_per_s"])
    assert len(le["cpu_pair_ratios"]) == 2 and s["engine_over_limit_cpu"] > 0
    assert {r["curve"] for r in res["scaling"]["rows"]} == {"memories_per_user", "users"}
    assert [r["memories"] for r in res["scaling"]["rows"]] == [5, 20, 6, 12]
    sw = res["sweep"]
    assert sw["n_settings"] == 7 and sw["texts_computed_warm"] == 0  # warm cache: nothing encoded
    assert sw["settings_per_s"] > 0 and s["sweep_settings_per_s"] == sw["settings_per_s"]
    text = report.read_text()
    assert "## Offline replay (lookahead batching)" in text and "(2)/(1)" in text
    assert "## Scale (text for the README)" in text
    assert (tmp_path / "out" / "perf.json").is_file()
    if widemem_available():
        wm = res["widemem"]
        assert wm["n_users"] == 2 and wm["widemem_ops_per_s"] > 0
        # (2)/(3): widemem and the engine on the same steps, back to back, per repeat
        assert len(wm["offline_over_widemem"]) == 2 and len(wm["offline_s"]) == 2
        assert s["engine_over_widemem"] == pytest.approx(float(np.median(wm["offline_over_widemem"])))
        assert "(2)/(3)" in text and "3e engine, `hash-test`, same steps" in text
        # online: each call encodes its own text; the encoder time is measured on both sides
        assert all(0 < e < t for e, t in zip(wm["online_encode_s"], wm["online_s"], strict=True))
        assert all(0 < e < t for e, t in zip(wm["widemem_same_encode_s"], wm["widemem_same_s"], strict=True))
        assert s["online_over_widemem"] == pytest.approx(float(np.median(wm["online_over_widemem"])))
        assert s["beyond_ratio"] == pytest.approx(float(np.median(wm["beyond_ratio"])))
        assert "## Online: every call encodes only its own text" in text


def test_replay_steps_feed_every_text_to_the_prefetch():
    events, questions = toy_timeline(2)
    steps = replay_steps(events, questions)
    facts, qs = perf.step_texts(steps)
    assert len(facts) == events["fact_stripped"].nunique() and len(qs) == questions["text"].nunique()


@pytest.mark.slow
def test_joblib_stage_runs_one_job_per_embedder(tmp_path):
    events, questions = toy_timeline(3)
    events.to_parquet(tmp_path / "events.parquet")
    questions.to_parquet(tmp_path / "questions.parquet")
    p = perf.resolve_params({"sweep_embedders": ["hash-test", "hash-test"], "sweep_users": 3,
                             "sweep_settings": 5, "repeats": 1, "cache_dir": str(tmp_path / "cache")})
    out = perf.stage_joblib(p, tmp_path)
    assert out["embedders"] == ["hash-test", "hash-test"] and out["t1_s"] > 0 and out["t2_s"] > 0
    assert out["speedup"] == pytest.approx(out["t1_s"] / out["t2_s"])
    job = perf.sweep_job("hash-test", p, tmp_path)
    assert job["n_settings"] == 5 and job["computed"] == 0  # warm cache


def test_the_perf_header_says_uncommitted_work_only_when_there_was_some() -> None:
    from widemem_bench.reports.sections.perf import _header

    m = {"cpu": "x", "cores": 2, "load_avg": [0.1], "python": "3.11", "versions": {}, "commit": "abc1234",
         "date": "2026-12-07 01:00 UTC"}
    p = {"repeats": 3, "seed": 0, "n_users": 4, "sweep_users": 4, "widemem_users": 2, "embedder": "e",
         "mode": "balanced"}

    def line(**kw: object) -> str:
        res = {"machine": {**m, **kw}, "params": p, "data": {"n_events": 1, "n_questions": 1}}
        return next(x for x in _header(res) if x.startswith("Commit "))

    assert line(dirty=False).startswith("Commit abc1234, 2026")
    assert line(dirty=True).startswith("Commit abc1234 (plus uncommitted work), ")
    assert "(plus uncommitted work)" in line()  # an older record cannot tell: it says so
