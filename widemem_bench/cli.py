"""`widemem-bench`: the one front door.

    widemem-bench --help                          this overview
    widemem-bench <experiment> [key=value ...]    run an experiment (Hydra; -m sweeps)
    widemem-bench <experiment> --help             what it measures, the keys it honours
    widemem-bench run <experiment> [--help|key=value ...]   the same (calibrate, perf: the experiment)
    widemem-bench <tool> [key=value ...]          a tool; `widemem-bench <tool> --help` lists its keys

A tool's keys and defaults are configs/tool/<tool>.yaml, composed with Hydra's compose API
from Hydra overrides (`key=value`, lists as `key=[a,b]` or `key=a,b`). This module is the
only place that reads the command line; every tool is a function of the composed config.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from widemem_bench.sealed import COMMAND_ENV  # sealed.current_purpose names it for an ad hoc read

PROG = "widemem-bench"
CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
TOOL_DIR = CONFIG_DIR / "tool"
MULTIRUN = ("-m", "--multirun")


@dataclass(frozen=True)
class Tool:
    target: str            # "module:function"; the function takes the composed config (a dict)
    summary: str
    raw: bool = False      # takes its own key=value list instead (regression: `main(argv)`, a free-text write=REASON)
    # An open key (default `{}` in its YAML) -> "module:NAME" of the code's defaults its sub-keys take.
    schemas: tuple[tuple[str, str], ...] = ()


TOOLS: dict[str, Tool] = {
    "calibration_report": Tool("widemem_bench.reports.sections.calibration:tool",
                               "rewrite reports/calibration.md from the calibration files (make calibrate)"),
    "regression": Tool("widemem_bench.regression:main", "the regression gate (write=REASON blesses; adapter=<name> gates a peer)", raw=True),
    "perf": Tool("widemem_bench.reports.perf_tools:perf_tool", "the full speed benchmark (reports/perf.md)",
                 schemas=(("params", "widemem_bench.experiments.perf:DEFAULTS"),)),
    "perf_v3": Tool("widemem_bench.reports.perf_tools:perf_v3_tool", "answerability v3's cost per search and add (its block of reports/perf.md)"),
    "aggregate": Tool("widemem_bench.aggregate:tool", "gather a sweep's run records into results.parquet"),
    "bench": Tool("widemem_bench.bench:tool", "run every experiment of `make bench` and write reports/"),
    "check_report": Tool("widemem_bench.reports.check:tool", "re-render reports/ from the run records, diff it against the committed one"),
    "data": Tool("widemem_bench.timelines.build:tool", "build the data sets (make data)"),
    "bench_embedders": Tool("widemem_bench.embedders.bench:tool", "embedder throughput and cache times (reports/embedders.md)"),
    "parse_bench": Tool("widemem_bench.perf.parse:tool", "spaCy parse throughput, cold and cached"),
    "mutations": Tool("widemem_bench.mutations:tool", "does the regression gate fail on real scoring changes (reports/mutations.md)"),
    "fit_v2": Tool("widemem_bench.answerability.fit:tool", "fit answerability v2 on world A's train split",
                   schemas=(("targets", "widemem_bench.answerability.fit:TARGETS"),)),
    "fit_v3": Tool("widemem_bench.answerability.fit_v3:tool", "fit answerability v3 on the development worlds"),
    "answer_cross": Tool("widemem_bench.answerability.cross:tool",
                         "build answerability v4's cross-encoder and its int8 copy (cached by sha256)"),
    "fit_v4": Tool("widemem_bench.answerability.fit_v4:tool", "fit answerability v4 on the development worlds"),
    "resolver_pair": Tool("widemem_bench.engine.pair_model:tool",
                          "fit the structure resolver's pair scorer on development pairs (engine/files/pair_model.json)"),
    "resolver_cross": Tool("widemem_bench.answerability.pair_cross:tool",
                           "build the pair resolver's cross-encoder and its int8 copy, write engine/files/pair_cross.json"),
    "resolver_fit": Tool("widemem_bench.engine.structure_fit:tool", "fit the structure resolver's frame table on development data"),
    "transfer_report": Tool("widemem_bench.experiments.transfer:tool", "the transfer table for one embedder (reports/transfer.md)"),
    "outside_report": Tool("widemem_bench.experiments.outside:tool", "the blind outside answer sets (reports/outside.md)"),
    "outside_updates": Tool("widemem_bench.evaluation.outside:tool", "the outside update scenarios per resolver"),
    "world_n_hardness": Tool("widemem_bench.experiments.world_n_hardness:tool", "Youden J of the default engine on world N, per split"),
    "widemem_fixture": Tool("widemem_bench.external.widemem_fixture:tool", "widemem's own fixture: recall, negatives, calibration"),
}


class UsageError(ValueError):
    """Bad command-line input: one line, exit 2, nothing run."""


# --------------------------------------------------------------------------- overview, help

def _experiments() -> list[str]:
    from widemem_bench.experiments import available_experiments

    return available_experiments()


def overview() -> str:
    doc = (__doc__ or "").strip().splitlines()
    lines = [doc[0], "", "usage:", *[f"  {x.strip()}" for x in doc[2:7]], "", "experiments:"]
    lines += [f"  {name:18s} {_experiment_summary(name)}" for name in _experiments()]
    lines += ["", "tools:"]
    lines += [f"  {name:18s} {tool.summary}" for name, tool in TOOLS.items()]
    lines += ["", "Config groups (key=option): embedder, dataset, decay, weights, thresholds, resolver,",
              "engine, adapter; `weights=0.9,0.05,0.05` sets the three weights. A key the experiment or tool",
              "does not read is refused with one line before anything runs (exit 2)."]
    return "\n".join(lines)


def _experiment_summary(name: str) -> str:
    path = CONFIG_DIR / "experiment" / f"{name}.yaml"
    comments = [ln.lstrip("# ").strip() for ln in path.read_text().splitlines()[1:3] if ln.startswith("#")]
    # The summary runs to the first colon, which may be on the comment's second line.
    first = comments[0] if comments else ""
    text = first if ":" in first or len(comments) < 2 else f"{first} {comments[1]}"
    return text.split(":")[0].strip()


def experiment_help(name: str) -> str:
    """What experiment `name` measures, the keys it honours and its params with defaults."""
    from omegaconf import OmegaConf

    from widemem_bench.experiments.registry import get_experiment, honours_of

    fn = get_experiment(name)
    doc = (sys.modules[fn.__module__].__doc__ or "").strip().split("\n\n")[0]
    path = CONFIG_DIR / "experiment" / f"{name}.yaml"
    node = OmegaConf.to_container(OmegaConf.load(path)).get("params") or {}  # type: ignore[union-attr]
    lines = [f"usage: {PROG} {name} [key=value ...]     ({PROG} -m {name} key=a,b ... sweeps)",
             "", doc, "", "honours: " + ", ".join(honours_of(name)),
             "(plus task_name, seed, progress, force, paths.*, hydra.*; any other key is refused)"]
    groups = group_lines(honours_of(name))
    if groups:
        lines += ["", "config groups (group=<option>, options from configs/<group>/):", *groups]
    lines += ["", "params (defaults from configs/experiment/" + f"{name}.yaml):"]
    lines += [f"  params.{k}={v!r}" for k, v in node.items()]  # type: ignore[union-attr]
    return "\n".join(lines)


def group_lines(honours: Sequence[str]) -> list[str]:
    """The options of every config group an experiment honours; for `adapter` also the keys
    of a memory system from outside the package (README, "Adding a memory system")."""
    from widemem_bench.run import FILE_GROUPS

    lines = []
    for group in (h for h in honours if h in FILE_GROUPS):
        options = sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))
        if group != "adapter":
            lines.append(f"  {group}=<option>: {', '.join(options)}")
            continue
        from widemem_bench.peers.adapters import OPTIONS, plugin_names

        plugins = plugin_names()
        lines += [f"  adapter=<name>: {', '.join(options)}" + (f"; installed entry points: {', '.join(plugins)}"
                                                              if plugins else "")
                  + " (an entry point of group widemem_bench.adapters is a name too)",
                  "  adapter.factory=<package.module:Class>: a memory system that is not packaged, "
                  "called as Class(embedder, **options)",
                  "  adapter.options.<key>=<value>: the chosen adapter's options; built in: "
                  + "; ".join(f"{n}: {', '.join(sorted(OPTIONS[n]))}" for n in options if n in OPTIONS)
                  + "; an outside one: the keywords its factory takes"]
    return lines


def _target(tool: Tool) -> Callable[..., Any]:
    module, _, func = tool.target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), func)
    return fn


def tool_help(name: str) -> str:
    """The tool's docstring and its keys with their defaults (configs/tool/<name>.yaml)."""
    tool = TOOLS[name]
    module = sys.modules.get(tool.target.split(":")[0]) or importlib.import_module(tool.target.split(":")[0])
    doc = (getattr(_target(tool), "__doc__", None) or module.__doc__ or tool.summary).strip()
    lines = [f"usage: {PROG} {name} [key=value ...]", "", doc, "",
             f"keys (defaults from configs/tool/{name}.yaml; ??? = required; lists as key=[a,b] or key=a,b):"]
    for line in (TOOL_DIR / f"{name}.yaml").read_text().splitlines():
        m = re.match(r"^([A-Za-z_]\w*):\s?(.*)$", line)
        if m:
            lines.append(f"  {m.group(1)}={m.group(2)}")
        elif line.startswith(" ") and line.strip():
            lines.append(f"  {line}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- tool configs

def tool_defaults(name: str) -> dict[str, Any]:
    from omegaconf import OmegaConf

    node = OmegaConf.to_container(OmegaConf.load(TOOL_DIR / f"{name}.yaml"))
    assert isinstance(node, dict)
    return {str(k): v for k, v in node.items()}


_KINDS: dict[type, str] = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
                           list: "a list, e.g. [a,b]"}


