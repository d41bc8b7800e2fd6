"""Regression gate: headline metrics of a small, fast configuration against a committed baseline.

``reports/baseline/metrics.json`` holds the headline metrics of minilm-l6 on the
small timelines set (``configs/dataset/timelines_small.yaml``, 30 users) under
widemem's scoring, for widemem's thresholds, the committed calibrated thresholds and
the committed answerability scorer. ``tests/test_regression_gate.py`` recomputes them
in ``make test`` and fails when one moves beyond its tolerance in the bad direction
(the direction comes from the metric registry). A change that moves them on purpose
rewrites the baseline with ``make golden`` in the same commit.

    python -m widemem_bench.regression                 # check, exit 1 on a regression
    python -m widemem_bench.regression --write         # make golden
    python -m widemem_bench.regression weights=0.2,0.5,0.3   # check a scoring change
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.engine.config import WIDEMEM_DECAY, WIDEMEM_WEIGHTS
from widemem_bench.provenance import REPO_ROOT

BASELINE_PATH = REPO_ROOT / "reports" / "baseline" / "metrics.json"
CONFIG: dict[str, Any] = {
    "embedder": "minilm-l6",
    "dataset": "timelines_small",
    "weights": list(WIDEMEM_WEIGHTS),
    "decay": list(WIDEMEM_DECAY),
    "mode": "balanced",
    "population": "all splits; answerable, never-mentioned, hard-negative, other-person questions",
}
# Absolute tolerance on rates and AUROC: the computation is deterministic on one machine,
# so this only absorbs float differences across BLAS builds (a few questions of 1200).
TOLERANCE = 0.01
BAND_METRICS = ("recall_moderate_plus", "precision_moderate_plus", "false_confidence_hard_negative",
                "false_confidence_other_person", "false_confidence_never_mentioned")
RANK_METRICS = ("hit@1", "hit@5", "mrr")


def headline(config: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The headline metrics of ``config`` (default `CONFIG`), keyed ``<setting>/<metric>``."""
    from widemem_bench import calibrate
    from widemem_bench.answerability import load_scorer
    from widemem_bench.calibration import assign_bands, load_calibration
    from widemem_bench.engine import thresholds_for_model
    from widemem_bench.metrics import compute

    cfg = {**CONFIG, **(config or {})}
    tl, _ = calibrate._load_data(str(cfg["dataset"]))
    emb = calibrate._embedder(str(cfg["embedder"]), tl.events)
    pq, x = calibrate.per_query(tl, emb, tuple(cfg["weights"]), (str(cfg["decay"][0]), float(cfg["decay"][1])))
    conf = pq[pq["kind"].isin(calibrate.CONFIDENCE_KINDS)]
    xc = x[conf.index.to_numpy()]
    kinds = conf["kind"].to_numpy(dtype=str)
    sim = conf["top1_sim"].to_numpy(dtype=float)
    cal = load_calibration(str(cfg["embedder"]))
    scorer = load_scorer(str(cfg["embedder"]))
    prob = scorer.model.predict_proba(xc)
    bands = {
        "widemem": assign_bands(sim, thresholds_for_model(emb.model_id)),
        "calibrated": assign_bands(sim, cal.thresholds),
        "answerability": assign_bands(prob, scorer.cutoffs),
    }
    out: dict[str, float] = {}
    for setting, b in bands.items():
        for m in BAND_METRICS:
            out[f"{setting}/{m}"] = compute(m, b, kinds)
    out["similarity/auroc"] = compute("auroc", sim, kinds)
    out["answerability/auroc"] = compute("auroc", prob, kinds)
    gold = pq[(pq["kind"] == "answerable") & pq["gold_stored"]]
    for m in RANK_METRICS:
        out[f"retrieval/{m}"] = compute(m, gold["gold_rank"].to_numpy(dtype=float))
    return {k: float(v) for k, v in out.items()}


def direction(key: str) -> str:
    from widemem_bench.metrics import get_metric

    return get_metric(key.split("/", 1)[1]).direction


