"""MemoryEngine: widemem 2.0.2's add / search / pin / delete / history, without any LLM by default.

``add`` = extract facts (``config.extractor``) -> YMYL floor (if enabled) ->
candidates (the ``candidate_k`` nearest memories of the same user, optional
``similarity_floor``) -> resolver (``config.resolver``) -> one committed write.

``search`` follows widemem's ``_search_ranked``: per-query weights, fetch_k
from the mode preset, recency / importance / topic weights, the two-pass boost
for factual queries, sort, truncate to top_k, then the confidence band of the
top result's raw cosine. Every memory is a fact-tier memory, so widemem's
hierarchy routing never changes the list and is not applied.

Time: ``at`` (on add) and ``now`` (on search) are naive UTC datetimes on the
experiment's clock; by default recency is ``now - created_at``
(``age_from="clock"``). ``age_from="insert"`` reproduces widemem, which ages
from the wall-clock insert time, so that a fast ingest reads ~0 days old.
"""

from __future__ import annotations

import datetime as dt
import functools
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from . import scoring
from .checks import check_flag, check_importance, check_slot, check_text, check_time, check_user
from .confidence import (
    CALIBRATED,
    Confidence,
    ConfidenceFn,
    Thresholds,
    WarmFn,
    confidence_from_similarity,
    resolve_thresholds,
    validate_thresholds,
)
from .config import EngineConfig
from .extractors import Fact, make_extractor
from .llm import ChatClient
from .modes import RETRIEVAL_MODE_PRESETS, RetrievalMode, resolve_mode, search_plan
from .planner import Planner
from .recency import decay
from .resolvers import make_resolver
from .results import AddResult, ScoredMemory, SearchResult, YMYLConflict, _scored
from .slots import NameEvidence
from .store import (
    Change,
    HistoryEntry,
    Hits,
    Memory,
    MemoryStore,
    OnDamage,
    epoch_us,
    from_epoch_us,
    utcnow,
    utcnow_us,
)
from .ymyl import classify_ymyl_with

__all__ = [
    "AddResult",
    "HistoryEntry",
    "Memory",
    "MemoryEngine",
    "ScoredMemory",
    "SearchResult",
    "YMYLConflict",
]

