"""How much the `ownership` score depends on its two research-chosen settings.

AUROC (answerable 1-4 vs adversarial 5) over a grid of softmax temperature x BM25 weight,
with the embedder's cached embeddings:

    OMP_NUM_THREADS=1 .venv/bin/python experiments/locomo/sensitivity.py --embedder minilm-l6
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from widemem_bench.embedders import load_embedder
from widemem_bench.experiments.locomo import sensitivity_table
from widemem_bench.external.locomo import load_locomo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="minilm-l6")
    ap.add_argument("--temperatures", type=float, nargs="+", default=[0.02, 0.05, 0.1, 0.2, 0.5])
    ap.add_argument("--bm25-weights", type=float, nargs="+", default=[0.0, 0.01, 0.03, 0.05, 0.1])
    ap.add_argument("--locomo-path", default=None)
    args = ap.parse_args()
    table = sensitivity_table(load_locomo(args.locomo_path), load_embedder(args.embedder),
                              args.temperatures, args.bm25_weights)
    grid = table.pivot(index="bm25_weight", columns="temperature", values="auroc")
    print(f"ownership AUROC, {args.embedder}: rows BM25 weight, columns softmax temperature")
    print(grid.round(3).to_string())


if __name__ == "__main__":
    main()
