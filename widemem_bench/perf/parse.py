"""Parse throughput on one core: cold (spaCy runs) and cached (a new Parser on the filled cache).

``OMP_NUM_THREADS=1 widemem-bench parse_bench [n=2000]`` parses the first n
LoCoMo turns (natural chat, ~20 words each) and the LoCoMo questions, in a fresh temp cache,
and prints texts/s for each stage. The model load is timed on its own and left out of
the cold rate. Speed is a ratio against the cold run in the same process.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from widemem_bench.language import Parser
from widemem_bench.language.model import load_pipeline


def texts(n: int) -> list[str]:
    from widemem_bench.external.locomo import load_locomo

    data = load_locomo()
    out = list(dict.fromkeys(str(t) for t in data.turns["text"]))[: n // 2]
    out += list(dict.fromkeys(str(q) for q in data.questions["question"]))[: n - len(out)]
    return out


def tool(cfg: dict[str, Any]) -> int:
    """Parse `n` texts cold, then cached, then one per call; print texts/s for each."""
    items = texts(int(cfg["n"]))
    t0 = time.perf_counter()
    pipe = load_pipeline()
    load_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as root:
        cold = Parser(cache_dir=root, progress=False)
        cold._pipe = pipe
        t0, c0 = time.perf_counter(), time.process_time()
        cold.parse_many(items)
        cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        cached = Parser(cache_dir=root, progress=False)  # reads the shard from disk
        cached.parse_many(items)
        cached_s, cached_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert cached.stats["model_calls"] == 0, cached.stats
        # one text per call, as a search parses its query: the per-call cost
        single = Parser(cache=False, progress=False)
        single._pipe = pipe
        fresh = [f"{t} (again)" for t in items[: min(200, len(items))]]
        c0 = time.process_time()
        for t in fresh:
            single.parse(t)
        single_ms = (time.process_time() - c0) / len(fresh) * 1000
    words = sum(len(t.split()) for t in items) / len(items)
    print(f"texts: {len(items)} (mean {words:.1f} words); model load {load_s:.2f} s")
    # CPU seconds as well as wall: on a shared machine wall time measures the neighbours too
    n = len(items)
    print(f"cold:   {n / cold_s:8.0f} texts/s wall, {n / cold_cpu:8.0f} per CPU second")
    print(f"cached: {n / cached_s:8.0f} texts/s wall, {n / cached_cpu:8.0f} per CPU second "
          f"({cold_cpu / cached_cpu:.0f}x cold in CPU time)")
    print(f"one text per call (uncached): {single_ms:.1f} ms CPU a text")
    return 0