SECONDS_PER_DAY = 86400.0
# Concrete modes by name (a member hashes as its name): resolve_mode's answer for them.
_CONCRETE_MODES: dict[str, RetrievalMode] = {m.value: m for m in RetrievalMode}

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _serialised(
    method: Callable[Concatenate[MemoryEngine, _P], _R],
) -> Callable[Concatenate[MemoryEngine, _P], _R]:
    """Run the method under the engine's lock: an add plans against the store and then
    writes, so two threads interleaving there lost or duplicated memories (issue 17)."""

    @functools.wraps(method)
    def locked(self: MemoryEngine, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked



class MemoryEngine(Planner):
    """The reference memory engine (widemem 2.0.2 behaviour with ``EngineConfig()``).

    ``embedder`` follows the project's Embedder protocol (``model_id`` selects
    widemem's default thresholds). ``store_path=None`` keeps everything in
    memory; a path opens or creates a SQLite store bound to this embedder.
    ``on_damage="quarantine"`` opens a store with damaged rows, leaving them out of
    every read and listing them in ``engine.store.damaged`` (default: refuse the store).

    The engine is HANDED what it does not compute itself (`harness.build_engine` builds
    them from the config, so the engine never imports a scorer or calibration/):
    ``confidence_fn`` for a confidence other than "similarity", ``warm_fn`` (sees each
    added memory's text once) and ``calibrated_fn`` for ``thresholds="calibrated"``
    (the (high, moderate, low) of the embedder, read at the first search).
    """

    def __init__(
        self,
        embedder: Any,
        config: EngineConfig | None = None,
        store_path: str | Path | None = None,
        *,
        llm_transport: Any = None,
        on_damage: OnDamage = "error",
        confidence_fn: ConfidenceFn | None = None,
        warm_fn: WarmFn | None = None,
        calibrated_fn: Callable[[], Thresholds] | None = None,
    ) -> None:
        self.embedder = embedder
        self.config = config if config is not None else EngineConfig()
        if not isinstance(self.config, EngineConfig):
            raise ValueError(f"config: expected an EngineConfig, got {type(config).__name__}")
        cfg = self.config
        if cfg.confidence != "similarity" and confidence_fn is None:
            raise ValueError(f"confidence: {cfg.confidence!r} is scored outside the engine; build it with "
                             "widemem_bench.harness.build_engine (or pass confidence_fn=)")
        if cfg.confidence == "similarity" and confidence_fn is not None:
            raise ValueError("confidence_fn: set with confidence='similarity', which bands the top cosine")
        self._confidence_fn, self._warm_fn, self._calibrated_fn = confidence_fn, warm_fn, calibrated_fn
        client = None
        if cfg.extractor == "llm" or cfg.resolver == "llm":
            if not cfg.llm_url or not cfg.llm_model:
                raise ValueError("llm_url: extractor/resolver 'llm' needs llm_url and llm_model")
            client = ChatClient(
                cfg.llm_url,
                cfg.llm_model,
                api_key=cfg.llm_api_key,
                timeout=cfg.llm_timeout,
                transport=llm_transport,
            )
        self.extractor = make_extractor(cfg.extractor, client)
        self.resolver = make_resolver(cfg.resolver, client)
        share = getattr(self.resolver, "share_embedder", None)
        if share is not None:  # the structure resolver's scorer reuses the engine's vectors of its own MiniLM
            share(embedder)
        binding = legacy = None
        if store_path is not None:
            binding = f"{getattr(embedder, 'name', '?')}:{getattr(embedder, 'fingerprint', '?')}"
            if getattr(embedder, "weights_sha256", None):  # how schema-1 stores were bound
                legacy = f"{getattr(embedder, 'name', '?')}:{embedder.weights_sha256}"
        self.store = MemoryStore(store_path, dim=int(embedder.dim), embedder=binding, legacy_embedder=legacy,
                                 on_damage=on_damage)
        self._calibrated: tuple[float, float, float] | None = None
        self._names: dict[str, NameEvidence] = {}  # user -> names they go by (the rule resolver reads them)
        # One engine may be shared by threads: each public call runs alone (re-entrant,
        # so pin -> add-style planning nests). The embedder runs inside the lock too.
        self._lock = threading.RLock()

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------- reads
    @_serialised
    def memories(self, user_id: str, include_superseded: bool = False) -> list[Memory]:
        """The live memories of ``user_id`` in insertion order (with ``include_superseded``,
        then the versions updates retired, in the order they were retired)."""
        return self.store.memories(check_user(user_id), check_flag(include_superseded, "include_superseded"))

    def get(self, memory_id: str, user_id: str | None = None) -> Memory | None:
        return self.store.get(memory_id, user_id)

    @_serialised
    def history(self, memory_id: str, user_id: str | None = None) -> list[HistoryEntry]:
        """ADD / UPDATE / DELETE / PIN entries of one memory, oldest first; with
        ``user_id``, only that user's (as ``get`` and ``delete`` scope by user). Without
        it, any user's: a caller serving several users passes ``user_id``."""
        return self.store.history(memory_id, None if user_id is None else check_user(user_id))

    # -------------------------------------------------------------- writes
    @_serialised
    def add(self, text: str, user_id: str, at: dt.datetime | None = None) -> AddResult:
        """Extract facts from ``text`` and resolve them against the user's memories."""
        text = check_text(text, "text", self.config.max_text_chars)
        user_id = check_user(user_id)
        when = check_time(at, "at")
        facts = self.extractor.extract(text)
        changes, result = self._plan(facts, user_id, when)
        self.store.apply(changes)
        self._warm(result)
        return result

    def _warm(self, result: AddResult) -> None:
        """The handed warm-up (v3 parses each memory once, at add time, not at every search)."""
        if self._warm_fn is not None and result.memories:
            self._warm_fn([m.content for m in result.memories])

    @_serialised
    def add_fact(
        self,
        content: str,
        user_id: str,
        importance: float = 5.0,
        at: dt.datetime | None = None,
        slot: tuple[str, str] | None = None,
    ) -> AddResult:
        """Store one already-extracted fact (through conflict resolution).

        ``slot`` is the gold (subject, attribute), read only by the oracle resolver.
        """
        content = check_text(content, "content", self.config.max_text_chars)
        user_id = check_user(user_id)
        imp = check_importance(importance)
        when = check_time(at, "at")
        fact = Fact(" ".join(content.split()), imp, check_slot(slot))
        changes, result = self._plan([fact], user_id, when)
        self.store.apply(changes)
        self._warm(result)
        return result

    @_serialised
    def pin(
        self, text: str, user_id: str, importance: float = 9.0, at: dt.datetime | None = None
    ) -> AddResult:
        """The normal ``add`` pipeline, then each memory it added or updated is raised
        to at least ``importance`` (logged as PIN), all in one transaction.

        As in widemem, a fact that was already stored verbatim is deduplicated and
        therefore not raised; pin is an importance boost, not a decay exemption.
        """
        text = check_text(text, "text", self.config.max_text_chars)
        user_id = check_user(user_id)
        imp = check_importance(importance)
        when = check_time(at, "at")
        facts = self.extractor.extract(text)
        changes, result = self._plan(facts, user_id, when)
        stamp = when or utcnow()
        pinned: list[Memory] = []
        for memory in result.memories:
            if memory.importance < imp:
                raised = memory.replace(importance=imp, updated_at=stamp)
                changes.append(Change("PIN", raised, None, memory.content, stamp))
                memory = raised
            pinned.append(memory)
        result.memories = pinned
        self.store.apply(changes)
        return result

    @_serialised
    def delete(
        self, memory_id: str, user_id: str | None = None, at: dt.datetime | None = None
    ) -> bool:
        """Delete one memory (logged at ``at``, default wall clock). With ``user_id``,
        only that user's memory is touched.

        Returns False when no such memory exists (or it belongs to another user).
        """
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError(f"memory_id: expected a non-empty string, got {memory_id!r}")
        when = check_time(at, "at")
        memory = self.store.get(memory_id, user_id)
        if memory is None:
            return False
        self.store.apply([Change("DELETE", memory, None, memory.content, when or utcnow())])
        return True

    @_serialised
    def unsupersede(
        self, memory_id: str, user_id: str | None = None, at: dt.datetime | None = None
    ) -> Memory:
        """Undo an update: the superseded memory ``memory_id`` is live again (searched,
        a conflict candidate), logged as UNSUPERSEDE at ``at`` (default wall clock). The
        memory that superseded it stays as it is. Returns the restored memory.

        A one-line ValueError when ``memory_id`` is unknown (or, with ``user_id``,
        another user's), is not superseded, or holds content a live memory holds.
        """
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError(f"memory_id: expected a non-empty string, got {memory_id!r}")
        when = check_time(at, "at")
        memory = self.store.get(memory_id, None if user_id is None else check_user(user_id))
        if memory is None:
            owner = "" if user_id is None else f" for user {user_id!r}"
            raise ValueError(f"memory_id: {memory_id!r} not found{owner}")
        if memory.superseded_at is None:
            raise ValueError(f"memory_id: {memory_id} is not superseded")
        stamp = when or utcnow()
        restored = memory.replace(superseded_at=None, superseded_by=None, updated_at=stamp)
        self.store.apply([Change("UNSUPERSEDE", restored, None, None, stamp)])
        return restored

    # -------------------------------------------------------------- search
    @_serialised
    def search(
        self,
        query: str,
        user_id: str,
        mode: RetrievalMode | str | None = None,
        now: dt.datetime | None = None,
        top_k: int | None = None,
        include_superseded: bool = False,
    ) -> SearchResult:
        """widemem's ranked search over ``user_id``'s memories (see the module docstring).

        ``mode`` None means ``config.default_mode`` ("balanced"). ``now`` is the
        clock recency is measured against (default: wall clock). Never filters
        by confidence: the ranked list comes back with the verdict.
        ``include_superseded`` adds the versions updates retired AFTER the live
        hits (which are the default search's, as is the confidence): up to ``top_k``
        of each, each part ranked by the same score; each hit's ``superseded`` /
        ``valid_from`` / ``valid_to`` / ``superseded_by`` say which. By default they
        are left out.
        """
        cfg = self.config
        query = check_text(query, "query", cfg.max_text_chars)
        user_id = check_user(user_id)
        when = check_time(now, "now")
        past = include_superseded is True or check_flag(include_superseded, "include_superseded")
        resolved = self._mode(mode, query)
        kind = scoring.classify_query(query)  # once: the weights and the fetch size both read it
        if cfg.adapt_weights:
            weights = scoring.weights_for(kind, cfg.weights)
            sim_first = kind == "factual"
        else:
            weights = cfg.weights  # 3 floats, checked by EngineConfig
            sim_first = False
        k, fetch = search_plan(resolved, top_k, sim_first)
        thresholds = self._thresholds()

        qvec = self._encode([query], "query")[0]
        boost = RETRIEVAL_MODE_PRESETS[resolved].similarity_boost if sim_first and cfg.two_pass_boost else None
        hits = self.store.hits(user_id, qvec, fetch)
        ranked = [] if hits is None else self._ranked(hits, when, weights, boost, k)
        # The verdict is the live memories': a retired version never makes the memory
        # sound sure (or unsure) of what it holds now.
        confidence = self._confidence(query, user_id, ranked, thresholds)
        if past:
            # Live memories first, exactly the default search's list; then the versions
            # updates retired, ranked the same way among themselves: the stale fact is
            # never the top hit (each hit's ``superseded`` / ``valid_to`` say which).
            old = self.store.superseded_hits(user_id, qvec, fetch)
            if old is not None:
                ranked += self._ranked(old, when, weights, boost, k)
        return SearchResult(ranked, confidence, resolved, weights, thresholds, kind)

    def _ranked(self, hits: Hits, when: dt.datetime | None, weights: tuple[float, float, float],
                boost: float | None, k: int) -> list[ScoredMemory]:
        """The top ``k`` of ``hits`` by widemem's score (``scoring.rank_hits``)."""
        mems, sim = hits.memories, hits.sims
        importance = hits.importance01
        recency = self._recency(hits, when)
        multiplier = None
        if self.config.topic_weights:
            multiplier = np.array([scoring.topic_multiplier(m.content, self.config.topic_weights) for m in mems])
        final, order = scoring.rank_hits(sim, importance, recency, weights, multiplier, boost)
        # Converted to Python floats once per search: per-element numpy scalar ops here
        # cost more than the scoring itself (perf benchmark, issue 9). Same values.
        sim_l, final_l, rec_l, imp_l = sim.tolist(), final.tolist(), recency.tolist(), importance.tolist()
        return [_scored(mems[j], sim_l[j], final_l[j], rec_l[j], imp_l[j]) for j in order[:k].tolist()]

    def _mode(self, mode: RetrievalMode | str | None, query: str) -> RetrievalMode:
        """``resolve_mode`` of ``mode`` (None: the configured default) for ``query``; a
        concrete mode's name or member is looked up, skipping two enum conversions."""
        m = self.config.default_mode if mode is None else mode
        if m.__class__ is str or m.__class__ is RetrievalMode:
            found = _CONCRETE_MODES.get(m)
            if found is not None:
                return found
        return resolve_mode(m, query)  # "auto", or the error naming a bad mode

    def _thresholds(self) -> tuple[float, float, float]:
        """(high, moderate, low) in force: widemem's table + env, a fixed triple, or calibrated."""
        fixed = self.config.thresholds
        if fixed is None:
            # Resolved at every search: widemem reads the WIDEMEM_CONFIDENCE_* env at every call.
            return resolve_thresholds(self.embedder.model_id, None)
        if fixed != CALIBRATED:
            return fixed  # type: ignore[return-value]  # a triple EngineConfig validated
        if self._calibrated is None:
            if self._calibrated_fn is None:
                raise ValueError(f"thresholds: 'calibrated' needs the calibration of {self.embedder.name!r}; "
                                 "build the engine with widemem_bench.harness.build_engine")
            self._calibrated = validate_thresholds(
                self._calibrated_fn(), name=f"calibrated thresholds of {self.embedder.name!r}"
            )
        return self._calibrated

    def _recency(self, hits: Hits, now: dt.datetime | None) -> np.ndarray:
        cfg = self.config
        insert = cfg.age_from == "insert"
        col = hits.inserted_us if insert else hits.created_us
        ref = None if insert else now  # None: the wall clock, read once
        ref_us = utcnow_us() if ref is None else epoch_us(ref)
        if col is not None and ref_us is not None:
            # The memories' times as whole microseconds (store.epoch_us): the same ages as
            # the loops below, without a timedelta per memory.
            ages = (ref_us - col) / 1e6 / SECONDS_PER_DAY
        else:
            ref = from_epoch_us(ref_us) if ref is None else ref
            times = [m.inserted_at if insert else m.created_at for m in hits.memories]
            ages = np.array([(ref - t).total_seconds() / SECONDS_PER_DAY for t in times])
        recency = decay(ages, cfg.decay_function, cfg.decay_rate)  # a setting EngineConfig checked
        if cfg.ymyl_enabled and cfg.ymyl_decay_immunity:
            for j, m in enumerate(hits.memories):
                # widemem trusts a stored category first, then re-classifies the text.
                if m.ymyl_category is not None:
                    recency[j] = 1.0
                    continue
                match = classify_ymyl_with(m.content, cfg.ymyl_categories, cfg.ymyl_classifier)
                if match is not None and match.strength == "strong":
                    recency[j] = 1.0
        return recency

    def _confidence(
        self,
        query: str,
        user_id: str,
        ranked: Sequence[ScoredMemory],
        thresholds: tuple[float, float, float],
    ) -> Confidence:
        if self._confidence_fn is not None:
            return Confidence(self._confidence_fn(query, ranked, thresholds))
        top = ranked[0].raw_similarity_score if ranked else None
        return confidence_from_similarity(top, thresholds)
