"""Build the timelines set a dataset config names, if it is missing.

    python -m widemem_bench.timelines.build                       # configs/dataset/timelines.yaml
    python -m widemem_bench.timelines.build --config timelines_small
    python -m widemem_bench.timelines.build --n-users 50 --seed 3 --out /tmp/tl

Idempotent: a folder with a manifest of the same settings is left alone. Prints the path.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from widemem_bench.timelines.dataset import generate
from widemem_bench.timelines.materialize import dataset_path, is_complete, read_config, settings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--config", default="timelines", help="dataset config name in configs/dataset/")
    ap.add_argument("--n-users", type=int, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", default=None, help="root folder (the version folder goes inside)")
    ap.add_argument("--force", action="store_true", help="rebuild even if complete")
    args = ap.parse_args(argv)
    cfg = read_config(args.config)
    if args.n_users is not None:
        cfg["n_users"] = args.n_users
    if args.seed is not None:
        cfg["seed"] = args.seed
    if args.out is not None:
        cfg["root"] = str(Path(args.out).resolve())
    path = dataset_path(cfg)
    if args.force or not is_complete(path, settings(cfg)):
        t0 = time.perf_counter()
        s = settings(cfg)
        tl = generate(s["n_users"], s["seed"], span_days=s["span_days"], start=s["start"],
                      questions_per_user=s["questions_per_user"], progress=True)
        path = tl.save(s["root"])
        print(f"built {path} in {time.perf_counter() - t0:.1f} s "
              f"({len(tl.events)} events, {len(tl.questions)} questions)")
    else:
        print(f"timelines already built: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
