"""`ymyl_decay`: is a fact still reachable after N quiet days, and does YMYL keep it so?

For every fact still true at the end of a user's timeline, its slot question
("what medication do I take?") is asked as if the fact had been said N days
earlier and never again, N in 1..365. Everything else the user said stays
where the timeline put it, with its real age at the end of the timeline: the
competition is the user's own year of memories, from fresh to a year old.
Memories of the same slot (restatements, older values) are left out, so only
the fact's own ageing moves it.

Ages are only a parameter of the batched scorer (`engine/batch.py`): the
candidates and cosines are laid out once and every (N, decay function, rate,
YMYL setting) is numpy over them. YMYL settings:

- `off`: widemem's default;
- `on`: widemem 2.0.2's YMYL (importance floor 8 and decay immunity for a
  strong regex match of the memory's text, `engine.ymyl.classify_ymyl`);
- `on_lexicon`: the same two effects with the engine's `ymyl_classifier="lexicon"`
  (widemem's rule plus the project's drug / condition / usage lexicon,
  `engine.ymyl.classify_ymyl_lexicon`), as `MemoryEngine` applies them;
- `on_gold`: the same two effects for the facts the timeline labels strong
  YMYL: what a classifier that recognises every such fact would give.

Per fact: in the top `reach_k` (the "reach": what an agent reads), at top 1,
and the search's confidence band; and "lost": of the facts in reach at the
first age (1 day), the share out of reach at N days ("out of reach" = not
among the top k results for its own question), for k = `reach_k` and k = 1. Split into critical (YMYL strong), core
(importance 7-9) and trivial (importance 1-3); the medication facts are the
seed's example.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import batch, scoring
from widemem_bench.engine.config import EngineConfig
from widemem_bench.engine.modes import effective_top_k, fetch_k, preset
from widemem_bench.engine.recency import compute_recency
from widemem_bench.engine.ymyl import classify_ymyl, classify_ymyl_lexicon
from widemem_bench.evaluation.replay import pick_users
from widemem_bench.evaluation.ymyl import classifier_quality, is_strong, vocab_overlap
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment
from widemem_bench.harness.engines import thresholds_in_force
from widemem_bench.harness.settings import engine_config
from widemem_bench.metrics.rates import rate_ci
from widemem_bench.timelines import templates as T

DEFAULT_DAYS = (1, 7, 14, 30, 45, 60, 75, 90, 120, 180, 270, 365)
DEFAULT_DECAYS: tuple[tuple[str, float], ...] = (
    ("exponential", 0.005), ("exponential", 0.01), ("exponential", 0.02), ("exponential", 0.05),
    ("linear", 0.005), ("step", 0.0), ("none", 0.0),
)
YMYL_SETTINGS = ("off", "on", "on_lexicon", "on_gold")
CATEGORIES = ("critical", "core", "context", "trivial")


def category(importance: float, strong: bool) -> str:
    """critical (YMYL strong), core (importance 7-9), trivial (1-3), else context."""
    if strong:
        return "critical"
    if 7 <= importance <= 9:
        return "core"
    if importance <= 3:
        return "trivial"
    return "context"


@dataclasses.dataclass
class Layout:
    """Setting-independent arrays: one row per (target fact, question), its candidates in columns."""

    prep: batch.Prepared           # ages hold the competitors' ages; column 0 is never special
    target_col: np.ndarray         # (R,) column of the target memory in each row
    strong_regex: np.ndarray       # (R, C) bool: widemem's regex says strong YMYL
    strong_lexicon: np.ndarray     # (R, C) bool: the engine's lexicon classifier says strong YMYL
    strong_gold: np.ndarray        # (R, C) bool: the timeline labels the memory strong YMYL
    imp_raw: np.ndarray            # (R, C) importance 0-10 (NaN = absent)
    rows: pd.DataFrame             # per row: user_id, fact_id, attribute, category, text, split


def _question_texts(subject: str, attribute: str, n: int, rng: np.random.Generator) -> list[str]:
    key = f"{attribute}.{'self' if subject == 'user' else 'other'}"
    pool = T.QUESTIONS.get(key)
    if not pool:
        return []
    idx = rng.permutation(len(pool))[:n]
    return [pool[int(i)].format(rel=subject) for i in idx]


@dataclasses.dataclass
class _Store:
    """Every user's memories as the engine would hold them, with per-memory facts."""

    mems: pd.DataFrame
    fact_to_mem: dict[Any, int]
    age: np.ndarray           # days from the memory to the end of the timeline
    slots: dict[int, set[tuple[str, str]]]
    gold_strong: np.ndarray   # the timeline labels it strong YMYL
    regex_strong: np.ndarray  # widemem's regex says strong
    lex_strong: np.ndarray    # the lexicon classifier says strong
    by_user: dict[str, np.ndarray]
    user: np.ndarray
    attr: np.ndarray          # the memory's attributes, joined


