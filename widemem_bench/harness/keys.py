"""Which config keys an experiment honours, and the one-line refusals of the others.

Each experiment declares, as data, the keys it honours: dotted prefixes of the composed
config, given once to its decorator (``@experiment("x", honours=(*DATA, *BATCH, "params"))``).
A prefix covers every key below it ("weights" covers weights.similarity). Before any run
starts, `check_overrides` refuses, each with one line:

- a misspelt key (naming the closest valid key);
- a key the chosen experiment does not honour (naming the key and the experiment);
- a config group's option (`resolver=rule`) that changes a key the experiment does not
  honour: the group's choice would not act (naming the param that takes the options, if any);
- an embedder field that its runtime does not read;
- a value with a path separator in a key that names the run's folder;
- a value of the wrong type for a key whose default is a number or a boolean.

Plain Python: the composed config comes in as a plain dict.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Read by the harness itself (runner, records, folders), whatever the experiment.
HARNESS: tuple[str, ...] = ("task_name", "seed", "progress", "force", "paths", "hydra", "experiment")
# The data an experiment embeds: the embedder node, the data set, what a memory holds.
DATA: tuple[str, ...] = ("embedder", "dataset", "memory_text")
# What the batched scorer (`engine/batch.py`) reproduces of MemoryEngine.search.
BATCH: tuple[str, ...] = ("weights", "decay", "thresholds", "mode", "age_from",
                          "engine.adapt_weights", "engine.two_pass_boost")
# A timeline replay through MemoryEngine.add_fact / search (no extraction: facts go in as
# stated, so engine.extractor never runs).
REPLAY: tuple[str, ...] = (
    *BATCH, "resolver.candidate_k", "resolver.similarity_floor", "engine.topic_weights",
    "engine.confidence", "engine.ymyl_enabled", "engine.ymyl_importance_floor",
    "engine.ymyl_decay_immunity", "engine.ymyl_contradiction_threshold",
    "engine.ymyl_categories", "engine.ymyl_classifier", "engine.max_text_chars",
    "engine.llm_url", "engine.llm_model", "engine.llm_timeout",
)
# Keys whose value may be a path or URL: those left out of the run folder's name
# (configs/config.yaml exclude_keys), and any key named like one (*_path, *_file, ...).
PATH_VALUED: tuple[str, ...] = ("params.locomo_path", "params.data", "engine.llm_url", "embedder.base_url")
PATH_SUFFIXES: tuple[str, ...] = ("_path", "_file", "_dir", "_url", "_root")


def leaf_keys(cfg: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys of every leaf (a non-mapping value; an empty mapping is a leaf too)."""
    out: list[str] = []
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out += leaf_keys(v, f"{key}.")
        else:
            out.append(key)
    return out


def covered(key: str, prefixes: Iterable[str]) -> bool:
    """`key` is one of `prefixes` or lies below one."""
    return any(key == p or key.startswith(f"{p}.") for p in prefixes)


def honoured(key: str, honours: Sequence[str]) -> bool:
    return covered(key, HARNESS) or covered(key, honours)


def _exists(key: str, cfg: Mapping[str, Any]) -> bool:
    node: Any = cfg
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def closest_key(key: str, cfg: Mapping[str, Any]) -> str | None:
    keys = leaf_keys(cfg)
    hit = difflib.get_close_matches(key, keys, n=1, cutoff=0.5)
    if not hit:  # compare the last part: params.nboot -> params.n_boot
        tails = {k.rsplit(".", 1)[-1]: k for k in keys if k.startswith(key.rsplit(".", 1)[0])}
        near = difflib.get_close_matches(key.rsplit(".", 1)[-1], list(tails), n=1, cutoff=0.5)
        hit = [tails[near[0]]] if near else []
    return hit[0] if hit else None


def accepted_keys(key: str, experiment: str, honours: Sequence[str], cfg: Mapping[str, Any]) -> str:
    """What may be set where `key` was: the keys of its deepest existing parent node
    (`params.nosuch` -> params' keys), or at the top the prefixes the experiment honours."""
    parts = key.split(".")
    for depth in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:depth])
        node = default_of(parent, cfg)
        if isinstance(node, Mapping) and not node and _exists(parent, cfg):
            return f"{parent} is empty by default: set it whole, e.g. '++{parent}={{name: {{key: value}}}}'"
        if isinstance(node, Mapping) and node and covered(parent, (*honours, *HARNESS)):
            return f"{parent} has: {', '.join(str(k) for k in node)}"
    top = [h for h in honours if h != "experiment"] + [h for h in HARNESS if h != "experiment"]
    return f"accepted: {', '.join(top)} (`widemem-bench run {experiment} --help` lists them)"


