"""The memory systems the `peer` experiment can drive (`configs/adapter/<name>.yaml`).

- `engine`: this project's reference engine (EngineConfig defaults: widemem 2.0.2's
  scoring on the timeline clock);
- `widemem`: widemem-ai 2.0.2 itself (`WidememPeer`, pass-through LLM), on the timeline
  clock by default (`clock: false` = wall-clock insert time, as it ships);
- `mem0`: mem0ai 2.2.1 offline (`peers.mem0`).

Each satisfies `MemoryAdapter`; `build_adapter` returns it wrapped in `GuardedAdapter`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from widemem_bench.peers.adapter import GuardedAdapter, Recall


class EngineAdapter:
    """The reference engine behind the adapter protocol (score = raw cosine, band = its own)."""

    name = "engine"

    def __init__(self, embedder: Any, *, mode: str = "balanced", engine: dict[str, Any] | None = None) -> None:
        from widemem_bench.engine import EngineConfig, MemoryEngine

        self.mode = mode
        self.engine = MemoryEngine(embedder, EngineConfig(**(engine or {})))

    def add_fact(self, text: str, user_id: str, at: dt.datetime | None, importance: float = 5.0) -> None:
        self.engine.add_fact(text, user_id, importance=importance, at=at)

    def search(self, query: str, user_id: str, top_k: int, now: dt.datetime | None = None) -> Recall:
        result = self.engine.search(query, user_id, mode=self.mode, now=now, top_k=top_k)
        hits = tuple((h.memory.content, float(h.raw_similarity_score)) for h in result)
        return Recall(hits, str(getattr(result.confidence, "value", result.confidence)))

    def close(self) -> None:
        self.engine.close()


class WidememAdapter:
    """widemem 2.0.2 behind the adapter protocol (score = raw cosine, band = widemem's)."""

    name = "widemem"

    def __init__(self, embedder: Any | None, *, mode: str = "balanced", clock: bool = True,
                 work_dir: Path | None = None) -> None:
        from widemem_bench.peers.widemem import WidememPeer

        self.peer = WidememPeer(embedder=embedder, mode=mode, clock=clock, work_dir=work_dir)

    def add_fact(self, text: str, user_id: str, at: dt.datetime | None, importance: float = 5.0) -> None:
        self.peer.add_fact(text, user_id, importance, at=at)

    def search(self, query: str, user_id: str, top_k: int, now: dt.datetime | None = None) -> Recall:
        res = self.peer.search(query, user_id, top_k=top_k, now=now)
        return Recall(tuple((h.content, h.raw_similarity) for h in res.hits), res.band)

    def close(self) -> None:
        self.peer.close()


def _engine(embedder: Any, options: dict[str, Any], work_dir: Path | None) -> Any:
    return EngineAdapter(embedder, mode=str(options.get("mode", "balanced")), engine=options.get("engine"))


def _widemem(embedder: Any, options: dict[str, Any], work_dir: Path | None) -> Any:
    # widemem's own sentence-transformers provider when the model is the packaged MiniLM.
    own = options.get("encoder", "own") == "own" and getattr(embedder, "name", "") == "minilm-l6"
    return WidememAdapter(None if own else embedder, mode=str(options.get("mode", "balanced")),
                          clock=bool(options.get("clock", True)))  # its own temporary folder


def _mem0(embedder: Any, options: dict[str, Any], work_dir: Path | None) -> Any:
    from widemem_bench.peers.mem0 import Mem0Adapter

    return Mem0Adapter(model=str(options.get("model", getattr(embedder, "name", "minilm-l6"))),
                       work_dir=work_dir, search_threshold=float(options.get("search_threshold", 0.0)))


ADAPTERS: dict[str, Callable[[Any, dict[str, Any], Path | None], Any]] = {
    "engine": _engine,
    "widemem": _widemem,
    "mem0": _mem0,
}
OPTIONS = {"engine": {"mode", "engine"}, "widemem": {"mode", "clock", "encoder"},
           "mem0": {"model", "search_threshold"}}


def build_adapter(name: str, embedder: Any, options: dict[str, Any] | None = None,
                  work_dir: Path | None = None) -> GuardedAdapter:
    """The adapter `name` on `embedder`, wrapped in `GuardedAdapter`."""
    if name not in ADAPTERS:
        raise ValueError(f"adapter.name: unknown adapter {name!r} (known: {', '.join(ADAPTERS)})")
    options = dict(options or {})
    unknown = sorted(set(options) - OPTIONS[name])
    if unknown:
        raise ValueError(f"adapter.options: unknown option(s) {unknown} for {name!r} "
                         f"(known: {sorted(OPTIONS[name])})")
    return GuardedAdapter(ADAPTERS[name](embedder, options, work_dir), name=name)
