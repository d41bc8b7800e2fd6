"""`resolver_transfer`: does a resolver keep true facts and retire stale ones outside our generator?

Each user of each set (world A's timelines, split by user split, and world B)
is replayed through `MemoryEngine` with `add_fact` in time order (gold slots
attached, read only by the oracle), once per resolver. Two figures per
(set, split, resolver), each with a 95% cluster-bootstrap interval (users
resampled):

- false-update rate: UPDATE / DELETE actions that overwrote or removed a memory
  whose fact was still true at that moment (a coexisting value of a
  several-valued attribute, another attribute, another person), per ingested
  fact; a same-value rewording replaced by another is a merge, counted apart;
- survival: right after the statement that supersedes a fact, is that fact's
  wording still stored? "direct" = the superseded fact and the superseding
  statement are both plain (not oblique); "oblique" = either one is.

Survival here reads the store, not a ranked list: it does not depend on the
search weights, only on what the resolver left behind.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.evaluation.replay import (
    CAUSES,
    GoldFact,
    MemoEmbedder,
    clean,
    false_update_cause,
    ts,
)
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.experiments.resolver_ceiling import candidate_ranks, ceiling_rows
from widemem_bench.metrics.bootstrap import bootstrap_ci
from widemem_bench.metrics.registry import METRICS, register

RESOLVERS = ("append", "rule", "structure", "pair", "oracle")
RATE_METRIC = "resolver_event_rate"
# Measuring sets with no dataset config: params.sets name -> sealed split (structure v2's fresh read).
FRESH = {"world_n_fresh": "world N fresh", "world_n_fresh2": "world N fresh 2", "world_n_fresh3": "world N fresh 3",
         "world_n_fresh4": "world N fresh 4", "world_n_fresh5": "world N fresh 5",
         "world_n_fresh6": "world N fresh 6", "world_n_fresh7": "world N fresh 7",
         "world_n_fresh8": "world N fresh 8", "world_n_fresh9": "world N fresh 9"}


def _rate(hits: Any, den: Any) -> float:
    d = float(np.sum(den))
    return float(np.sum(hits)) / d if d > 0 else math.nan


def _rate_terms(hits: Any, den: Any) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(hits, dtype=float), np.asarray(den, dtype=float)


if RATE_METRIC not in METRICS:
    register(RATE_METRIC, _rate, direction="lower", inputs=("hits", "den"), ratio=_rate_terms,
             description="events per opportunity (false updates per fact, survivals per superseded fact)")


def rate_with_ci(hits: Any, den: Any, groups: Any, n_boot: int, seed: int) -> tuple[float, float, float]:
    """(rate, lo, hi): sum(hits) / sum(den) with a cluster bootstrap over ``groups``."""
    h = np.asarray(hits, dtype=float)
    if h.size == 0 or float(np.sum(den)) == 0:
        return math.nan, math.nan, math.nan
    return bootstrap_ci(RATE_METRIC, h, np.asarray(den, dtype=float), groups=np.asarray(groups),
                        n_boot=n_boot, seed=seed)


# ---------------------------------------------------------------- gold
def gold_facts(events: pd.DataFrame) -> list[GoldFact]:
    out = []
    for r in events.itertuples(index=False):
        vf = ts(r.valid_from)
        if vf is None or r.subject is None or r.attribute is None:
            continue
        multi = getattr(r, "multi_valued", False)
        out.append(GoldFact(str(r.subject), str(r.attribute), str(r.value), vf, ts(r.valid_to), bool(r.oblique),
                            fact_id=str(r.fact_id), multi=bool(multi) if multi is not None and not pd.isna(multi) else False))
    return out


# ---------------------------------------------------------------- replay
def replay_user(engine: MemoryEngine, uid: str, events: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(updates, superseded) rows of one user's replay (facts in time order).

    updates: every UPDATE / DELETE with its verdict ("false_update": the old
    memory's fact was still true and the new fact is not the same value;
    "merge": same subject, attribute and value; "retired": the old fact was no
    longer true). superseded: one row per fact superseded during the timeline,
    with whether its wording was still stored right after the superseding
    statement(s).
    """
    ev = events[events["fact_stripped"].notna()].sort_values(["at", "fact_id"], kind="stable")
    facts = gold_facts(ev)
    by_content: dict[str, list[GoldFact]] = {}
    content_of: dict[str, str] = {}
    for r in ev.itertuples(index=False):
        content_of[str(r.fact_id)] = clean(r.fact_stripped)
    for f in facts:
        by_content.setdefault(content_of[f.fact_id], []).append(f)
    # Facts superseded at time t, with the statements that superseded them.
    ends: dict[dt.datetime, list[GoldFact]] = {}
    for f in facts:
        if f.valid_to is not None:
            ends.setdefault(f.valid_to, []).append(f)
    updates: list[dict[str, Any]] = []
    superseded: list[dict[str, Any]] = []
    rows = list(ev.itertuples(index=False))
    i = 0
    while i < len(rows):
        t = ts(rows[i].at)
        assert t is not None
        batch = []
        while i < len(rows) and ts(rows[i].at) == t:
            batch.append(rows[i])
            i += 1
        for e in batch:
            content = clean(e.fact_stripped)
            slot = (str(e.subject), str(e.attribute)) if e.subject and e.attribute else None
            importance = float(e.importance) if e.importance is not None and not pd.isna(e.importance) else 5.0  # type: ignore[arg-type]
            done = engine.add_fact(content, uid, importance=importance, at=t, slot=slot)
            new_gold = [g for g in by_content.get(content, []) if g.fact_id == str(e.fact_id)]
            for action in done.actions:
                if action.kind not in ("UPDATE", "DELETE") or action.target_id is None:
                    continue
                hist = [h for h in engine.history(action.target_id) if h.action == action.kind and h.at == t]
                old_content = clean(hist[-1].old_content or "") if hist else ""
                old_gold = by_content.get(old_content, [])
                verdict = _verdict(old_gold, new_gold, t)
                updates.append({"user_id": uid, "action": action.kind, "old": old_content, "new": content,
                                "at": t, "verdict": verdict,
                                "cause": false_update_cause(old_gold, new_gold, t) if verdict == "false_update" else ""})
        stored = {clean(m.content) for m in engine.memories(uid)}
        supersede_by = {(str(e.subject), str(e.attribute)): bool(e.oblique) for e in batch}
        for f in ends.get(t, []):
            key = (f.subject, f.attribute)
            if key not in supersede_by:
                continue
            content = content_of[f.fact_id]
            if any(g.valid_at(t) for g in by_content.get(content, [])):
                continue  # the same wording is true again (or for another fact): not stale
            superseded.append({
                "user_id": uid, "fact_id": f.fact_id, "content": content, "at": t,
                "attribute": f.attribute if f.subject == "user" else f"other.{f.attribute}",
                "kind": "oblique" if (f.oblique or supersede_by[key]) else "direct",
                "survived": float(content in stored),
            })
    return updates, superseded


