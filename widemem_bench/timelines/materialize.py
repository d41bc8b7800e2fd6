"""Where a dataset config's timelines live, and building them once.

Plain Python (no Hydra): ``read_config`` reads ``configs/dataset/<name>.yaml`` itself,
``ensure_built`` generates and saves a set only when no complete copy exists.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.timelines.dataset import (
    Timelines,
    check_world,
    generate,
    load,
    version_name,
)
from widemem_bench.timelines.generator import GENERATOR_VERSION

CONFIG_DIR = REPO_ROOT / "configs" / "dataset"
_KEYS = ("n_users", "seed", "span_days", "questions_per_user", "start", "root")


def read_config(name: str = "timelines") -> dict[str, Any]:
    """A dataset config file as a plain dict, without Hydra (``${paths.data_dir}`` resolved
    to the repository's ``datasets/`` folder)."""
    path = CONFIG_DIR / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yaml")))
        raise ValueError(f"dataset: unknown data set {name!r} (known: {known})")
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg["root"] = str(cfg["root"]).replace("${paths.data_dir}", str(REPO_ROOT / "datasets"))
    return dict(cfg)


def settings(cfg: Mapping[str, Any]) -> dict[str, Any]:
    missing = [k for k in _KEYS if k not in cfg]
    if missing:
        raise ValueError(f"dataset config: missing key(s) {', '.join(missing)}")
    start = cfg["start"]
    if isinstance(start, dt.date) and not isinstance(start, dt.datetime):
        start = dt.datetime(start.year, start.month, start.day)
    elif isinstance(start, str):
        try:
            start = dt.datetime.fromisoformat(start)
        except ValueError as exc:
            raise ValueError(f"dataset config: start is not an ISO date: {start!r}") from exc
    root = Path(str(cfg["root"]))
    if not root.is_absolute():
        root = REPO_ROOT / root
    return {"n_users": int(cfg["n_users"]), "seed": int(cfg["seed"]),
            "span_days": int(cfg["span_days"]),
            "questions_per_user": int(cfg["questions_per_user"]), "start": start, "root": root,
            "world": check_world(cfg.get("world", "a"))}


def dataset_path(cfg: Mapping[str, Any]) -> Path:
    """Folder of the generated version a dataset config names (it may not exist yet)."""
    s = settings(cfg)
    return Path(s["root"]) / version_name(s["n_users"], s["seed"], s["span_days"],
                                          s["questions_per_user"], s["start"], s["world"])


def is_complete(path: Path, s: Mapping[str, Any]) -> bool:
    manifest = path / "manifest.json"
    if not manifest.is_file():
        return False
    m = json.loads(manifest.read_text(encoding="utf-8"))
    want = {"generator_version": GENERATOR_VERSION, "n_users": s["n_users"], "seed": s["seed"],
            "span_days": s["span_days"], "questions_per_user": s["questions_per_user"],
            "start": s["start"].isoformat(), "version": path.name}
    world = s.get("world", "a")
    # a manifest without a world predates world B: it is world A's
    return all(m.get(k) == v for k, v in want.items()) and m.get("world", "a") == world


def ensure_built(cfg: Mapping[str, Any], progress: bool = False) -> Path:
    """Build the set ``cfg`` names unless a complete one is already there; return its path."""
    s = settings(cfg)
    path = dataset_path(cfg)
    if is_complete(path, s):
        return path
    tl = generate(s["n_users"], s["seed"], span_days=s["span_days"], start=s["start"],
                  questions_per_user=s["questions_per_user"], progress=progress, world=s["world"])
    return tl.save(s["root"])


def load_from_config(cfg: Mapping[str, Any]) -> Timelines:
    """Load (building first if needed) the timelines a dataset config names."""
    return load(ensure_built(cfg))
