"""Where a result came from: file hashes, the checkout's commit, the CPU, package versions.

One home for what records, reports, the perf benchmark, the embedder benchmark and the
external data loaders all stamp on their outputs. Standard library only, so that any
layer (embedders included) can import it.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=1)
def git_info() -> dict[str, Any]:
    """Commit sha and dirty flag (tracked files only) of the checkout; None outside git."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
            timeout=10, check=True,
        ).stdout.strip()
        dirty = bool(subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return {"sha": None, "dirty": None}
    return {"sha": sha, "dirty": dirty}


def cpu_model() -> str | None:
    """The CPU's model name (Linux /proc/cpuinfo), else what platform reports, else None."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def package_versions(names: Iterable[str]) -> dict[str, str | None]:
    """Installed version per distribution name; None when it is not installed."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
