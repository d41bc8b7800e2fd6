"""Whether an optional peer (an extra of pyproject.toml) is installed, at the pinned version."""

from __future__ import annotations

import importlib.metadata
import importlib.util


def installed(modules: tuple[str, ...], dist: str, version: str) -> bool:
    """True when every module is importable and distribution ``dist`` is at ``version``.

    Checked without importing the peer (importing widemem or mem0 is slow and has side effects).
    """
    if any(importlib.util.find_spec(m) is None for m in modules):
        return False
    try:
        return importlib.metadata.version(dist) == version
    except importlib.metadata.PackageNotFoundError:
        return False
