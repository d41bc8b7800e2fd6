"""Regression gate: the code as it stands, on its own gate users, against a blessed baseline.

What it evaluates is built from the code's current defaults, never from the baseline:
``EngineConfig()`` (weights, decay, adaptation, boost, mode, YMYL floor and immunity),
the default config groups (``configs/config.yaml``: the embedder), widemem's threshold
table for that embedder's model, the committed calibration file and the committed
answerability v2 file. It prints those settings, and a setting that differs from what
the baseline recorded is one failing line naming it.

What it gates (``GATED``), on the gate users (`gate_timelines`: their own seed, user
ids ``g0000``.., split "gate", refused by every fit through ``check_fittable``):

- per confidence method (widemem's bands, the calibrated thresholds, answerability v2
  = the engine's ``confidence="answerability"``): recall at MODERATE+, false confidence
  and the NONE share per question kind, and AUROC of its score;
- retrieval hit@1 and MRR;
- each resolver's stale-fact survival and false-update rate (``MemoryEngine`` replays);
- YMYL survival at day 60 (strong-YMYL facts in the top 3, YMYL on).

Statistics: per metric, a paired bootstrap over users of (code - baseline) on the same
questions (the baseline stores per-user numerators and denominators, and per-question
scores for AUROC). A change fails when its 95 % interval excludes 0 and it exceeds the
metric's declared minimal effect (``min_effect`` in the metric registry): in the bad
direction as a regression, in the good one as "re-bless with make golden REASON='...'".

    widemem-bench regression                          # the gate: exit 1 on a change
    widemem-bench regression write='REASON'           # make golden REASON='...'
    widemem-bench regression adapter=widemem          # gate a peer memory system (options.<key>=<value>)
    widemem-bench regression bench=true [out=FILE]    # warm wall time (make perf)

Keys and defaults: configs/tool/regression.yaml. The package: `gate` (settings, one
metric, statistics), `measure` (the gated metrics), `baseline` (the blessed file, one
run), `adapter` (any memory system), `timing` (`make perf`'s section).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.regression.adapter import adapter_gate, adapter_measure, adapter_options
from widemem_bench.regression.baseline import (
    check_inputs,
    dump,
    git_commit,
    load_baseline,
    run_gate,
    write_baseline,
)
from widemem_bench.regression.gate import (
    BASELINE_PATH,
    CONFIDENCE_KINDS,
    GATE_DATA,
    METHODS,
    NEGATIVE_KINDS,
    RESOLVERS,
    GateInputError,
    Measure,
    auroc_measure,
    data_fingerprint,
    default_groups,
    evaluated_settings,
    gate_timelines,
    group_config,
    group_mismatches,
    judge,
    lock_sha256,
    paired_interval,
    ratio_measure,
    setting_diffs,
)
from widemem_bench.regression.measure import measure
from widemem_bench.regression.timing import bench

__all__ = [
    "BASELINE_PATH", "CONFIDENCE_KINDS", "GATE_DATA", "METHODS", "NEGATIVE_KINDS", "RESOLVERS",
    "GateInputError", "Measure", "adapter_gate", "adapter_measure", "adapter_options", "auroc_measure",
    "bench", "check_inputs", "data_fingerprint", "default_groups", "dump", "evaluated_settings",
    "gate_timelines", "git_commit", "group_config", "group_mismatches", "judge", "load_baseline", "lock_sha256",
    "main", "measure", "paired_interval", "ratio_measure", "run_gate", "setting_diffs", "tool", "write_baseline",
]
TOOL_CONFIG = REPO_ROOT / "configs" / "tool" / "regression.yaml"


def tool(cfg: Mapping[str, Any]) -> int:
    """The gate, or what the keys ask instead: bless (``write``), time (``bench``), gate a peer (``adapter``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    write, adapter = cfg.get("write"), cfg.get("adapter")
    if adapter:
        options = adapter_options(str(adapter), cfg.get("options") or {})
        baseline = Path(str(cfg["baseline"])) if cfg.get("baseline") else None
        return adapter_gate(str(adapter), options, baseline, None if write is None else str(write))
    for key in ("baseline", "options"):
        if cfg.get(key):
            raise GateInputError(f"{key}: only with adapter=<name> (the gate itself takes no settings)")
    if cfg.get("bench"):
        print(bench(Path(str(cfg["out"])) if cfg.get("out") else REPO_ROOT / "reports" / "perf.md"))
        return 0
    if cfg.get("out"):
        raise GateInputError("out: only with bench=true")
    if write is not None:
        print(f"wrote {write_baseline(str(write))}")
        return 0
    code, failures = run_gate()
    if failures:
        print("GATE FAILED:\n  " + "\n  ".join(failures))
    else:
        print("ok: no gated metric moved beyond its minimal effect; settings as blessed")
    return code


def compose(overrides: Sequence[str]) -> dict[str, Any]:
    """configs/tool/regression.yaml with ``key=value`` overrides (OmegaConf's dot-list; a key
    it does not hold or a value of the wrong type is one line naming the key)."""
    from omegaconf import OmegaConf, open_dict
    from omegaconf.errors import OmegaConfBaseException

    base = OmegaConf.load(TOOL_CONFIG)
    OmegaConf.set_struct(base, True)
    # A reason is free text (``write=fix: the decay``): kept as written, never read as YAML.
    reasons = [a.split("=", 1)[1] for a in overrides if a.startswith("write=")]
    rest = [a for a in overrides if not a.startswith("write=")]
    keys = [str(k) for k in base]
    for arg in rest:
        name = arg.split("=", 1)[0].lstrip("+~")
        top, _, sub = name.partition(".")
        if top not in keys:
            close = difflib.get_close_matches(top, keys, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise GateInputError(f"{name}: not a key of regression; {hint}accepted: {', '.join(keys)}")
        if sub and top != "options":
            raise GateInputError(f"{name}: {top} takes one value, not sub-keys "
                                 "(an adapter's options are options.<key>=<value>)")
    try:
        with open_dict(base.options):  # an adapter's options are its own to check
            merged = OmegaConf.merge(base, OmegaConf.from_dotlist(rest))
        if reasons:
            merged.write = reasons[-1]
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "?"
        raise GateInputError(f"{key}: {str(exc).splitlines()[0]} (keys: {', '.join(map(str, base))})") from None
    plain = OmegaConf.to_container(merged, resolve=True)
    assert isinstance(plain, dict)
    defaults = OmegaConf.to_container(base)
    assert isinstance(defaults, dict)
    for key, default in defaults.items():
        if isinstance(default, bool) and not isinstance(plain[key], bool):
            raise GateInputError(f"{key!s}: expected true or false, got {plain[key]!r}")
    return {str(k): v for k, v in plain.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """``widemem-bench regression [key=value ...]`` (``--help`` lists the keys)."""
    args = list(argv or [])
    if "-h" in args or "--help" in args:
        print("usage: widemem-bench regression [key=value ...]\n\n" + (__doc__ or "") + "\nkeys:\n"
              + TOOL_CONFIG.read_text(encoding="utf-8"))
        return 0
    bad = next((a for a in args if "=" not in a), None)
    if bad is not None:
        raise GateInputError(f"{bad!r} is not key=value (e.g. write='REASON', bench=true, adapter=<name>)")
    return tool(compose(args))