def check_key(key: str, experiment: str, honours: Sequence[str], cfg: Mapping[str, Any],
              groups: Sequence[str] = ()) -> str | None:
    """One line when setting `key` (a dotted key, or a group name in `groups`) is refused."""
    if covered(key, ("hydra",)):
        return None
    if key not in groups and not _exists(key, cfg):
        near = closest_key(key, cfg)
        hint = f" (did you mean {near}?)" if near else ""
        return (f"{key}: no such key in the config of experiment {experiment}{hint}; "
                f"{accepted_keys(key, experiment, honours, cfg)}")
    if not honoured(key, honours):
        return (f"{key}: experiment {experiment} does not honour this key "
                f"(it honours: {', '.join(honours) or 'nothing beyond the harness'})")
    if key.startswith("embedder.") and key not in groups:
        from widemem_bench.harness.settings import check_embedder_key

        try:
            check_embedder_key(cfg.get("embedder") or {}, key.split(".")[1])
        except ValueError as exc:
            return str(exc)
    return None


def check_choice(group: str, option: str, experiment: str, honours: Sequence[str],
                 base: Mapping[str, Any], chosen: Mapping[str, Any]) -> str | None:
    """One line when choosing `group=option` would not act in `experiment`.

    `base` and `chosen` are the experiment's composed config without and with the choice.
    The choice acts when the experiment honours the whole group or its `name` (an option
    is read by its name: the embedder registry), or when every key the option changes is
    honoured. Honouring a few sub-keys (resolver.candidate_k) does not make the choice act."""
    if covered(group, (*honours, *HARNESS)) or honoured(f"{group}.name", honours):
        return None
    keys = dict.fromkeys([*leaf_keys(base.get(group) or {}, f"{group}."),
                          *leaf_keys(chosen.get(group) or {}, f"{group}.")])
    bad = [k for k in keys if default_of(k, base) != default_of(k, chosen) and not honoured(k, honours)]
    if not bad:
        return None
    reads = [h for h in honours if covered(h, (group,))]
    what = (f"of {group} it reads only {', '.join(reads)}, not {bad[0]}" if reads
            else f"it honours: {', '.join(honours) or 'nothing beyond the harness'}")
    return f"{group}={option}: experiment {experiment} does not honour the {group} choice ({what})"


def default_of(key: str, cfg: Mapping[str, Any]) -> Any:
    """The composed config's value at dotted `key` (None when absent)."""
    node: Any = cfg
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def check_type(key: str, value: str, default: Any) -> str | None:
    """One line when `value` (one override value, as typed) cannot be the type of `default`.

    Only numbers and booleans are checked: a string, list, mapping or null default takes
    what Hydra parses. Interpolations and sweep functions are left to Hydra."""
    v = value.strip()
    if v in ("null", "") or v.startswith("${") or "(" in v:
        return None
    if isinstance(default, bool):
        ok = v.lower() in ("true", "false")
        want = "true or false"
    elif isinstance(default, int):
        ok = _parses(int, v)
        want = "an integer"
    elif isinstance(default, float):
        ok = _parses(float, v)
        want = "a number"
    else:
        return None
    return None if ok else f"{key}: expected {want}, got {value!r}"


def _parses(kind: type, v: str) -> bool:
    try:
        kind(v)
    except ValueError:
        return False
    return True


_CONVERSIONS = (("invalid literal for int() with base 10: ", "an integer"),
                ("could not convert string to float: ", "a number"))


def name_bad_value(exc: Exception, cfg: Mapping[str, Any]) -> str | None:
    """A builtin int()/float() failure on a config value, said with its key.

    A key whose default is null has no type to check before the run; the experiment's own
    int(...) then fails with Python's message, which names the value but not the key. The
    value is looked up among the config's leaves; None when it names no (unique) key."""
    text = str(exc)
    for prefix, want in _CONVERSIONS:
        if text.startswith(prefix):
            literal = text[len(prefix):]
            keys = [k for k in leaf_keys(cfg) if not covered(k, ("hydra", "paths"))
                    and repr(str(default_of(k, cfg))) == literal]
            if len(keys) == 1:
                return f"{keys[0]}: expected {want}, got {literal}"
    return None


def check_value(key: str, value: str) -> str | None:
    """A path separator in a value that names the run's folder would nest or escape it."""
    if covered(key, ("paths", "hydra", *PATH_VALUED)) or key in ("experiment", "progress", "force"):
        return None
    if key.endswith(PATH_SUFFIXES) or key.rsplit(".", 1)[-1] in ("root", "base_url"):
        return None  # a path by name: what it names is read, not made into a folder
    if "/" in value or "\\" in value:
        return (f"{key}: value {value!r} has a path separator, and {key} names the run's "
                "folder; refused so no run writes outside the output folder")
    return None
