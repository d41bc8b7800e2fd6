"""Shared test setup: offline model loading, one thread per process (2-core machine)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The tests read the measuring splits to measure (widemem_bench.sealed): no ledger line.
os.environ["WIDEMEM_BENCH_PURPOSE"] = "measure"
