"""Shared test setup: offline model loading, one thread per process (2-core machine)."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The tests read the measuring splits to measure (widemem_bench.sealed): no ledger line.
os.environ["WIDEMEM_BENCH_PURPOSE"] = "measure"

# The committed seal ledger: a test that reads a split for another purpose sets
# WIDEMEM_BENCH_LEDGER to a temp file; one that appends here fails at teardown.
LEDGER = Path(__file__).resolve().parents[1] / "reports" / "seal_ledger.jsonl"


def _stamp(p: Path) -> tuple[int, int] | None:
    return (p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else None


@pytest.fixture(autouse=True)
def _committed_ledger_untouched() -> Iterator[None]:
    before = _stamp(LEDGER)
    yield
    assert _stamp(LEDGER) == before, "the test wrote to reports/seal_ledger.jsonl (set WIDEMEM_BENCH_LEDGER)"
