"""What a run tells the person waiting for it: progress bars and its headline numbers.

- ``progress_enabled(setting)``: the config's ``progress`` (true / false / null); null
  means "on when stderr is a terminal", so an interactive run shows bars and a log file
  or CI stays clean.
- ``bar(items, desc, ...)``: one tqdm bar on stderr for a stage that takes more than a few
  seconds, or ``items`` unchanged when bars are off. Any stage can call it (LoCoMo's
  replay, an embedding pass), with or without a ``RunContext``.
- ``headline(record)`` / ``report_headline(record)``: the few metrics a reader looks at
  first, one line each, printed at the end of a run and written to Hydra's ``run.log``.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

log = logging.getLogger("widemem_bench.run")

# The headline metrics, in the order they are shown; each experiment reports a few.
HEADLINE_METRICS: tuple[str, ...] = (
    "recall_moderate_plus", "false_confidence_hard_negative", "false_confidence_never_mentioned",
    "false_confidence_other_person", "precision_moderate_plus", "auroc", "hit@1", "mrr",
    "action_accuracy", "rephrase_threshold", "rephrase_recall", "rephrase_precision",
    "auto_mode_agreement", "band_agreement", "top1_agreement",
)
# A metric row is shown for the split a reader means by "the result".
PREFERRED_SPLITS: tuple[Any, ...] = ("all", "eval", "holdout", None, "")
MAX_LINES = 8
PER_METRIC = 2


def progress_enabled(setting: Any = None, stream: Any = None) -> bool:
    """True / False as configured; None (or "auto") = whether ``stream`` (stderr) is a terminal."""
    if setting is None or (isinstance(setting, str) and setting.lower() == "auto"):
        stream = sys.stderr if stream is None else stream
        try:
            return bool(stream.isatty())
        except (AttributeError, ValueError):  # closed or replaced streams
            return False
    if isinstance(setting, str):
        if setting.lower() in ("true", "1", "yes", "on"):
            return True
        if setting.lower() in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"progress: expected true, false or null (auto), got {setting!r}")
    return bool(setting)


def bar(items: Iterable[Any], desc: str, *, total: int | None = None,
        enabled: bool | None = None, unit: str = "it") -> Iterable[Any]:
    """``items`` wrapped in a tqdm bar on stderr when enabled (None: stderr is a terminal)."""
    if not progress_enabled(enabled):
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, total=total, unit=unit, leave=False, mininterval=1.0,
                file=sys.stderr)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _label(row: Mapping[str, Any]) -> str:
    parts = [str(row["metric"])]
    for key in ("embedder", "kind", "setting", "split"):
        v = row.get(key)
        if v in (None, "", "default", "all") or (isinstance(v, float) and math.isnan(v)):
            continue
        if str(v) not in str(row["metric"]):  # false_confidence_hard_negative names its kind
            parts.append(f"{key}={v}")
    return " ".join(parts)


def headline(record: Mapping[str, Any], max_lines: int = MAX_LINES,
             names: Sequence[str] = HEADLINE_METRICS) -> list[str]:
    """Up to ``max_lines`` lines ``metric [keys]: value [ci_lo, ci_hi]`` from a run record.

    Headline metrics first (in ``names`` order, preferred split first); a record with
    none of them shows its first rows instead, so every run says something.
    """
    rows = [r for r in record.get("metrics") or [] if isinstance(r, Mapping) and "metric" in r]
    split_rank = {s: i for i, s in enumerate(PREFERRED_SPLITS)}
    picked: list[Mapping[str, Any]] = []
    for name in names:
        mine = [r for r in rows if r["metric"] == name]
        if not mine:
            continue
        best = min(split_rank.get(r.get("split"), len(split_rank)) for r in mine)
        mine = [r for r in mine if split_rank.get(r.get("split"), len(split_rank)) == best]
        # overall rows before per-kind ones; stable, so the record's order otherwise
        mine.sort(key=lambda r: r.get("kind") not in (None, "", "all", "answerable"))
        picked += mine[:PER_METRIC]
    if not picked:
        picked = rows
    lines = []
    for r in picked[:max_lines]:
        ci = ""
        if r.get("ci_lo") is not None and r.get("ci_hi") is not None:
            lo, hi = _fmt(r.get("ci_lo")), _fmt(r.get("ci_hi"))
            if "n/a" not in (lo, hi):
                ci = f" [{lo}, {hi}]"
        lines.append(f"{_label(r)}: {_fmt(r.get('value'))}{ci}")
    if len(picked) > max_lines:
        lines.append(f"... {len(picked) - max_lines} more headline rows, {len(rows)} metric rows in record.json")
    return lines


def report_headline(record: Mapping[str, Any]) -> list[str]:
    """Print the headline (through logging when Hydra configured it, so run.log holds it)."""
    lines = headline(record)
    title = f"{record.get('experiment', 'run')}: headline"
    if logging.getLogger().handlers:  # Hydra's job logging: console + run.log
        log.info("%s", title)
        for line in lines:
            log.info("  %s", line)
    else:
        print(title, flush=True)
        for line in lines:
            print(f"  {line}", flush=True)
    return lines
