"""Reference memory engine with widemem 2.0.2's behaviour (pure Python + numpy, no Hydra).

Public surface: ``from widemem_bench.engine import MemoryEngine, EngineConfig, ...``
(see docs/ARCHITECTURE.md).
"""

from widemem_bench.engine.confidence import (
    BAND_CODES,
    Confidence,
    UncertaintyMode,
    band_codes,
    build_uncertainty_guidance,
    resolve_thresholds,
    thresholds_for_model,
)
from widemem_bench.engine.config import EngineConfig
from widemem_bench.engine.engine import (
    AddResult,
    MemoryEngine,
    ScoredMemory,
    SearchResult,
    YMYLConflict,
)
from widemem_bench.engine.extractors import Fact, make_extractor
from widemem_bench.engine.frustration import FRUSTRATION_PHRASES, build_frustration_response
from widemem_bench.engine.modes import RETRIEVAL_MODE_PRESETS, RetrievalMode
from widemem_bench.engine.recency import compute_recency
from widemem_bench.engine.resolvers import Action, make_resolver, parse_slot
from widemem_bench.engine.scoring import adapt_weights, classify_query, combine, two_pass_boost
from widemem_bench.engine.store import HistoryEntry, Memory, MemoryStore
from widemem_bench.engine.ymyl import (
    YMYL_CLASSIFIERS,
    YMYLMatch,
    classify_ymyl,
    classify_ymyl_lexicon,
)

__all__ = [
    "BAND_CODES",
    "FRUSTRATION_PHRASES",
    "RETRIEVAL_MODE_PRESETS",
    "YMYL_CLASSIFIERS",
    "Action",
    "AddResult",
    "Confidence",
    "EngineConfig",
    "Fact",
    "HistoryEntry",
    "Memory",
    "MemoryEngine",
    "MemoryStore",
    "RetrievalMode",
    "ScoredMemory",
    "SearchResult",
    "UncertaintyMode",
    "YMYLConflict",
    "YMYLMatch",
    "adapt_weights",
    "band_codes",
    "build_frustration_response",
    "build_uncertainty_guidance",
    "classify_query",
    "classify_ymyl",
    "classify_ymyl_lexicon",
    "combine",
    "compute_recency",
    "make_extractor",
    "make_resolver",
    "parse_slot",
    "resolve_thresholds",
    "thresholds_for_model",
    "two_pass_boost",
]
