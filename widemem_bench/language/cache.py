"""Parse cache on disk, beside the embedding cache (same root, same atomic writes).

What is cached is spaCy's output, each text's token tuple (``Tok`` rows), keyed by the
pipeline's fingerprint alone. The reading (``read.read``, about 0.1 ms a text) runs again
on every load, so a change to the reading is never served stale from the cache and needs
no version bump.

Layout: ``<root>/parses/<pipeline name>/<fingerprint[:16]>/shard-*.json``, root from
``embedders.cache.default_cache_dir``. A shard is a first line holding the sha256 of the
rest, then ``{key hex: [[text, lemma, pos, tag, dep, head, ent], ...]}`` as JSON (hashing
the bytes as read, never a re-serialisation). Keys are ``embedders.cache.text_key(pipeline
name, fingerprint, "tokens", text)``. Shards are written to a temp file in the same folder,
fsynced and renamed; a shard that fails to load, fails its checksum or holds rows that are
not token lists is reported in one warning line, deleted, and its texts are parsed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from widemem_bench.embedders.cache import default_cache_dir, remove_stale_temps, text_key
from widemem_bench.language.parse import Tok

log = logging.getLogger(__name__)
MAX_SHARDS = 64
Tokens = tuple[Tok, ...]


def parse_key(name: str, fingerprint: str, text: str) -> str:
    return text_key(name, fingerprint, "tokens", text).hex()


def _tokens(rows: Any) -> Tokens:
    """Rebuild one text's tokens, refusing anything that is not a well-formed token list."""
    out = []
    for r in rows:
        text, lemma, pos, tag, dep, head, ent = r
        if not (isinstance(head, int) and 0 <= head < len(rows)):
            raise ValueError(f"token head {head!r} out of range")
        out.append(Tok(str(text), str(lemma), str(pos), str(tag), str(dep), head, str(ent)))
    return tuple(out)


class ParseCache:
    """All cached token tuples of one pipeline fingerprint, loaded once into a dict."""

    def __init__(self, name: str, fingerprint: str, root: str | Path | None = None) -> None:
        base = Path(root).expanduser() if root is not None else default_cache_dir()
        self.folder = base / "parses" / name / fingerprint[:16]
        self._rows: dict[str, Tokens] = {}
        self._shards: list[Path] = []
        self.corrupt_files = 0
        self._load()

    def _load(self) -> None:
        if not self.folder.is_dir():
            return
        remove_stale_temps(self.folder)
        for path in sorted(self.folder.glob("shard-*.json")):
            try:
                head, _, body = path.read_bytes().partition(b"\n")
                if head.decode("ascii", "replace") != hashlib.sha256(body).hexdigest():
                    raise ValueError("checksum mismatch")
                rows = {str(k): _tokens(v) for k, v in json.loads(body).items()}
            except FileNotFoundError:
                continue  # compacted away by another process between glob and read
            except Exception as exc:  # json, unpacking and type errors all mean "do not trust it"
                self.corrupt_files += 1
                log.warning("parse cache: dropped damaged file %s (%s: %s); its texts will be parsed again",
                            path, type(exc).__name__, exc)
                path.unlink(missing_ok=True)
                continue
            self._rows.update(rows)
            self._shards.append(path)

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: str) -> Tokens | None:
        return self._rows.get(key)

    def put(self, rows: Mapping[str, Tokens]) -> None:
        if not rows:
            return
        self._rows.update(rows)
        self._shards.append(self._write(rows))
        if len(self._shards) > MAX_SHARDS:
            self.compact()

    def compact(self) -> None:
        """Merge every shard this process knows into one file, then delete the old ones."""
        if len(self._shards) <= 1:
            return
        merged = self._write(self._rows)
        for old in self._shards:
            old.unlink(missing_ok=True)
        self._shards = [merged]

    def _write(self, rows: Mapping[str, Tokens]) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        plain = {k: [[t.text, t.lemma, t.pos, t.tag, t.dep, t.head, t.ent] for t in toks] for k, toks in rows.items()}
        body = json.dumps(plain, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        name = f"shard-{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body)
                fh.flush()
                os.fsync(fh.fileno())
            final = self.folder / name
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return final