def _store(ev: pd.DataFrame) -> _Store:
    mems, fact_to_mem = batch.build_memories(ev)
    end = ev["at"].max().normalize() + pd.Timedelta(days=1)
    slots: dict[int, set[tuple[str, str]]] = {}
    gold_strong = np.zeros(len(mems), bool)
    for r in ev.itertuples(index=False):
        j = fact_to_mem[r.fact_id]
        if r.subject is not None and r.attribute is not None:
            slots.setdefault(j, set()).add((str(r.subject), str(r.attribute)))
        if r.ymyl_strength == "strong":
            gold_strong[j] = True
    return _Store(
        mems=mems, fact_to_mem=fact_to_mem,
        age=((end - pd.to_datetime(mems["at"])).dt.total_seconds() / 86400.0).to_numpy(float),
        slots=slots, gold_strong=gold_strong,
        regex_strong=np.array([is_strong(classify_ymyl(c)) for c in mems["content"]], bool),
        lex_strong=np.array([is_strong(classify_ymyl_lexicon(c)) for c in mems["content"]], bool),
        by_user={str(u): np.asarray(ix, dtype=np.int64) for u, ix in mems.groupby("user_id").indices.items()},
        user=mems["user_id"].astype(str).to_numpy(),
        attr=np.array([",".join(sorted(a for _, a in slots.get(i, set()))) for i in range(len(mems))]),
    )


def _targets(ev: pd.DataFrame, fact_to_mem: dict[Any, int], questions_per_fact: int,
             seed: int) -> list[dict[str, Any]]:
    """One row per (fact still true at the end, question asked about its slot)."""
    targets = ev[(~ev["restatement"]) & ev["valid_to"].isna() & ev["subject"].notna() & ev["attribute"].notna()]
    targets = targets.sort_values("fact_id", kind="stable")
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for r in targets.itertuples(index=False):
        slot = (str(r.subject), str(r.attribute))
        j = fact_to_mem[r.fact_id]
        for text in _question_texts(slot[0], slot[1], questions_per_fact, rng):
            rows.append({"user_id": str(r.user_id), "fact_id": r.fact_id, "mem": j, "text": text,
                         "attribute": slot[1] if slot[0] == "user" else f"other.{slot[1]}",
                         "slot": slot, "split": r.split, "importance": float(r.importance),  # type: ignore[arg-type]
                         "category": category(float(r.importance), bool(r.ymyl_strength == "strong"))})  # type: ignore[arg-type]
    return rows


def _competitors(st: _Store, x: dict[str, Any], store_size: int | None, pad_rng: np.random.Generator) -> np.ndarray:
    """The target's user's memories minus other memories of its slot, padded to `store_size`."""
    ix = st.by_user[x["user_id"]]
    keep = np.array([i == x["mem"] or not (st.slots.get(int(i), set()) & {x["slot"]}) for i in ix], bool)
    ix = ix[keep]
    if store_size is not None and len(ix) < store_size:
        # Other users' facts are subject-stripped like this user's, so they read as
        # things this user could have said; the target's attribute is left out so the
        # padding never holds a second answer, and YMYL facts are left out because a
        # chattier user talks more about everyday things, not about more illnesses,
        # banks or lawsuits: the user's YMYL profile stays their own.
        pool = np.flatnonzero((st.user != x["user_id"]) & (st.attr != x["slot"][1])
                              & ~st.gold_strong & ~st.regex_strong)
        ix = np.concatenate([ix, pad_rng.choice(pool, size=min(store_size - len(ix), len(pool)), replace=False)])
    return ix