def _fits(value: Any, default: Any) -> bool:
    if default is None or default == "???":
        return not isinstance(value, dict)
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, str):
        return isinstance(value, (str, int, float)) and value is not None
    if isinstance(default, list):
        return isinstance(value, list)
    return True


def tool_overrides(name: str, args: Sequence[str]) -> list[str]:
    """The overrides to compose, each checked against the tool's keys and their types.

    Parsed by Hydra's override parser; UsageError (one line naming the key and what is
    accepted) for an unknown key, a wrong type, a sweep, or text that is not an override.
    A tool runs once, so `key=a,b` is the list [a,b]. A key whose default is a mapping
    (``{}``) is open: its sub-keys are the tool's to check.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep, Override
    from hydra.errors import HydraException

    defaults = tool_defaults(name)
    accepted = ", ".join(defaults)
    parser = OverridesParser.create()
    out: list[str] = []
    for arg in args:
        try:
            ov = parser.parse_override(arg)
        except HydraException:
            raise UsageError(f"{arg!r} is not key=value (keys: {accepted})") from None
        key = ov.key_or_group
        top, _, sub = key.partition(".")
        default = defaults.get(top, KeyError)
        if default is KeyError or (sub and not isinstance(default, dict)):
            close = difflib.get_close_matches(key, list(defaults), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(f"{key}: not a key of {name}; {hint}accepted: {accepted}")
        if ov.is_delete():
            raise UsageError(f"{key}: a tool's key cannot be deleted; set it instead (default {default!r})")
        parsed = ov.value()
        if isinstance(parsed, ChoiceSweep) and parsed.simple_form:
            value: Any = list(parsed.list)  # a tool runs once: `key=a,b` is the list [a,b], never a sweep
        elif ov.is_sweep_override():
            raise UsageError(f"{key}: a tool runs once: one value or a list, not a sweep ({arg})")
        else:
            value = [parsed] if isinstance(default, list) and not isinstance(parsed, list) else parsed
        text = Override._get_value_element_as_str(value)  # Hydra's own quoting
        if isinstance(default, dict) and not sub:
            raise UsageError(f"{key}: set its keys one by one, e.g. {key}.<key>=value")
        if isinstance(default, dict):
            _check_open(name, top, sub, value, text)
            out.append(f"++{key}={text}")
            continue
        if not _fits(value, default):
            kind = _KINDS.get(type(default), type(default).__name__)
            raise UsageError(f"{key}: expected {kind}, got {text!r}")
        out.append(f"{key}={text}")
    return out


def _check_open(name: str, top: str, sub: str, value: Any, text: str) -> None:
    """A sub-key of an open key, against the code's defaults the tool names for it."""
    target = dict(TOOLS[name].schemas).get(top)
    if target is None:
        return
    module, _, attr = target.partition(":")
    schema: dict[str, Any] = getattr(importlib.import_module(module), attr)
    head = sub.split(".", 1)[0]
    if head not in schema:
        raise UsageError(f"{top}.{sub}: not a key of {name}'s {top}; accepted: {', '.join(schema)}")
    if "." not in sub and not _fits(value, schema[head]):
        kind = _KINDS.get(type(schema[head]), type(schema[head]).__name__)
        raise UsageError(f"{top}.{sub}: expected {kind}, got {text!r}")


