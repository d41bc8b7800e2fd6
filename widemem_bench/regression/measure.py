"""Every gated metric of the code as it stands, on the gate users: confidence and retrieval
(the batched scorer), the resolvers (MemoryEngine replays) and YMYL survival."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from widemem_bench.regression.gate import (
    CONFIDENCE_KINDS,
    NEGATIVE_KINDS,
    PROBE_K,
    RESOLVERS,
    YMYL_DAY,
    YMYL_REACH_K,
    Measure,
    auroc_measure,
    ratio_measure,
)


def _band_measures(out: dict[str, Measure], method: str, b: np.ndarray, ucodes: np.ndarray, nu: int,
                   kinds: np.ndarray) -> None:
    out[f"{method}/recall_moderate_plus"] = ratio_measure("recall_moderate_plus", ucodes, nu, b, kinds)
    for k in NEGATIVE_KINDS:
        out[f"{method}/false_confidence_{k}"] = ratio_measure(f"false_confidence_{k}", ucodes, nu, b, kinds)
    for k in CONFIDENCE_KINDS:
        out[f"{method}/share_{k}_none"] = ratio_measure(f"share_{k}_none", ucodes, nu, b, kinds)


def confidence_measures(tl: Any, emb: Any, ec: Any, code: dict[str, int], progress: Any) -> dict[str, Measure]:
    """Per confidence method (widemem's bands, the calibrated thresholds, answerability v2)
    and retrieval: the batched scorer (the engine's arithmetic, every question at once)."""
    from widemem_bench.answerability.data import returned_columns
    from widemem_bench.answerability.v2 import MAX_RESULTS, feature_rows, load_scorer_v2
    from widemem_bench.calibration import assign_bands, load_calibration
    from widemem_bench.engine import batch, thresholds_for_model

    nu = len(code)
    out: dict[str, Measure] = {}
    thr = thresholds_for_model(emb.model_id)
    t0 = time.perf_counter()
    qs = tl.questions[tl.questions["kind"].isin(CONFIDENCE_KINDS)].reset_index(drop=True)
    prep = batch.prepare(tl.events, qs, emb, mode=str(ec.default_mode), adapt=ec.adapt_weights, age_from=ec.age_from)
    sc = batch.score(prep, ec.weights, ec.decay_function, ec.decay_rate, thr, two_pass=ec.two_pass_boost,
                     keep_final=True)
    kinds = qs.set_index("question_id").loc[prep.question_ids, "kind"].to_numpy(dtype=str)
    ucodes = np.array([code[u] for u in prep.user_ids], np.intp)
    top1 = np.nan_to_num(sc.top1_sim, nan=-1.0)  # nothing stored = the lowest score
    cols = returned_columns(prep, np.asarray(sc.final))
    texts = prep.memories["content"].to_numpy()
    contents, cosines = [], []
    for i in range(prep.n_questions):
        c = cols[i][cols[i] >= 0][:MAX_RESULTS]
        contents.append([str(t) for t in texts[prep.mem[i, c]]])
        cosines.append([float(v) for v in prep.sim[i, c]])
    v2 = load_scorer_v2(emb.name)
    qtext = qs.set_index("question_id").loc[prep.question_ids, "text"].astype(str).tolist()
    prob = np.asarray(v2.model.predict_proba(feature_rows(qtext, contents, cosines, emb, v2.prototypes)), float)
    cal = load_calibration(emb.name)
    bands = {"widemem": np.asarray(sc.band, np.int8), "calibrated": assign_bands(top1, cal.thresholds),
             "answerability_v2": assign_bands(prob, v2.cutoffs)}
    for method, b in bands.items():
        _band_measures(out, method, b, ucodes, nu, kinds)
    out["similarity/auroc"] = auroc_measure(ucodes, top1, kinds)  # widemem's and the calibrated score
    out["answerability_v2/auroc"] = auroc_measure(ucodes, prob, kinds)
    gold = (kinds == "answerable") & (prep.n_gold_stored > 0)
    for m in ("hit@1", "mrr"):
        out[f"retrieval/{m}"] = ratio_measure(m, ucodes[gold], nu, sc.gold_rank[gold])
    progress(f"  confidence and retrieval: {prep.n_questions} questions, {time.perf_counter() - t0:.1f} s")
    return out


def resolver_measures(tl: Any, emb: Any, ec: Any, code: dict[str, int], progress: Any) -> dict[str, Measure]:
    """Each resolver's stale-fact survival and false-update rate: MemoryEngine itself, fact by fact."""
    from widemem_bench.evaluation.replay import MemoEmbedder
    from widemem_bench.experiments import contradiction

    users, nu = list(code), len(code)
    out: dict[str, Measure] = {}
    t0 = time.perf_counter()
    ev = tl.events
    memo = MemoEmbedder(emb, [*ev["fact_stripped"].dropna(), *tl.questions["text"]])
    gold_slots = contradiction.gold_by_content(ev)
    n_user = ev[ev["fact_stripped"].notna()].groupby("user_id").size().reindex(users).fillna(0).to_numpy(float)
    for name in RESOLVERS:
        probes, updates, _ = contradiction.replay(ev, tl.questions, memo, dataclasses.replace(ec, resolver=name),
                                                  users, k=PROBE_K, gold=gold_slots)
        po = contradiction.probe_outcomes(probes, PROBE_K)
        po = po[po["kind"] == "direct"]
        pc = np.array([code[u] for u in po["user_id"]], np.intp)
        out[f"resolver_{name}/stale_survival"] = ratio_measure("stale_survival", pc, nu, po["survival"].to_numpy())
        fu = np.zeros(nu)
        if not updates.empty:
            bad = updates[updates["verdict"] == "false_update"].groupby("user_id").size()
            for u, n in bad.items():
                fu[code[str(u)]] = float(n)
        out[f"resolver_{name}/false_update_rate"] = ratio_measure("false_update_rate", np.arange(nu), nu, fu, n_user)
    progress(f"  resolvers {', '.join(RESOLVERS)}: {len(ev)} facts each, {time.perf_counter() - t0:.1f} s")
    return out


def ymyl_measures(tl: Any, emb: Any, ec: Any, code: dict[str, int], progress: Any) -> dict[str, Measure]:
    """YMYL survival: strong-YMYL facts aged 60 quiet days, YMYL on (the engine's floor and immunity)."""
    from widemem_bench.engine import thresholds_for_model
    from widemem_bench.experiments import ymyl_decay

    t0 = time.perf_counter()
    lay = ymyl_decay.layout(tl.events, emb, mode=str(ec.default_mode))
    ys = ymyl_decay.score_days(lay, YMYL_DAY, ec.decay_function, ec.decay_rate, "on", ec.weights,
                               thresholds_for_model(emb.model_id))
    crit = (lay.rows["category"] == "critical").to_numpy()
    yc = np.array([code[u] for u in lay.rows["user_id"][crit]], np.intp)
    out = {"ymyl/ymyl_survival": ratio_measure("ymyl_survival", yc, len(code), (ys.gold_rank[crit] <= YMYL_REACH_K))}
    progress(f"  YMYL at day {YMYL_DAY:g}: {int(crit.sum())} strong-YMYL questions, {time.perf_counter() - t0:.1f} s")
    return out


def measure(tl: Any, emb: Any, progress: Any = print) -> dict[str, Measure]:
    """Every gated metric of the code as it stands on the gate users (keys ``<group>/<metric>``)."""
    from widemem_bench.engine import EngineConfig

    ec = EngineConfig()
    users = sorted(tl.events["user_id"].unique())
    code = {u: i for i, u in enumerate(users)}
    out: dict[str, Measure] = {}
    for part in (confidence_measures, resolver_measures, ymyl_measures):
        out.update(part(tl, emb, ec, code, progress))
    return out