def layout(events: pd.DataFrame, embedder: Any, *, mode: str = "balanced", questions_per_fact: int = 2,
           seed: int = 0, store_size: int | None = None) -> Layout:
    """Targets, their questions and candidates, encoded once (see the module docstring).

    ``store_size`` pads each user's store to that many memories with other users'
    memories (any attribute but the target's), at their own ages: a busier user
    than the timeline's ~25 facts a year. None keeps the user's own store. The
    candidate search is the batched scorer's (`batch.nearest` and friends).
    """
    ev = events[events["fact_stripped"].notna()].copy()
    ev["content"] = ev["fact_stripped"].map(lambda t: " ".join(str(t).split()))
    st = _store(ev)
    pad_rng = np.random.default_rng([seed, 1])
    rows = _targets(ev, st.fact_to_mem, questions_per_fact, seed)
    texts = [x["text"] for x in rows]
    mvec = np.asarray(embedder.encode(st.mems["content"].tolist(), kind="passage"), dtype=np.float32)
    qvec = np.asarray(embedder.encode(sorted(set(texts)), kind="query"), dtype=np.float32)
    qrow = {t: i for i, t in enumerate(sorted(set(texts)))}
    qclass = np.array([batch.CLASSES.index(scoring.classify_query(t)) for t in texts], dtype=np.int8)
    sim_first = qclass == batch.CLASSES.index("factual")
    cands = [batch.nearest(mvec, _competitors(st, x, store_size, pad_rng), qvec[qrow[x["text"]]],
                           fetch_k(mode, "x", similarity_first=bool(sf)))
             for x, sf in zip(rows, sim_first, strict=True)]
    mem, sim = batch.candidate_matrix([c for c, _ in cands], [s for _, s in cands])
    present = mem >= 0
    safe = np.where(present, mem, 0)
    gold = present & (mem == np.array([x["mem"] for x in rows], np.int64)[:, None])
    # In a big store a target can miss its question's fetch_k nearest: then it is out
    # of reach at every age (gold rank inf) and its column is -1.
    target_col = np.where(gold.any(axis=1), np.argmax(gold, axis=1), -1)
    imp_raw = np.where(present, st.mems["importance"].astype(float).to_numpy()[safe], np.nan)
    fast, slow = batch.boost_rows(sim, present, sim_first)
    prep = batch.Prepared(
        question_ids=np.array([f"{x['fact_id']}:{i}" for i, x in enumerate(rows)]),
        user_ids=np.array([x["user_id"] for x in rows]), qclass=qclass, sim=sim,
        imp10=scoring.importance01(imp_raw), age=np.where(present, st.age[safe], np.nan), mem=mem,
        gold=gold, n_gold_stored=np.ones(len(rows), np.int64), memories=st.mems, mode=mode,
        top_k=effective_top_k(mode), boost=preset(mode).similarity_boost, adapt=True,
        rep_query=batch.representative_queries(texts, qclass), fast_boost=fast, slow_boost=slow,
    )
    frame = pd.DataFrame([{k: v for k, v in x.items() if k not in ("slot", "mem")} for x in rows])
    return Layout(prep, target_col, np.where(present, st.regex_strong[safe], False),
                  np.where(present, st.lex_strong[safe], False),
                  np.where(present, st.gold_strong[safe], False), imp_raw, frame)


def score_days(lay: Layout, days: float, decay: str, rate: float, ymyl: str,
               weights: tuple[float, float, float], thresholds: tuple[float, float, float]) -> batch.Scored:
    """Every target aged ``days`` (competitors keep their ages) under one setting."""
    if ymyl not in YMYL_SETTINGS:
        raise ValueError(f"params.ymyl: unknown setting {ymyl!r}, expected one of {', '.join(YMYL_SETTINGS)}")
    prep = lay.prep
    age = prep.age.copy()
    rows = np.flatnonzero(lay.target_col >= 0)
    age[rows, lay.target_col[rows]] = float(days)
    rec = np.asarray(compute_recency(age, decay, rate), dtype=np.float64)
    imp10 = prep.imp10
    if ymyl != "off":
        strong = {"on": lay.strong_regex, "on_lexicon": lay.strong_lexicon, "on_gold": lay.strong_gold}[ymyl]
        # widemem's two YMYL effects, as MemoryEngine applies them (floor at add, immunity
        # at search): the engine's importance floor, and full recency at any age.
        cfg = EngineConfig()
        floor = np.maximum(np.nan_to_num(lay.imp_raw), float(cfg.ymyl_importance_floor))
        imp10 = np.where(strong, scoring.importance01(floor), prep.imp10)
        if cfg.ymyl_decay_immunity:
            rec = np.where(strong, 1.0, rec)
    p2 = dataclasses.replace(prep, imp10=imp10, age=age)
    return batch.score(p2, weights, decay, rate, thresholds, recency=rec)


