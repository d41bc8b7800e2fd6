"""Build the data sets dataset configs name, if they are missing or stale.

    python -m widemem_bench.timelines.build                       # timelines, world_b, world_c, world_n (make data)
    python -m widemem_bench.timelines.build --config timelines_small
    python -m widemem_bench.timelines.build --config world_b --n-users 50 --seed 3 --out /tmp/wb

Idempotent: a folder whose manifest has the same settings and generator version is left
alone; a missing or stale one is (re)built. Prints each path.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--config", action="append", default=None,
                    help="dataset config name in configs/dataset/ (repeatable; default: "
                         + ", ".join(DEFAULT_CONFIGS) + ")")
    ap.add_argument("--n-users", type=int, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", default=None, help="root folder (the version folder goes inside)")
    ap.add_argument("--force", action="store_true", help="rebuild even if complete")
    args = ap.parse_args(argv)
    try:
        for name in args.config or DEFAULT_CONFIGS:
            build_one(name, args.n_users, args.seed, args.out, args.force)
    except ValueError as exc:  # bad config or argument: one line, nothing half-written
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
