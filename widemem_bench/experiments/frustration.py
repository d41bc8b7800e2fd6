"""`frustration`: spoken and quiet frustration, and the automatic retrieval mode.

1. Spoken frustration. Each user is replayed through the engine (facts in time
   order) up to each frustration message of the timeline: the frustration
   events ("I told you I moved to Boston!", whose fact is *not* ingested
   beforehand: recovering it is the point) and the frustration questions
   ("You should know this by now. Where do I work?"). The engine's confidence
   for the message feeds `build_frustration_response`; its action (reassure /
   recover_and_pin / apologize_and_ask, or none when no phrase is heard) is
   scored against the gold action. When it pins, the fact is pinned through
   the engine and the slot's follow-up question is asked: is the gold value in
   the top result?
2. Quiet frustration. `engine.rephrase` flags a query that re-asks an earlier
   query of its session (cosine >= threshold). The threshold is fitted on the
   train users and scored on validation + holdout: precision and recall
   against the timeline's rephrase labels, per query and per session.
3. Automatic retrieval mode. `auto_mode` against the timeline's `gold_mode`
   labels, and its cost against always-balanced: candidates scored per query,
   search time, and the gold memory's rank under each choice (batched scorer).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import EngineConfig, batch, build_frustration_response
from widemem_bench.engine.modes import auto_mode, effective_top_k, fetch_k
from widemem_bench.engine.rephrase import fit_threshold, precision_recall, prior_similarity
from widemem_bench.evaluation.replay import MemoEmbedder, pick_users
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.engines import build_engine, thresholds_in_force
from widemem_bench.harness.keys import BATCH, DATA
from widemem_bench.harness.settings import batch_engine, engine_config
from widemem_bench.metrics.rates import rate_ci
from widemem_bench.timelines import templates as T

ACTIONS = ("reassure", "recover_and_pin", "apologize_and_ask", "none")


def _ts(x: Any) -> dt.datetime:
    return pd.Timestamp(x).to_pydatetime()


def _follow_up(subject: Any, attribute: Any, rng: np.random.Generator) -> str | None:
    if subject is None or attribute is None:
        return None
    pool = T.QUESTIONS.get(f"{attribute}.{'self' if subject == 'user' else 'other'}")
    return None if not pool else pool[int(rng.integers(len(pool)))].format(rel=subject)


def frustration_items(events: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Every frustration message: events (kind ``event``) and questions (kind ``question``)."""
    ev = events[events["event_kind"] == "frustration"]
    qs = questions[questions["kind"] == "frustration"]
    a = pd.DataFrame({"item_id": ev["fact_id"], "user_id": ev["user_id"], "split": ev["split"],
                      "at": ev["at"], "message": ev["utterance"], "gold_action": ev["gold_action"],
                      "subject": ev["subject"], "attribute": ev["attribute"], "value": ev["value"],
                      "source": "event"})
    b = pd.DataFrame({"item_id": qs["question_id"], "user_id": qs["user_id"], "split": qs["split"],
                      "at": qs["asked_at"], "message": qs["text"], "gold_action": qs["gold_action"],
                      "subject": qs["subject"], "attribute": qs["attribute"], "value": qs["gold_value"],
                      "source": "question"})
    return pd.concat([a, b], ignore_index=True).sort_values(["user_id", "at", "item_id"], kind="stable")