def curve(lay: Layout, days: tuple[float, ...], decays: tuple[tuple[str, float], ...],
          weights: tuple[float, float, float], thresholds: tuple[float, float, float], reach_k: int) -> pd.DataFrame:
    """Long per-row outcomes for every (decay, rate, ymyl, N)."""
    parts = []
    base = lay.rows[["user_id", "fact_id", "attribute", "category", "split"]]
    for decay, rate in decays:
        for ymyl in YMYL_SETTINGS:
            for n in days:
                sc = score_days(lay, n, decay, rate, ymyl, weights, thresholds)
                df = base.copy()
                df["decay"], df["rate"], df["ymyl"], df["days"] = decay, rate, ymyl, float(n)
                df["row"] = np.arange(len(df))
                df["rank"] = sc.gold_rank
                df["in_reach"] = sc.gold_rank <= reach_k
                df["top1"] = sc.gold_rank == 1
                df["band"] = sc.band
                df["top1_moderate_plus"] = df["top1"] & (sc.band >= 2)
                parts.append(df)
    return pd.concat(parts, ignore_index=True)


# "lost" metric -> the outcome it is lost from.
LOST = {"lost_reach": "in_reach", "lost_top1": "top1"}


def lost_by_day(df: pd.DataFrame, outcome: str, base_day: float) -> pd.DataFrame:
    """Rows of one setting that had ``outcome`` (in reach, or at top 1) at ``base_day``,
    at every day, with ``lost`` = no longer so.

    ``df`` holds one setting's long outcomes (columns ``row``, ``days``, ``user_id`` and
    ``outcome``; one line per row and day). Returns ``days``, ``row``, ``user_id``,
    ``lost``; the share lost at day N is the mean of ``lost`` over that day's lines.
    """
    base = df.loc[df["days"] == base_day, ["row", outcome]]
    if base.empty:
        raise ValueError(f"lost_by_day: no outcomes at the base day {base_day:g}")
    if base["row"].duplicated().any():
        raise ValueError("lost_by_day: a row appears twice at the base day; pass one setting at a time")
    had = set(base.loc[base[outcome].astype(bool), "row"].tolist())
    keep = df["row"].isin(had)
    out = df.loc[keep, ["days", "row", "user_id"]].copy()
    out["lost"] = ~df.loc[keep, outcome].astype(bool)
    return out.reset_index(drop=True)


def _check_params(p: dict[str, Any]) -> tuple[tuple[float, ...], tuple[tuple[str, float], ...], int]:
    days = tuple(float(d) for d in p.get("days", DEFAULT_DAYS))
    if not days or any(d < 0 for d in days):
        raise ValueError(f"params.days: expected non-negative day counts, got {list(days)}")
    decays = tuple((str(d["function"]), float(d.get("rate", 0.0))) for d in p["decays"]) if p.get("decays") \
        else DEFAULT_DECAYS
    k = int(p.get("reach_k", 3))
    if k < 1:
        raise ValueError(f"params.reach_k: must be >= 1, got {k}")
    return days, decays, k


