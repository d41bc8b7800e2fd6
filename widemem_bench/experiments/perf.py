"""The `perf` benchmark: this engine against the batched-encode limit and against widemem.

In one run, on the same timeline texts, each stage in its own subprocess with one
thread (OMP_NUM_THREADS=1, torch.set_num_threads(1)) so that its peak RSS is its own:

1. `limit`  : batched encode alone of every fact and question text (texts/s), with each
              runtime of the MiniLM weights (torch, onnxruntime); the faster is the limit;
2. `engine` : this engine's ingest + search over the same timelines with a COLD
              embedding cache (a fresh cache folder per run: every text is encoded),
              fed by the bulk loader (`PrefetchedEmbedder`: one batched encode of all
              facts, one of all questions, then the inserts and searches);
   (1) and (2) run interleaved in one process, so that machine load hits both alike;
3. `widemem`: widemem 2.0.2's add + search through the peer adapter (one encode per
              call, as widemem does), on a subset of the same users, each run back to
              back with this engine on the same steps (3e; 3t with widemem's own torch
              encoder), so (2)/(3) compares like with like;
4. `sweep`  : a warm-cache scoring sweep (settings scored per second);
5. `scaling`: time against memories per user (100 to 10,000) and users (10 to 10,000)
              with precomputed random unit vectors (no model in the loop);
6. `joblib` : the embedder x setting sweep on 1 and 2 local workers.

Medians of `repeats` runs. `python -m widemem_bench.experiments.perf --out reports/perf.md`
(`make perf`) writes the report; `run_perf(cfg, out_dir)` is the pure entry.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import gc
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench import provenance
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment, report_section
from widemem_bench.peers.replay import (
    PrefetchedEmbedder,
    Step,
    replay_engine,
    replay_peer,
    replay_steps,
    select_users,
)

DEFAULTS: dict[str, Any] = {
    "embedder": "minilm-l6",  # widemem's model as widemem runs it (torch): the peer's encoder
    # What this engine encodes with: the same weights run by onnxruntime (exported once,
    # checked against torch to 1e-5). None = `embedder`.
    "engine_embedder": "minilm-l6-onnx",
    "n_users": 40,  # timeline users for stages 1-2
    # The first of those users for stage 3 (widemem runs ~40-100 calls/s). Enough of them that
    # batches are realistic and machine-load noise averages out over each run.
    "widemem_users": 20,
    "sweep_users": 300,  # users of the scoring sweep (stage 4, 6): the default data set size
    "seed": 0,
    "repeats": 5,
    "mode": "balanced",
    "memories_per_user": [100, 1000, 10000],
    "users": [10, 100, 1000, 10000],
    "scaling_queries": 50,  # questions per point of the memories-per-user curve
    "scaling_facts_per_user": 20,  # memories per user on the users curve
    "sweep_settings": 200,
    "sweep_embedders": ["minilm-l6", "minilm-l3"],
    "engine_sqlite": True,  # also time the engine on its SQLite store (durable, like widemem's history)
    "cache_dir": None,  # warm embedding cache of stages 4 and 6 (None: the project's default)
    "stages": ["limit_engine", "widemem", "sweep", "scaling", "joblib"],
    "in_process": False,  # tests: run stages in this process (no peak-RSS isolation)
    "stage_timeout_s": 1800,
}
STAGES = ("limit_engine", "widemem", "sweep", "scaling", "joblib")
WARMUP = ["warm-up sentence for the model", "another short warm-up line"]
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def resolve_params(params: dict[str, Any] | None) -> dict[str, Any]:
    """DEFAULTS overridden by `params`; unknown keys and bad values are one-line errors."""
    out = dict(DEFAULTS)
    for key, value in (params or {}).items():
        if key not in DEFAULTS:
            raise ValueError(f"params.{key}: unknown perf parameter (known: {', '.join(DEFAULTS)})")
        out[key] = value
    for key in ("n_users", "widemem_users", "sweep_users", "repeats", "scaling_queries",
                "scaling_facts_per_user", "sweep_settings"):
        if int(out[key]) < 1:
            raise ValueError(f"params.{key}: must be >= 1, got {out[key]}")
    bad = [s for s in out["stages"] if s not in STAGES]
    if bad:
        raise ValueError(f"params.stages: unknown stage(s) {bad} (known: {', '.join(STAGES)})")
    return out


def _one_thread() -> None:
    """One thread for this process; call again after a model load that imported torch."""
    for k, v in ONE_THREAD_ENV.items():
        os.environ.setdefault(k, v)
    torch = sys.modules.get("torch")  # never import torch just for this (hash-test runs)
    if torch is not None:
        torch.set_num_threads(1)


def _settle() -> None:
    """Before timing: collect once, then freeze what survives (the model, the data) so
    that the collections inside timed blocks do not walk torch's object graph."""
    _one_thread()
    gc.collect()
    gc.freeze()


def peak_rss_mb() -> float:
    """Peak resident set of this process so far, MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


_LAST_CPU: list[float] = [0.0]


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of fn(); its CPU seconds (this process) land in `_LAST_CPU[0]`.

    CPU time barely moves when other processes load the machine (they take turns on the
    cores, which wall time counts and CPU time does not), so the report gives both.
    """
    gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    _LAST_CPU[0] = time.process_time() - c0
    return wall, out


# --------------------------------------------------------------------------- data
def _data_paths(work: Path) -> tuple[Path, Path]:
    return work / "events.parquet", work / "questions.parquet"


