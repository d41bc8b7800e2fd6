"""Scale stages of the perf benchmark: time against memories per user and against users
(random unit vectors, no model), the warm-cache scoring sweep, and 1 vs 2 joblib workers."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.peers.replay import PrefetchedEmbedder, Step, replay_engine, select_users
from widemem_bench.perf.common import (
    _engine,
    _one_thread,
    _settle,
    _timed,
    load_data,
    median,
    peak_rss_mb,
)


class RandomVectors:
    """Precomputed-vector stand-in for scaling runs: seeded random unit rows per text.

    Cost does not depend on the vectors' values, so the scaling curves measure the
    engine (store, candidate search, scoring) without any model in the loop.
    """

    name = "random-vectors"
    model_id = "random-vectors"
    fingerprint = "random"

    def __init__(self, dim: int = 384, seed: int = 0) -> None:
        self.dim = dim
        self.seed = seed

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        rng = np.random.default_rng([self.seed, len(texts)])
        x = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)


def _scaling_point(n_users: int, per_user: int, n_queries: int, seed: int) -> dict[str, Any]:
    users = [f"u{i:05d}" for i in range(n_users)]
    fact_steps = [
        Step("fact", u, f"{u}-f{j}", f"{u} fact {j}", float(1 + (j % 10))) for u in users for j in range(per_user)
    ]
    q_users = [users[i % n_users] for i in range(n_queries)]
    q_steps = [Step("question", u, f"q{i}", f"{u} question {i}") for i, u in enumerate(q_users)]
    pre = PrefetchedEmbedder(RandomVectors(seed=seed))
    pre.prefetch([s.text for s in fact_steps], "passage")
    pre.prefetch([s.text for s in q_steps], "query")
    engine = _engine(pre)
    t_add, _ = _timed(lambda: replay_engine(engine, fact_steps, use_clock=False))
    t_search, _ = _timed(lambda: replay_engine(engine, q_steps, use_clock=False))
    engine.close()
    return {
        "users": n_users,
        "memories_per_user": per_user,
        "memories": n_users * per_user,
        "queries": n_queries,
        "ingest_s": t_add,
        "search_s": t_search,
        "ingest_us_per_memory": 1e6 * t_add / (n_users * per_user),
        "search_ms_per_query": 1e3 * t_search / n_queries,
    }


def stage_scaling(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(5) engine time against memories per user and against users (random vectors)."""
    _settle()
    rows = []
    for m in p["memories_per_user"]:
        rows.append({"curve": "memories_per_user", **_scaling_point(1, int(m), int(p["scaling_queries"]), int(p["seed"]))})
    for u in p["users"]:
        rows.append(
            {
                "curve": "users",
                **_scaling_point(int(u), int(p["scaling_facts_per_user"]), max(int(u), 10), int(p["seed"])),
            }
        )
    return {"rows": rows, "peak_rss_mb": peak_rss_mb()}


