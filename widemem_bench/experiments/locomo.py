"""`locomo`: retrieval, confidence bands and abstention on LoCoMo's real conversations.

Each LoCoMo conversation is one user's memory store (every turn one memory, "Speaker:
text", or the rule extractor's facts). For every question we measure where its evidence
turn ranks (hit@k, MRR per category), which confidence band widemem would report, and how
well a score separates the 446 adversarial questions (category 5, not answerable from the
conversation) from the 1,540 answerable ones (categories 1-4): AUROC with a bootstrap
interval that resamples whole conversations, because the questions of one conversation
share its memories.

Scores (higher = more likely answerable):

- ``top1_cosine``: widemem's confidence input. Memories carry equal importance and no
  recency here, so the top result by widemem's final score is the top result by cosine
  (the two-pass boost only lifts the top five by cosine) and its raw cosine is the max.
- ``margin``: top-1 minus top-2 cosine.
- ``answerability``: the answerability scorer fitted on the timelines (from the embedder's
  calibration file), fed the top 10 of the cosine search; present only when that file has it.
- ``speaker_top1``: top-1 cosine among the memories of the speaker the question names
  (``speaker_top1_bare``: the same with the names taken out of the question and the
  "Speaker: " prefix off the memories).
- ``speaker_contrast``: best hybrid match (cosine of the question without speaker names
  against the bare turn text, plus a small BM25 term) among the named speaker's turns
  minus the best among the other speaker's turns.
- ``ownership``: most adversarial questions take an answerable one and swap the speaker
  ("What did Caroline ..." when Melanie did it). The turns that match the question
  best are found with the name-free hybrid score, and each is attributed to whom its
  content belongs: the speaker for first-person turns ("I went ..."), the addressee for
  second-person replies ("you went ..."). The score is the softmax-weighted share of that
  evidence owned by the named speaker. No training, no LLM.
- ``ownership_cv``: ``ownership`` with its temperature picked on the other conversations.
- ``ownership_lr``: logistic regression over all the features above, trained and scored
  leave-one-conversation-out, so no conversation is ever scored by a model that saw it.

Thresholds for the band tables: widemem's table; the embedder's timeline calibration
(when a committed file exists, judged on LoCoMo as "calibration transfer"); and thresholds
fitted on LoCoMo itself, leave-one-conversation-out: Learn-then-Test from
``widemem_bench.calibration`` and, labelled as such, the plain empirical cut-off.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.evaluation.locomo_scores import (
    feature_columns,
    grouped_lr_scores,
    grouped_temperature_scores,
    question_features,
    sensitivity_table,
)
from widemem_bench.evaluation.locomo_tables import (
    BAND_LABELS,
    METHOD_NOTES,
    METHODS,
    auroc_by_category,
    auroc_table,
    band_codes_for,
    band_table,
    calibration_transfer,
    loco_ltt_bands,
    retrieval_table,
)
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.external.locomo import MEMORY_FORMS, LoCoMo, locomo_file

__all__ = ["BAND_LABELS", "METHODS", "METHOD_NOTES", "run_locomo", "sensitivity_table"]

DEFAULT_PARAMS: dict[str, Any] = {
    "locomo_path": None,
    "memory_form": "turn",
    "conversations": None,
    "embedders": None,
    "hit_k": [1, 5, 10],
    "bm25_weight": 0.03,
    "temperatures": [0.05, 0.1, 0.2],
    "ownership_temperature": 0.1,
    "recall_target": 0.9,
    "n_boot": 1000,
    "ltt_delta": 0.1,
    "ltt_method": "binomial",
    "lr_c": 1.0,
    # What experiments/locomo/{sensitivity,make_report}.py did, now parameters of the run:
    "sensitivity": None,       # embedders whose ownership AUROC grid goes in (a list; [] = the first)
    "sensitivity_temperatures": [0.02, 0.05, 0.1, 0.2, 0.5],
    "sensitivity_bm25_weights": [0.0, 0.01, 0.03, 0.05, 0.1],
    "compare_forms": False,    # also the first embedder on the other memory form (turn vs rule facts)
}


# ---------------------------------------------------------------------------- parameters


def resolve_params(cfg: dict[str, Any]) -> dict[str, Any]:
    """`cfg["params"]` over the defaults, validated; one-line ValueError naming the bad key."""
    raw = dict(cfg.get("params") or {})
    unknown = sorted(set(raw) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"params: unknown key(s) {unknown} for experiment locomo")
    p = {**DEFAULT_PARAMS, **{k: v for k, v in raw.items() if v is not None}}
    if p["memory_form"] not in MEMORY_FORMS:
        raise ValueError(f"params.memory_form: {p['memory_form']!r} is not one of {MEMORY_FORMS}")
    p["hit_k"] = [int(k) for k in p["hit_k"]]
    if not p["hit_k"] or min(p["hit_k"]) < 1:
        raise ValueError(f"params.hit_k: need positive ints, got {p['hit_k']}")
    p["temperatures"] = [float(t) for t in p["temperatures"]]
    if not p["temperatures"] or min(p["temperatures"]) <= 0:
        raise ValueError(f"params.temperatures: need positive values, got {p['temperatures']}")
    if float(p["ownership_temperature"]) <= 0:
        raise ValueError(f"params.ownership_temperature: must be > 0, got {p['ownership_temperature']}")
    if not 0 < float(p["recall_target"]) < 1:
        raise ValueError(f"params.recall_target: must lie in (0, 1), got {p['recall_target']}")
    if float(p["bm25_weight"]) < 0:
        raise ValueError(f"params.bm25_weight: must be >= 0, got {p['bm25_weight']}")
    if int(p["n_boot"]) < 1:
        raise ValueError(f"params.n_boot: must be >= 1, got {p['n_boot']}")
    for key in ("sensitivity_temperatures", "sensitivity_bm25_weights"):
        p[key] = [float(x) for x in p[key]]
        if not p[key] or min(p[key]) < 0 or (key == "sensitivity_temperatures" and min(p[key]) <= 0):
            raise ValueError(f"params.{key}: need a list of positive values, got {p[key]}")
    if raw.get("sensitivity") is not None:  # [] is "the first embedder", not "off"
        if not isinstance(raw["sensitivity"], (list, tuple)):
            raise ValueError(f"params.sensitivity: a list of embedder names ([] = the first), got {raw['sensitivity']!r}")
        p["sensitivity"] = [str(x) for x in raw["sensitivity"]]
    if not isinstance(p["compare_forms"], bool):
        raise ValueError(f"params.compare_forms: true or false, got {p['compare_forms']!r}")
    return p


def _locomo_path(cfg: dict[str, Any], p: dict[str, Any]) -> Path | None:
    if p.get("locomo_path"):
        return Path(str(p["locomo_path"]))
    shared = (cfg.get("paths") or {}).get("shared_data_dir")
    return Path(str(shared)) / "locomo10.json" if shared else None


# ---------------------------------------------------------------------------- the experiment


def _thresholds_widemem(model_id: str) -> tuple[float, float, float]:
    try:
        from widemem_bench.engine.confidence import thresholds_for_model
    except ImportError:  # pragma: no cover
        return (0.60, 0.30, 0.20) if model_id.lower().endswith("all-minilm-l6-v2") else (0.60, 0.50, 0.30)
    return tuple(thresholds_for_model(model_id))  # type: ignore[return-value]


def _answerability_scorer(cal: Any | None) -> Any | None:
    """The timeline-fitted answerability scorer of this embedder, or None when there is none."""
    if cal is None or not getattr(cal, "answerability", None):
        return None
    try:
        from widemem_bench.answerability import scorer_from_calibration

        return scorer_from_calibration(cal)
    except (ImportError, ValueError, KeyError):
        return None


def _timeline_calibration(name: str) -> Any | None:
    try:
        from widemem_bench.calibration import load_calibration

        return load_calibration(name)
    except (ImportError, ValueError, FileNotFoundError):
        return None


def evaluate_embedder(
    data: LoCoMo, embedder: Any, p: dict[str, Any], *, seed: int = 0
) -> dict[str, Any]:
    """Every table of the experiment for one embedder (pure: no files written)."""
    name = str(getattr(embedder, "name", "embedder"))
    model_id = str(getattr(embedder, "model_id", name))
    if hasattr(embedder, "fit") and getattr(embedder, "name", "") == "tfidf":
        # tfidf needs a vocabulary; fit it on this run's memories (no question text).
        embedder.fit(list(data.memories(p["memory_form"])["content"]))
    cal = _timeline_calibration(name)
    scorer = _answerability_scorer(cal)
    pq = question_features(
        data, embedder, memory_form=p["memory_form"], bm25_weight=float(p["bm25_weight"]),
        temperatures=p["temperatures"], ownership_temperature=float(p["ownership_temperature"]),
        scorer=scorer,
    )
    feats = feature_columns(pq)
    lr, coef = grouped_lr_scores(pq, feats, c=float(p["lr_c"]))
    pq["ownership_lr"] = lr
    pq["ownership_cv"], chosen_tau = grouped_temperature_scores(pq, p["temperatures"])
    pq.insert(0, "embedder", name)

    y = pq["answerable"].to_numpy(dtype=bool)
    groups = pq["sample_id"].to_numpy()
    methods = [m for m in METHODS if m in pq and not pq[m].isna().any()]
    auroc = auroc_table(pq, methods, recall=float(p["recall_target"]), n_boot=int(p["n_boot"]), seed=seed)
    auroc.insert(0, "embedder", name)
    by_cat = auroc_by_category(pq, methods)
    by_cat.insert(0, "embedder", name)
    retrieval = retrieval_table(pq, p["hit_k"])
    retrieval.insert(0, "embedder", name)

    top1 = pq["top1_cosine"].to_numpy(dtype=float)
    band_parts = []
    widemem_thr = _thresholds_widemem(model_id)
    band_parts.append(band_table(pq, band_codes_for(top1, widemem_thr), "widemem", "top1_cosine"))
    thresholds_rows = [{"setting": "widemem", "score": "top1_cosine", "high": widemem_thr[0],
                        "moderate": widemem_thr[1], "low": widemem_thr[2], "held_out": "all"}]
    transfer = pd.DataFrame()
    if cal is not None:
        thr = cal.thresholds
        band_parts.append(band_table(pq, band_codes_for(top1, thr), "timeline-calibrated", "top1_cosine"))
        thresholds_rows.append({"setting": "timeline-calibrated", "score": "top1_cosine", "high": thr[0],
                                "moderate": thr[1], "low": thr[2], "held_out": "all"})
        transfer = calibration_transfer(pq, cal)
        cut = cal.answerability_thresholds if scorer is not None else None
        if cut is not None:
            prob = pq["answerability"].to_numpy(dtype=float)
            band_parts.append(band_table(pq, band_codes_for(prob, cut), "timeline-calibrated", "answerability"))
            thresholds_rows.append({"setting": "timeline-calibrated", "score": "answerability", "high": cut[0],
                                    "moderate": cut[1], "low": cut[2], "held_out": "all"})
            transfer = pd.concat([transfer, calibration_transfer(pq, cal, "answerability")], ignore_index=True)
        transfer.insert(0, "embedder", name)
    ltt_label = ""
    if len(np.unique(groups)) > 1:
        # The configured LTT test, and the plain empirical cut-off (no guarantee) beside it.
        for method in dict.fromkeys([str(p["ltt_method"]), "empirical"]):
            for score in ("top1_cosine", "ownership_lr"):
                s = pq[score].to_numpy(dtype=float)
                if np.isnan(s).any():
                    continue
                codes, thr_df, label = loco_ltt_bands(s, y, groups, delta=float(p["ltt_delta"]), method=method)
                ltt_label = ltt_label or label
                setting = f"locomo-calibrated ({label}, leave-one-conversation-out)"
                band_parts.append(band_table(pq, codes, setting, score))
                thresholds_rows += [{"setting": setting, "score": score, **{str(k): v for k, v in r.items()}}
                                for r in thr_df.to_dict("records")]
                pq[f"band_locomo_{method}_{score}"] = codes
    pq["band_widemem"] = band_codes_for(top1, widemem_thr)
    bands = pd.concat(band_parts, ignore_index=True)
    bands.insert(0, "embedder", name)
    thresholds = pd.DataFrame(thresholds_rows)
    thresholds.insert(0, "embedder", name)
    coef.insert(0, "embedder", name)
    return {
        "per_query": pq, "auroc": auroc, "retrieval": retrieval, "bands": bands,
        "thresholds": thresholds, "transfer": transfer, "lr_coef": coef, "auroc_by_category": by_cat,
        "timeline_calibration": cal is not None, "ltt": ltt_label, "chosen_tau": chosen_tau,
    }


def run_locomo(
    cfg: dict[str, Any],
    *,
    embedders: Sequence[Any] | None = None,
    data: LoCoMo | None = None,
) -> dict[str, Any]:
    """The experiment as a pure function: tables (DataFrames) and long-format metric rows.

    `embedders` (objects with `name`, `model_id`, `encode`) override the config's
    `params.embedders` / `embedder.name`; `data` overrides loading the file. Rendering
    is `widemem_bench.reports.sections.locomo.write_locomo_report(result, out_dir)`.
    """
    p = resolve_params(cfg)
    seed = int(cfg.get("seed", 0))
    if data is None:
        from widemem_bench.sealed import open_split

        data = open_split("LoCoMo", path=_locomo_path(cfg, p))
    if p["conversations"]:
        data = data.select(list(p["conversations"]))
    if embedders is None:
        from widemem_bench.embedders import load_embedder

        names = p["embedders"] or [str((cfg.get("embedder") or {}).get("name") or "minilm-l6")]
        cache_dir = (cfg.get("paths") or {}).get("cache_dir")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        embedders = [load_embedder(str(n), cache_dir=cache_dir) for n in names]
    parts = [evaluate_embedder(data, e, p, seed=seed) for e in embedders]
    tables = {
        k: pd.concat([part[k] for part in parts if len(part[k])], ignore_index=True)
        if any(len(part[k]) for part in parts) else pd.DataFrame()
        for k in ("per_query", "auroc", "retrieval", "bands", "thresholds", "transfer", "lr_coef",
                  "auroc_by_category")
    }
    tables.update(_extra_tables(data, list(embedders), p, tables["auroc"], seed, cfg))
    metrics = _metric_rows(tables)
    result = {
        "tables": tables, "metrics": metrics, "params": p,
        "data": {"path": str(data.path), "sha256": data.sha256, "conversations": data.sample_ids,
                 "n_questions": len(data.questions), "n_memories_form": p["memory_form"]},
        "ltt": sorted({part["ltt"] for part in parts if part["ltt"]}),
        "chosen_tau": {str(getattr(e, "name", i)): part["chosen_tau"] for i, (e, part) in enumerate(zip(embedders, parts, strict=True))},
    }
    return result


def _extra_tables(data: LoCoMo, embedders: list[Any], p: dict[str, Any], auroc: pd.DataFrame, seed: int,
                  cfg: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """`sensitivity`: ownership's AUROC over its temperature x BM25 weight grid per embedder
    named; `auroc_forms`: the first embedder's AUROC on both memory forms."""
    out: dict[str, pd.DataFrame] = {}
    first = embedders[0]
    if p["sensitivity"] is not None:
        from widemem_bench.embedders import load_embedder

        known = {str(getattr(e, "name", "")): e for e in embedders}
        names = p["sensitivity"] or [str(getattr(first, "name", ""))]
        cache_dir = (cfg.get("paths") or {}).get("cache_dir")
        out["sensitivity"] = pd.concat(
            [sensitivity_table(data, known.get(n) or load_embedder(n, cache_dir=cache_dir),
                               p["sensitivity_temperatures"], p["sensitivity_bm25_weights"]) for n in names],
            ignore_index=True)
    if p["compare_forms"]:
        other = "rule" if p["memory_form"] == "turn" else "turn"
        alt = evaluate_embedder(data, first, {**p, "memory_form": other}, seed=seed)["auroc"]
        mine = auroc[auroc["embedder"] == str(getattr(first, "name", ""))]
        out["auroc_forms"] = pd.concat([mine.assign(memory_form=p["memory_form"]), alt.assign(memory_form=other)],
                                       ignore_index=True)
    return out


