"""What answerability v3 and v4 add per search and per add, beside widemem's search as it ships.

    OMP_NUM_THREADS=1 widemem-bench perf_v3 out=reports/perf.md

In one process, one thread, on the same replay steps (the perf benchmark's synthetic
timelines, `perf.common.load_steps`), back to back per round with the order rotated:

- ``widemem``: widemem 2.0.2 as it ships (its own sentence-transformers MiniLM);
- ``similarity``: the engine online (each add and search encodes its own text) with
  widemem's confidence (top-1 cosine), on the same MiniLM weights (torch, the model the
  v3 file was fitted for) behind a fresh in-process LRU of 1,024 texts;
- ``v2`` / ``v3`` / ``v4``: the same engine with ``confidence="answerability_v2"`` /
  ``"answerability_v3"`` / ``"answerability_v4"``. v3 and v4 parse each added memory once at
  add time and each query at its search, with a fresh parser and no parse cache on disk
  (every text a miss once, as online); v4 also scores its search's top memories with its
  cross-encoder, loaded before timing, with an empty pair memo per round (every pair a miss).

Add and search calls are timed apart (wall and CPU). What v3 adds = v3 minus
similarity, per call; the target is a v3 (v4) search <= 3x a widemem search as it ships.
The section is rendered by `reports.sections.perf_answerability` into reports/perf.md
(`reports.perf_tools.perf_v3_tool`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from widemem_bench.perf.common import (
    WARMUP,
    LruEmbedder,
    _engine,
    _one_thread,
    load_steps,
    median,
    prepare_data,
)

JOBS = ("widemem", "similarity", "v2", "v3", "v4")
CONFIDENCE = {"similarity": "similarity", "v2": "answerability_v2", "v3": "answerability_v3",
              "v4": "answerability_v4"}


def _split_calls(add: Any, search: Any, steps: Sequence[Any]) -> dict[str, float]:
    """Wall and CPU seconds inside add calls and inside search calls, apart."""
    acc = {"add_s": 0.0, "add_cpu_s": 0.0, "search_s": 0.0, "search_cpu_s": 0.0}
    for step in steps:
        c0, t0 = time.process_time(), time.perf_counter()
        key = "add" if step.kind == "fact" else "search"
        (add if key == "add" else search)(step)
        acc[f"{key}_s"] += time.perf_counter() - t0
        acc[f"{key}_cpu_s"] += time.process_time() - c0
    return acc


def _fresh_parser() -> None:
    """A new default parser with no disk cache: every text a miss once, as for a new user."""
    import widemem_bench.language as lang

    lang._DEFAULT = lang.Parser(cache=False)


def run_job(job: str, steps: Sequence[Any], plain: Any, peer: Any, mode: str) -> dict[str, float]:
    if job == "widemem":
        peer.reset()

        def w_add(s: Any) -> None:
            peer.llm.queue(s.text, [(s.text, float(s.importance))])
            peer.memory.add(s.text, user_id=s.user_id)

        return _split_calls(w_add, lambda s: peer.memory.search(s.text, user_id=s.user_id), steps)
    _fresh_parser()
    _parser_model()
    if job == "v4":
        _cross_model().memo.clear()  # every pair a miss, as for a new user
    engine = _engine(LruEmbedder(plain), {"confidence": CONFIDENCE[job]})
    out = _split_calls(lambda s: engine.add_fact(s.text, s.user_id, importance=s.importance),
                       lambda s: engine.search(s.text, s.user_id, mode=mode), steps)
    engine.close()
    return out


def _parser_model() -> Any:
    """Load spaCy before timing (a process loads it once; the load is not a per-call cost)."""
    from widemem_bench.language import default_parser

    p = default_parser()
    _ = p.nlp
    return p


def _cross_model() -> Any:
    """v4's cross-encoder, loaded before timing (a process loads it once)."""
    from widemem_bench.answerability.v4 import load_scorer_v4

    return load_scorer_v4("minilm-l6").cross()


def stage(n_users: int = 20, repeats: int = 3, seed: int = 0, mode: str = "balanced",
          work: Path | None = None) -> dict[str, Any]:
    from widemem_bench.embedders import load_embedder
    from widemem_bench.peers import WidememPeer, widemem_available

    _one_thread()
    if not widemem_available():
        raise ValueError("widemem-ai 2.0.2 is not installed (make venv-peers)")
    tmp = tempfile.TemporaryDirectory() if work is None else None
    w = Path(tmp.name) if tmp is not None else Path(work)  # type: ignore[arg-type]
    p = {"n_users": n_users, "sweep_users": n_users, "seed": seed}
    prepare_data(p, w)
    steps = load_steps(w, n_users, seed)
    plain = load_embedder("minilm-l6", cache=False)
    plain.encode(WARMUP)
    peer = WidememPeer(embedder=None, mode=mode, work_dir=w / "widemem")
    peer.memory.embedder.embed_batch(WARMUP)
    _parser_model()
    from widemem_bench.answerability.v2 import load_scorer_v2
    from widemem_bench.answerability.v3 import load_scorer_v3

    load_scorer_v2("minilm-l6")
    load_scorer_v3("minilm-l6")
    _cross_model()
    acc: dict[str, list[dict[str, float]]] = {j: [] for j in JOBS}
    for r in range(repeats):
        order = list(JOBS[r % len(JOBS):] + JOBS[:r % len(JOBS)])
        for job in order:
            acc[job].append(run_job(job, steps, plain, peer, mode))
    peer.close()
    if tmp is not None:
        tmp.cleanup()
    n_add = sum(s.kind == "fact" for s in steps)
    n_search = len(steps) - n_add
    out: dict[str, Any] = {"n_users": n_users, "n_add": n_add, "n_search": n_search, "repeats": repeats,
                           "mode": mode, "jobs": {}}
    for job, rounds in acc.items():
        out["jobs"][job] = {f"{k}_ms": 1000 * median([rd[k] for rd in rounds]) / (n_add if k.startswith("add")
                                                                                    else n_search)
                            for k in rounds[0]}
    # ratios per round (back to back), then the median: machine load hits both sides alike
    for job in ("v3", "v4"):
        for key, suffix in (("search_s", ""), ("search_cpu_s", "_cpu")):
            out[f"{job}_over_widemem_search{suffix}"] = median([a[key] / b[key] for a, b in
                                                               zip(acc[job], acc["widemem"], strict=True)])
    return out

