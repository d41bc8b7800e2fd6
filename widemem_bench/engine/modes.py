"""Retrieval modes (fast / balanced / deep), their presets, the candidate
fetch size and widemem's hierarchy routing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from widemem_bench.engine.scoring import is_similarity_first


class RetrievalMode(StrEnum):
    FAST = "fast"
    BALANCED = "balanced"
    DEEP = "deep"


AUTO: Literal["auto"] = "auto"
MODE_NAMES: tuple[str, ...] = (*(m.value for m in RetrievalMode), AUTO)
# widemem caps any requested top_k at 1000.
MAX_TOP_K = 1000
# Non-factual queries fetch top_k * 3 candidates whatever the mode.
DEFAULT_FETCH_MULTIPLIER = 3


@dataclass(frozen=True)
class ModePreset:
    """One retrieval mode's settings.

    ``similarity_boost`` is the fraction of the top final score added by the
    two-pass boost; ``enable_hierarchy`` turns on tier routing.
    """

    top_k: int
    fetch_k_multiplier: int
    similarity_boost: float
    enable_hierarchy: bool

    def __getitem__(self, key: str) -> Any:
        # widemem's presets are dicts; allow preset["top_k"] for side-by-side code.
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)


RETRIEVAL_MODE_PRESETS: dict[RetrievalMode, ModePreset] = {
    RetrievalMode.FAST: ModePreset(10, 3, 0.10, False),
    RetrievalMode.BALANCED: ModePreset(25, 4, 0.15, True),
    RetrievalMode.DEEP: ModePreset(50, 5, 0.20, True),
}


def validate_mode(mode: RetrievalMode | str) -> RetrievalMode | Literal["auto"]:
    """The mode as a ``RetrievalMode``, or the string "auto"; ValueError otherwise.

    Names are exact lowercase values, as widemem's enum takes them.
    """
    if isinstance(mode, RetrievalMode):
        return mode
    if isinstance(mode, str):
        if mode == AUTO:
            return AUTO
        try:
            return RetrievalMode(mode)
        except ValueError:
            pass
    raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODE_NAMES)}")


# auto mode: cues of a broad "tell me everything" request, lowercased substrings.
# Unlike widemem's routing cues these include first-person profile requests
# ("about me", "who I am"), since an assistant's user asks about themself.
AUTO_DEEP_CUES: tuple[str, ...] = (
    "everything", "all the things", "all you know", "summary", "summarize", "summarise",
    "overview", "profile", "background", "about me", "about myself", "who i am",
    "tell me about", "describe me", "what do you know about",
)
# A lookup of at most this many words, one question, no complaint, takes FAST.
AUTO_FAST_MAX_WORDS = 8
_SENTENCE_END = re.compile(r"[.!?]+(?=\s+\S)")


def auto_mode(query: str) -> RetrievalMode:
    """Choose a retrieval mode from the query text alone (what widemem leaves to the app).

    - DEEP for a broad request ("tell me everything about me", "give me an
      overview of my life"): its answer is many memories, so a wide net pays.
    - BALANCED for a frustrated message (one of widemem's 14 phrases) or a
      message of several sentences: a complaint about forgetting needs recall
      more than speed, and a compound message rarely hits one memory.
    - FAST for a short lookup (at most ``AUTO_FAST_MAX_WORDS`` words): one
      fact answers it, so a small fetch is enough.
    - BALANCED otherwise (longer or hypothetical questions).
    """
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    # Imported here: frustration imports confidence, and modes must stay importable on its own.
    from widemem_bench.engine.frustration import detect_frustration

    q = " ".join(query.lower().split())
    if any(cue in q for cue in AUTO_DEEP_CUES):
        return RetrievalMode.DEEP
    if detect_frustration(q) or _SENTENCE_END.search(q):
        return RetrievalMode.BALANCED
    if len(q.split()) <= AUTO_FAST_MAX_WORDS:
        return RetrievalMode.FAST
    return RetrievalMode.BALANCED


def resolve_mode(mode: RetrievalMode | str, query: str) -> RetrievalMode:
    """Validate ``mode`` and turn "auto" into a concrete mode for ``query``."""
    m = validate_mode(mode)
    return auto_mode(query) if m == AUTO else RetrievalMode(m)


def preset(mode: RetrievalMode | str) -> ModePreset:
    """The preset of a concrete mode (not "auto": resolve it first)."""
    m = validate_mode(mode)
    if m == AUTO:
        raise ValueError("mode 'auto' has no preset: call resolve_mode(mode, query) first")
    return RETRIEVAL_MODE_PRESETS[RetrievalMode(m)]


def effective_top_k(mode: RetrievalMode | str, top_k: int | None = None) -> int:
    """widemem's result count: ``top_k`` (or the preset's), capped at 1000."""
    p = preset(mode)
    if top_k is None:
        return min(p.top_k, MAX_TOP_K)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive int or None, got {top_k!r}")
    return min(top_k, MAX_TOP_K)


def fetch_k(
    mode: RetrievalMode | str,
    query: str,
    top_k: int | None = None,
    *,
    similarity_first: bool | None = None,
) -> int:
    """How many nearest candidates widemem pulls before scoring.

    ``effective_top_k * multiplier``: the mode's multiplier for
    similarity-first (factual) queries, 3 for every other query.
    ``similarity_first`` overrides the query classification (used when
    per-query adaptation is switched off).
    """
    sim_first = is_similarity_first(query) if similarity_first is None else similarity_first
    mult = preset(mode).fetch_k_multiplier if sim_first else DEFAULT_FETCH_MULTIPLIER
    return effective_top_k(mode, top_k) * mult


# (effective_top_k, fetch_k) of each concrete mode for top_k None, by similarity_first.
_DEFAULT_PLANS: dict[tuple[RetrievalMode, bool], tuple[int, int]] = {
    (m, first): (min(p.top_k, MAX_TOP_K),
                 min(p.top_k, MAX_TOP_K) * (p.fetch_k_multiplier if first else DEFAULT_FETCH_MULTIPLIER))
    for m, p in RETRIEVAL_MODE_PRESETS.items()
    for first in (False, True)
}


def search_plan(mode: RetrievalMode, top_k: int | None, similarity_first: bool) -> tuple[int, int]:
    """``(effective_top_k(mode, top_k), fetch_k(...))`` of a concrete (resolved) mode in
    one step: the default plans are computed once, not validated again at every search."""
    if top_k is None:
        return _DEFAULT_PLANS[(mode, similarity_first)]
    k = effective_top_k(mode, top_k)
    return k, fetch_k(mode, "", top_k, similarity_first=similarity_first)


Tier = Literal["fact", "summary", "theme"]
TIERS: tuple[str, ...] = ("fact", "summary", "theme")

# Hierarchy routing cues, lowercased. Broad cues count anywhere; specific ones
# only as a prefix, with no word boundary ("is" also catches "island ...").
BROAD_CUES: tuple[str, ...] = (
    "tell me about", "describe", "who is", "what do you know about", "summary",
    "overview", "profile", "background", "everything about",
)
SPECIFIC_PREFIXES: tuple[str, ...] = (
    "where", "when", "what is", "how old", "how much", "how many", "does", "did",
    "is", "was", "has", "have", "which", "name",
)
SHORT_QUERY_MAX_WORDS = 4
ROUTE_MIN_RESULTS = 3

# Where routing looks when the preferred tier has too few results.
_FALLBACK: dict[str, tuple[str, str]] = {
    "theme": ("summary", "fact"),
    "summary": ("theme", "fact"),
    "fact": ("summary", "theme"),
}


def route_tier(query: str) -> Tier:
    """The memory tier widemem prefers for ``query``: "theme" for broad
    queries, "fact" for specific or short (<= 4 words) ones, else "summary"."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    q = query.lower().strip()
    if any(cue in q for cue in BROAD_CUES):
        return "theme"
    if q.startswith(SPECIFIC_PREFIXES) or len(q.split()) <= SHORT_QUERY_MAX_WORDS:
        return "fact"
    return "summary"


def route_indices(
    tiers: Sequence[str], preferred: str, min_results: int = ROUTE_MIN_RESULTS
) -> list[int]:
    """Apply widemem's tier routing to a ranked list given as its tiers.

    Returns the kept positions, in order: the preferred tier's results if
    there are at least ``min_results``; otherwise those followed by whole
    fallback tiers until ``min_results`` is reached. With only facts stored
    the list comes back unchanged.
    """
    if preferred not in _FALLBACK:
        raise ValueError(f"preferred must be one of {', '.join(TIERS)}, got {preferred!r}")
    kept = [i for i, t in enumerate(tiers) if t == preferred]
    if len(kept) >= min_results:
        return kept
    for tier in _FALLBACK[preferred]:
        if len(kept) >= min_results:
            break
        kept.extend(i for i, t in enumerate(tiers) if t == tier)
    return kept
