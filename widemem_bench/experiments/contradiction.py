"""`contradiction`: do stale facts survive once the user has said they changed?

Each timeline user is replayed through `MemoryEngine` (facts through `add_fact`
in time order, gold slots attached for the oracle), once per resolver setting:
`append`, `rule`, `rule` with a candidate similarity floor (0.3 ... 0.9),
`oracle`, and `llm` only when `params.llm_url` is set. At every stale probe
(a question whose slot has changed value) the engine's ranked list is read:

- contradiction survival: a stale memory of the slot is in the top k, or it
  outranks the current one;
- stale outranks current: the "coin flip" of an append-only store;
- loss: no current memory of the slot in the top k.

Direct contradictions are stale memories stated plainly ("lives in San
Francisco"); oblique ones are restatements that share few words with the
slot ("settled on the West Coast"). From the store's history, a false update
is an UPDATE / DELETE whose old memory was not contradicted by the incoming
fact (another slot; a same-slot, same-value rewrite is counted apart as a
merge). Rates carry 95% cluster-bootstrap intervals (users resampled).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.evaluation.replay import GoldFact, MemoEmbedder, clean, pick_users, ts
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.engines import build_engine
from widemem_bench.harness.keys import REPLAY
from widemem_bench.harness.settings import engine_config
from widemem_bench.metrics.rates import rate_ci, ratio_ci

DEFAULT_FLOORS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
KINDS = ("direct", "oblique")


def slot_label(subject: Any, attribute: Any) -> str:
    return str(attribute) if subject == "user" else f"other.{attribute}"


# ---------------------------------------------------------------- gold lookups
def gold_by_content(events: pd.DataFrame) -> dict[tuple[str, str], list[GoldFact]]:
    """(user, stored content) -> the gold facts stated with that content."""
    out: dict[tuple[str, str], list[GoldFact]] = {}
    for r in events.itertuples(index=False):
        if r.fact_stripped is None or r.subject is None or r.attribute is None:
            continue
        vf = ts(r.valid_from)
        if vf is None:
            continue
        out.setdefault((str(r.user_id), clean(r.fact_stripped)), []).append(
            GoldFact(str(r.subject), str(r.attribute), str(r.value), vf, ts(r.valid_to), bool(r.oblique))
        )
    return out


def _classify(facts: list[GoldFact], slot: tuple[str, str], t: dt.datetime) -> str | None:
    """"current", "stale_direct", "stale_oblique" or None (another slot) for one memory content."""
    mine = [f for f in facts if (f.subject, f.attribute) == slot]
    if not mine:
        return None
    if any(f.valid_at(t) for f in mine):
        return "current"
    if all(f.valid_to is not None and f.valid_to <= t for f in mine):
        return "stale_oblique" if all(f.oblique for f in mine) else "stale_direct"
    return None  # stated only after t (cannot be stored yet)


# ---------------------------------------------------------------- replay
def replay_config(cfg: dict[str, Any], resolver: str, floor: float | None,
                  age_from: str | None = None) -> EngineConfig:
    """The one engine node of `cfg` with this replay's resolver, floor and age source.

    Everything else (weights, decay, thresholds, candidate_k, engine.*) is the node's;
    `floor=None` keeps `resolver.similarity_floor`, `age_from=None` keeps `age_from`.
    """
    over: dict[str, Any] = {"resolver": resolver}
    if floor is not None:
        over["similarity_floor"] = floor
    if age_from is not None:
        over["age_from"] = age_from
    return engine_config(cfg, **over)


def replay(
    events: pd.DataFrame,
    questions: pd.DataFrame,
    embedder: Any,
    config: EngineConfig,
    users: Sequence[str],
    *,
    k: int = 5,
    gold: dict[tuple[str, str], list[GoldFact]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """(probes, updates, facts ingested) for one engine setting over ``users``.

    probes: one row per stale probe with the best rank (1-based, inf = absent
    from the returned list) of a direct stale, oblique stale and current memory,
    and whether an oblique stale memory had been stated. updates: one row per
    UPDATE / DELETE in the store's history with its verdict.
    """
    gold = gold if gold is not None else gold_by_content(events)
    ev = events[events["user_id"].isin(users) & events["fact_stripped"].notna()]
    ev = ev.sort_values(["user_id", "at", "fact_id"], kind="stable")
    qs = questions[questions["user_id"].isin(users) & (questions["kind"] == "stale_probe")]
    qs = qs.sort_values(["user_id", "asked_at", "question_id"], kind="stable")
    probes: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    n_facts = 0
    engine = build_engine(embedder, config)
    try:
        q_by_user = {u: g for u, g in qs.groupby("user_id", sort=False)}
        for user, uev in ev.groupby("user_id", sort=False):
            uid = str(user)
            uq = q_by_user.get(uid)
            qrows = list(uq.itertuples(index=False)) if uq is not None else []
            erows = list(uev.itertuples(index=False))
            ei = 0
            ids: dict[str, None] = {}
            for q in [*qrows, None]:
                t_q = ts(q.asked_at) if q is not None else None
                while ei < len(erows) and (t_q is None or ts(erows[ei].at) <= t_q):  # type: ignore[operator]
                    e = erows[ei]
                    slot = (str(e.subject), str(e.attribute)) if e.subject and e.attribute else None
                    done = engine.add_fact(clean(e.fact_stripped), uid, importance=float(e.importance or 5),  # type: ignore[arg-type]
                                           at=ts(e.at), slot=slot)
                    ids.update((a.target_id, None) for a in done.actions if a.target_id)
                    n_facts += 1
                    ei += 1
                if q is None:
                    break
                probes.append(_probe_row(engine, q, uid, t_q, gold, erows, k))  # type: ignore[arg-type]
            updates.extend(_update_rows(engine, uid, list(ids), gold))
    finally:
        engine.close()
    return pd.DataFrame(probes), pd.DataFrame(updates), n_facts


def _probe_row(engine: MemoryEngine, q: Any, uid: str, t_q: dt.datetime,
               gold: dict[tuple[str, str], list[GoldFact]], erows: list[Any], k: int) -> dict[str, Any]:
    slot = (str(q.subject), str(q.attribute))
    res = engine.search(str(q.text), uid, now=t_q)
    best = {"current": math.inf, "stale_direct": math.inf, "stale_oblique": math.inf}
    for rank, hit in enumerate(res, start=1):
        c = _classify(gold.get((uid, clean(hit.memory.content)), []), slot, t_q)
        if c is not None and rank < best[c]:
            best[c] = float(rank)
    # An oblique contradiction exists once an oblique statement of an old value was made.
    oblique_stated = any(
        e.oblique and (str(e.subject), str(e.attribute)) == slot and ts(e.at) <= t_q  # type: ignore[operator]
        and ts(e.valid_to) is not None and ts(e.valid_to) <= t_q  # type: ignore[operator]
        for e in erows
    )
    return {
        "question_id": q.question_id, "user_id": uid, "split": q.split,
        "attribute": slot_label(q.subject, q.attribute), "text": q.text,
        "n_returned": len(res), "k": k,
        "rank_current": best["current"], "rank_stale_direct": best["stale_direct"],
        "rank_stale_oblique": best["stale_oblique"], "oblique_stated": oblique_stated,
    }


def _update_rows(engine: MemoryEngine, uid: str, memory_ids: Sequence[str],
                 gold: dict[tuple[str, str], list[GoldFact]]) -> list[dict[str, Any]]:
    """Every UPDATE / DELETE of the user's memories, judged against the gold slots."""
    rows = []
    entries = sorted((h for mid in memory_ids for h in engine.history(mid)), key=lambda h: h.at)
    for h in entries:
        if h.action not in ("UPDATE", "DELETE"):
            continue
        old = gold.get((uid, clean(h.old_content or "")), [])
        new = gold.get((uid, clean(h.new_content or "")), []) if h.new_content else []
        old_slots = {(f.subject, f.attribute): f.value for f in old}
        verdict = "false_update"
        for f in new:
            slot = (f.subject, f.attribute)
            if slot in old_slots:
                verdict = "contradiction" if old_slots[slot] != f.value else "merge"
                break
        rows.append({"user_id": uid, "action": h.action, "old": h.old_content,
                     "new": h.new_content, "at": h.at, "verdict": verdict})
    return rows