def _metric_rows(tables: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    rows = []
    for r in tables["auroc"].to_dict("records"):
        rows.append(metric_row("auroc_adversarial", r["auroc"], (r["auroc_lo"], r["auroc_hi"]),
                               embedder=r["embedder"], kind="5_vs_1-4", setting=r["method"]))
        rows.append(metric_row("adversarial_moderate_plus_at_recall", r["adv_moderate_plus"],
                               (r["adv_moderate_plus_lo"], r["adv_moderate_plus_hi"]),
                               embedder=r["embedder"], kind="adversarial", setting=r["method"]))
    for r in tables["retrieval"].to_dict("records"):
        for key in [str(c) for c in r if str(c).startswith("hit@")] + ["mrr"]:
            rows.append(metric_row(f"evidence_{key}", r[key], embedder=r["embedder"],
                                   kind=r["category_name"], setting=r["search"]))
    for r in tables["bands"].to_dict("records"):
        rows.append(metric_row("share_moderate_plus", r["moderate_plus"], embedder=r["embedder"],
                               kind=r["category_name"], setting=f"{r['setting']} | {r['score']}"))
    return rows


def check(cfg: dict[str, Any]) -> None:
    """The params and that locomo10.json is there, before any model loads (or sweep job launches)."""
    locomo_file(_locomo_path(cfg, resolve_params(cfg)))


@experiment("locomo", honours=("embedder", "params"), check=check)
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = resolve_params(cfg)
    embedders = None
    if not p["embedders"]:
        embedders = [ctx.embedder()]
    with ctx.timer("locomo"):
        res = run_locomo(cfg, embedders=embedders)
    ctx.info["dataset"] = res["data"]
    ctx.info["ltt"], ctx.info["chosen_tau"] = res["ltt"], res["chosen_tau"]
    tables = {k: v for k, v in res["tables"].items() if k != "per_query" and len(v)}
    return ExperimentResult(metrics=res["metrics"], per_query=res["tables"]["per_query"], tables=tables)
