"""The data set of a run: the configured timelines, built on first use, with version + sha256."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import sys
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT


def dataset_sha256(path: Path) -> str:
    """sha256 over the data set's parquet files (sorted relative paths and bytes)."""
    h = hashlib.sha256()
    for p in sorted(Path(path).rglob("*.parquet")):
        h.update(str(p.relative_to(path)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def dataset_root(ds: dict[str, Any], paths: dict[str, Any]) -> Path:
    root = ds.get("root") or Path(paths.get("data_dir") or REPO_ROOT / "datasets") / "timelines"
    root = Path(root)
    return root if root.is_absolute() else REPO_ROOT / root


def load_dataset(ds: dict[str, Any], paths: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(Timelines, meta) for a `dataset` config node; generates and saves it when missing.

    A file lock serialises the build, so parallel jobs of one sweep build it once.
    """
    from widemem_bench import timelines as tl

    if not ds:
        raise ValueError("dataset: this experiment needs a data set (dataset=timelines)")
    opts: dict[str, Any] = {k: int(ds[k]) for k in ("span_days", "questions_per_user")
                            if ds.get(k) is not None}
    if ds.get("start"):
        opts["start"] = dt.datetime.fromisoformat(str(ds["start"]))
    # which world: "a" (the timelines), "b" (world B, evaluation-only), "c" (world C, development)
    opts["world"] = tl.check_world(ds.get("world", "a"))
    n_users, seed = int(ds["n_users"]), int(ds["seed"])
    root = dataset_root(ds, paths)
    version = tl.version_name(n_users, seed, **opts)
    path = root / version
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (path / "manifest.json").is_file():
            tl.generate(n_users, seed, **opts).save(root)
        try:
            data = tl.load(path)
        except (KeyError, ValueError) as exc:
            # Built by an older generator of the same version name: rebuild, say so once.
            print(f"warning: dataset {path.name} unreadable ({exc!r}); rebuilding", file=sys.stderr)
            tl.generate(n_users, seed, **opts).save(root)
            data = tl.load(path)
        fcntl.flock(lock, fcntl.LOCK_UN)
    meta = {"name": ds.get("name"), "version": version, "path": str(path),
            "sha256": dataset_sha256(path), "generator_version": tl.GENERATOR_VERSION,
            "n_users": n_users, "seed": seed, "world": opts["world"]}
    return data, meta


def load_world(dataset: str = "timelines") -> tuple[Any, dict[str, Any]]:
    """(Timelines, meta) of a world by dataset config name (`configs/dataset/<name>.yaml`),
    built on first use."""
    from widemem_bench.timelines.materialize import read_config

    return load_dataset(read_config(dataset), {})
