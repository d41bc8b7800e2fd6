"""Parse cache on disk, beside the embedding cache (same root, same atomic writes).

Layout: ``<root>/parses/<pipeline name>/<fingerprint[:16]>/v<PARSE_VERSION>/shard-*.json``,
root from ``embedders.cache.default_cache_dir``. Each shard is one JSON object
a first line holding the sha256 of the rest, then ``{key hex: Parse.to_dict()}`` as
JSON (hashing the bytes as read, not a re-serialisation, keeps a cached read ~3x the cost
of the JSON parse alone), written to a temp file in the same folder, fsynced and renamed. Keys are
``embedders.cache.text_key(pipeline name, fingerprint, "parse-v<N>", text)``. A shard that
fails to load, fails its checksum or does not rebuild into ``Parse`` rows is reported in
one warning line, deleted, and its texts are parsed again; a wrong parse is never served.
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
from widemem_bench.language.parse import PARSE_VERSION, Parse

log = logging.getLogger(__name__)
MAX_SHARDS = 64


def parse_key(name: str, fingerprint: str, text: str) -> str:
    return text_key(name, fingerprint, f"parse-v{PARSE_VERSION}", text).hex()


class ParseCache:
    """All cached parses of one pipeline fingerprint, loaded once into a dict."""

    def __init__(self, name: str, fingerprint: str, root: str | Path | None = None) -> None:
        base = Path(root).expanduser() if root is not None else default_cache_dir()
        self.folder = base / "parses" / name / fingerprint[:16] / f"v{PARSE_VERSION}"
        self._rows: dict[str, Parse] = {}
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
                parsed = {k: Parse.from_dict(v) for k, v in json.loads(body).items()}
            except FileNotFoundError:
                continue
            except Exception as exc:  # json, key and type errors all mean "do not trust it"
                self.corrupt_files += 1
                log.warning("parse cache: dropped damaged file %s (%s: %s); its texts will be parsed again",
                            path, type(exc).__name__, exc)
                path.unlink(missing_ok=True)
                continue
            self._rows.update(parsed)
            self._shards.append(path)

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: str) -> Parse | None:
        return self._rows.get(key)

    def put(self, rows: Mapping[str, Parse]) -> None:
        if not rows:
            return
        self._rows.update(rows)
        self._shards.append(self._write({k: p.to_dict() for k, p in rows.items()}))
        if len(self._shards) > MAX_SHARDS:
            self.compact()

    def compact(self) -> None:
        if len(self._shards) <= 1:
            return
        merged = self._write({k: p.to_dict() for k, p in self._rows.items()})
        for old in self._shards:
            old.unlink(missing_ok=True)
        self._shards = [merged]

    def _write(self, rows: dict[str, Any]) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"shard-{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.folder)
        try:
            body = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
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