def score_spoken(events: pd.DataFrame, questions: pd.DataFrame, embedder: Any, config: EngineConfig,
                 *, uncertainty_mode: str = "helpful", seed: int = 0,
                 text_col: str = "fact_stripped") -> pd.DataFrame:
    """One row per frustration message: picked vs gold action, and whether the follow-up is answered.

    Each item gets its own replay up to its time, so a pin never leaks into the
    next item's measurement.
    """
    items = frustration_items(events, questions)
    facts = events[events[text_col].notna() & (events["event_kind"] != "frustration")]
    facts = facts.sort_values(["user_id", "at", "fact_id"], kind="stable")
    by_user = {str(u): g for u, g in facts.groupby("user_id", sort=False)}
    rng = np.random.default_rng(seed)
    rows = []
    for it in items.itertuples(index=False):
        t = _ts(it.at)
        engine = build_engine(embedder, config)
        try:
            uf = by_user.get(str(it.user_id))
            if uf is not None:
                for e in uf[uf["at"] < it.at].itertuples(index=False):
                    slot = (str(e.subject), str(e.attribute)) if e.subject and e.attribute else None
                    engine.add_fact(str(getattr(e, text_col)), str(it.user_id), importance=float(e.importance or 5),  # type: ignore[arg-type]
                                    at=_ts(e.at), slot=slot)
            res = engine.search(str(it.message), str(it.user_id), now=t)
            plan = build_frustration_response(str(it.message), res.confidence, uncertainty_mode)
            action = "none" if plan is None else str(plan["action"])
            if plan is not None and plan.get("pin_fact"):
                engine.pin(str(plan["pin_fact"]), str(it.user_id), importance=float(plan["pin_importance"]),
                           at=t)
            q = _follow_up(it.subject, it.attribute, rng)
            answered = np.nan
            top1 = None
            if q is not None and it.value:
                follow = engine.search(q, str(it.user_id), now=t + dt.timedelta(minutes=1))
                top1 = follow[0].memory.content if len(follow) else None
                answered = float(top1 is not None and str(it.value).lower() in top1.lower())
        finally:
            engine.close()
        rows.append({"item_id": it.item_id, "user_id": it.user_id, "split": it.split, "source": it.source,
                     "message": it.message, "gold_action": it.gold_action, "action": action,
                     "confidence": res.confidence.value, "top1_sim": res[0].raw_similarity_score if len(res) else np.nan,
                     "correct": float(action == it.gold_action), "pinned": plan is not None and bool(plan.get("pin_fact")),
                     "follow_up": q, "follow_top1": top1, "answered": answered})
    return pd.DataFrame(rows)


def score_quiet(questions: pd.DataFrame, embedder: Any, window_minutes: float,
                fit_splits: tuple[str, ...] = ("train",)) -> tuple[pd.DataFrame, float]:
    """(per-query frame with prior similarity and flag, fitted threshold)."""
    q = questions.sort_values(["user_id", "asked_at", "question_id"], kind="stable").reset_index(drop=True)
    vecs = np.asarray(embedder.encode(q["text"].astype(str).tolist(), kind="query"), dtype=np.float32)
    minutes = (q["asked_at"] - q["asked_at"].min()).dt.total_seconds().to_numpy() / 60.0
    score = prior_similarity(vecs, q["session_id"].tolist(), minutes, window_minutes)
    fit = q["split"].isin(fit_splits).to_numpy()
    thr = fit_threshold(score[fit], q["quiet_frustration"].to_numpy(bool)[fit])
    # Identical re-asks that the generator did not label (two asks drawn the same): they are
    # rephrases in fact, so they are reported apart rather than silently counted wrong.
    prev_texts: dict[Any, set[str]] = {}
    same_text = np.zeros(len(q), bool)
    for i, (sid, text) in enumerate(zip(q["session_id"], q["text"], strict=True)):
        seen = prev_texts.setdefault(sid, set())
        same_text[i] = text in seen
        seen.add(text)
    out = q[["question_id", "user_id", "split", "session_id", "text", "quiet_frustration"]].copy()
    out["prior_similarity"] = score
    out["flag"] = score >= thr
    out["identical_reask"] = same_text & ~out["quiet_frustration"].to_numpy(bool)
    return out, thr


