"""The memory systems the `peer` experiment can drive (`configs/adapter/<name>.yaml`).

- `engine`: this project's reference engine (EngineConfig defaults: widemem 2.0.2's
  scoring on the timeline clock);
- `widemem`: widemem-ai 2.0.2 itself (`WidememPeer`, pass-through LLM), on the timeline
  clock by default (`clock: false` = wall-clock insert time, as it ships);
- `mem0`: mem0ai 2.2.1 offline (`peers.mem0`).

Each satisfies `MemoryAdapter`; `build_adapter` returns it wrapped in `GuardedAdapter`.

A memory system from outside this package plugs in without editing it, in one of two ways:

- an entry point in the group ``widemem_bench.adapters`` of an installed distribution
  (``[project.entry-points."widemem_bench.adapters"] mine = "mine.bench:MyMemory"``), then
  ``widemem-bench peer adapter=mine``;
- ``adapter.factory=package.module:MyMemory`` on the command line.

Either names a callable (usually the class) called as ``factory(embedder, **options)``;
``work_dir`` (a folder the run owns) is passed too when the callable takes it. Options come
from ``adapter.options.<key>=...`` and are checked against the callable's signature.
"""

from __future__ import annotations

import datetime as dt
import importlib
import inspect
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from widemem_bench.peers.adapter import GuardedAdapter, Recall


class EngineAdapter:
    """The reference engine behind the adapter protocol (score = raw cosine, band = its own)."""

    name = "engine"

    def __init__(self, embedder: Any, *, mode: str = "balanced", engine: dict[str, Any] | None = None) -> None:
        from widemem_bench.engine import EngineConfig
        from widemem_bench.harness.engines import build_engine

        self.mode = mode
        self.engine = build_engine(embedder, EngineConfig(**(engine or {})))

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


ENTRY_POINTS = "widemem_bench.adapters"


def plugin_names() -> list[str]:
    """Adapters that installed distributions register in the `widemem_bench.adapters` group."""
    return sorted(ep.name for ep in metadata.entry_points(group=ENTRY_POINTS))


def load_factory(name: str, factory: str | None = None) -> Callable[..., Any]:
    """The callable behind an outside adapter: `factory` ("pkg.module:attr") when given, else
    the entry point `name`. One-line ValueError when neither can be had."""
    if factory:
        module, _, attr = str(factory).partition(":")
        if not module or not attr:
            raise ValueError(f"adapter.factory: {factory!r} is not of the form package.module:Name")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"adapter.factory: cannot import {factory!r} ({exc})".splitlines()[0]) from None
        if not callable(obj) or inspect.ismodule(obj):
            raise ValueError(f"adapter.factory: {factory!r} is a {type(obj).__name__}, not a class or function "
                             "that takes (embedder, **options)")
        return obj  # type: ignore[no-any-return]
    hits = [ep for ep in metadata.entry_points(group=ENTRY_POINTS) if ep.name == name]
    if not hits:
        known = [*ADAPTERS, *plugin_names()]
        raise ValueError(f"adapter.name: unknown adapter {name!r} (known: {', '.join(known)}; "
                         f"or pass adapter.factory=package.module:Class)")
    try:
        return hits[0].load()  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"adapter {name!r}: entry point {hits[0].value!r} does not load ({exc})"
                         .splitlines()[0]) from None


def _outside(name: str, factory: Callable[..., Any], embedder: Any, options: dict[str, Any],
             work_dir: Path | None) -> Any:
    try:
        params: Mapping[str, inspect.Parameter] = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    accepted = sorted(k for k, p in params.items() if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                      inspect.Parameter.POSITIONAL_OR_KEYWORD) and k not in ("self", "embedder", "work_dir"))
    unknown = sorted(set(options) - set(accepted))
    if unknown and not takes_any:
        raise ValueError(f"adapter.options: unknown option(s) {unknown} for {name!r} (known: {accepted})")
    extra = {"work_dir": work_dir} if "work_dir" in params else {}
    try:
        built = factory(embedder, **options, **extra)
    except TypeError as exc:  # a factory of another shape: say so in one line, not a traceback
        raise ValueError(f"adapter {name!r}: its factory does not take (embedder, **options): {exc}"
                         .splitlines()[0]) from None
    missing = [m for m in ("add_fact", "search") if not callable(getattr(built, m, None))]
    if missing:
        raise ValueError(f"adapter {name!r}: its factory returned a {type(built).__name__} without "
                         f"{' and '.join(missing)}() (the MemoryAdapter protocol)")
    return built


def build_adapter(name: str, embedder: Any, options: dict[str, Any] | None = None,
                  work_dir: Path | None = None, factory: str | None = None) -> GuardedAdapter:
    """The adapter `name` on `embedder`, wrapped in `GuardedAdapter`: a built-in one, or an
    outside one (`factory`, else the entry point `name`)."""
    options = dict(options or {})
    if factory or name not in ADAPTERS:
        built = _outside(name, load_factory(name, factory), embedder, options, work_dir)
        return GuardedAdapter(built, name=name)
    unknown = sorted(set(options) - OPTIONS[name])
    if unknown:
        raise ValueError(f"adapter.options: unknown option(s) {unknown} for {name!r} "
                         f"(known: {sorted(OPTIONS[name])})")
    return GuardedAdapter(ADAPTERS[name](embedder, options, work_dir), name=name)
