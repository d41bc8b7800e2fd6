"""The language layer: one spaCy parse per text, cached (the tokens, keyed by the
pipeline's file hashes), read into a compact ``Parse``.

A library floor: imports embedders (hashing, cache folder) and feedback (progress bars),
never answerability/, engine/ or experiments/.

```python
from widemem_bench.language import parse, parse_many, Parser, pair_features
p = parse("what car does my mum drive?")
p.subject.kind, p.subject.owner, p.subject.chain  # "relation", "user", ("mum",)
p.slot.text, p.slot.expects                        # "what car", ("OTHER",)
parse_many(texts)                                  # nlp.pipe(batch_size=256), cached
pair_features(question_parse, memory_parse)        # numeric features for a classifier
```
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from widemem_bench.feedback import bar
from widemem_bench.language.cache import ParseCache, parse_key
from widemem_bench.language.features import (
    FEATURE_NAMES,
    frame_answers,
    pair_features,
    subject_match,
    type_match,
)
from widemem_bench.language.model import (
    NAME,
    PACKAGE,
    LanguageModelError,
    Pipeline,
    load_pipeline,
    pipeline_fingerprint,
)
from widemem_bench.language.parse import (
    TYPES,
    Clause,
    Parse,
    Slot,
    Subject,
    Tok,
    Triple,
    Value,
)
from widemem_bench.language.read import read

__all__ = [
    "FEATURE_NAMES", "NAME", "PACKAGE", "TYPES", "Clause", "LanguageModelError",
    "Parse", "Parser", "Slot", "Subject", "Tok", "Triple", "Value", "default_parser", "frame_answers",
    "pair_features",
    "parse", "parse_many", "pipeline_fingerprint", "read", "subject_match", "type_match",
]

BATCH_SIZE = 256
PROGRESS_MIN = 2000  # texts to parse before a bar is worth showing
MAX_CHARS = 100_000


def tokens_of(doc: object) -> tuple[Tok, ...]:
    return tuple(
        Tok(t.text, t.lemma_, t.pos_, t.tag_, t.dep_, t.head.i,
            f"{t.ent_iob_}-{t.ent_type_}" if t.ent_type_ else "")
        for t in doc  # type: ignore[attr-defined]
    )


class Parser:
    """Parses texts once per pipeline fingerprint; the model loads on the first miss.

    ``stats``: hits (from the cache), misses (parsed by spaCy), model_calls (nlp.pipe runs).
    """

    def __init__(self, *, cache: bool = True, cache_dir: str | Path | None = None,
                 progress: bool | None = None) -> None:
        self.fingerprint = pipeline_fingerprint()  # checks the files before anything is read
        self._cache = ParseCache(NAME, self.fingerprint, cache_dir) if cache else None
        self._memo: dict[str, Parse] = {}
        self._pipe: Pipeline | None = None
        self.progress = progress
        self.stats = {"hits": 0, "misses": 0, "model_calls": 0}
        self._lock = threading.RLock()

    @property
    def nlp(self) -> object:
        if self._pipe is None:
            self._pipe = load_pipeline()
        return self._pipe.nlp

    def parse(self, text: str) -> Parse:
        return self.parse_many([text])[0]

    def parse_many(self, texts: Sequence[str]) -> list[Parse]:
        """One Parse per text, in order. Empty / whitespace texts never reach spaCy."""
        with self._lock:
            found: dict[str, Parse] = {}
            todo: list[str] = []
            for text in dict.fromkeys(texts):
                if not isinstance(text, str):
                    raise ValueError(f"parse_many: texts must be str, got {type(text).__name__}")
                hit = self._lookup(text)
                if hit is not None:
                    found[text] = hit
                elif not text.strip():
                    found[text] = Parse(text=text)
                else:
                    todo.append(text)
            if todo:
                found.update(self._run(todo))
            return [found[t] for t in texts]

    def _lookup(self, text: str) -> Parse | None:
        hit = self._memo.get(text)
        if hit is None and self._cache is not None:
            toks = self._cache.get(parse_key(NAME, self.fingerprint, text))
            if toks is not None:
                hit = self._memo[text] = read(text, toks)
        if hit is not None:
            self.stats["hits"] += 1
        return hit

    def _run(self, todo: list[str]) -> dict[str, Parse]:
        nlp = self.nlp
        self.stats["model_calls"] += 1
        self.stats["misses"] += len(todo)
        # spaCy refuses texts over nlp.max_length (1e6 chars); a memory that long is parsed by its head
        docs: Iterable[object] = nlp.pipe((t[:MAX_CHARS] for t in todo), batch_size=BATCH_SIZE)  # type: ignore[attr-defined]
        if len(todo) >= PROGRESS_MIN:
            docs = bar(docs, "parsing", total=len(todo), enabled=self.progress, unit="text")
        toks = {text: tokens_of(doc) for text, doc in zip(todo, docs, strict=True)}
        out = {text: read(text, t) for text, t in toks.items()}
        self._memo.update(out)
        if self._cache is not None:
            self._cache.put({parse_key(NAME, self.fingerprint, text): t for text, t in toks.items()})
        return out


_DEFAULT: Parser | None = None
_DEFAULT_LOCK = threading.Lock()


def default_parser() -> Parser:
    """One Parser per process on the default cache root."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = Parser()
        return _DEFAULT


def parse(text: str) -> Parse:
    return default_parser().parse(text)


def parse_many(texts: Sequence[str]) -> list[Parse]:
    return default_parser().parse_many(texts)