def _verdict(old: list[GoldFact], new: list[GoldFact], t: dt.datetime) -> str:
    true_then = [g for g in old if g.valid_at(t)]
    if not true_then:
        return "retired" if old else "unknown"
    new_keys = {(g.subject, g.attribute, g.value) for g in new}
    if all((g.subject, g.attribute, g.value) in new_keys for g in true_then):
        return "merge"
    return "false_update"


def replay(events: pd.DataFrame, users: Sequence[str], embedder: Any, resolver: str,
           candidate_k: int = 5) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """(updates, superseded, facts per user) for one resolver over ``users``."""
    engine = MemoryEngine(embedder, EngineConfig(resolver=resolver, candidate_k=candidate_k))
    upd: list[dict[str, Any]] = []
    sup: list[dict[str, Any]] = []
    n_facts: dict[str, int] = {}
    try:
        ev = events[events["user_id"].isin(users) & events["fact_stripped"].notna()]
        for user, uev in ev.groupby("user_id", sort=True):
            u, s = replay_user(engine, str(user), uev)
            upd.extend(u)
            sup.extend(s)
            n_facts[str(user)] = len(uev)
    finally:
        engine.close()
    facts = pd.Series(n_facts, dtype=float).reindex(list(users)).fillna(0.0)
    return (pd.DataFrame(upd, columns=["user_id", "action", "old", "new", "at", "verdict", "cause"]),
            pd.DataFrame(sup, columns=["user_id", "fact_id", "content", "at", "attribute", "kind", "survived"]),
            facts)


