"""Build the data sets dataset configs name, if they are missing or stale.

    widemem-bench data                              # timelines, world_b, world_c, world_n (make data)
    widemem-bench data configs=[timelines_small]
    widemem-bench data configs=[world_b] n_users=50 seed=3 out=/tmp/wb

Idempotent: a folder whose manifest has the same settings and generator version is left
alone; a missing or stale one is (re)built. Prints each path.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from widemem_bench.timelines.dataset import generate
from widemem_bench.timelines.materialize import dataset_path, is_complete, read_config, settings

# What `make data` builds: world A (the timelines), world B (evaluation-only), world C and
# world N (development).
DEFAULT_CONFIGS: tuple[str, ...] = ("timelines", "world_b", "world_c", "world_n")


def build_one(name: str, n_users: int | None = None, seed: int | None = None,
              out: str | None = None, force: bool = False) -> Path:
    cfg = read_config(name)
    if n_users is not None:
        cfg["n_users"] = n_users
    if seed is not None:
        cfg["seed"] = seed
    if out is not None:
        cfg["root"] = str(Path(out).resolve())
    s = settings(cfg)
    path = dataset_path(cfg)
    if force or not is_complete(path, s):
        t0 = time.perf_counter()
        tl = generate(s["n_users"], s["seed"], span_days=s["span_days"], start=s["start"],
                      questions_per_user=s["questions_per_user"], progress=True, world=s["world"])
        path = tl.save(s["root"])
        print(f"built {path} in {time.perf_counter() - t0:.1f} s "
              f"({len(tl.events)} events, {len(tl.questions)} questions)")
    else:
        print(f"{name} already built: {path}")
    return path


def tool(cfg: dict[str, Any]) -> int:
    """Build each of `configs` unless it is complete (`force`: rebuild); print each path."""
    n_users, seed, out = _count(cfg, "n_users"), _count(cfg, "seed"), cfg.get("out")
    for name in cfg["configs"]:
        build_one(str(name), n_users, seed, None if out is None else str(out), bool(cfg["force"]))
    return 0


def _count(cfg: dict[str, Any], key: str) -> int | None:
    # null means "the config's": the front door cannot type it, so say the key here
    v = cfg.get(key)
    if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
        raise ValueError(f"{key}: expected an integer, got {v!r}")
    return v
