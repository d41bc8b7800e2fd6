"""The resolved run config of a hash-test experiment on timelines_small, as Hydra would pass it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = {
    "seed": 0, "mode": "balanced", "age_from": "clock", "memory_text": "fact_stripped",
    "embedder": {"name": "hash-test"},
    "dataset": {"name": "timelines_small", "n_users": 30, "seed": 0, "span_days": 365,
                "questions_per_user": 40, "start": "2025-01-06", "root": None},
    "decay": {"function": "exponential", "rate": 0.01},
    "weights": {"similarity": 0.5, "importance": 0.3, "recency": 0.2},
    "thresholds": {"source": "widemem", "high": None, "moderate": None, "low": None},
    "resolver": {"name": "append", "candidate_k": 5, "similarity_floor": None},
    "paths": {"data_dir": str(ROOT / "datasets"), "cache_dir": None},
    "progress": False, "force": False,
}


def tiny_cfg(tmp_path: Path, n_users: int, params: dict) -> dict:
    """A hash-test run over a tiny timeline built under ``tmp_path`` (experiment end-to-end tests)."""
    return {
        "embedder": {"name": "hash-test"},
        "dataset": {"name": "tiny", "n_users": n_users, "seed": 0, "span_days": 365,
                    "questions_per_user": 20, "root": str(tmp_path / "data")},
        "paths": {"cache_dir": str(tmp_path / "cache")},
        "params": params,
    }


def run_and_render(name: str, cfg: dict, out: Path) -> tuple[dict, str]:
    """Run experiment `name` through the runner (record + tables on disk), then render its
    report section from that record, as `make bench` does: (record, section markdown)."""
    import pandas as pd

    from widemem_bench.experiments.runner import execute
    from widemem_bench.reports.sections import get_report_sections

    run_dir = out / "run"
    rec = execute({"seed": 0, "progress": False, **cfg, "task_name": name}, run_dir)
    assert rec is not None
    rec["run_dir"] = str(run_dir)
    section = dict(get_report_sections())[name]
    return rec, section(pd.DataFrame(), [rec], out / "reports" / "figures")