# ---------------------------------------------------------------- measures
def probe_outcomes(probes: pd.DataFrame, k: int) -> pd.DataFrame:
    """Long rows (probe x kind) with survival / stale_outranks / loss as 0/1."""
    rows = []
    for kind in KINDS:
        col = f"rank_stale_{kind}"
        sub = probes if kind == "direct" else probes[probes["oblique_stated"]]
        if sub.empty:
            continue
        rs, rc = sub[col].to_numpy(float), sub["rank_current"].to_numpy(float)
        outranks = rs < rc
        rows.append(pd.DataFrame({
            "question_id": sub["question_id"].to_numpy(), "user_id": sub["user_id"].to_numpy(),
            "attribute": sub["attribute"].to_numpy(), "kind": kind,
            "survival": ((rs <= k) | outranks).astype(float),
            "stale_outranks": outranks.astype(float),
            "loss": (rc > k).astype(float),
        }))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def _settings(p: dict[str, Any], llm_url: str | None = None) -> list[tuple[str, str, float | None, str | None]]:
    """(label, resolver, similarity floor, age_from) of every replay (None: the node's)."""
    out: list[tuple[str, str, float | None, str | None]] = []
    for name in p.get("resolvers", ["append", "rule", "oracle"]):
        if name == "llm" and not llm_url:
            continue  # only when an endpoint is configured (engine.llm_url)
        out.append((str(name), str(name), None, None))
    # widemem ages memories from their insert time: after a fast ingest every memory
    # is ~0 days old, recency no longer favours the newer fact, and the stale one
    # wins about as often as the current one (the seed's coin flip).
    for name in p.get("insert_age_resolvers", ["append"]) or []:
        out.append((f"{name}@insert", str(name), None, "insert"))
    for f in p.get("floors", DEFAULT_FLOORS) or []:
        out.append((f"rule@{float(f):.1f}", "rule", float(f), None))
    return out


