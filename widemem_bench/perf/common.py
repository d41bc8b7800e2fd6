"""Shared pieces of the perf stages: one-thread set-up, timing, the workload's data.

Every stage runs in its own one-thread subprocess (`experiments.perf.run_stage`); the
helpers here keep timing honest: `_settle` before timing, `_timed` for wall and CPU time,
cold embedding caches per run, and `TimedEmbedder`, which adds up the time spent inside
the encoder, so "time beyond encoding" can be read off any run.
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.peers.replay import Step, replay_steps, select_users

WARMUP = ["warm-up sentence for the model", "another short warm-up line"]
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


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
    from widemem_bench.engine import EngineConfig
    from widemem_bench.harness.engines import build_engine

    return build_engine(embedder, EngineConfig(**(overrides or {})), store_path=store_path)


# --------------------------------------------------------------------------- stages
def engine_name(p: dict[str, Any]) -> str:
    return str(p.get("engine_embedder") or p["embedder"])


def limit_names(p: dict[str, Any]) -> list[str]:
    """Runtimes whose batched encode stage 1 times: the engine's first, then the peer's."""
    return list(dict.fromkeys([engine_name(p), str(p["embedder"])]))


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



class TimedEmbedder:
    """A project embedder that adds up the wall time spent in its `encode` calls.

    Same name, model_id, dim and fingerprint as `inner` (so thresholds are unchanged);
    `encode_s` (wall) / `encode_cpu_s` (this process's CPU) / `calls` / `texts` count what
    went through it. Wrapped around the
    encoder of either side, it splits a run into encoding and everything else.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.model_id = inner.model_id
        self.dim = int(inner.dim)
        self.fingerprint = getattr(inner, "fingerprint", "")
        self.encode_s = 0.0
        self.encode_cpu_s = 0.0
        self.calls = 0
        self.texts = 0

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        t0, c0 = time.perf_counter(), time.process_time()
        out = self.inner.encode(list(texts), kind=kind)
        self.encode_s += time.perf_counter() - t0
        self.encode_cpu_s += time.process_time() - c0
        self.calls += 1
        self.texts += len(texts)
        return np.asarray(out)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)


class LruEmbedder:
    """An in-process LRU cache of `size` texts in front of an uncached embedder: what
    widemem's embedder does (1,024 texts), so online runs of both sides serve a repeated
    text the same way (the project's on-disk cache writes one fsynced shard per call)."""

    def __init__(self, inner: Any, size: int = 1024) -> None:
        from collections import OrderedDict

        self.inner = inner
        self.name = inner.name
        self.model_id = inner.model_id
        self.dim = int(inner.dim)
        self.fingerprint = getattr(inner, "fingerprint", "")
        self.size = size
        self._held: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._held]
        if missing:
            for t, v in zip(missing, np.asarray(self.inner.encode(missing, kind=kind)), strict=True):
                self._held[(kind, t)] = v
        rows = []
        for t in texts:
            self._held.move_to_end((kind, t))
            rows.append(self._held[(kind, t)])
        while len(self._held) > self.size:
            self._held.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)