# Decays and YMYL settings are swept by params; ages come from the timeline clock.
@experiment("ymyl_decay", honours=("embedder", "dataset", "weights", "thresholds", "mode", "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    p = cfg.get("params") or {}
    days, decays, reach_k = _check_params(p)
    n_boot = int(p.get("n_boot", 300))
    tl = ctx.timelines()
    users = pick_users(tl.events, p.get("n_users"))
    ev = tl.events[tl.events["user_id"].isin(users)]
    emb = ctx.embedder()
    emb_name = str(emb.name)
    ec = engine_config(cfg)
    weights, thresholds = ec.weights, thresholds_in_force(ec, emb)
    stores = [None if x is None else int(x) for x in p.get("store_sizes", [None, 100, 300])]
    parts, n_targets = [], 0
    for size in stores:
        with ctx.timer(f"layout:{size or 'own'}"):
            lay = layout(ev, emb, mode=ec.default_mode,
                         questions_per_fact=int(p.get("questions_per_fact", 2)), seed=ctx.seed, store_size=size)
        n_targets = int(lay.rows["fact_id"].nunique())
        with ctx.timer("score"):
            c = curve(lay, days, decays, weights, thresholds, reach_k)  # type: ignore[arg-type]
        c["store"] = "own" if size is None else str(size)
        parts.append(c)
    long = pd.concat(parts, ignore_index=True)
    long["slice"] = long["category"]
    med = long[long["attribute"] == "medication"].assign(slice="medication")
    both = pd.concat([long, med], ignore_index=True)
    # Integer user codes: the bootstrap's grouping is then cheap.
    both["user_id"] = pd.factorize(both["user_id"])[0]
    # "Lost" counts from the youngest age asked (1 day by default).
    base_day = 1.0 if 1.0 in days else min(days)
    table_rows = []
    metrics: list[dict[str, Any]] = []
    with ctx.timer("bootstrap"):
        for key, g5 in both.groupby(["store", "decay", "rate", "ymyl", "slice"], sort=False):
            k: Any = key
            store, decay, rate, ymyl, sl = str(k[0]), str(k[1]), float(k[2]), str(k[3]), str(k[4])
            lost = {name: dict(tuple(lost_by_day(g5, outcome, base_day).groupby("days")))
                    for name, outcome in LOST.items()}
            for day, g in g5.groupby("days", sort=False):
                n = float(day)  # type: ignore[arg-type]
                row: dict[str, Any] = {"store": store, "decay": decay, "rate": rate, "ymyl": ymyl, "slice": sl,
                                       "days": n, "n": len(g), "band_mean": float(g["band"].mean())}
                parts_m: list[tuple[str, Any, Any]] = [
                    (m, g[m], g["user_id"]) for m in ("in_reach", "top1", "top1_moderate_plus")]
                for name in LOST:
                    lg = lost[name].get(day)
                    row[f"{name}_n"] = 0 if lg is None else len(lg)
                    parts_m.append((name, [] if lg is None else lg["lost"], [] if lg is None else lg["user_id"]))
                for m, values, groups in parts_m:
                    v, lo, hi = rate_ci(values, groups, n_boot=n_boot, seed=ctx.seed)
                    row[m], row[f"{m}_lo"], row[f"{m}_hi"] = v, lo, hi
                    metrics.append(metric_row(m, v, (lo, hi), embedder=emb_name, kind=str(sl),
                                              setting=f"{store}:{decay}:{rate:g}:ymyl_{ymyl}", days=n,
                                              decay=decay, rate=rate, ymyl=ymyl, reach_k=reach_k,
                                              store=store, base_day=base_day))
                table_rows.append(row)
    table = pd.DataFrame(table_rows)
    with ctx.timer("classifier"):
        quality = classifier_quality(ev, n_boot=n_boot, seed=ctx.seed)
    for q in quality.to_dict("records"):
        metrics.append(metric_row(f"ymyl_{q['classifier']}_strong_share", q["value"], (q["lo"], q["hi"]),
                                  split=str(q["split"]), kind=str(q["measure"]), n=int(q["n"])))
    overlap = vocab_overlap()
    for k, v in overlap.items():
        metrics.append(metric_row(f"lexicon_overlap_{k}", float(v)))
    metrics.append(metric_row("n_targets", float(n_targets), embedder=emb_name))
    metrics.append(metric_row("n_users", float(len(users)), embedder=emb_name))
    # The store the report plots: the configured one when it was run, else the first.
    plot_store = str(p.get("plot_store", 300))
    ctx.info["plot_store"] = plot_store if plot_store in set(table["store"]) else str(table["store"].iloc[0])
    return ExperimentResult(metrics=metrics, per_query=None, tables={"curve": table, "classifier": quality})
