"""`widemem-bench`: the one front door.

    widemem-bench --help                          this overview
    widemem-bench <experiment> [key=value ...]    run an experiment (Hydra; -m sweeps)
    widemem-bench <experiment> --help             what it measures, the keys it honours
    widemem-bench run <experiment> [--help|key=value ...]   the same (calibrate, perf: the experiment)
    widemem-bench regression|perf|aggregate|bench|calibration_report ARGS   the tools (each has --help)

`python -m widemem_bench.run experiment=<name>` keeps working; this is the same entry.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

# name -> (module, one line). Each module exposes `main(argv: list[str] | None) -> int`.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "calibration_report": ("widemem_bench.reports.sections.calibration",
                           "rewrite reports/calibration.md from the calibration files (make calibrate)"),
    "regression": ("widemem_bench.regression", "the regression gate (write=REASON blesses; adapter=<name> gates a peer)"),
    "perf": ("widemem_bench.experiments.perf", "the full speed benchmark (reports/perf.md)"),
    "aggregate": ("widemem_bench.aggregate", "gather a sweep's run records into results.parquet"),
    "bench": ("widemem_bench.bench", "run every experiment of `make bench` and write reports/"),
}
PROG = "widemem-bench"


def _experiments() -> list[str]:
    from widemem_bench.experiments import available_experiments

    return available_experiments()


def _first_line(module: str) -> str:
    mod = importlib.import_module(module)
    doc = (mod.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def overview() -> str:
    lines = [__doc__.strip().splitlines()[0], "", "usage:",
             *[f"  {x.strip()}" for x in __doc__.strip().splitlines()[2:7]], "", "experiments:"]
    for name in _experiments():
        lines.append(f"  {name:18s} {_experiment_summary(name)}")
    lines += ["", "tools:"]
    lines += [f"  {name:18s} {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += ["", "Config groups (key=option): embedder, dataset, decay, weights, thresholds, resolver,",
              "engine; `weights=0.9,0.05,0.05` sets the three weights. A key the experiment does",
              "not honour is refused with one line before anything runs."]
    return "\n".join(lines)


def _experiment_summary(name: str) -> str:
    path = Path(__file__).resolve().parents[1] / "configs" / "experiment" / f"{name}.yaml"
    for line in path.read_text().splitlines()[1:]:
        if line.startswith("#"):
            return line.lstrip("# ").split(":")[0].strip()
    return ""


def experiment_help(name: str) -> str:
    """What experiment `name` measures, the keys it honours and its params with defaults."""
    from omegaconf import OmegaConf

    from widemem_bench.experiments.registry import get_experiment, honours_of

    fn = get_experiment(name)
    doc = (sys.modules[fn.__module__].__doc__ or "").strip().split("\n\n")[0]
    path = Path(__file__).resolve().parents[1] / "configs" / "experiment" / f"{name}.yaml"
    node = OmegaConf.to_container(OmegaConf.load(path)).get("params") or {}  # type: ignore[union-attr]
    lines = [f"usage: {PROG} {name} [key=value ...]     ({PROG} -m ... or {name} -m key=a,b sweeps)",
             "", doc, "", "honours: " + ", ".join(honours_of(name)),
             "(plus task_name, seed, progress, force, paths.*, hydra.*; any other key is refused)",
             "", "params (defaults from configs/experiment/" + f"{name}.yaml):"]
    lines += [f"  params.{k}={v!r}" for k, v in node.items()]  # type: ignore[union-attr]
    return "\n".join(lines)


def _run_experiment(argv: Sequence[str]) -> int:
    from widemem_bench import run

    sys.argv = [f"{PROG}", *argv]
    run.cli()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(overview())
        return 0
    head, rest = args[0], args[1:]
    if head in SUBCOMMANDS:
        tool: Callable[[list[str] | None], int] = importlib.import_module(SUBCOMMANDS[head][0]).main
        try:
            return int(tool(rest) or 0)
        except ValueError as exc:  # bad arguments: one line, as everywhere else
            print(f"error: {head}: {exc}", file=sys.stderr)
            return 2
    if head == "run":
        names = [a for a in rest if not a.startswith("-")][:1]
        if not names or names[0] not in _experiments():
            return _run_experiment(rest)
        # `run [-m] calibrate ...`: the experiment, not the tool of the same name
        head, rest = names[0], [a for a in rest if a != names[0]]
    if head in _experiments():
        if "--help" in rest or "-h" in rest:
            print(experiment_help(head))
            return 0
        flags = [a for a in rest if a in ("-m", "--multirun")]
        return _run_experiment([*flags, f"experiment={head}", *[a for a in rest if a not in flags]])
    if "=" in head or head.startswith("-"):
        return _run_experiment(args)  # Hydra syntax without the `run` word
    names_known = list(dict.fromkeys([*_experiments(), *SUBCOMMANDS, "run"]))  # calibrate, perf: both kinds
    close = difflib.get_close_matches(head, names_known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    print(f"error: {head}: unknown command or experiment; {hint}known: {', '.join(sorted(names_known))}",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
