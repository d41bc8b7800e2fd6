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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import EngineConfig, MemoryEngine, build_frustration_response
from widemem_bench.engine.modes import auto_mode, effective_top_k, fetch_k
from widemem_bench.engine.rephrase import fit_threshold, precision_recall, prior_similarity
from widemem_bench.experiments import batch
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.contradiction import (
    MemoEmbedder,
    md_table,
    pct,
    pick_users,
    publish,
    rate_ci,
)
from widemem_bench.experiments.registry import experiment, report_section
from widemem_bench.harness.keys import BATCH, DATA
from widemem_bench.harness.settings import batch_engine, engine_config, thresholds_in_force
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
                 *, uncertainty_mode: str = "helpful", seed: int = 0) -> pd.DataFrame:
    """One row per frustration message: picked vs gold action, and whether the follow-up is answered.

    Each item gets its own replay up to its time, so a pin never leaks into the
    next item's measurement.
    """
    items = frustration_items(events, questions)
    facts = events[events["fact_stripped"].notna() & (events["event_kind"] != "frustration")]
    facts = facts.sort_values(["user_id", "at", "fact_id"], kind="stable")
    by_user = {str(u): g for u, g in facts.groupby("user_id", sort=False)}
    rng = np.random.default_rng(seed)
    rows = []
    for it in items.itertuples(index=False):
        t = _ts(it.at)
        engine = MemoryEngine(embedder, config)
        try:
            uf = by_user.get(str(it.user_id))
            if uf is not None:
                for e in uf[uf["at"] < it.at].itertuples(index=False):
                    slot = (str(e.subject), str(e.attribute)) if e.subject and e.attribute else None
                    engine.add_fact(str(e.fact_stripped), str(it.user_id), importance=float(e.importance or 5),  # type: ignore[arg-type]
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
    timing = _time_search(events, q, embedder, config, timing_queries, seed)
    if cost_store_size > 0:
        timing.update(_time_search(events, q, embedder, config, timing_queries, seed,
                                   store_size=cost_store_size))
    return df, timing


def _time_search(events: pd.DataFrame, q: pd.DataFrame, embedder: Any, config: EngineConfig,
                 n: int, seed: int, store_size: int = 0, n_users: int = 20) -> dict[str, float]:
    """Median wall ms of `MemoryEngine.search`, mode="auto" vs "balanced", on the same store.

    With ``store_size`` > 0, ``n_users`` users get their own facts plus other users'
    facts up to that many memories: the timelines' ~25 memories per user are fewer
    than any mode's fetch_k, so only a bigger store shows what auto saves. Also
    returns the mean candidates actually scored per query under each mode.
    """
    rng = np.random.default_rng(seed)
    facts = events[events["fact_stripped"].notna()]
    if store_size > 0:
        all_users = sorted(q["user_id"].unique())
        users = sorted(str(u) for u in rng.choice(all_users, size=min(n_users, len(all_users)), replace=False))
        pool = q[q["user_id"].isin(users)]
        pick = pool.iloc[np.sort(rng.choice(len(pool), size=min(n, len(pool)), replace=False))]
    else:
        pick = q.iloc[np.sort(rng.choice(len(q), size=min(n, len(q)), replace=False))]
        users = sorted(str(u) for u in set(pick["user_id"]))
    engine = MemoryEngine(embedder, config)
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
                engine.add_fact(str(e.fact_stripped), u, importance=float(e.importance or 5),  # type: ignore[arg-type]
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
@experiment("frustration", honours=(*DATA, *BATCH, "resolver.candidate_k", "resolver.similarity_floor", "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
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
        emb = MemoEmbedder(base, [*ev["fact_stripped"].dropna(), *ev["utterance"], *qs["text"], *follow])
    metrics: list[dict[str, Any]] = []
    tables: dict[str, pd.DataFrame] = {}

    spoken = []
    for resolver in p.get("resolvers", ["append", "rule"]):
        with ctx.timer(f"spoken:{resolver}"):
            config = engine_config(cfg, resolver=str(resolver))
            s = score_spoken(ev, qs, emb, config, uncertainty_mode=config.uncertainty_mode, seed=ctx.seed)
        s["resolver"] = str(resolver)
        spoken.append(s)
        for gold, g in [("all", s), *s.groupby("gold_action")]:
            v, lo, hi = rate_ci(g["correct"], g["user_id"], n_boot=n_boot, seed=ctx.seed)
            metrics.append(metric_row("action_accuracy", v, (lo, hi), embedder=emb_name, kind=str(gold),
                                      setting=str(resolver), n=len(g)))
        pinned = s[s["pinned"] & s["answered"].notna()]
        v, lo, hi = rate_ci(pinned["answered"], pinned["user_id"], n_boot=n_boot, seed=ctx.seed)
        metrics.append(metric_row("pinned_answers_follow_up", v, (lo, hi), embedder=emb_name,
                                  setting=str(resolver), n=len(pinned)))
    spoken_df = pd.concat(spoken, ignore_index=True)
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
                                  text_col=str(cfg.get("memory_text") or "fact_stripped"),
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
    artifacts = write_outputs(spoken_df, quiet, thr, auto, timing, ctx.output_dir, emb_name, len(users), window,
                              tables["rephrase_windows"])
    return ExperimentResult(metrics=metrics, per_query=spoken_df, tables=tables, artifacts=artifacts)


# ---------------------------------------------------------------- report
def _figures(spoken: pd.DataFrame, quiet: pd.DataFrame, thr: float, auto: pd.DataFrame,
             out_dir: Path) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    s = spoken[spoken["resolver"] == spoken["resolver"].iloc[0]]
    conf = pd.crosstab(s["gold_action"], s["action"]).reindex(columns=list(ACTIONS), fill_value=0)
    conf.plot.bar(ax=axes[0], stacked=True, rot=0, fontsize=7)
    axes[0].set_title("action picked (stacked) per gold action", fontsize=9)
    axes[0].set_xlabel("")
    axes[0].legend(fontsize=7)
    ev = quiet[quiet["split"] != "train"]
    grid = np.linspace(0.3, 1.0, 36)
    pr = [precision_recall(ev["prior_similarity"] >= g, ev["quiet_frustration"]) for g in grid]
    axes[1].plot(grid, [x[0] for x in pr], label="precision")
    axes[1].plot(grid, [x[1] for x in pr], label="recall")
    axes[1].axvline(thr, color="grey", lw=0.8, ls="--", label=f"fitted on train: {thr:.2f}")
    axes[1].set_xlabel("rephrase threshold (cosine to an earlier query of the session)")
    axes[1].set_title("quiet frustration, validation + holdout users", fontsize=9)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    p1 = out_dir / "frustration.png"
    fig.savefig(p1, dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    conf = pd.crosstab(auto["gold_mode"], auto["auto_mode"]).reindex(
        index=["fast", "balanced", "deep"], columns=["fast", "balanced", "deep"], fill_value=0)
    axes[0].imshow(conf.to_numpy(), cmap="Blues")
    for (i, j), v in np.ndenumerate(conf.to_numpy()):
        axes[0].text(j, i, str(v), ha="center", va="center", fontsize=8)
    axes[0].set_xticks(range(3), conf.columns)
    axes[0].set_yticks(range(3), conf.index)
    axes[0].set_xlabel("auto")
    axes[0].set_ylabel("gold")
    axes[0].set_title("auto mode vs the timeline's labels", fontsize=9)
    means = [auto["fetch_k_balanced"].mean(), auto["fetch_k_auto"].mean(),
             auto["cand_balanced"].mean(), auto["cand_auto"].mean()]
    axes[1].bar(["fetch_k\nbalanced", "fetch_k\nauto", "scored\nbalanced", "scored\nauto"], means,
                color=["C0", "C1", "C0", "C1"])
    axes[1].set_title("candidates per query (scored = present in the user's store)", fontsize=9)
    fig.tight_layout()
    p2 = out_dir / "auto_mode.png"
    fig.savefig(p2, dpi=110)
    plt.close(fig)
    return p1, p2


def render(spoken: pd.DataFrame, quiet: pd.DataFrame, thr: float, auto: pd.DataFrame,
           timing: dict[str, float], emb_name: str, n_users: int, window: float,
           windows: pd.DataFrame | None = None) -> str:
    """Markdown fragment (pure function of the tables)."""
    rows = []
    for resolver, s in spoken.groupby("resolver", sort=False):
        for gold, g in [("all", s), *s.groupby("gold_action")]:
            v, lo, hi = rate_ci(g["correct"], g["user_id"], n_boot=500)
            picked = g["action"].value_counts().reindex(list(ACTIONS), fill_value=0)
            pin = g[g["pinned"] & g["answered"].notna()]
            ans = g[g["answered"].notna()]
            rows.append({"resolver": resolver, "gold action": gold, "n": len(g), "action correct": pct(v, lo, hi),
                         "picked (reassure/pin/ask/none)": "/".join(str(int(x)) for x in picked),
                         "pinned fact answers follow-up": f"{pin['answered'].mean():.0%} (n={len(pin)})"
                         if len(pin) else "n/a",
                         "follow-up answered": f"{ans['answered'].mean():.0%} (n={len(ans)})" if len(ans) else "n/a"})
    qrows = []
    for name, g in (("train (fit)", quiet[quiet["split"] == "train"]),
                    ("validation + holdout", quiet[quiet["split"] != "train"])):
        prec, rec = precision_recall(g["flag"], g["quiet_frustration"])
        sess = g.groupby("session_id").agg(gold=("quiet_frustration", "any"), flag=("flag", "any"))
        sp, sr = precision_recall(sess["flag"], sess["gold"])
        y, f = g["quiet_frustration"].to_numpy(bool), g["flag"].to_numpy(bool)
        pv = rate_ci(y[f], g["user_id"].to_numpy()[f], n_boot=500)
        rv = rate_ci(f[y], g["user_id"].to_numpy()[y], n_boot=500)
        qrows.append({"users": name, "rephrases": int(y.sum()), "queries": len(g),
                      "precision": pct(prec, pv[1], pv[2]), "recall": pct(rec, rv[1], rv[2]),
                      "precision / recall, identical re-asks counted as rephrases": "{:.1%} / {:.1%}".format(
                          *precision_recall(f, y | g["identical_reask"].to_numpy(bool))),
                      "session precision / recall": f"{sp:.1%} / {sr:.1%}",
                      "false alarms that are unlabelled identical re-asks":
                      f"{int((g['flag'] & g['identical_reask']).sum())} of {int((g['flag'] & ~g['quiet_frustration']).sum())}"})
    v, lo, hi = rate_ci(auto["agree"], auto["user_id"], n_boot=500)
    conf = pd.crosstab(auto["gold_mode"], auto["auto_mode"]).reset_index().rename(columns={"gold_mode": "gold \\ auto"})
    g = auto[auto["kind"].isin(["answerable", "stale_probe"])]
    hold = auto[auto["split"] == "holdout"]
    out = [
        "## Frustration and automatic retrieval mode (`frustration`)",
        "",
        f"{n_users} timeline users, {emb_name}, widemem's bands; uncertainty mode `helpful`. "
        "Frustration events' own facts are not ingested beforehand (recovering them is the point); each "
        "message gets its own replay up to its time. `pinned fact answers follow-up` = after a "
        "recover_and_pin, the slot question's top result holds the gold value. "
        "Intervals: 95% cluster bootstrap over users.",
        "",
        md_table(pd.DataFrame(rows)),
    ]
    pins = {r: float(g[(g["gold_action"] == "recover_and_pin") & g["pinned"]]["answered"].mean())
            for r, g in spoken.groupby("resolver")}
    if pins.get("rule", 1.0) < pins.get("append", 0.0):
        out += ["", f"A correct pin answers the follow-up {pins['append']:.0%} of the time with `append` but "
                f"{pins['rule']:.0%} with `rule`: there the pinned fact UPDATEs the old memory, which keeps "
                "its old created_at (as widemem's UPDATE does), so the fresh fact reads as old and a more "
                "recent related memory (\"settled on the East Coast\") can outrank it."]
    out += [
        "",
        f"Quiet frustration (`engine/rephrase.py`): a query is flagged when an earlier query of its session, "
        f"at most {window:g} minutes before, has cosine >= {thr:.3f} (fitted for best F1 on train users).",
        "",
        md_table(pd.DataFrame(qrows)),
        "",
    ]
    if windows is not None and len(windows):
        w = windows.assign(threshold=windows["threshold"].map(lambda x: f"{x:.3f}"),
                           precision=windows["precision"].map(lambda x: f"{x:.1%}"),
                           recall=windows["recall"].map(lambda x: f"{x:.1%}"))
        out += ["The labels mark only reworded re-asks; the timelines also hold sessions where the same "
                "question was drawn twice, unlabelled. A user asking the identical question again is the "
                "plainest quiet frustration, so the second precision counts those as rephrases. The remaining "
                "false alarms are questions about different slots in the same template shape (\"where do I "
                "work?\" after \"where do I live?\"): query similarity alone cannot tell them apart.",
                "",
                "Look-back window (threshold refitted on train, scored on validation + holdout). The timelines "
                "space a session's asks 10 minutes apart and its rephrases 2 minutes apart, so a window under "
                "10 minutes uses the generator's timing rather than the wording: read the longer windows.",
                "", md_table(w), ""]
    out += [
        "![frustration](figures/frustration.png)",
        "",
        f"Automatic mode: agreement with the timeline's `gold_mode` labels {pct(v, lo, hi)} "
        f"(holdout users: {hold['agree'].mean():.1%}). The labels follow a rule close to auto's own "
        "(broad -> deep; at most 8 words -> fast), so agreement mostly checks the cue lists; the "
        "disagreements are two-sentence lookups and a question containing \"I mentioned\".",
        "",
        md_table(conf),
        "",
        f"Cost against always-balanced: nominal fetch_k {auto['fetch_k_auto'].mean():.1f} vs "
        f"{auto['fetch_k_balanced'].mean():.1f} candidates per query; actually scored (the user's store is "
        f"smaller) {auto['cand_auto'].mean():.1f} vs {auto['cand_balanced'].mean():.1f}; median search "
        f"{timing.get('search_ms_auto', float('nan')):.2f} ms vs {timing.get('search_ms_balanced', float('nan')):.2f} ms. "
        f"Gold memory at top 1 on answerable + stale-probe questions: auto {g['top1_auto'].mean():.1%}, "
        f"balanced {g['top1_balanced'].mean():.1%} (n={len(g)}).",
    ]
    for k in sorted(k for k in timing if k.startswith("search_ms_balanced_store")):
        size = k.rsplit("_store", 1)[1]
        out += ["", f"In a store of {size} memories per user (own facts plus other users', 20 users): "
                f"candidates scored per query auto {timing.get(f'candidates_auto_store{size}', float('nan')):.1f} "
                f"vs balanced {timing.get(f'candidates_balanced_store{size}', float('nan')):.1f}; median search "
                f"{timing.get(f'search_ms_auto_store{size}', float('nan')):.2f} ms vs "
                f"{timing.get(f'search_ms_balanced_store{size}', float('nan')):.2f} ms."]
    out += ["", "![auto mode](figures/auto_mode.png)"]
    return "\n".join(out)


def write_outputs(spoken: pd.DataFrame, quiet: pd.DataFrame, thr: float, auto: pd.DataFrame,
                  timing: dict[str, float], out_dir: Path, emb_name: str, n_users: int,
                  window: float, windows: pd.DataFrame | None = None) -> dict[str, Path]:
    p1, p2 = _figures(spoken, quiet, thr, auto, out_dir)
    md = out_dir / "frustration.md"
    md.write_text(render(spoken, quiet, thr, auto, timing, emb_name, n_users, window, windows) + "\n")
    return {"frustration_md": md, "frustration_png": p1, "auto_mode_png": p2}


@report_section("frustration", order=62)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """The latest run's fragment and its figures."""
    return publish("frustration", records, figures_dir, ["frustration.png", "auto_mode.png"])
