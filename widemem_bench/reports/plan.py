"""What `make bench` runs and how the report reads it back: the plan of experiments
(`plan`, `command`) and the report's input (`sources_for`) and writing (`render_report`).
Here in reports/ so that both `bench` (which runs the plan) and `reports.check` (which
re-renders from the same records) read one plan without reports/ importing `bench`."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT

DEFAULT_EMBEDDERS = ("minilm-l6", "minilm-l6-int8", "minilm-l3", "bge-small", "tfidf")
# (experiment, swept over the embedder set?) in run order; the cheap ones reuse the cache
# the first one fills.
CORE = (("compare_embedders", True), ("calibrate", True), ("sweep_thresholds", True),
        ("sweep_decay", False), ("sweep_weights", False))
OPTIONAL = ("contradiction", "ymyl_decay", "frustration", "locomo", "peer", "perf", "resolver_transfer",
            "transfer")


def plan(embedders: list[str], only: set[str] | None, skip: set[str]) -> list[tuple[str, list[str]]]:
    """(experiment, overrides) for every experiment to run, in order."""
    steps: list[tuple[str, list[str]]] = []
    for name, per_embedder in CORE:
        steps.append((name, [f"embedder={','.join(embedders)}"] if per_embedder else []))
        if name == "calibrate":   # its holdout figures are asked for (a plain run reads validation only)
            steps[-1][1].append("params.holdout=true")
    for name in OPTIONAL:
        if (REPO_ROOT / "configs" / "experiment" / f"{name}.yaml").is_file():
            steps.append((name, []))
    known = [n for n, _ in steps]
    for key, names in (("only", only or set()), ("skip", skip)):
        bad = sorted(set(names) - set(known))
        if bad:  # a name that selects nothing would run (and render) nothing without a word
            raise ValueError(f"{key}: {', '.join(bad)}: not an experiment of the bench plan; known: {', '.join(known)}")
    return [(n, o) for n, o in steps if (only is None or n in only) and n not in skip]


def command(name: str, overrides: list[str]) -> list[str]:
    """The user-facing command (what the report prints; `-m`: the experiment, never a tool)."""
    return ["widemem-bench", "-m", name, *overrides]


def sources_for(output_dir: Path, embedders: list[str], steps: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """The report's input: each planned experiment's complete runs under ``output_dir``."""
    from widemem_bench.reports.writer import load_source

    swept = {n for n, per in CORE if per}
    return {
        name: load_source(name, output_dir / name / "multiruns", shlex.join(command(name, overrides)),
                          embedders if name in swept else None,
                          None if name in swept else ["default"])
        for name, overrides in steps
    }


def render_report(output_dir: Path, reports_dir: Path, embedders: list[str],
                  steps: list[tuple[str, list[str]]], wall_seconds: float | None = None) -> Path:
    """Write reports_dir/README.md (+ figures, fragments) from the run records alone."""
    from widemem_bench.reports.sections import get_report_sections
    from widemem_bench.reports.writer import write_report

    return write_report(reports_dir, sources_for(output_dir, embedders, steps), embedders=embedders,
                        extra_sections=get_report_sections(), wall_seconds=wall_seconds)
