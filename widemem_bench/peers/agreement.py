"""Agreement with widemem 2.0.2 over the whole engine, on the timeline clock.

Each setting replays the same timeline users through this engine and through widemem
itself (`WidememPeer(clock=True)`: widemem reads the timeline clock through
`WidememClock`, so memories have their real ages), with one engine option and the
matching widemem option changed, and counts agreement of band, top-1 and full top-k
order. Every disagreement keeps its cause (`peers.compare`).

Settings (`SETTINGS`): the four decay functions (balanced mode), YMYL on, fast and
deep modes, pin, and topic weights. `pin` pins every fact the timeline rates 8 or
more (a user saying "remember this"): `pin()` on both sides, importance raised to 9.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from widemem_bench.peers.compare import run_comparison
from widemem_bench.peers.replay import Step

# Topic weights on words the timeline's facts use (a memory's score times the weight).
TOPIC_WEIGHTS = {"allergic": 2.0, "works": 1.5, "lives": 0.5}
PIN_MIN_IMPORTANCE = 8.0

SETTINGS: dict[str, dict[str, Any]] = {
    "exponential": {"engine": {"decay_function": "exponential"}},
    "linear": {"engine": {"decay_function": "linear"}},
    "step": {"engine": {"decay_function": "step"}},
    "none": {"engine": {"decay_function": "none"}},
    "ymyl_on": {"engine": {"ymyl_enabled": True}},
    "fast": {"engine": {}, "mode": "fast"},
    "deep": {"engine": {}, "mode": "deep"},
    "pin": {"engine": {}, "pin": True},
    "topic_weights": {"engine": {"topic_weights": TOPIC_WEIGHTS}},
}


def pinned_keys(steps: Sequence[Step]) -> set[str]:
    return {s.key for s in steps if s.kind == "fact" and s.importance >= PIN_MIN_IMPORTANCE}


def run_setting(name: str, steps: Sequence[Step], embedder: Any, *, peer_embedder: Any | None = None,
                tie_eps: float = 1e-6, float_eps: float = 1e-4) -> pd.DataFrame:
    """Per-question comparison rows of one setting (column `setting` added)."""
    if name not in SETTINGS:
        raise ValueError(f"setting: unknown agreement setting {name!r} (known: {', '.join(SETTINGS)})")
    spec = SETTINGS[name]
    p = {"mode": spec.get("mode", "balanced"), "top_k": None, "tie_eps": tie_eps, "float_eps": float_eps,
         "engine": {"age_from": "clock", **spec["engine"]}}
    pinned = pinned_keys(steps) if spec.get("pin") else set()
    per_query = run_comparison(steps, embedder, p=p, peer_embedder=peer_embedder, pinned=pinned).per_query
    if per_query is None:
        raise ValueError(f"setting {name}: the comparison returned no per-question rows")
    return per_query.assign(setting=name)


def _changed(d: pd.DataFrame, base: pd.DataFrame | None) -> float:
    """Share of questions whose engine top-1 memory or top-1 final score differs from the
    baseline setting's: shows that the setting acted on this data (NaN without baseline)."""
    if base is None or d is base:
        return float("nan")
    b = base.set_index("question_id").reindex(d["question_id"])
    moved = (b["engine_top1"].to_numpy() != d["engine_top1"].to_numpy()) | (
        (b["engine_top1_final"].to_numpy() - d["engine_top1_final"].to_numpy()) ** 2 > 1e-12)
    return float(moved.mean())


def agreement_table(per_query: pd.DataFrame, baseline: str = "exponential") -> pd.DataFrame:
    """One row per setting: questions, users, agreement shares, disagreement causes, and
    the share of questions the setting changed against `baseline` (widemem's default)."""
    rows = []
    groups = dict(tuple(per_query.groupby("setting", sort=False)))
    base = groups.get(baseline)
    for name, d in groups.items():
        causes = d.loc[d["cause"] != "", "cause"].value_counts().to_dict()
        order = d.loc[d["order_cause"] != "", "order_cause"].value_counts().to_dict()
        rows.append({
            "setting": name,
            "users": int(d["user_id"].nunique()),
            "questions": len(d),
            "band_agreement": float(d["band_agree"].mean()),
            "top1_agreement": float(d["top1_agree"].mean()),
            "topk_order_agreement": float(d["same_order"].mean()),
            "max_final_diff": float(d["max_final_diff"].max()),
            "changed_vs_default": _changed(d, base),
            "disagreements": ", ".join(f"{k}: {v}" for k, v in causes.items()) or "-",
            "order_differences": ", ".join(f"{k}: {v}" for k, v in order.items()) or "-",
        })
    return pd.DataFrame(rows)


def run_agreement(steps: Sequence[Step], embedder: Any, settings: Sequence[str] | None = None,
                  *, peer_embedder: Any | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, per-question rows) over `settings` (default: all of `SETTINGS`)."""
    frames = [run_setting(n, steps, embedder, peer_embedder=peer_embedder) for n in (settings or list(SETTINGS))]
    per_query = pd.concat(frames, ignore_index=True)
    return agreement_table(per_query), per_query