def score_auto(events: pd.DataFrame, questions: pd.DataFrame, embedder: Any,
               config: EngineConfig, thresholds: tuple[float, float, float],
               *, timing_queries: int = 300, seed: int = 0, text_col: str = "fact_stripped",
               cost_store_size: int = 0) -> tuple[pd.DataFrame, dict[str, float]]:
    """Per question: auto's mode, gold mode, candidates scored, gold rank under auto and balanced."""
    q = questions.reset_index(drop=True)
    auto = np.array([auto_mode(str(t)).value for t in q["text"]])
    ranks: dict[str, np.ndarray] = {}
    n_cand: dict[str, np.ndarray] = {}
    top1: dict[str, np.ndarray] = {}
    for mode in ("fast", "balanced", "deep"):
        prep = batch.prepare(events, q, embedder, mode=mode, text_col=text_col,
                             adapt=config.adapt_weights, age_from=config.age_from)
        sc = batch.score(prep, config.weights, config.decay_function, config.decay_rate, thresholds,
                         two_pass=config.two_pass_boost)
        order = pd.Index(prep.question_ids).get_indexer(q["question_id"])
        ranks[mode] = sc.gold_rank[order]
        n_cand[mode] = (prep.mem >= 0).sum(axis=1)[order]
        top1[mode] = (sc.gold_rank == 1)[order]
    pick = {m: auto == m for m in ("fast", "balanced", "deep")}
    df = q[["question_id", "user_id", "split", "kind", "text", "gold_mode"]].copy()
    df["auto_mode"] = auto
    df["agree"] = auto == q["gold_mode"].to_numpy()
    df["fetch_k_auto"] = [fetch_k(m, str(t)) for m, t in zip(auto, q["text"], strict=True)]
    df["fetch_k_balanced"] = [fetch_k("balanced", str(t)) for t in q["text"]]
    df["cand_auto"] = np.select([pick["fast"], pick["balanced"], pick["deep"]],
                                [n_cand["fast"], n_cand["balanced"], n_cand["deep"]])
    df["cand_balanced"] = n_cand["balanced"]
    df["top_k_auto"] = [effective_top_k(m) for m in auto]
    df["rank_auto"] = np.select([pick["fast"], pick["balanced"], pick["deep"]],
                                [ranks["fast"], ranks["balanced"], ranks["deep"]])
    df["rank_balanced"] = ranks["balanced"]
    df["top1_auto"] = np.select([pick["fast"], pick["balanced"], pick["deep"]],
                                [top1["fast"], top1["balanced"], top1["deep"]])
    df["top1_balanced"] = top1["balanced"]
    timing = _time_search(events, q, embedder, config, timing_queries, seed, text_col=text_col)
    if cost_store_size > 0:
        timing.update(_time_search(events, q, embedder, config, timing_queries, seed,
                                   store_size=cost_store_size, text_col=text_col))
    return df, timing


def _time_search(events: pd.DataFrame, q: pd.DataFrame, embedder: Any, config: EngineConfig,
                 n: int, seed: int, store_size: int = 0, n_users: int = 20,
                 text_col: str = "fact_stripped") -> dict[str, float]:
    """Median wall ms of `MemoryEngine.search`, mode="auto" vs "balanced", on the same store.

    With ``store_size`` > 0, ``n_users`` users get their own facts plus other users'
    facts up to that many memories: the timelines' ~25 memories per user are fewer
    than any mode's fetch_k, so only a bigger store shows what auto saves. Also
    returns the mean candidates actually scored per query under each mode.
    """
    rng = np.random.default_rng(seed)
    facts = events[events[text_col].notna()]
    if store_size > 0:
        all_users = sorted(q["user_id"].unique())
        users = sorted(str(u) for u in rng.choice(all_users, size=min(n_users, len(all_users)), replace=False))
        pool = q[q["user_id"].isin(users)]
        pick = pool.iloc[np.sort(rng.choice(len(pool), size=min(n, len(pool)), replace=False))]
    else:
        pick = q.iloc[np.sort(rng.choice(len(q), size=min(n, len(q)), replace=False))]
        users = sorted(str(u) for u in set(pick["user_id"]))
    engine = build_engine(embedder, config)
    out: dict[str, float] = {}
    tag = f"_store{store_size}" if store_size > 0 else ""
    try:
        for u in users:
            rows = list(facts[facts["user_id"] == u].itertuples(index=False))
            if store_size > len(rows):
                others = facts[facts["user_id"] != u]
                size = min(store_size - len(rows), len(others))
                rows += list(others.iloc[rng.choice(len(others), size=size, replace=False)].itertuples(index=False))
            for e in rows:
                # Padding keeps its own dates, so a question may predate some of it:
                # harmless here, where only the cost of a search is measured.
                engine.add_fact(str(getattr(e, text_col)), u, importance=float(e.importance or 5),  # type: ignore[arg-type]
                                at=_ts(e.at))
        n_mem = {u: len(engine.memories(u)) for u in users}
        for mode in ("balanced", "auto", "balanced", "auto"):  # twice each: the first pass warms caches
            times, cands = [], []
            for r in pick.itertuples(index=False):
                t0 = time.perf_counter()
                res = engine.search(str(r.text), str(r.user_id), mode=mode, now=_ts(r.asked_at))
                times.append(time.perf_counter() - t0)
                cands.append(min(fetch_k(res.mode, str(r.text)), n_mem[str(r.user_id)]))
            out[f"search_ms_{mode}{tag}"] = float(np.median(times) * 1000)
            out[f"candidates_{mode}{tag}"] = float(np.mean(cands))
    finally:
        engine.close()
    return out