def _probe_rates(out: pd.DataFrame, setting: str, n_boot: int, seed: int, emb_name: str,
                 extra: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(metric rows, summary rows) of survival / stale_outranks / loss, overall and per attribute."""
    metrics: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    for kind in KINDS:
        sub = out[out["kind"] == kind]
        for m in ("survival", "stale_outranks", "loss"):
            v, lo, hi = rate_ci(sub[m], sub["user_id"], n_boot=n_boot, seed=seed)
            metrics.append(metric_row(m, v, (lo, hi), embedder=emb_name, kind=kind, setting=setting,
                                      n=len(sub), **extra))
            summary.append({"setting": setting, "kind": kind, "metric": m, "value": v, "ci_lo": lo,
                            "ci_hi": hi, "n": len(sub), "attribute": "all", "split": "all"})
        # per user split: the holdout's users are the held-out figure, train / validation development
        if "split" in sub:
            for split, g in sub.groupby("split"):
                for m in ("survival", "stale_outranks", "loss"):
                    v, lo, hi = rate_ci(g[m], g["user_id"], n_boot=n_boot, seed=seed)
                    metrics.append(metric_row(m, v, (lo, hi), embedder=emb_name, kind=kind, setting=setting,
                                              split=str(split), n=len(g), count=int(g[m].sum()), **extra))
                    summary.append({"setting": setting, "kind": kind, "metric": m, "value": v, "ci_lo": lo,
                                    "ci_hi": hi, "n": len(g), "attribute": "all", "split": str(split),
                                    "count": int(g[m].sum())})
        for attr, g in sub.groupby("attribute"):
            for m in ("survival", "loss"):
                v, lo, hi = rate_ci(g[m], g["user_id"], n_boot=n_boot, seed=seed)
                summary.append({"setting": setting, "kind": kind, "metric": m, "value": v, "ci_lo": lo,
                                "ci_hi": hi, "n": len(g), "attribute": attr, "split": "all"})
    return metrics, summary


def _update_rates(updates: pd.DataFrame, ev: pd.DataFrame, users: list[str], n_facts: int,
                  setting: str, n_boot: int, seed: int, emb_name: str,
                  extra: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """False updates (another slot replaced) and merges (a same-value rewording replaced the
    stored wording): per ingested fact, clustered by user; plus the update counts."""
    metrics: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    n_user = ev[ev["fact_stripped"].notna()].groupby("user_id").size().reindex(users).fillna(0)
    for metric, verdict in (("false_update_rate", "false_update"), ("merge_rate", "merge")):
        per_user = pd.Series(0.0, index=pd.Index(users, name="user_id"))
        if not updates.empty:
            hits = updates[updates["verdict"] == verdict].groupby("user_id").size()
            per_user.loc[hits.index] = hits.to_numpy(float)
        rate = per_user.sum() / max(n_facts, 1)
        ci = ratio_ci(per_user.to_numpy(), n_user.to_numpy(float), n_boot, seed)
        metrics.append(metric_row(metric, rate, ci, embedder=emb_name, setting=setting, n=n_facts, **extra))
        summary.append({"setting": setting, "kind": "all", "metric": metric, "value": rate,
                        "ci_lo": ci[0], "ci_hi": ci[1], "n": n_facts, "attribute": "all", "split": "all"})
    n_upd = 0 if updates.empty else len(updates)
    n_true = 0 if updates.empty else int((updates["verdict"] == "contradiction").sum())
    metrics.append(metric_row("updates", n_upd, embedder=emb_name, setting=setting, **extra))
    metrics.append(metric_row("true_updates", n_true, embedder=emb_name, setting=setting, **extra))
    return metrics, summary


# Resolvers, floors and age sources are swept by params; everything else is the engine node.
@experiment("contradiction", honours=("embedder", "dataset", *REPLAY, "params"),
            choices={"resolver": "params.resolvers"})
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    k = int(p.get("k", 5))
    if k < 1:
        raise ValueError(f"params.k: must be >= 1, got {k}")
    n_boot = int(p.get("n_boot", 1000))
    tl = ctx.timelines()
    users = pick_users(tl.events, p.get("n_users"))
    ev = tl.events[tl.events["user_id"].isin(users)]
    qs = tl.questions[tl.questions["user_id"].isin(users)]
    emb_name = str((cfg.get("embedder") or {}).get("name"))
    with ctx.timer("encode"):
        emb = MemoEmbedder(ctx.embedder(), [*ev["fact_stripped"].dropna(), *qs["text"]])
    gold = gold_by_content(ev)
    metrics: list[dict[str, Any]] = []
    per_query: list[pd.DataFrame] = []
    upd_tables: list[pd.DataFrame] = []
    summary: list[dict[str, Any]] = []
    for setting, resolver, floor, age_from in _settings(p, engine_config(cfg).llm_url):
        with ctx.timer(f"replay:{setting}"):
            config = replay_config(cfg, resolver, floor, age_from)
            probes, updates, n_facts = replay(ev, qs, emb, config, users, k=k, gold=gold)
        out = probe_outcomes(probes, k)
        floor_used = np.nan if config.similarity_floor is None else config.similarity_floor
        out["setting"], out["resolver"], out["floor"] = setting, resolver, floor_used
        per_query.append(out)
        extra: dict[str, Any] = {"resolver": resolver, "k": k, "floor": floor_used}
        for m_rows, s_rows in (_probe_rates(out, setting, n_boot, ctx.seed, emb_name, extra),
                               _update_rates(updates, ev, users, n_facts, setting, n_boot, ctx.seed,
                                             emb_name, extra)):
            metrics += m_rows
            summary += s_rows
        if not updates.empty:
            updates["setting"] = setting
            upd_tables.append(updates)
    pq = pd.concat(per_query, ignore_index=True) if per_query else pd.DataFrame()
    tables = {"summary": pd.DataFrame(summary)}
    if upd_tables:
        tables["updates"] = pd.concat(upd_tables, ignore_index=True).astype({"at": "datetime64[us]"})
    metrics.append(metric_row("n_users", len(users), embedder=emb_name))
    metrics.append(metric_row("n_probes", float(pq["question_id"].nunique()) if len(pq) else 0.0, embedder=emb_name))
    return ExperimentResult(metrics=metrics, per_query=pq, tables=tables)
