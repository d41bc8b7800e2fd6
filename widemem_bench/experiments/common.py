"""Shared steps of the timeline experiments: settings from config, batch preparation,
the per-query table and metric rows through `widemem_bench.metrics`."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import batch
from widemem_bench.engine.config import EngineConfig
from widemem_bench.experiments.context import RunContext, metric_row
from widemem_bench.harness.engines import thresholds_in_force
from widemem_bench.harness.settings import batch_engine, engine_config
from widemem_bench.metrics.confidence import NEGATIVE_KINDS

# Questions whose answer is or is not stored, cleanly: the population of calibration,
# AUROC and precision. Stale probes, broad and frustration questions are reported by kind.
CONFIDENCE_KINDS = ("answerable", *NEGATIVE_KINDS)
GOLD_KINDS = ("answerable", "stale_probe")

BAND_METRICS = (
    "recall_moderate_plus", "recall_high", "recall_moderate_plus_top1",
    *(f"false_confidence_{k}" for k in NEGATIVE_KINDS),
    "precision_high", "precision_moderate_plus", "precision_low_plus",
    *(f"share_{k}_{b}" for k in CONFIDENCE_KINDS for b in ("high", "moderate", "low", "none")),
)
SCORE_METRICS = ("auroc", "aurc", "e_aurc")
RANK_METRICS = ("hit@1", "hit@5", "hit@10", "mrr")


def weights_of(cfg: dict[str, Any]) -> tuple[float, float, float]:
    """The (similarity, importance, recency) weights of the one engine node."""
    return engine_config(cfg).weights


def thresholds_of(cfg: dict[str, Any], embedder: Any) -> tuple[float, float, float]:
    """The (high, moderate, low) in force: widemem's table (+ env), calibrated, or explicit.

    `embedder` is the embedder (or, as before, its model id: the calibration file is then
    looked up by the registry name of `cfg["embedder"]`, never by the model id).
    """
    if isinstance(embedder, str):
        name = str((cfg.get("embedder") or {}).get("name") or embedder)
        embedder = SimpleNamespace(model_id=embedder, name=name)
    return thresholds_in_force(engine_config(cfg), embedder)


def score(prep: batch.Prepared, ec: EngineConfig, thresholds: Any, **kw: Any) -> batch.Scored:
    """`batch.score` under one EngineConfig (weights, decay, two-pass boost)."""
    return batch.score(prep, ec.weights, ec.decay_function, ec.decay_rate, thresholds,
                       two_pass=ec.two_pass_boost, **kw)


def load_embedder_for(ctx: RunContext, name: str | None = None) -> Any:
    """The embedder; a lexical model (tfidf) is fitted on world A train memory texts first."""
    emb = ctx.embedder(name)
    if hasattr(emb, "fit") and not getattr(emb, "_fitted", False):
        emb.fit(fit_texts(ctx))
    return emb


def fit_texts(ctx: RunContext) -> list[str]:
    """Memory texts a lexical model may learn its vocabulary from: world A's train users
    only. Validation, the sealed holdout and world B are measured, never read while
    fitting; on world B (evaluation-only, train split included) the vocabulary comes from
    world A's train users of the same size and seed, generated in memory."""
    tl = ctx.timelines()
    if tl.world != "a":
        from widemem_bench.timelines import generate

        m = tl.meta
        tl = generate(int(m["n_users"]), int(m["seed"]), span_days=int(m["span_days"]), start=m["start"])
    ev = tl.events
    return ev.loc[ev["split"] == "train", text_col(ctx.cfg)].dropna().astype(str).tolist()


def text_col(cfg: dict[str, Any]) -> str:
    return str(cfg.get("memory_text") or "fact_stripped")


def prepare(ctx: RunContext, embedder: Any, mode: str | None = None,
            ec: EngineConfig | None = None) -> batch.Prepared:
    """Batch preparation of the configured data set (timed as `prepare`).

    Mode, age source and weight adaptation come from the one engine node; a setting the
    batched scorer does not reproduce (another resolver, YMYL...) is refused there.
    """
    ec = ec if ec is not None else batch_engine(ctx.cfg)
    tl = ctx.timelines()
    with ctx.timer("prepare"):
        return batch.prepare(
            tl.events, tl.questions, embedder, mode=mode or ec.default_mode,
            text_col=text_col(ctx.cfg), age_from=ec.age_from, adapt=ec.adapt_weights,
        )