# ---------------------------------------------------------------- sets
def load_set(name: str, cfg: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(timelines, meta) of the data set configured in ``configs/dataset/<name>.yaml``."""
    from omegaconf import OmegaConf

    from widemem_bench.provenance import REPO_ROOT
    from widemem_bench.timelines.loading import load_dataset

    if name in FRESH:  # generated in memory by the sealed loader, never on disk
        from widemem_bench.sealed import open_split

        # the run's own purpose ("measure" under make bench): an ad hoc read leaves a ledger line
        tl = open_split(FRESH[name])
        return tl, dict(tl.meta)
    if (cfg.get("dataset") or {}).get("name") == name:
        return load_dataset(cfg["dataset"], cfg.get("paths") or {})
    path = REPO_ROOT / "configs" / "dataset" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ValueError(f"params.sets: unknown data set {name!r}; known: {', '.join(known)}")
    # a plain copy: OmegaConf takes no dict subclass (the key-coverage test's read-tracking dict)
    paths = dict((cfg.get("paths") or {}).items())
    node = OmegaConf.merge({"paths": paths}, {"dataset": OmegaConf.load(path)})
    resolved: Any = OmegaConf.to_container(node, resolve=True)
    return load_dataset(dict(resolved["dataset"]), paths)


def _summarise(updates: pd.DataFrame, sup: pd.DataFrame, facts: pd.Series, users: Sequence[str],
               n_boot: int, seed: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    idx = pd.Index(list(users))
    facts = facts.reindex(idx).fillna(0.0)
    for verdict, metric in (("false_update", "false_update_rate"), ("merge", "merge_rate")):
        hits = updates[updates["verdict"] == verdict].groupby("user_id").size().reindex(idx).fillna(0.0)
        v, lo, hi = rate_with_ci(hits.to_numpy(), facts.to_numpy(), idx.to_numpy(), n_boot, seed)
        out.append({"metric": metric, "kind": "all", "value": v, "ci_lo": lo, "ci_hi": hi,
                    "count": int(hits.sum()), "n": int(facts.sum())})
    false = updates[updates["verdict"] == "false_update"]
    for cause in CAUSES:  # counts per cause; their rate is of facts ingested, as the false updates'
        c = int((false["cause"] == cause).sum()) if "cause" in false else 0
        out.append({"metric": "false_update_cause", "kind": cause, "value": c / max(float(facts.sum()), 1.0),
                    "ci_lo": math.nan, "ci_hi": math.nan, "count": c, "n": int(facts.sum())})
    out.append({"metric": "updates", "kind": "all", "value": float(len(updates)), "ci_lo": math.nan,
                "ci_hi": math.nan, "count": len(updates), "n": int(facts.sum())})
    for kind in ("direct", "oblique"):
        s = sup[sup["kind"] == kind]
        v, lo, hi = rate_with_ci(s["survived"].to_numpy(), np.ones(len(s)), s["user_id"].to_numpy(), n_boot, seed)
        out.append({"metric": "survival", "kind": kind, "value": v, "ci_lo": lo, "ci_hi": hi,
                    "count": int(s["survived"].sum()), "n": len(s)})
    return out


def _sealed_holdout(tl: Any, by_user: pd.Series, splits: Any) -> pd.Series:
    """World A's and world N's holdout users come through the sealed-split loader (the
    ledger sees the read: a measuring set, read once per method version)."""
    from widemem_bench.sealed import HOLDOUTS, open_split

    name = HOLDOUTS.get(str(tl.world))
    if name is None or (splits and "holdout" not in splits) or not (by_user == "holdout").any():
        return by_user

    hold = set(open_split(name, world=tl).events["user_id"].astype(str))
    return by_user.where(~by_user.index.astype(str).isin(hold) | (by_user == "holdout"), "holdout")


def _main_params(p: dict[str, Any]) -> tuple[int, list[str], int]:
    n_boot = int(p.get("n_boot", 1000))
    if n_boot < 1:
        raise ValueError(f"params.n_boot: must be >= 1, got {n_boot}")
    resolvers = [str(r) for r in p.get("resolvers", RESOLVERS)]
    for r in resolvers:
        if r not in RESOLVERS:
            raise ValueError(f"params.resolvers: {r!r} is not one of {', '.join(RESOLVERS)} (llm needs a network)")
    candidate_k = int(p.get("candidate_k", 5))
    if candidate_k < 1:
        raise ValueError(f"params.candidate_k: must be >= 1, got {candidate_k}")
    if p.get("seen") is not None:
        raise ValueError("params.seen: the † marks come from the entry headers of reports/DESIGN_LOG.md; "
                         "remove params.seen")
    return n_boot, resolvers, candidate_k


def _ceiling_params(p: dict[str, Any]) -> tuple[list[int], list[str]]:
    ceiling_k = sorted({int(k) for k in (p.get("ceiling_k") or [])})
    if any(k < 1 for k in ceiling_k):
        raise ValueError(f"params.ceiling_k: every candidate count must be >= 1, got {ceiling_k}")
    ceiling_resolvers = [str(r) for r in (p.get("ceiling_resolvers") or [])]
    for r in ceiling_resolvers:
        if r not in RESOLVERS:
            raise ValueError(f"params.ceiling_resolvers: {r!r} is not one of {', '.join(RESOLVERS)}")
    return ceiling_k, ceiling_resolvers


def _ceiling_set(set_name: str, ev: pd.DataFrame, emb: Any, split_users: dict[str, list[str]],
                 all_users: list[str], ks: Sequence[int], resolvers: Sequence[str],
                 done: dict[str, tuple[Any, float]], candidate_k: int, seed: int) -> list[dict[str, Any]]:
    """Item 3 of issue 26 for one set: what the candidate count lets a resolver reach, and
    what it costs (a resolver's main replay is reused at ``candidate_k``)."""
    out: list[dict[str, Any]] = []
    ranks = candidate_ranks(ev, emb)
    for split, users in split_users.items():
        for row in ceiling_rows(ranks[ranks["user_id"].isin(users)], ks):
            row.update(set=set_name, split=split, resolver="-", users=len(users))
            out.append(row)
    for resolver in resolvers:
        for k in ks:
            if k == candidate_k and resolver in done:
                (updates, sup, facts), secs = done[resolver]
            else:
                t0 = time.perf_counter()
                updates, sup, facts = replay(ev, all_users, emb, resolver, k)
                secs = time.perf_counter() - t0
            for split, users in split_users.items():
                rows = _summarise(updates[updates["user_id"].isin(users)], sup[sup["user_id"].isin(users)],
                                  facts, users, 1, seed)
                n_f = int(facts.sum())
                rows.append({"metric": "ms_per_fact", "kind": "all", "value": 1000 * secs / max(n_f, 1),
                             "ci_lo": math.nan, "ci_hi": math.nan, "count": 0, "n": n_f})
                for row in rows:
                    row.update(set=set_name, split=split, resolver=resolver, users=len(users), candidate_k=k)
                    out.append(row)
    return out


@experiment("resolver_transfer", honours=("embedder.name", "params"), choices={"resolver": "params.resolvers"})
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    n_boot, resolvers, candidate_k = _main_params(p)
    ceiling_k, ceiling_resolvers = _ceiling_params(p)
    sets = p.get("sets") or [{"name": (cfg.get("dataset") or {}).get("name", "timelines")}]
    emb_name = str((cfg.get("embedder") or {}).get("name"))
    summary: list[dict[str, Any]] = []
    ceiling: list[dict[str, Any]] = []
    metrics: list[dict[str, Any]] = []
    upd_tables: list[pd.DataFrame] = []
    sup_tables: list[pd.DataFrame] = []
    metas: dict[str, Any] = {}
    for spec in sets:
        spec = {"name": spec} if isinstance(spec, str) else dict(spec)
        set_name = str(spec["name"])
        with ctx.timer(f"load:{set_name}"):
            tl, meta = load_set(set_name, cfg)
        metas[set_name] = meta
        events = tl.events
        split_users: dict[str, list[str]] = {}
        splits = spec.get("splits")
        by_user = events.groupby("user_id")["split"].first()
        by_user = _sealed_holdout(tl, by_user, splits)
        if splits:
            for sp in splits:
                split_users[str(sp)] = sorted(str(u) for u in by_user[by_user == sp].index)
                if not split_users[str(sp)]:
                    raise ValueError(f"params.sets: data set {set_name!r} has no users in split {sp!r}")
        else:
            split_users["all"] = sorted(str(u) for u in by_user.index)
        n_users = p.get("n_users")
        if n_users is not None:
            split_users = {k: v[: int(n_users)] for k, v in split_users.items()}
        all_users = sorted({u for v in split_users.values() for u in v})
        ev = events[events["user_id"].isin(all_users)]
        with ctx.timer(f"encode:{set_name}"):
            emb = MemoEmbedder(ctx.embedder(), ev["fact_stripped"].dropna(), kinds=("passage",))
        done: dict[str, tuple[Any, float]] = {}
        for resolver in resolvers:
            with ctx.timer(f"replay:{set_name}:{resolver}"):
                t0 = time.perf_counter()
                updates, sup, facts = replay(ev, all_users, emb, resolver, candidate_k)
                done[resolver] = ((updates.copy(), sup.copy(), facts), time.perf_counter() - t0)
            updates["set"], sup["set"], updates["resolver"], sup["resolver"] = set_name, set_name, resolver, resolver
            upd_tables.append(updates)
            sup_tables.append(sup)
            for split, users in split_users.items():
                rows = _summarise(updates[updates["user_id"].isin(users)], sup[sup["user_id"].isin(users)],
                                  facts, users, n_boot, ctx.seed)
                for row in rows:
                    row.update(set=set_name, split=split, resolver=resolver, users=len(users))
                    summary.append(row)
                    metrics.append(metric_row(row["metric"], row["value"], (row["ci_lo"], row["ci_hi"]),
                                              embedder=emb_name, split=split, kind=row["kind"], setting=resolver,
                                              set=set_name, n=row["n"], count=row["count"]))
        if ceiling_k:
            with ctx.timer(f"ceiling:{set_name}"):
                ceiling.extend(_ceiling_set(set_name, ev, emb, split_users, all_users, ceiling_k,
                                            ceiling_resolvers, done, candidate_k, ctx.seed))
    table = pd.DataFrame(summary)
    ceil = pd.DataFrame(ceiling)
    for row in ceiling:
        if row["metric"] in ("candidate_miss", "survival"):
            metrics.append(metric_row(f"ceiling_{row['metric']}", row["value"], None, embedder=emb_name,
                                      split=row["split"], kind=row["kind"], setting=row["resolver"],
                                      set=row["set"], n=row["n"], count=row["count"],
                                      candidate_k=row["candidate_k"]))
    # What the report section renders besides the tables (reports/sections/resolver_transfer.py).
    sets_table = pd.DataFrame([{"set": k, "version": v.get("version"), "embedder": emb_name,
                                "candidate_k": candidate_k} for k, v in metas.items()])
    tables = {"summary": table, "sets": sets_table}
    if not ceil.empty:
        tables["ceiling"] = ceil
    if upd_tables:
        tables["updates"] = pd.concat(upd_tables, ignore_index=True).astype({"at": "datetime64[us]"})
    per_query = pd.concat(sup_tables, ignore_index=True).astype({"at": "datetime64[us]"}) if sup_tables else None
    return ExperimentResult(metrics=metrics, per_query=per_query, tables=tables)


# ---------------------------------------------------------------- report
