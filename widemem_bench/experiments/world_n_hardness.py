"""How hard world N is for widemem's bands: Youden J of the default engine, per split.

    widemem-bench world_n_hardness splits=[train,validation]

J = recall at MODERATE or above on the answerable questions minus false confidence at
MODERATE or above on the negatives (never_mentioned, hard_negative, other_person), with the
engine's defaults (widemem 2.0.2: weights, decay, mode, thresholds for the embedder) and the
batched scorer every timeline experiment uses. Only the splits asked for are read: world N's
holdout is a measuring set, read once per method version.
"""

from __future__ import annotations

from typing import Any

from widemem_bench.embedders import load_embedder
from widemem_bench.engine import batch
from widemem_bench.engine.config import EngineConfig
from widemem_bench.harness.engines import thresholds_in_force
from widemem_bench.metrics.confidence import MODERATE, NEGATIVE_KINDS
from widemem_bench.timelines import load_from_config, materialize


def youden(splits: list[str], embedder: str = "minilm-l6", dataset: str = "world_n") -> dict[str, float]:
    tl = load_from_config(materialize.read_config(dataset))
    ev = tl.events[tl.events["split"].isin(splits)]
    q = tl.questions[tl.questions["split"].isin(splits)].reset_index(drop=True)
    emb = load_embedder(embedder)
    ec = EngineConfig()
    th = thresholds_in_force(ec, emb)
    prep = batch.prepare(ev, q, emb, mode=ec.default_mode, age_from=ec.age_from, adapt=ec.adapt_weights)
    sc = batch.score(prep, ec.weights, ec.decay_function, ec.decay_rate, th, two_pass=ec.two_pass_boost)
    mod = sc.band >= MODERATE
    ans = (q["kind"] == "answerable").to_numpy()
    neg = q["kind"].isin(NEGATIVE_KINDS).to_numpy()
    out = {"recall_moderate_plus": float(mod[ans].mean()), "false_confidence": float(mod[neg].mean()),
           "n_answerable": int(ans.sum()), "n_negative": int(neg.sum())}
    for k in ("answerable", "stale_probe", *NEGATIVE_KINDS):
        m = (q["kind"] == k).to_numpy()
        out[f"moderate_plus_{k}"] = float(mod[m].mean()) if m.any() else float("nan")
    out["youden_j"] = out["recall_moderate_plus"] - out["false_confidence"]
    return out


def tool(cfg: dict[str, Any]) -> int:
    """Print Youden J and its parts for the splits asked for."""
    splits = [str(s) for s in cfg["splits"]]
    bad = [s for s in splits if s not in ("train", "validation", "holdout")]
    if bad or not splits:
        raise ValueError(f"splits: {bad or 'none given'}; accepted: train, validation, holdout (a list)")
    for k, v in youden(splits, str(cfg["embedder"]), str(cfg["dataset"])).items():
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")
    return 0
