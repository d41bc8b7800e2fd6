"""Where a result came from: file hashes, the checkout's commit, the CPU, package versions,
the lock the environment was installed from.

One home for what records, reports, the perf benchmark, the embedder benchmark and the
external data loaders all stamp on their outputs. Standard library only, so that any
layer (embedders included) can import it, and so that the Makefile can load it from its file
before `.venv` exists (`make venv` calls `check_lock()`, `make lock` `lock_inputs_sha256()`).
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
# `make lock` writes it from pyproject.toml (these extras: what `make test` and `make bench`
# need); `make venv` installs exactly it, every file hash-checked.
LOCK_FILE = REPO_ROOT / "requirements.lock"
LOCK_EXTRAS = ("dev", "peers", "mem0")
_INPUTS_LINE = "# inputs sha256: "


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


def lock_sha256(path: Path = LOCK_FILE) -> str | None:
    """sha256 of the lock file, the one name for the exact set of installed packages; None
    when there is none (the package installed into someone's own environment)."""
    try:
        return file_sha256(path)
    except OSError:
        return None


def lock_inputs_sha256(pyproject: Path = REPO_ROOT / "pyproject.toml") -> str:
    """sha256 of what the lock is resolved from: requires-python, the dependencies and the
    `LOCK_EXTRAS` of pyproject.toml (order-free). Other pyproject edits leave it alone."""
    project = tomllib.loads(Path(pyproject).read_text())["project"]
    extras = project.get("optional-dependencies", {})
    inputs = {
        "requires-python": project.get("requires-python"),
        "dependencies": sorted(project.get("dependencies", [])),
        "extras": {name: sorted(extras.get(name, [])) for name in LOCK_EXTRAS},
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def lock_problem(lock: Path = LOCK_FILE, pyproject: Path = REPO_ROOT / "pyproject.toml") -> str | None:
    """None when `lock` was made from `pyproject`'s current dependencies; else one line
    saying what to run."""
    lock = Path(lock)
    if not lock.is_file():
        return f"{lock.name} is missing: run `make lock`"
    recorded = [ln[len(_INPUTS_LINE):].strip() for ln in lock.read_text().splitlines()
                if ln.startswith(_INPUTS_LINE)]
    if not recorded:
        return f"{lock.name} names no inputs sha256 (not made by `make lock`): run `make lock`"
    if recorded[-1] != lock_inputs_sha256(pyproject):
        return f"{lock.name} is stale: pyproject.toml's dependencies changed since it was made; run `make lock`"
    return None


def wheel_problem(lock: Path = LOCK_FILE) -> str | None:
    """None when every pin with a local version label (``torch==2.13.0+cpu``: no package
    index serves it) has its wheel in one of the lock's ``--find-links`` folders; else one
    line naming the pin and the folder. A stock CI runner has no such folder: without this,
    pip's answer is a resolver error many lines long."""
    lock = Path(lock)
    if not lock.is_file():
        return None
    lines = lock.read_text().splitlines()
    folders = [Path(ln.split(None, 1)[1].strip()) for ln in lines if ln.startswith("--find-links ")]
    for ln in lines:
        pin = ln.split("\\", 1)[0].strip()
        if "==" not in pin or "+" not in pin or pin.startswith("#"):
            continue
        name, version = pin.split("==", 1)
        wheel = f"{name.replace('-', '_')}-{version}-*.whl"
        if not any(sorted(f.glob(wheel)) for f in folders if f.is_dir()):
            where = ", ".join(map(str, folders)) or "no --find-links folder"
            return (f"{lock.name} pins {pin}, a local build no package index serves, and {where} holds no "
                    f"{wheel}: put that wheel there (the lock holds its sha256)")
    return None


def check_lock(lock: Path = LOCK_FILE) -> int:
    """`make venv`'s first step: 0 when the lock is current and its local wheels are on disk,
    else 1 and one line on stderr."""
    problem = lock_problem(lock) or wheel_problem(lock)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    return 0


def tool_command(name: str, cfg: dict[str, Any], prefix: str = "", every: bool = False) -> str:
    """The front-door command that gives tool `name` the config `cfg`: the keys whose value
    differs from configs/tool/<name>.yaml (`every`: all its keys, for a report whose figures
    they all set), in that file's order (what a report prints)."""
    import yaml  # not at import time: check_lock runs before the venv exists

    base = yaml.safe_load((REPO_ROOT / "configs" / "tool" / f"{name}.yaml").read_text()) or {}

    def text(v: Any) -> str:
        return "[" + ",".join(map(str, v)) + "]" if isinstance(v, list) else str(v)

    keys = [f"{k}={text(cfg[k])}" for k in base if k in cfg and (every or cfg[k] != base[k]) and cfg[k] not in ({}, None)]
    return " ".join([*filter(None, [prefix]), "widemem-bench", name, *keys])