def prepare_data(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """Generate the timelines once, keep `n_users` users, save them for the stage processes."""
    from widemem_bench.timelines import generate

    tl = generate(n_users=max(int(p["n_users"]), int(p["sweep_users"])), seed=int(p["seed"]))
    ev_path, q_path = _data_paths(work)
    tl.events.to_parquet(ev_path)
    tl.questions.to_parquet(q_path)
    return {"n_events": len(tl.events), "n_questions": len(tl.questions)}


def load_data(work: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    ev_path, q_path = _data_paths(work)
    return pd.read_parquet(ev_path), pd.read_parquet(q_path)


def load_steps(work: Path, n_users: int, seed: int = 0, first: int | None = None) -> list[Step]:
    """Replay steps of `n_users` users drawn with `seed`; `first` keeps only the first of them."""
    events, questions = load_data(work)
    users = select_users(events, n_users, seed)
    return replay_steps(events, questions, users[:first] if first else users)


def step_texts(steps: Sequence[Step]) -> tuple[list[str], list[str]]:
    """Unique fact texts and unique question texts, in first-seen order."""
    facts = list(dict.fromkeys(s.text for s in steps if s.kind == "fact"))
    questions = list(dict.fromkeys(s.text for s in steps if s.kind == "question"))
    return facts, questions


def _engine(embedder: Any, overrides: dict[str, Any] | None = None, store_path: Path | None = None) -> Any:
    from widemem_bench.engine import EngineConfig, MemoryEngine

    return MemoryEngine(embedder, EngineConfig(**(overrides or {})), store_path=store_path)


# --------------------------------------------------------------------------- stages
def engine_name(p: dict[str, Any]) -> str:
    return str(p.get("engine_embedder") or p["embedder"])


def limit_names(p: dict[str, Any]) -> list[str]:
    """Runtimes whose batched encode stage 1 times: the engine's first, then the peer's."""
    return list(dict.fromkeys([engine_name(p), str(p["embedder"])]))


def stage_limit_engine(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(1) batched encode alone, with every runtime of these weights, and (2) engine
    ingest+search from a cold cache, interleaved. The limit is the faster runtime."""
    from widemem_bench.embedders import load_embedder

    _one_thread()
    steps = load_steps(work, int(p["n_users"]), int(p["seed"]))
    facts, questions = step_texts(steps)
    n_texts = len(facts) + len(questions)
    eng_name = engine_name(p)
    names = limit_names(p)
    # Models live under the work folder's cache root (the ONNX export, made once here).
    # The limit is the best batched encode we know for each runtime: texts sorted by length
    # (less padding), whatever the entry's default.
    limit_embs = {n: load_embedder(n, cache=False, cache_dir=work / "models-root", sort_by_length=True)
                  for n in names}
    for emb in limit_embs.values():
        emb.encode(WARMUP)
    _settle()
    rss_model = peak_rss_mb()
    t_limit_by: dict[str, list[float]] = {n: [] for n in names}
    c_limit_by: dict[str, list[float]] = {n: [] for n in names}
    t_limit: list[float] = []
    t_engine: list[float] = []
    t_encode_in_engine: list[float] = []
    c_limit: list[float] = []
    c_engine: list[float] = []
    t_sqlite: list[float] = []
    computed: list[int] = []
    for r in range(int(p["repeats"])):
        # A fresh cache folder per run: every text of the run is a miss (cold cache).
        cold = _cold_embedder(eng_name, work, str(r))
        cold.encode(WARMUP, "passage")  # loads the model outside the timed block
        _one_thread()

        def engine_run(cold: Any = cold, store: Path | None = None) -> tuple[float, int]:
            pre = PrefetchedEmbedder(cold)
            t0 = time.perf_counter()
            pre.prefetch(facts, "passage")
            pre.prefetch(questions, "query")
            t_enc = time.perf_counter() - t0
            engine = _engine(pre, store_path=store)
            replay_engine(engine, steps, mode=p["mode"])
            engine.close()
            return t_enc, pre.inner_texts

        def limit_run(emb: Any) -> None:
            emb.encode(facts, "passage")
            emb.encode(questions, "query")

        # Rotate the order: on a shared machine the load drifts within a round.
        jobs: list[str] = ["engine", *names]
        shift = r % len(jobs)
        for job in jobs[shift:] + jobs[:shift]:
            if job == "engine":
                dt_e, (t_enc, n_enc) = _timed(engine_run)
                cpu_e = _LAST_CPU[0]
            else:
                dt, _ = _timed(functools.partial(limit_run, limit_embs[job]))
                t_limit_by[job].append(dt)
                c_limit_by[job].append(_LAST_CPU[0])
        # The limit of this round: the faster runtime's batched encode.
        best = min(names, key=lambda n: t_limit_by[n][-1])
        t_limit.append(t_limit_by[best][-1])
        c_limit.append(c_limit_by[best][-1])
        if p["engine_sqlite"]:
            # (2b) the same with the SQLite store: a second cold cache, a fresh store file
            cold_b = _cold_embedder(eng_name, work, f"{r}b")
            cold_b.encode(WARMUP, "passage")
            _one_thread()
            store_b = work / f"store-{r}.sqlite"
            dt_b, _ = _timed(functools.partial(engine_run, cold_b, store_b))
            t_sqlite.append(dt_b)
        c_engine.append(cpu_e)
        t_engine.append(dt_e)
        t_encode_in_engine.append(t_enc)
        computed.append(n_enc)
    # One text per call, as widemem encodes: batched / single is what batching alone gains.
    sample = (facts + questions)[: min(200, n_texts)]
    single: dict[str, float] = {}
    for n, emb in limit_embs.items():
        single_s, _ = _timed(functools.partial(_one_by_one, emb, sample))
        single[n] = len(sample) / single_s
    n_adds = sum(s.kind == "fact" for s in steps)
    n_searches = len(steps) - n_adds
    return {
        "engine_embedder": eng_name,
        "limit_embedders": names,
        "single_texts_per_s": single[eng_name],
        "single_texts_per_s_by": single,
        "n_texts": n_texts,
        "n_adds": n_adds,
        "n_searches": n_searches,
        "n_users": len({s.user_id for s in steps}),
        "texts_computed_per_engine_run": computed,
        "limit_s": t_limit,
        "limit_s_by": t_limit_by,
        "limit_texts_per_s_by": {n: n_texts / median(t) for n, t in t_limit_by.items()},
        "engine_s": t_engine,
        "engine_encode_s": t_encode_in_engine,
        # per round (same repeat, back to back): limit time / engine time
        "pair_ratios": [a / b for a, b in zip(t_limit, t_engine, strict=True)],
        "limit_cpu_s": c_limit,
        "engine_cpu_s": c_engine,
        "cpu_pair_ratios": [a / b for a, b in zip(c_limit, c_engine, strict=True)],
        "limit_texts_per_s": n_texts / median(t_limit),
        "engine_texts_per_s": n_texts / median(t_engine),
        # add_fact + search calls per second: the unit widemem is compared in
        "engine_ops_per_s": (n_adds + n_searches) / median(t_engine),
        "engine_ops_per_cpu_s": (n_adds + n_searches) / median(c_engine),
        "engine_sqlite_s": t_sqlite,
        "engine_sqlite_ops_per_s": (n_adds + n_searches) / median(t_sqlite) if t_sqlite else None,
        "rss_after_model_mb": rss_model,
        "peak_rss_mb": peak_rss_mb(),
    }


def _one_by_one(emb: Any, texts: Sequence[str]) -> None:
    for t in texts:
        emb.encode([t], "passage")


def _cold_embedder(name: str, work: Path, tag: str) -> Any:
    """``name`` over a fresh, empty embedding cache under ``work``: every text is a miss.

    Prepared models (minilm-l6-onnx's export) live under the cache root; they are copied
    in from stage 1's root, so "cold" means cold embeddings, not a re-export (the export,
    like the model load, is set-up outside the timed block).
    """
    from widemem_bench.embedders import load_embedder

    root = work / f"cold-cache-{tag}"
    shared = work / "models-root" / "models"
    if shared.is_dir() and not (root / "models").exists():
        shutil.copytree(shared, root / "models")
    return load_embedder(name, cache=True, cache_dir=root)


def stage_widemem(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(3) widemem's add + search through the peer adapter, fresh store per run; and, back
    to back with each widemem run (order rotated), this engine on the SAME steps from a
    cold cache (3e), and the engine with widemem's own torch encoder (3t) when it differs,
    so that (2)/(3) compares the same texts under the same machine load."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.peers import WidememPeer, widemem_available

    _one_thread()
    if not widemem_available():
        return {"skipped": "widemem-ai 2.0.2 not installed (make venv-peers)"}
    steps = load_steps(work, int(p["n_users"]), int(p["seed"]), first=int(p["widemem_users"]))
    facts, questions = step_texts(steps)
    eng_name = engine_name(p)
    engines = list(dict.fromkeys([eng_name, str(p["embedder"])]))
    load_embedder(eng_name, cache=False, cache_dir=work / "models-root")  # export once, if needed
    embedder = None
    if p["embedder"] != "minilm-l6":  # widemem's own provider only for the real MiniLM
        embedder = load_embedder(p["embedder"], cache=False)
    peer = WidememPeer(embedder=embedder, mode=p["mode"], work_dir=work / "widemem")
    peer.memory.embedder.embed_batch(WARMUP)
    _settle()
    rss_model = peak_rss_mb()
    times: list[float] = []
    cpu: list[float] = []
    e_times: dict[str, list[float]] = {n: [] for n in engines}
    e_cpu: dict[str, list[float]] = {n: [] for n in engines}
    for r in range(int(p["repeats"])):
        peer.reset()
        colds = {n: _cold_embedder(n, work, f"w{r}-{i}") for i, n in enumerate(engines)}
        for cold in colds.values():
            cold.encode(WARMUP, "passage")
        _one_thread()

        def engine_run(cold: Any) -> None:
            pre = PrefetchedEmbedder(cold)
            pre.prefetch(facts, "passage")
            pre.prefetch(questions, "query")
            engine = _engine(pre)
            replay_engine(engine, steps, mode=p["mode"])
            engine.close()

        jobs: list[str] = ["widemem", *engines]
        shift = r % len(jobs)
        for job in jobs[shift:] + jobs[:shift]:
            if job == "widemem":
                dt_x, _ = _timed(functools.partial(replay_peer, peer, steps))
                times.append(dt_x)
                cpu.append(_LAST_CPU[0])
            else:
                dt_x, _ = _timed(functools.partial(engine_run, colds[job]))
                e_times[job].append(dt_x)
                e_cpu[job].append(_LAST_CPU[0])
    peer.close()
    n_adds = sum(s.kind == "fact" for s in steps)
    n_ops = len(steps)
    return {
        "n_users": len({s.user_id for s in steps}),
        "n_adds": n_adds,
        "n_searches": n_ops - n_adds,
        "n_texts": len(facts) + len(questions),
        "widemem_s": times,
        "widemem_ops_per_s": n_ops / median(times),
        "widemem_cpu_s": cpu,
        "widemem_ops_per_cpu_s": n_ops / median(cpu),
        "widemem_pairs_per_s": (n_ops / 2) / median(times),
        "engine_embedder": eng_name,
        "engine_same_steps_s": e_times[eng_name],
        "engine_same_steps_cpu_s": e_cpu[eng_name],
        "engine_same_steps_s_by": e_times,
        # per back-to-back round: widemem time / engine time on the same steps
        "pair_speedups": [w / e for w, e in zip(times, e_times[eng_name], strict=True)],
        "cpu_pair_speedups": [w / e for w, e in zip(cpu, e_cpu[eng_name], strict=True)],
        "pair_speedups_by": {n: [w / e for w, e in zip(times, t, strict=True)] for n, t in e_times.items()},
        "rss_after_model_mb": rss_model,
        "peak_rss_mb": peak_rss_mb(),
    }


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
    from widemem_bench.engine.confidence import resolve_thresholds
    from widemem_bench.experiments import batch

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
    from widemem_bench.engine.confidence import resolve_thresholds
    from widemem_bench.experiments import batch

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
        "scorer": "experiments/batch.py",
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


STAGE_FUNCS: dict[str, Callable[[dict[str, Any], Path], dict[str, Any]]] = {
    "limit_engine": stage_limit_engine,
    "widemem": stage_widemem,
    "sweep": stage_sweep,
    "scaling": stage_scaling,
    "joblib": stage_joblib,
}


def run_stage(stage: str, p: dict[str, Any], work: Path) -> dict[str, Any]:
    """Run one stage in a fresh one-thread subprocess (or in-process when `in_process`)."""
    if stage not in STAGE_FUNCS:
        raise ValueError(f"stage: unknown or unavailable stage {stage!r}")
    if p.get("in_process"):
        return STAGE_FUNCS[stage](p, work)
    result_path = work / f"{stage}.json"
    params_path = work / f"{stage}.params.json"
    params_path.write_text(json.dumps(p))
    env = {**os.environ, **ONE_THREAD_ENV}
    cmd = [sys.executable, "-m", "widemem_bench.experiments.perf", "--stage", stage,
           "--params", str(params_path), "--work", str(work), "--result", str(result_path)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=float(p["stage_timeout_s"]))
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"perf stage {stage} failed (exit {proc.returncode}):\n{tail}")
    out: dict[str, Any] = json.loads(result_path.read_text())
    out["wall_s"] = time.perf_counter() - t0
    return out


# --------------------------------------------------------------------------- orchestration
def machine_info() -> dict[str, Any]:
    versions = provenance.package_versions(("torch", "sentence-transformers", "numpy", "widemem-ai", "faiss-cpu"))
    return {
        "cpu": provenance.cpu_model() or "",
        "cores": os.cpu_count(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "commit": (provenance.git_info()["sha"] or "")[:7],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": {k: v or "-" for k, v in versions.items()},
    }


def run_perf(
    cfg: dict[str, Any],
    out_dir: str | Path,
    *,
    report: str | Path | None = None,
    data: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """Run every configured stage; returns the results dict (also `perf.json` in out_dir).

    `cfg` is the resolved config dict (perf settings under `params`) or the params
    themselves. `report` names the markdown file to write (e.g. reports/perf.md).
    `data` = (events, questions) replaces the generated timelines (tests).
    """
    params = dict(cfg.get("params", cfg)) if isinstance(cfg, dict) else {}
    emb_node = cfg.get("embedder") if isinstance(cfg, dict) else None
    if "embedder" not in params and isinstance(emb_node, dict) and emb_node.get("name"):
        params["embedder"] = emb_node["name"]  # the Hydra `embedder` group
    paths = cfg.get("paths") if isinstance(cfg, dict) else None
    if "cache_dir" not in params and isinstance(paths, dict) and paths.get("cache_dir"):
        params["cache_dir"] = str(paths["cache_dir"])
    p = resolve_params(params)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"params": p, "machine": machine_info()}
    with tempfile.TemporaryDirectory(prefix="perf-", dir=out) as tmp:
        work = Path(tmp)
        if data is None:
            results["data"] = prepare_data(p, work)
        else:
            ev_path, q_path = _data_paths(work)
            data[0].to_parquet(ev_path)
            data[1].to_parquet(q_path)
            results["data"] = {"n_events": len(data[0]), "n_questions": len(data[1])}
        for stage in p["stages"]:
            if stage not in STAGE_FUNCS:
                results[stage] = {"skipped": f"stage {stage} is not available in this build"}
                continue
            results[stage] = run_stage(stage, p, work)
    results["summary"] = summarise(results)
    (out / "perf.json").write_text(json.dumps(results, indent=2, default=str))
    if report is not None:
        Path(report).parent.mkdir(parents=True, exist_ok=True)
        Path(report).write_text(render_report(results))
    return results


def summarise(results: dict[str, Any]) -> dict[str, Any]:
    """Throughput ratios against the limit and against widemem, with the targets."""
    s: dict[str, Any] = {}
    le = results.get("limit_engine") or {}
    wm = results.get("widemem") or {}
    if "limit_texts_per_s" in le:
        s["limit_texts_per_s"] = le["limit_texts_per_s"]
        s["engine_texts_per_s"] = le["engine_texts_per_s"]
        # Median of the per-pair ratios: each pair ran back to back under the same load.
        s["engine_over_limit"] = median(le["pair_ratios"])
        s["engine_over_limit_of_medians"] = le["engine_texts_per_s"] / le["limit_texts_per_s"]
        if le.get("cpu_pair_ratios"):
            s["engine_over_limit_cpu"] = median(le["cpu_pair_ratios"])
        s["target_engine_over_limit"] = 0.8
        s["engine_ops_per_s"] = le["engine_ops_per_s"]
    if "widemem_ops_per_s" in wm:
        s["widemem_ops_per_s"] = wm["widemem_ops_per_s"]
        if wm.get("pair_speedups"):
            # Same steps, back to back: the engine's speed-up over widemem on identical work.
            s["engine_over_widemem"] = median(wm["pair_speedups"])
            s["engine_over_widemem_cpu"] = median(wm["cpu_pair_speedups"])
            s["target_engine_over_widemem"] = 5.0
            other = {n: v for n, v in (wm.get("pair_speedups_by") or {}).items()
                     if n != wm.get("engine_embedder")}
            for speedups in other.values():
                # the engine with widemem's own encoder (torch): what batching alone gains
                s["engine_torch_over_widemem"] = median(speedups)
        if "engine_ops_per_s" in s:
            # Different workloads (stage 2's users vs widemem's subset), different moments.
            s["engine_stage2_over_widemem"] = s["engine_ops_per_s"] / wm["widemem_ops_per_s"]
    sw = results.get("sweep") or {}
    if "settings_per_s" in sw:
        s["sweep_settings_per_s"] = sw["settings_per_s"]
    jb = results.get("joblib") or {}
    if "speedup" in jb:
        s["joblib_speedup_2_workers"] = jb["speedup"]
    return s


def _fmt(x: Any, nd: int = 1) -> str:
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        return "-" if not math.isfinite(float(x)) else f"{float(x):,.{nd}f}"
    return str(x)


def _runtime(name: str) -> str:
    """The runtime of a registry entry, for the report (never fails the report)."""
    try:
        from widemem_bench.embedders import registry

        return registry.get_spec(name).runtime
    except Exception:  # a renamed entry in an old perf.json
        return "?"


def render_report(results: dict[str, Any]) -> str:
    """reports/perf.md from a results dict (pure function of it)."""
    m = results["machine"]
    p = results["params"]
    s = results.get("summary", {})
    le = results.get("limit_engine") or {}
    wm = results.get("widemem") or {}
    lines = [
        "# Performance: this engine against the encode limit and against widemem 2.0.2",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores (shared), load average at start {m['load_avg']}; "
        f"Python {m['python']}, torch {m['versions'].get('torch')}, sentence-transformers "
        f"{m['versions'].get('sentence-transformers')}, widemem-ai {m['versions'].get('widemem-ai')}, "
        f"faiss-cpu {m['versions'].get('faiss-cpu')}.",
        f"Commit {m['commit'] or '-'} (plus uncommitted work), {m['date']}. One thread per process "
        f"(OMP_NUM_THREADS=1, torch.set_num_threads(1)); each stage in its own subprocess; medians of "
        f"{p['repeats']} runs.",
        "",
        "Command: `make perf` (`python -m widemem_bench.experiments.perf --out reports/perf.md`).",
        "",
        f"Data: synthetic timelines (`widemem_bench.timelines.generate`), seed {p['seed']}: "
        f"{results['data'].get('n_events'):,} events and {results['data'].get('n_questions'):,} questions "
        f"for {max(int(p['n_users']), int(p['sweep_users']))} users; stages 1-2 replay {p['n_users']} of "
        f"them, stage 3 the first {p['widemem_users']} of those, the sweep all {p['sweep_users']}. "
        f"Engine embedder `{engine_name(p)}`, widemem's `{p['embedder']}` (its own torch provider), "
        f"retrieval mode `{p['mode']}`.",
        "",
        "The machine was shared with other jobs (load average above), so absolute rates move from run "
        "to run (../shared/docs/MODELS.md quotes 690-880 MiniLM texts/s in batches of 64; this machine gave "
        "300-420/s with one thread even when quiet, on these short texts). Compare stages through the "
        "ratios, measured back to back in the same run, and through CPU time.",
        "",
        "## Throughput on the same texts",
        "",
        "Stage 2 goes through the bulk loader (`PrefetchedEmbedder`, widemem_bench/peers/replay.py; "
        "`MemoryEngine` has no batch-ingest API): one batched encode of every fact and one of every "
        "question through a fresh (cold) on-disk cache, then `add_fact` and `search` in timeline order, "
        "each finding its text already encoded. widemem (stage 3) encodes inside every `add` and `search`.",
        "",
        "Texts = the unique fact and question texts the workload has to encode; calls = add and",
        "search calls (questions repeat across users: a text is encoded once, a call is made per question).",
        "",
        "| stage | what is timed | texts | calls | median s | texts/s | calls/s | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    if "limit_s" in le:
        for i, (name, ts) in enumerate(le["limit_s_by"].items()):
            lines.append(
                f"| 1{'' if i == 0 else 't'} limit, `{name}` | batched encode of every unique fact and question "
                f"text ({_runtime(name)}, sorted by length) | {_fmt(le['n_texts'])} | - | {_fmt(median(ts), 2)} | "
                f"{_fmt(le['n_texts'] / median(ts))} | - | {_fmt(le['peak_rss_mb'], 0) + ' (1 and 2)' if i == 0 else '(same process)'} |"
            )
        lines.append(
            f"| 2 engine, `{le['engine_embedder']}` | cold cache: encode (one batch per kind) + {le['n_adds']:,} add_fact + "
            f"{le['n_searches']:,} search, {le['n_users']} users | {_fmt(le['n_texts'])} | "
            f"{_fmt(le['n_adds'] + le['n_searches'])} | {_fmt(median(le['engine_s']), 2)} | "
            f"{_fmt(le['engine_texts_per_s'])} | {_fmt(le['engine_ops_per_s'])} | (same process) |"
        )
    if le.get("engine_sqlite_s"):
        lines.append(
            f"| 2b engine, SQLite store | as 2, store on disk (WAL, one committed transaction per add) | "
            f"{_fmt(le['n_texts'])} | {_fmt(le['n_adds'] + le['n_searches'])} | "
            f"{_fmt(median(le['engine_sqlite_s']), 2)} | {_fmt(le['n_texts'] / median(le['engine_sqlite_s']))} | "
            f"{_fmt(le['engine_sqlite_ops_per_s'])} | (same process) |"
        )
    if "widemem_s" in wm:
        n_ops = wm["n_adds"] + wm["n_searches"]
        lines.append(
            f"| 3 widemem | {wm['n_adds']:,} add + {wm['n_searches']:,} search, first {wm['n_users']} of those "
            f"users, one encode per call | {_fmt(wm.get('n_texts', '-'))} | {_fmt(n_ops)} | "
            f"{_fmt(median(wm['widemem_s']), 2)} | - | "
            f"{_fmt(wm['widemem_ops_per_s'])} | {_fmt(wm['peak_rss_mb'], 0)} (3 and 3e) |"
        )
        for i, (name, ts) in enumerate(wm["engine_same_steps_s_by"].items()):
            t_e = median(ts)
            lines.append(
                f"| 3{'e' if i == 0 else 't'} engine, `{name}`, same steps | stage 3's steps through this engine as "
                f"in 2 (cold cache), back to back with each widemem run | {_fmt(wm.get('n_texts', '-'))} | "
                f"{_fmt(n_ops)} | {_fmt(t_e, 2)} | {_fmt(wm['n_texts'] / t_e)} | {_fmt(n_ops / t_e)} | (same process) |"
            )
    elif wm.get("skipped"):
        lines.append(f"| 3 widemem | skipped: {wm['skipped']} | | | | | | |")
    lines += [""]
    if "engine_over_limit" in s:
        ok = "meets" if s["engine_over_limit"] >= 0.8 else "MISSES"
        lines.append(
            f"- (2)/(1) = **{s['engine_over_limit']:.2f}** of the batched-encode limit ({ok} the 0.8 target): "
            f"time to encode the texts alone / time of the engine's whole ingest + search on them, "
            f"median over {len(le['pair_ratios'])} back-to-back pairs (order alternated; pair ratios "
            f"{', '.join(f'{x:.2f}' for x in le['pair_ratios'])}; ratio of the medians "
            f"{s['engine_over_limit_of_medians']:.2f})."
        )
        if "engine_over_limit_cpu" in s:
            lines.append(
                f"  On CPU time (what the process itself spent, insensitive to other load): "
                f"**{s['engine_over_limit_cpu']:.2f}** (pairs {', '.join(f'{x:.2f}' for x in le['cpu_pair_ratios'])}; "
                f"limit {median(le['limit_cpu_s']):.2f} CPU s, engine {median(le['engine_cpu_s']):.2f} CPU s)."
                + (" A ratio above 1 is the shared machine's noise: the engine's encode is the same call."
                   if max(le["pair_ratios"] + le["cpu_pair_ratios"]) > 1 else "")
            )
        if le.get("engine_encode_s"):
            enc = median(le["engine_encode_s"])
            rest = median(le["engine_s"]) - enc
            lines.append(
                f"  Inside (2): encode {enc:.2f} s, store + conflict candidates + scoring {rest:.2f} s "
                f"({1e3 * rest / max(1, le['n_adds'] + le['n_searches']):.3f} ms per add or search). "
                f"Texts computed per run: {le.get('texts_computed_per_engine_run')} (cold: all of them)."
            )
    if "engine_over_widemem" in s:
        ok = "meets" if s["engine_over_widemem"] >= 5 else "MISSES"
        n_calls = wm["n_adds"] + wm["n_searches"]
        lines.append(
            f"- (2)/(3) = **{s['engine_over_widemem']:.1f}x** widemem's throughput ({ok} the 5x target): "
            f"widemem time / engine time on the same steps (3 vs 3e), median over "
            f"{len(wm['pair_speedups'])} back-to-back pairs (order alternated; pairs "
            f"{', '.join(f'{x:.1f}' for x in wm['pair_speedups'])}); on CPU time "
            f"{s['engine_over_widemem_cpu']:.1f}x. widemem: {wm['widemem_pairs_per_s']:.1f} add+search pairs/s. "
            f"This workload makes {n_calls / max(1, wm['n_texts']):.1f} calls per unique text (questions repeat "
            f"across users). The engine pays per unique text (one batched encode); widemem caches a repeated "
            f"text too but pays its per-call work on every call, so the ratio grows with the share of repeats "
            f"(a smaller slice of users repeats less). "
            f"widemem also commits every add to its SQLite history; the engine keeps its store in memory"
            + (
                f" (on its SQLite store, 2b, it runs at {le['engine_sqlite_ops_per_s']:,.0f} calls/s "
                f"against {le['engine_ops_per_s']:,.0f} in memory)."
                # 2b is measured only when params.engine_sqlite is true (make perf).
                if le.get("engine_sqlite_ops_per_s") and le.get("engine_ops_per_s")
                else "."
            )
        )
        if "engine_torch_over_widemem" in s:
            lines.append(
                f"  With widemem's own encoder instead (torch, `{p['embedder']}`, 3t): "
                f"**{s['engine_torch_over_widemem']:.1f}x** (pairs "
                f"{', '.join(f'{x:.1f}' for x in wm['pair_speedups_by'][p['embedder']])}). The difference is the "
                f"runtime: the same weights on onnxruntime (exported once and checked against torch to 1e-5)."
            )
        if le.get("single_texts_per_s") and wm.get("n_texts"):
            # No engine that encodes each text can beat widemem by more than widemem's time over
            # the time to batch-encode the same unique texts.
            bound = median(wm["widemem_s"]) / (wm["n_texts"] / le["limit_texts_per_s"])
            lines.append(
                f"  Bound on the same steps: widemem's time / the time to batch-encode their "
                f"{wm['n_texts']:,} unique texts at stage 1's (fastest) rate = **{bound:.1f}x**; this engine "
                f"reaches {s['engine_over_widemem'] / bound:.0%} of it. widemem's LRU cache also encodes a "
                f"repeated text once; the rest of its time is per-call work (one torch encode per call, a "
                f"committed SQLite history row per add, FAISS, pydantic)."
            )
            singles = le["single_texts_per_s_by"]
            per = "; ".join(
                f"`{n}` ({_runtime(n)}) {1e3 / rate:.1f} ms per text batched, {1e3 / singles[n]:.1f} ms one per call"
                for n, rate in le["limit_texts_per_s_by"].items()
            )
            lines.append(
                f"  Encode cost per text on this machine, one thread: {per}. The issue's 8x assumed 1.3 ms "
                f"batched against 10 ms one per call; with torch here batching gains only the ratio of those two, "
                f"which is why the torch engine (3t) stays near 4x."
            )
        if "engine_stage2_over_widemem" in s:
            lines.append(
                f"  Stage 2's calls/s over widemem's (different users, run at another moment): "
                f"{s['engine_stage2_over_widemem']:.1f}x; more users repeat more question texts, which "
                f"the engine encodes once."
            )
    if le.get("rss_after_model_mb") is not None:
        lines.append(
            f"- Peak RSS after loading the model: {le['rss_after_model_mb']:.0f} MB (engine process), "
            f"{wm.get('rss_after_model_mb', float('nan')):.0f} MB (widemem process)."
        )
    lines += _scaling_lines(results.get("scaling") or {})
    lines += _sweep_lines(results.get("sweep") or {}, results.get("joblib") or {})
    lines += ["", SCALE_SECTION.format(**_scale_numbers(results))]
    return "\n".join(lines) + "\n"


def _scaling_lines(sc: dict[str, Any]) -> list[str]:
    if not sc.get("rows"):
        return ["", "## Scaling", "", f"Skipped: {sc.get('skipped', 'not run')}."]
    df = pd.DataFrame(sc["rows"])
    out = ["", "## How time grows (engine only, precomputed random unit vectors, no model)", ""]
    for curve, title in (("memories_per_user", "memories per user (1 user)"), ("users", "users")):
        d = df[df["curve"] == curve]
        out += [f"By {title}:", "", "| users | memories/user | memories | ingest s | us/memory | queries | ms/query |",
                "|---|---|---|---|---|---|---|"]
        for _, r in d.iterrows():
            out.append(
                f"| {_fmt(int(r['users']))} | {_fmt(int(r['memories_per_user']))} | {_fmt(int(r['memories']))} | "
                f"{_fmt(r['ingest_s'], 2)} | {_fmt(r['ingest_us_per_memory'], 0)} | {_fmt(int(r['queries']))} | "
                f"{_fmt(r['search_ms_per_query'], 3)} |"
            )
        out.append("")
    out.append(
        "Ingest cost per memory grows with the user's memory count: every add looks up the user's 5 "
        "nearest memories as conflict candidates (an exhaustive cosine over that user's vectors, like "
        "widemem's flat FAISS index), so one user's ingest is quadratic overall; search is linear in the "
        "user's memories. With many users of a fixed size, time per memory stays flat. (The store appends "
        "each new vector to a growing per-user matrix; it used to restack the whole matrix on every add, "
        "which made 3,000 adds of one user take 17 s.)"
    )
    out.append("")
    out.append(f"Peak RSS of the scaling process: {sc.get('peak_rss_mb', float('nan')):.0f} MB.")
    return out


def _sweep_lines(sw: dict[str, Any], jb: dict[str, Any]) -> list[str]:
    out = ["", "## Warm-cache scoring sweep", ""]
    if "settings_per_s" in sw:
        out.append(
            f"- {sw['n_settings']:,} weight/decay settings over {sw['n_queries']:,} questions x their users' "
            f"memories ({sw['scorer']}): median {median(sw['times_s']):.2f} s, "
            f"**{sw['settings_per_s']:,.0f} settings/s**; peak RSS {sw['peak_rss_mb']:.0f} MB."
        )
    else:
        out.append(f"- Skipped: {sw.get('skipped', 'not run')}.")
    if "speedup" in jb:
        out.append(
            f"- Embedder x setting sweep ({', '.join(jb['embedders'])} x {jb['n_settings']:,} settings) on joblib "
            f"workers: 1 worker {jb['t1_s']:.2f} s, 2 workers {jb['t2_s']:.2f} s (medians): speed-up "
            f"**{jb['speedup']:.2f}x** (median of rounds "
            f"{', '.join(f'{x:.2f}' for x in jb.get('pair_speedups', []))}; load average at the end "
            f"{jb.get('load_avg')}). Each job loads its embedder, prepares the cached similarities and "
            f"scores every setting; two workers only help when the second core is free."
        )
    else:
        out.append(f"- Joblib 1 vs 2 workers: skipped: {jb.get('skipped', 'not run')}.")
    return out


def _scale_numbers(results: dict[str, Any]) -> dict[str, str]:
    s = results.get("summary", {})
    sc = results.get("scaling") or {}
    rows = pd.DataFrame(sc.get("rows") or [])
    big = "-"
    if not rows.empty:
        u = rows[rows["curve"] == "users"].sort_values("memories").iloc[-1]
        big = f"{int(u['users']):,} users x {int(u['memories_per_user'])} memories in {u['ingest_s']:.1f} s"
    return {
        "engine_tps": _fmt(s.get("engine_texts_per_s", float("nan")), 0),
        "limit_tps": _fmt(s.get("limit_texts_per_s", float("nan")), 0),
        "sweep_sps": _fmt(s.get("sweep_settings_per_s", float("nan")), 0),
        "speedup": _fmt(s.get("joblib_speedup_2_workers", float("nan")), 2),
        "joblib_embedders": ", ".join((results.get("joblib") or {}).get("embedders", ["-"])),
        "joblib_load": str((results.get("joblib") or {}).get("load_avg", "-")),
        "big": big,
    }


SCALE_SECTION = """## Scale (text for the README)

**What one machine handles.** On this shared 2-core machine, one thread per process, the
engine ingests and queries the timelines from a cold cache at {engine_tps} texts/s, against
{limit_tps} texts/s for MiniLM encoding the same texts in batches and nothing else: encoding
is the cost, every text is encoded once (one batch per kind) and then read from the on-disk
cache. With vectors cached, scoring is numpy arithmetic: {sweep_sps} weight/decay settings
per second over the default timelines (300 users). The in-memory store held {big}
(precomputed vectors); the tables above give how ingest and search time grow.

**Spreading the embedder x setting sweep.** Settings are swept inside one process (array
arithmetic over cached similarities); embedders are the Hydra multirun axis, one job per
embedder, and Hydra's launchers place those jobs:

- local processes (the default for `-m`): `python -m widemem_bench.run -m experiment=compare_embedders embedder=minilm-l6,minilm-l3,bge-small hydra/launcher=joblib hydra.launcher.n_jobs=2`
- a Ray cluster (`pip install -e ".[ray]"`): the same command with `hydra/launcher=ray
  hydra.launcher.ray.init.address=auto +hydra.launcher.ray.init.object_store_memory=null`
  and `RAY_AUTH_MODE=token` in the environment (hydra-ray-launcher 1.2.2 with ray 2.x);
- SLURM (`pip install -e ".[slurm]"`): `hydra/launcher=submitit_slurm
  hydra.launcher.partition=<partition> hydra.launcher.account=<account>`; each job
  exports `OMP_NUM_THREADS=1` and `HF_HUB_OFFLINE=1`.

Every job writes its own record under `outputs/<experiment>/multiruns/`;
`python -m widemem_bench.aggregate outputs/<experiment>/multiruns` gathers them into one
`results.parquet`. Keep one thread per job: on a loaded machine a second torch thread
per process made MiniLM many times slower, not faster.

**Measured speed-up from 1 to 2 local workers** (joblib, warm cache, one job per embedder
over {joblib_embedders}): {speedup}x on this 2-core machine, which other work shared during
the measurement (load average {joblib_load}).
"""


@experiment("perf", honours=("embedder.name", "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    """The perf benchmark as a registered experiment (stages in subprocesses as usual)."""
    res = run_perf(cfg, ctx.output_dir, report=ctx.output_dir / "perf.md")
    embedder = res["params"]["embedder"]
    metrics = [metric_row(k, float(v), embedder=embedder) for k, v in res["summary"].items()
               if isinstance(v, (int, float))]
    tables = {}
    if (res.get("scaling") or {}).get("rows"):
        tables["scaling"] = pd.DataFrame(res["scaling"]["rows"])
    return ExperimentResult(metrics=metrics, tables=tables, artifacts={"perf_md": ctx.output_dir / "perf.md"})


@report_section("perf", order=90)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    if results.empty:
        return ""
    val = {str(r["metric"]): float(r["value"]) for _, r in results.iterrows()}
    out = ["## Speed (`perf`)", "",
           "Light variant (`python -m widemem_bench.run experiment=perf`); wall-clock ratios measured "
           "back to back in one run, on a machine shared with other jobs.", ""]
    if "engine_over_limit" in val:
        out.append(f"- engine ingest+search, cold cache: {val['engine_texts_per_s']:,.0f} texts/s = "
                   f"{val['engine_over_limit']:.2f} of the batched-encode limit ({val['limit_texts_per_s']:,.0f}/s)"
                   + (f"; on CPU time {val['engine_over_limit_cpu']:.2f}" if "engine_over_limit_cpu" in val else ""))
    if "engine_over_widemem" in val:
        out.append(f"- {val['engine_over_widemem']:.1f}x widemem 2.0.2's throughput on the same add+search "
                   f"steps, back to back (widemem {val.get('widemem_ops_per_s', float('nan')):,.0f} calls/s)"
                   + (f"; {val['engine_torch_over_widemem']:.1f}x with widemem's own torch encoder"
                      if "engine_torch_over_widemem" in val else ""))
    if "sweep_settings_per_s" in val:
        out.append(f"- warm-cache scoring sweep: {val['sweep_settings_per_s']:,.0f} settings/s")
    out += ["", "Full figures: `reports/perf.md` (`make perf`)."]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m widemem_bench.experiments.perf", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="reports/perf.md", help="markdown report to write")
    ap.add_argument("--run-dir", default="outputs/perf", help="where perf.json and the scratch data go")
    ap.add_argument("--work", default=None, help="(stage processes) data folder")
    ap.add_argument("--stage", default=None, help="(internal) run one stage and write --result")
    ap.add_argument("--params", default=None, help="(internal) params JSON file of the stage")
    ap.add_argument("--result", default=None, help="(internal) where the stage writes its JSON")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="override a parameter, e.g. --set n_users=20 --set 'stages=[\"limit_engine\"]'")
    ap.add_argument("--from-json", default=None, help="only re-render --out from a saved perf.json")
    args = ap.parse_args(argv)
    if args.from_json:
        res = json.loads(Path(args.from_json).read_text())
        res["summary"] = summarise(res)
        Path(args.out).write_text(render_report(res))
        print(f"wrote {args.out}")
        return 0
    if args.stage:
        p = json.loads(Path(args.params).read_text())
        out = STAGE_FUNCS[args.stage](p, Path(args.work))
        Path(args.result).write_text(json.dumps(out, default=float))
        return 0
    params: dict[str, Any] = {}
    for item in args.set:
        key, _, raw = item.partition("=")
        try:
            params[key] = json.loads(raw)
        except json.JSONDecodeError:
            params[key] = raw
    report = Path(args.out)
    res = run_perf({"params": params}, Path(args.run_dir), report=report)
    print(json.dumps(res["summary"], indent=2))
    print(f"wrote {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
