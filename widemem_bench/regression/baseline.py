"""The blessed baseline (``reports/baseline/metrics.json``): read, check, write; and one gate run."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.regression.gate import (
    BASELINE_PATH,
    FORMAT,
    GATE_DATA,
    LEVEL,
    N_BOOT,
    RE_BLESS,
    SEED,
    GateInputError,
    default_groups,
    evaluated_settings,
    gate_timelines,
    group_mismatches,
    judge,
    lock_sha256,
    setting_diffs,
)
from widemem_bench.regression.measure import measure


def load_baseline(path: Path = BASELINE_PATH) -> dict[str, Any]:
    if not path.is_file():
        raise GateInputError(f"baseline {path} does not exist; create it with: make golden REASON='...'")
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise GateInputError(f"baseline {path} is not valid JSON ({exc.msg}); "
                             f"restore it with git checkout or {RE_BLESS}") from None
    if data.get("format") != FORMAT or "metrics" not in data or "evaluated" not in data:
        raise GateInputError(f"baseline {path} is stale (format {data.get('format')!r}, the gate writes "
                             f"{FORMAT}); {RE_BLESS}")
    return data


def check_inputs(baseline: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    """Raise GateInputError (one line) when the baseline cannot be compared with this checkout."""
    blessed = (baseline.get("blessed") or {}).get("lock_sha256")
    now = lock_sha256()
    if blessed != now:
        raise GateInputError(f"the baseline was blessed under lock {blessed or 'none'}, this checkout has "
                             f"{now or 'no requirements.lock'}; {RE_BLESS}")
    b_data, n_data = baseline["evaluated"].get("gate_data", {}), settings.get("gate_data", {})
    if b_data.get("sha256") != n_data.get("sha256"):
        raise GateInputError("the gate users differ from the baseline's (generator or GATE_DATA changed): "
                             f"the baseline is stale; {RE_BLESS}")


def git_commit() -> str | None:
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def write_baseline(reason: str, path: Path = BASELINE_PATH, progress: Any = print) -> Path:
    """Bless the code as it stands (``make golden REASON='...'``)."""
    if not reason.strip():
        raise GateInputError("blessing needs a reason: make golden REASON='why the numbers moved'")
    tl, emb = _inputs(progress)
    settings = evaluated_settings(tl)
    current = measure(tl, emb, progress)
    data = {
        "format": FORMAT,
        "blessed": {"reason": reason.strip(), "commit": git_commit(), "lock_sha256": lock_sha256(),
                    "written": dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds")},
        "statistics": f"paired bootstrap over users, {N_BOOT} replicates, seed {SEED}, {LEVEL:.0%} percentile "
                      "interval; fail beyond the registry's min_effect when the interval excludes 0",
        "evaluated": settings,
        "users": sorted(tl.events["user_id"].unique().tolist()),
        "metrics": {k: v.to_json() for k, v in sorted(current.items())},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(dump(data), encoding="utf-8")
    tmp.replace(path)
    return path


def dump(data: Mapping[str, Any]) -> str:
    """The baseline as JSON: settings indented, one line per metric (small, diffable)."""
    head = {k: v for k, v in data.items() if k != "metrics"}
    text = json.dumps(head, indent=1)[:-2] + ',\n "metrics": {\n'
    text += ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                       for k, v in data["metrics"].items())
    return text + "\n }\n}\n"


def _inputs(progress: Any = print) -> tuple[Any, Any]:
    from widemem_bench.embedders import load_embedder

    t0 = time.perf_counter()
    tl = gate_timelines()
    emb = load_embedder(default_groups().get("embedder", "minilm-l6"))
    progress(f"gate users: {tl.events['user_id'].nunique()} (seed {GATE_DATA['seed']}, split 'gate'), "
             f"{len(tl.events)} facts, {len(tl.questions)} questions; embedder {emb.name} "
             f"({time.perf_counter() - t0:.1f} s)")
    return tl, emb


def run_gate(path: Path = BASELINE_PATH, progress: Any = print) -> tuple[int, list[str]]:
    """(exit code, failing lines): 0 pass, 1 a change beyond its minimal effect or a setting changed."""
    baseline = load_baseline(path)
    t0 = time.perf_counter()
    tl, emb = _inputs(progress)
    settings = evaluated_settings(tl)
    check_inputs(baseline, settings)
    progress("evaluated (the code's defaults): " + json.dumps(
        {k: v for k, v in settings.items() if k not in ("modes", "gate_data")}, sort_keys=True))
    failures = group_mismatches() + setting_diffs(settings, baseline["evaluated"])
    current = measure(tl, emb, progress)
    table, bad, good = judge(current, baseline)
    for line in table:
        progress(line)
    failures += [f"REGRESSION {b}" for b in bad] + [f"IMPROVED {g}" for g in good]
    progress(f"gate: {len(current)} metrics in {time.perf_counter() - t0:.1f} s")
    return (1 if failures else 0), failures
