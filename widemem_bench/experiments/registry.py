"""Experiment registry: `@experiment("name")` and `get_experiment(name)`.

How to add an experiment (contract for every module in this package):

1. `widemem_bench/experiments/<name>.py` defines::

       from widemem_bench.experiments import ExperimentResult, RunContext, experiment

       @experiment("<name>", honours=(*DATA, *BATCH, "params"))
       def run(cfg: dict, ctx: RunContext) -> ExperimentResult: ...

   `honours` lists, as dotted prefixes of the composed config, the keys the experiment
   reads and acts on (bundles in `widemem_bench.harness.keys`: DATA, BATCH, REPLAY).
   Setting any other key is refused with one line before a run starts, and
   tests/test_key_coverage.py holds every honoured key to being read. A config group's
   choice (`resolver=rule`) acts only when every key the option changes is honoured;
   where a param takes the group's options instead, `choices={"resolver": "params.resolvers"}`
   names it in the refusal. `check=fn` names the experiment's own checks of its params
   (`fn(cfg)` raises a one-line ValueError): the runner calls it before the run, and
   `widemem-bench -m` on every job of a sweep before Hydra launches one, so it must be
   cheap (no model, no data read; a file's existence is fine). The run may call it again.

   `cfg` is the resolved Hydra config as a plain dict (keys: `embedder`, `dataset`,
   `decay`, `weights`, `thresholds`, `resolver`, `paths`, `seed`, `mode`, `params`, ...).
   Experiment-specific settings live under `cfg["params"]`. The function must not import
   Hydra and must write only under `ctx.output_dir`.
2. `configs/experiment/<name>.yaml` starts with `# @package _global_`, sets
   `task_name: <name>` (the registry name; also the output folder name) and puts its
   settings under `params:`; group choices go in `defaults` as `override /embedder: ...`.
3. Optionally, `widemem_bench/reports/sections/<name>.py` renders it: see
   `widemem_bench.reports.sections` (only reports/ renders; an experiment never imports it).

Modules are imported lazily: `get_experiment("x")` imports `widemem_bench.experiments.x`
when "x" is not registered yet, so registering needs no central list. The experiments
are the names of `configs/experiment/*.yaml` (the definitions a user edits or copies);
the rest of this package is machinery.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from widemem_bench.experiments.context import ExperimentResult, RunContext

ExperimentFn = Callable[[dict[str, Any], RunContext], ExperimentResult]

_EXPERIMENTS: dict[str, ExperimentFn] = {}
_HONOURS: dict[str, tuple[str, ...]] = {}
_CHOICES: dict[str, dict[str, str]] = {}
_CHECKS: dict[str, Callable[[dict[str, Any]], Any]] = {}
EXPERIMENT_CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "experiment"


def experiment(name: str, honours: Sequence[str] = ("params",),
               choices: Mapping[str, str] | None = None,
               check: Callable[[dict[str, Any]], Any] | None = None) -> Callable[[ExperimentFn], ExperimentFn]:
    """Register `fn` under `name` with the config keys it honours (dotted prefixes),
    in `choices` the list param that takes a config group's options (group -> key), and
    in `check` its cheap checks of the config (see `check_config`).

    Registering one name twice with two functions is an error.
    """

    def deco(fn: ExperimentFn) -> ExperimentFn:
        old = _EXPERIMENTS.get(name)
        if old is not None and old.__qualname__ != fn.__qualname__:
            raise ValueError(f"experiment: name {name!r} is already registered by {old.__module__}")
        _EXPERIMENTS[name] = fn
        _HONOURS[name] = tuple(honours)
        _CHOICES[name] = dict(choices or {})
        if check is not None:
            _CHECKS[name] = check
        return fn

    return deco


def honours_of(name: str) -> tuple[str, ...]:
    """The keys experiment `name` honours (imports its module on first use)."""
    get_experiment(name)
    return _HONOURS[name]


def choices_of(name: str) -> dict[str, str]:
    """Group -> the list param of experiment `name` that takes that group's options."""
    get_experiment(name)
    return _CHOICES[name]


def check_config(name: str, cfg: dict[str, Any]) -> None:
    """Experiment `name`'s own checks of the resolved config (one-line ValueError), without
    running it: a single run and every job of a sweep go through the same ones."""
    get_experiment(name)
    fn = _CHECKS.get(name)
    if fn is not None:
        fn(cfg)


def _module_name(name: str) -> str:
    return name.replace("-", "_")


def _try_import(name: str) -> None:
    mod = f"widemem_bench.experiments.{_module_name(name)}"
    try:
        importlib.import_module(mod)
    except ModuleNotFoundError as exc:
        if exc.name != mod:  # the module exists but one of its imports is missing
            raise


def available_experiments() -> list[str]:
    """Experiment names: one per `configs/experiment/<name>.yaml` (sorted)."""
    return sorted(p.stem for p in EXPERIMENT_CONFIGS.glob("*.yaml"))


def get_experiment(name: str) -> ExperimentFn:
    """The registered function for `name`, importing its module on first use."""
    if name not in _EXPERIMENTS:
        _try_import(name)
    if name not in _EXPERIMENTS:
        known = ", ".join(sorted(set(available_experiments()) | set(_EXPERIMENTS)))
        raise ValueError(f"task_name: unknown experiment {name!r} (known: {known})")
    return _EXPERIMENTS[name]