def compose_tool(name: str, args: Sequence[str]) -> dict[str, Any]:
    """The tool's config: configs/tool/<name>.yaml with `args` applied (Hydra's compose API)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    overrides = tool_overrides(name, args)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(TOOL_DIR), version_base="1.3"):
            cfg = compose(config_name=name, overrides=overrides)
    finally:
        GlobalHydra.instance().clear()
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        raise UsageError(f"{missing[0]}: required (e.g. {missing[0]}=...); see {PROG} {name} --help")
    plain = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(plain, dict)
    defaults = tool_defaults(name)
    # A string key keeps a string when the value reads as a number (`name=3`).
    return {str(k): (str(v) if isinstance(defaults.get(str(k)), str) and v is not None else v)
            for k, v in plain.items()}


def _call(tool: Tool, arg: Any) -> int:
    """The tool's exit code; the seal-ledger lines of its reads are written only when it
    succeeds (an input refused after a sealed read leaves the ledger as it was)."""
    from widemem_bench import sealed

    with sealed.held_reads() as lines:
        rc = int(_target(tool)(arg) or 0)
        if rc:
            lines.clear()
    return rc


def run_tool(name: str, args: Sequence[str]) -> int:
    tool = TOOLS[name]
    if tool.raw:
        return _call(tool, list(args))
    if "--help" in args or "-h" in args:
        print(tool_help(name))
        return 0
    flags = [a for a in args if a.startswith("-")]
    if flags:
        raise UsageError(f"{flags[0]}: tools take key=value only (see {PROG} {name} --help)")
    return _call(tool, compose_tool(name, args))


# --------------------------------------------------------------------------- experiments

def check_flags(argv: Sequence[str]) -> str | None:
    """One line for a flag Hydra's parser does not have (it would print its usage and
    `unrecognized arguments`), or for -m without an experiment."""
    from hydra._internal.utils import get_args_parser

    known = {o for a in get_args_parser()._actions for o in a.option_strings}
    bad = next((a for a in argv if a.startswith("-") and a.split("=", 1)[0] not in known), None)
    if bad is not None:
        return (f"{bad}: not a flag of {PROG}; an experiment takes key=value overrides and Hydra's flags "
                f"(-m, --cfg job, --info, ...; see {PROG} --help)")
    if any(a in MULTIRUN for a in argv) and not any("=" in a for a in argv):
        return f"-m needs an experiment: {PROG} -m <experiment> key=a,b ... (see {PROG} --help)"
    return None


def run_experiment(argv: Sequence[str]) -> int:
    """Hydra's run of `argv` (`experiment=<name>` and overrides), every key checked first."""
    from widemem_bench import run
    from widemem_bench.experiments import hydra_resolvers

    if (msg := check_flags(argv) or run.check_syntax(list(argv))) is not None:
        print(f"error: {msg}", file=sys.stderr)
        return 2
    args = run.expand_adapter_choice(run.expand_weight_triples(list(argv)))
    msg = (run.check_group_choices(args) or run.check_launcher(args) or run.check_keys(args)
           or run.check_hydra_keys(args) or run.check_output_dir(args) or hydra_resolvers.check_overrides(args))
    if msg is None and any(a in MULTIRUN for a in args):
        msg = run.check_sweep_values(args)
    if msg is not None:
        print(f"error: {msg}", file=sys.stderr)
        return 2
    sys.argv = [PROG, *args]  # @hydra.main reads the command line itself
    run.main()
    return 0


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        print(overview())
        return 0
    flags = [a for a in args if a in MULTIRUN]
    rest = [a for a in args if a not in MULTIRUN]
    head = rest[0] if rest else ""
    if head in TOOLS and not flags:
        return run_tool(head, rest[1:])
    if head in TOOLS and head not in _experiments():
        print(f"error: {head}: a tool, not an experiment: it runs once, without {flags[0]} "
              f"({PROG} {head} [key=value ...]; {PROG} {head} --help lists its keys)", file=sys.stderr)
        return 2
    if head == "run":
        rest = rest[1:]
        head = rest[0] if rest else "--help"
        if head in ("-h", "--help"):
            print(overview())
            return 0
        if head not in _experiments() and ("=" in head or head.startswith("-")):
            return run_experiment([*flags, *rest])
    if head in _experiments():
        if "--help" in rest or "-h" in rest:
            print(experiment_help(head))
            return 0
        return run_experiment([*flags, f"experiment={head}", *rest[1:]])
    if not rest or "=" in head or head.startswith("-"):
        return run_experiment(args)  # Hydra syntax: experiment=<name> [overrides], --cfg job, ...
    known = list(dict.fromkeys([*_experiments(), *TOOLS, "run"]))  # calibrate, perf: both kinds
    close = difflib.get_close_matches(head, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    print(f"error: {head}: unknown command or experiment; {hint}known: {', '.join(sorted(known))}",
          file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    os.environ[COMMAND_ENV] = shlex.join([PROG, *args])
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # a closed pipe (`--help | head`) shows here, not at interpreter exit
        return code
    except BrokenPipeError:  # the reader stopped reading: not an error of ours; exit quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ValueError as exc:  # bad arguments or input, said by a tool: one line, as everywhere else
        head = next((a for a in args if a not in MULTIRUN), "")
        print(f"error: {head}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path that cannot be read or written (out= under a file, a full disk): one line
        head = next((a for a in args if a not in MULTIRUN), "")
        print(f"error: {head}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
