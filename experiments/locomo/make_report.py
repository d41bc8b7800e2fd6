"""Run the LoCoMo experiment for a few embedders and write reports/locomo.md + figures.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/locomo/make_report.py \
        --embedders minilm-l6 bge-small --out reports

Embeddings go through the registry's on-disk cache, so a re-run only recomputes scores.
The data path defaults to ../shared/data/locomo10.json (CC BY-NC 4.0, never copied here).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pandas as pd

from widemem_bench.embedders import load_embedder
from widemem_bench.experiments.locomo import run_locomo, sensitivity_table
from widemem_bench.external.locomo import load_locomo
from widemem_bench.reports.sections.locomo import write_locomo_report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedders", nargs="+", default=["minilm-l6"])
    ap.add_argument("--out", type=Path, default=Path("reports"))
    ap.add_argument("--memory-form", default="turn", choices=["turn", "rule"])
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--locomo-path", default=None)
    ap.add_argument("--tables", type=Path, default=None, help="also save every table as parquet here")
    ap.add_argument("--compare-forms", action="store_true",
                    help="also run the first embedder on rule-extracted facts and add a turn-vs-facts table")
    ap.add_argument("--sensitivity", nargs="*", default=None,
                    help="embedders whose ownership settings grid goes into the report (no value: the first)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    params = {"embedders": args.embedders, "memory_form": args.memory_form, "n_boot": args.n_boot,
              "locomo_path": args.locomo_path}
    res = run_locomo({"seed": 0, "params": params})
    if args.sensitivity is not None:
        data = load_locomo(args.locomo_path)
        names = args.sensitivity or args.embedders[:1]
        res["tables"]["sensitivity"] = pd.concat(
            [sensitivity_table(data, load_embedder(n)) for n in names], ignore_index=True
        )
    if args.compare_forms:
        other = "rule" if args.memory_form == "turn" else "turn"
        alt = run_locomo({"seed": 0, "params": {**params, "embedders": args.embedders[:1], "memory_form": other}})
        first = res["tables"]["auroc"]
        first = first[first["embedder"] == args.embedders[0]].assign(memory_form=args.memory_form)
        res["tables"]["auroc_forms"] = pd.concat(
            [first, alt["tables"]["auroc"].assign(memory_form=other)], ignore_index=True
        )
    write_locomo_report(res, args.out)
    if args.tables:
        args.tables.mkdir(parents=True, exist_ok=True)
        for name, df in res["tables"].items():
            df.to_parquet(args.tables / f"{name}.parquet", index=False)
    au = res["tables"]["auroc"]
    print(au[["embedder", "method", "auroc", "auroc_lo", "auroc_hi", "adv_moderate_plus"]].to_string(index=False))
    print(f"wrote {args.out / 'locomo.md'} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