def top1_correct(prep: batch.Prepared, scored: batch.Scored) -> np.ndarray:
    """(Q,) bool: the top-1 memory is a gold memory of the question."""
    out = np.zeros(prep.n_questions, dtype=bool)
    rows = np.nonzero(scored.top1_mem >= 0)[0]
    cols = np.argmax(prep.mem[rows] == scored.top1_mem[rows, None], axis=1)
    out[rows] = prep.gold[rows, cols]
    return out


def per_query_frame(
    prep: batch.Prepared, scored: batch.Scored, questions: pd.DataFrame, embedder: str,
    **columns: Any,
) -> pd.DataFrame:
    """One row per question: ids, split, kind, band, top-1 cosine/final, gold rank, top1_correct."""
    q = questions.set_index("question_id").loc[prep.question_ids]
    df = pd.DataFrame({
        "question_id": prep.question_ids,
        "user_id": prep.user_ids,
        "split": q["split"].to_numpy(),
        "kind": q["kind"].to_numpy(),
        "template_family": q["template_family"].to_numpy() if "template_family" in q else None,
        "embedder": embedder,
        "gold_stored": prep.n_gold_stored > 0,
    })
    update_frame(df, prep, scored)
    for k, v in columns.items():
        df[k] = v
    return df


def update_frame(df: pd.DataFrame, prep: batch.Prepared, scored: batch.Scored) -> pd.DataFrame:
    """Overwrite the setting-dependent columns of a `per_query_frame` in place (sweeps)."""
    df["band"] = scored.band.astype(np.int8)
    df["top1_sim"] = scored.top1_sim
    df["top1_final"] = scored.top1_final
    df["gold_rank"] = scored.gold_rank
    df["top1_correct"] = top1_correct(prep, scored)
    return df


def kind_of(metric: str) -> str:
    for k in (*CONFIDENCE_KINDS, "stale_probe"):
        if metric.startswith(f"share_{k}_") or metric == f"false_confidence_{k}":
            return k
    if metric.startswith(("recall_", "hit@", "mrr")):
        return "answerable"
    return "all"


def metric_rows(
    pq: pd.DataFrame, *, embedder: str, setting: str = "default", n_boot: int = 1000,
    seed: int = 0, n_boot_slow: int = 200, splits: Sequence[str] = ("all", "train", "validation", "holdout"),
    ci: bool = True, band_metrics: Sequence[str] = BAND_METRICS,
    score_metrics: Sequence[str] = SCORE_METRICS, rank_metrics: Sequence[str] = RANK_METRICS,
    **extra: Any,
) -> list[dict[str, Any]]:
    """Long-format rows with cluster-bootstrap CIs (by user) for every split.

    Band and score metrics run on CONFIDENCE_KINDS questions (kind = string array);
    hit@k / MRR on answerable questions whose gold memory is stored. Ratio metrics are
    bootstrapped in one vectorised step; AUROC / AURC recompute per replicate, so they
    get `n_boot_slow` replicates (their intervals are wide anyway; the point estimate is exact).
    """
    from widemem_bench.metrics import evaluate

    cols = {"bands": "band", "kinds": "kind", "scores": "top1_sim", "ranks": "gold_rank",
            "top1_correct": "top1_correct"}
    out: list[dict[str, Any]] = []
    for split in splits:
        part = pq if split == "all" else pq[pq["split"] == split]
        conf = part[part["kind"].isin(CONFIDENCE_KINDS)].copy()
        conf["top1_sim"] = conf["top1_sim"].fillna(-1.0)  # no memory stored = lowest score
        gold = part[(part["kind"] == "answerable") & part["gold_stored"]]
        jobs = [(conf, list(band_metrics), n_boot), (conf, list(score_metrics), n_boot_slow),
                (gold, list(rank_metrics), n_boot)]
        for frame, names, nb in jobs:
            if frame.empty or not names:
                continue
            for r in evaluate(frame, names, columns=cols, cluster="user_id", n_boot=nb,
                              seed=seed, ci=ci):
                out.append(metric_row(
                    r["metric"], r["value"], (r["ci_lo"], r["ci_hi"]), embedder=embedder,
                    split=split, kind=kind_of(r["metric"]), setting=setting,
                    direction=r["direction"], n=int(r["n"]), **extra,
                ))
    return out