def sweep_settings(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """`n` seeded scoring settings: weights on the simplex x decay function x rate."""
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(3), size=n)
    w[:, 2] = 1.0 - w[:, 0] - w[:, 1]  # exact sum for EngineConfig's 1e-6 check
    funcs = ("exponential", "linear", "step", "none")
    rates = (0.001, 0.003, 0.01, 0.03, 0.1)
    return [
        {"weights": tuple(float(x) for x in w[i]), "decay_function": funcs[i % 4],
         "decay_rate": rates[(i // 4) % len(rates)]}
        for i in range(n)
    ]


def _sweep_data(p: dict[str, Any], work: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    events, questions = load_data(work)
    users = select_users(events, int(p["sweep_users"]), int(p["seed"]))
    keep = set(users)
    return events[events["user_id"].astype(str).isin(keep)], questions[questions["user_id"].astype(str).isin(keep)]


def sweep_job(embedder_name: str, p: dict[str, Any], work: Path) -> dict[str, Any]:
    """One embedder x every setting, warm cache: what one Hydra sweep job does."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.engine import batch
    from widemem_bench.engine.confidence import resolve_thresholds

    _one_thread()
    t0 = time.perf_counter()
    events, questions = _sweep_data(p, work)
    emb = load_embedder(embedder_name, cache=True, cache_dir=p["cache_dir"])
    _one_thread()
    prep = batch.prepare(events, questions, emb, mode=p["mode"])
    t_prep = time.perf_counter() - t0
    thresholds = resolve_thresholds(emb.model_id, None)
    settings = sweep_settings(int(p["sweep_settings"]), int(p["seed"]))
    t1 = time.perf_counter()
    n_high = 0
    for _, scored in batch.sweep(prep, settings, thresholds):
        n_high += int((scored.band == 3).sum())
    t_sweep = time.perf_counter() - t1
    return {"embedder": embedder_name, "prepare_s": t_prep, "sweep_s": t_sweep, "n_settings": len(settings),
            "n_queries": prep.n_questions, "n_high": n_high, "computed": int(emb.stats.texts_encoded)}


def stage_sweep(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(4) warm-cache scoring sweep: settings scored per second over the sweep users."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.engine import batch
    from widemem_bench.engine.confidence import resolve_thresholds

    _one_thread()
    events, questions = _sweep_data(p, work)
    emb = load_embedder(p["embedder"], cache=True, cache_dir=p["cache_dir"])
    batch.prepare(events, questions, emb, mode=p["mode"])  # warms the cache (untimed)
    _settle()
    warm_before = int(emb.stats.texts_encoded)
    t_prep, prep = _timed(lambda: batch.prepare(events, questions, emb, mode=p["mode"]))
    thresholds = resolve_thresholds(emb.model_id, None)
    settings = sweep_settings(int(p["sweep_settings"]), int(p["seed"]))
    times = []
    for _ in range(int(p["repeats"])):
        dt_s, _ = _timed(lambda: sum(1 for _ in batch.sweep(prep, settings, thresholds)))
        times.append(dt_s)
    return {
        "scorer": "engine/batch.py",
        "n_settings": len(settings),
        "n_queries": prep.n_questions,
        "n_candidates": int(prep.sim.shape[1]),
        "warm_prepare_s": t_prep,
        "texts_computed_warm": int(emb.stats.texts_encoded) - warm_before,
        "times_s": times,
        "settings_per_s": len(settings) / median(times),
        "peak_rss_mb": peak_rss_mb(),
    }


def stage_joblib(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(6) the embedder x setting sweep as one job per embedder on 1 and on 2 joblib workers."""
    from joblib import Parallel, delayed

    names = list(p["sweep_embedders"])
    for name in names:  # warm every cache first; the comparison is about scoring jobs
        sweep_job(name, p, work)
    # Untimed round: loky starts its (reused) worker processes and imports numpy/torch there.
    Parallel(n_jobs=2, backend="loky")(delayed(sweep_job)(n, p, work) for n in names)
    times: dict[int, list[float]] = {1: [], 2: []}
    for r in range(min(int(p["repeats"]), 3)):  # each round is two full sweeps per embedder
        # Alternate which goes first, as for (1)/(2): the machine's load drifts.
        for n_jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
            t0 = time.perf_counter()
            Parallel(n_jobs=n_jobs, backend="loky")(delayed(sweep_job)(n, p, work) for n in names)
            times[n_jobs].append(time.perf_counter() - t0)
    t1, t2 = median(times[1]), median(times[2])
    pairs = [a / b for a, b in zip(times[1], times[2], strict=True)]
    return {"embedders": names, "n_settings": int(p["sweep_settings"]), "t1_s": t1, "t2_s": t2,
            "times": {str(k): v for k, v in times.items()}, "pair_speedups": pairs,
            "speedup": median(pairs), "load_avg": [round(x, 2) for x in os.getloadavg()]}