def compare(baseline: Mapping[str, Any], current: Mapping[str, float]) -> list[str]:
    """One line per metric that got worse than its baseline by more than its tolerance."""
    failures = []
    for key, entry in baseline["metrics"].items():
        base, tol = float(entry["value"]), float(entry.get("tolerance", TOLERANCE))
        if key not in current:
            failures.append(f"{key}: missing from the recomputed metrics")
            continue
        now = current[key]
        if np.isnan(now) != np.isnan(base):
            failures.append(f"{key}: {base} -> {now} (NaN changed)")
            continue
        worse = base - now if entry["direction"] == "higher" else now - base
        if worse > tol:
            failures.append(f"{key}: {base:.4f} -> {now:.4f} ({entry['direction']} is better; "
                            f"worse by {worse:.4f} > tolerance {tol})")
    return failures


def improvements(baseline: Mapping[str, Any], current: Mapping[str, float]) -> list[str]:
    """Metrics that got better beyond tolerance: not a failure, but the baseline is stale."""
    out = []
    for key, entry in baseline["metrics"].items():
        if key in current:
            gain = current[key] - float(entry["value"])
            gain = gain if entry["direction"] == "higher" else -gain
            if gain > float(entry.get("tolerance", TOLERANCE)):
                out.append(f"{key}: {float(entry['value']):.4f} -> {current[key]:.4f}")
    return out


def load_baseline(path: Path = BASELINE_PATH) -> dict[str, Any]:
    if not path.is_file():
        raise ValueError(f"baseline {path} does not exist; create it with: make golden")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write_baseline(path: Path = BASELINE_PATH, config: Mapping[str, Any] | None = None) -> Path:
    """Recompute and write the baseline (``make golden``)."""
    from widemem_bench.calibration import load_calibration

    cfg = {**CONFIG, **(config or {})}
    values = headline(cfg)
    cal = load_calibration(str(cfg["embedder"]))
    data = {
        "config": cfg,
        "calibration": {"thresholds": list(cal.thresholds), "answerability_cutoffs": list(cal.answerability_thresholds or ()),
                        "fitted_on": cal.dataset.get("version")},
        "written": dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds"),
        "tolerance": f"absolute {TOLERANCE} in the bad direction, per metric",
        "metrics": {k: {"value": v, "direction": direction(k), "tolerance": TOLERANCE} for k, v in sorted(values.items())},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        print("usage: widemem-bench regression [--write] [weights=s,i,r]\n\n"
              "Recompute the headline metrics of the baseline configuration (minilm-l6 on\n"
              "timelines_small) and compare them with reports/baseline/metrics.json; exit 1 when\n"
              "one got worse beyond its tolerance. --write rewrites the baseline (make golden);\n"
              "weights=s,i,r checks another weight mix against it.")
        return 0
    config: dict[str, Any] = {}
    write = False
    for arg in args:
        if arg == "--write":
            write = True
        elif arg.startswith("weights="):
            w = [float(v) for v in arg.split("=", 1)[1].split(",")]
            if len(w) != 3:
                raise ValueError(f"weights must be three numbers (similarity, importance, recency), got {arg!r}")
            config["weights"] = w
        else:
            raise ValueError(f"unknown argument {arg!r} (--write, weights=s,i,r)")
    if write:
        if config:
            raise ValueError("--write takes no overrides: the baseline is the default configuration")
        print(f"wrote {write_baseline()}")
        return 0
    baseline = load_baseline()
    current = headline({**baseline["config"], **config})
    for key, entry in baseline["metrics"].items():
        print(f"{key:50s} {float(entry['value']):.4f} -> {current.get(key, float('nan')):.4f}")
    failures = compare(baseline, current)
    for line in improvements(baseline, current):
        print(f"improved (run make golden): {line}")
    if failures:
        print("REGRESSION:\n  " + "\n  ".join(failures))
        return 1
    print("ok: no headline metric moved beyond tolerance in the bad direction")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