# The spoken replays honour the resolver candidates; the auto-mode ranks use the batched scorer.
def _spoken(cfg: dict[str, Any], ctx: RunContext, ev: pd.DataFrame, qs: pd.DataFrame, emb: Any,
            resolvers: list[str], n_boot: int, metrics: list[dict[str, Any]]) -> pd.DataFrame:
    """Spoken frustration per resolver (the engine node with that resolver); adds metric rows."""
    spoken = []
    for resolver in resolvers:
        with ctx.timer(f"spoken:{resolver}"):
            config = engine_config(cfg, resolver=str(resolver))
            s = score_spoken(ev, qs, emb, config, uncertainty_mode=config.uncertainty_mode, seed=ctx.seed,
                             text_col=str(cfg.get("memory_text") or "fact_stripped"))
        s["resolver"] = str(resolver)
        spoken.append(s)
        for gold, g in [("all", s), *s.groupby("gold_action")]:
            v, lo, hi = rate_ci(g["correct"], g["user_id"], n_boot=n_boot, seed=ctx.seed)
            metrics.append(metric_row("action_accuracy", v, (lo, hi), embedder=emb.name, kind=str(gold),
                                      setting=str(resolver), n=len(g)))
        pinned = s[s["pinned"] & s["answered"].notna()]
        v, lo, hi = rate_ci(pinned["answered"], pinned["user_id"], n_boot=n_boot, seed=ctx.seed)
        metrics.append(metric_row("pinned_answers_follow_up", v, (lo, hi), embedder=emb.name,
                                  setting=str(resolver), n=len(pinned)))
    return pd.concat(spoken, ignore_index=True)


@experiment("frustration", honours=(*DATA, *BATCH, "resolver.candidate_k", "resolver.similarity_floor", "params"),
            choices={"resolver": "params.resolvers"})
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    text_col = str(cfg.get("memory_text") or "fact_stripped")  # what a memory holds, in every part
    window = float(p.get("window_minutes", 60.0))
    if window <= 0:
        raise ValueError(f"params.window_minutes: must be > 0, got {window}")
    n_boot = int(p.get("n_boot", 1000))
    tl = ctx.timelines()
    users = pick_users(tl.events, p.get("n_users"))
    ev = tl.events[tl.events["user_id"].isin(users)]
    qs = tl.questions[tl.questions["user_id"].isin(users)]
    base = ctx.embedder()
    emb_name = str(base.name)
    with ctx.timer("encode"):
        follow = [q.format(rel=r) for k, v in T.QUESTIONS.items() for q in v for r in ("sister", "brother")]
        emb = MemoEmbedder(base, [*ev[text_col].dropna(), *ev["utterance"], *qs["text"], *follow])
    metrics: list[dict[str, Any]] = []
    tables: dict[str, pd.DataFrame] = {}

    spoken_df = _spoken(cfg, ctx, ev, qs, emb, p.get("resolvers", ["append", "rule"]), n_boot, metrics)
    tables["spoken"] = spoken_df

    with ctx.timer("quiet"):
        quiet, thr = score_quiet(qs, emb, window)
    tables["quiet"] = quiet
    metrics.append(metric_row("rephrase_threshold", thr, embedder=emb_name, window_minutes=window))
    sweep = []
    for w in p.get("window_sweep", [5, 15, 60, 240]):
        qw, tw = score_quiet(qs, emb, float(w))
        g = qw[qw["split"] != "train"]
        prec, rec = precision_recall(g["flag"], g["quiet_frustration"])
        sweep.append({"window_minutes": float(w), "threshold": tw, "precision": prec, "recall": rec})
    tables["rephrase_windows"] = pd.DataFrame(sweep)
    for split, g in [("eval", quiet[quiet["split"] != "train"]), ("train", quiet[quiet["split"] == "train"])]:
        prec, rec = precision_recall(g["flag"], g["quiet_frustration"])
        y, f = g["quiet_frustration"].to_numpy(bool), g["flag"].to_numpy(bool)
        pv = rate_ci(y[f], g["user_id"].to_numpy()[f], n_boot=n_boot, seed=ctx.seed)
        rv = rate_ci(f[y], g["user_id"].to_numpy()[y], n_boot=n_boot, seed=ctx.seed)
        metrics.append(metric_row("rephrase_precision", prec, pv[1:], embedder=emb_name, split=split))
        metrics.append(metric_row("rephrase_recall", rec, rv[1:], embedder=emb_name, split=split))
        sess = g.groupby("session_id").agg(gold=("quiet_frustration", "any"), flag=("flag", "any"))
        sp, sr = precision_recall(sess["flag"], sess["gold"])
        metrics.append(metric_row("rephrase_session_precision", sp, embedder=emb_name, split=split))
        metrics.append(metric_row("rephrase_session_recall", sr, embedder=emb_name, split=split))
        fp_same = int((g["flag"] & g["identical_reask"]).sum())
        metrics.append(metric_row("rephrase_fp_identical_reask", fp_same, embedder=emb_name, split=split))

    with ctx.timer("auto_mode"):
        # The auto-mode ranks come from the batched scorer (append store): it refuses an
        # engine setting it does not reproduce rather than ignore it.
        ec = batch_engine(cfg, ignore=("resolver", "candidate_k", "similarity_floor"))
        auto, timing = score_auto(ev, qs, emb, ec, thresholds_in_force(ec, base), seed=ctx.seed,
                                  text_col=text_col,
                                  cost_store_size=int(p.get("cost_store_size", 1000)))
    tables["auto_mode"] = auto
    v, lo, hi = rate_ci(auto["agree"], auto["user_id"], n_boot=n_boot, seed=ctx.seed)
    metrics.append(metric_row("auto_mode_agreement", v, (lo, hi), embedder=emb_name))
    for part, g in auto.groupby("split"):
        metrics.append(metric_row("auto_mode_agreement", float(g["agree"].mean()), embedder=emb_name,
                                  split=str(part)))
    gold_q = auto[auto["kind"].isin(["answerable", "stale_probe"])]
    for name, col in (("top1_auto", "top1_auto"), ("top1_balanced", "top1_balanced")):
        metrics.append(metric_row(name, float(gold_q[col].mean()), embedder=emb_name, kind="answerable+stale"))
    for name, col in (("fetch_k_auto", "fetch_k_auto"), ("fetch_k_balanced", "fetch_k_balanced"),
                      ("candidates_auto", "cand_auto"), ("candidates_balanced", "cand_balanced")):
        metrics.append(metric_row(name, float(auto[col].mean()), embedder=emb_name))
    for k, val in timing.items():
        metrics.append(metric_row(k, val, embedder=emb_name))
    metrics.append(metric_row("n_users", float(len(users)), embedder=emb_name))
    return ExperimentResult(metrics=metrics, per_query=spoken_df, tables=tables)


# ---------------------------------------------------------------- report
