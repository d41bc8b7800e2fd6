"""`ymyl_decay`: is a fact still reachable after N quiet days, and does YMYL keep it so?

For every fact still true at the end of a user's timeline, its slot question
("what medication do I take?") is asked as if the fact had been said N days
earlier and never again, N in 1..365. Everything else the user said stays
where the timeline put it, with its real age at the end of the timeline: the
competition is the user's own year of memories, from fresh to a year old.
Memories of the same slot (restatements, older values) are left out, so only
the fact's own ageing moves it.

Ages are only a parameter of the batched scorer (`experiments/batch.py`): the
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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.engine import scoring
from widemem_bench.engine.config import WIDEMEM_DECAY
from widemem_bench.engine.modes import effective_top_k, fetch_k, preset
from widemem_bench.engine.recency import compute_recency
from widemem_bench.engine.ymyl import classify_ymyl, classify_ymyl_lexicon
from widemem_bench.engine.ymyl_lexicon import is_condition_name, is_drug_name
from widemem_bench.experiments import batch
from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.contradiction import md_table, pct, pick_users, publish, rate_ci
from widemem_bench.experiments.registry import experiment, report_section
from widemem_bench.harness.settings import engine_config, thresholds_in_force
from widemem_bench.timelines import templates as T
from widemem_bench.timelines import vocab as V

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


def _strong(match: Any) -> bool:
    return match is not None and match.strength == "strong"


def _question_texts(subject: str, attribute: str, n: int, rng: np.random.Generator) -> list[str]:
    key = f"{attribute}.{'self' if subject == 'user' else 'other'}"
    pool = T.QUESTIONS.get(key)
    if not pool:
        return []
    idx = rng.permutation(len(pool))[:n]
    return [pool[int(i)].format(rel=subject) for i in idx]


def layout(events: pd.DataFrame, embedder: Any, *, mode: str = "balanced", questions_per_fact: int = 2,
           seed: int = 0, store_size: int | None = None) -> Layout:
    """Targets, their questions and candidates, encoded once (see the module docstring).

    ``store_size`` pads each user's store to that many memories with other users'
    memories (any attribute but the target's), at their own ages: a busier user
    than the timeline's ~25 facts a year. None keeps the user's own store.
    """
    ev = events[events["fact_stripped"].notna()].copy()
    ev["content"] = ev["fact_stripped"].map(lambda t: " ".join(str(t).split()))
    mems, fact_to_mem = batch.build_memories(ev)
    end = ev["at"].max().normalize() + pd.Timedelta(days=1)
    m_age = ((end - pd.to_datetime(mems["at"])).dt.total_seconds() / 86400.0).to_numpy(float)
    m_imp = mems["importance"].astype(float).to_numpy()
    m_slots: dict[int, set[tuple[str, str]]] = {}
    m_gold_strong = np.zeros(len(mems), bool)
    for r in ev.itertuples(index=False):
        j = fact_to_mem[r.fact_id]
        if r.subject is not None and r.attribute is not None:
            m_slots.setdefault(j, set()).add((str(r.subject), str(r.attribute)))
        if r.ymyl_strength == "strong":
            m_gold_strong[j] = True
    m_regex_strong = np.array([_strong(classify_ymyl(c)) for c in mems["content"]], bool)
    m_lex_strong = np.array([_strong(classify_ymyl_lexicon(c)) for c in mems["content"]], bool)
    by_user: dict[str, np.ndarray] = {
        str(u): np.asarray(ix, dtype=np.int64) for u, ix in mems.groupby("user_id").indices.items()
    }
    m_user = mems["user_id"].astype(str).to_numpy()
    m_attr = np.array([",".join(sorted(a for _, a in m_slots.get(i, set()))) for i in range(len(mems))])
    pad_rng = np.random.default_rng([seed, 1])

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
    texts = [x["text"] for x in rows]
    mvec = np.asarray(embedder.encode(mems["content"].tolist(), kind="passage"), dtype=np.float32)
    qvec = np.asarray(embedder.encode(sorted(set(texts)), kind="query"), dtype=np.float32)
    qrow = {t: i for i, t in enumerate(sorted(set(texts)))}
    qclass = np.array([batch.CLASSES.index(scoring.classify_query(t)) for t in texts], dtype=np.int8)

    cand_lists: list[np.ndarray] = []
    sim_lists: list[np.ndarray] = []
    for x, qc in zip(rows, qclass, strict=True):
        ix = by_user[x["user_id"]]
        keep = np.array([i == x["mem"] or not (m_slots.get(int(i), set()) & {x["slot"]}) for i in ix], bool)
        ix = ix[keep]
        if store_size is not None and len(ix) < store_size:
            # Other users' facts are subject-stripped like this user's, so they read as
            # things this user could have said; the target's attribute is left out so the
            # padding never holds a second answer, and YMYL facts are left out because a
            # chattier user talks more about everyday things, not about more illnesses,
            # banks or lawsuits: the user's YMYL profile stays their own.
            pool = np.flatnonzero((m_user != x["user_id"]) & (m_attr != x["slot"][1])
                                  & ~m_gold_strong & ~m_regex_strong)
            ix = np.concatenate([ix, pad_rng.choice(pool, size=min(store_size - len(ix), len(pool)), replace=False)])
        sims = np.ascontiguousarray(mvec[ix]) @ qvec[qrow[x["text"]]]
        order = np.argsort(-sims, kind="stable")[: fetch_k(mode, "x", similarity_first=bool(qc == 1))]
        cand_lists.append(ix[order])
        sim_lists.append(sims[order])
    width = max((len(c) for c in cand_lists), default=1)
    R = len(rows)
    mem = np.full((R, width), -1, np.int64)
    sim = np.full((R, width), np.nan)
    for i, (c, s) in enumerate(zip(cand_lists, sim_lists, strict=True)):
        mem[i, : len(c)] = c
        sim[i, : len(s)] = s
    present = mem >= 0
    safe = np.where(present, mem, 0)
    target = np.array([x["mem"] for x in rows], np.int64)
    gold = present & (mem == target[:, None])
    # In a big store a target can miss its question's fetch_k nearest: then it is out
    # of reach at every age (gold rank inf) and its column is -1.
    target_col = np.where(gold.any(axis=1), np.argmax(gold, axis=1), -1)
    imp_raw = np.where(present, m_imp[safe], np.nan)
    sim_first = qclass == batch.CLASSES.index("factual")
    npres = present.sum(axis=1)
    tie = (np.isclose(sim[:, 4], sim[:, 5], rtol=0, atol=0) & (npres > 5)) if width > 5 else np.zeros(R, bool)
    p = preset(mode)
    prep = batch.Prepared(
        question_ids=np.array([f"{x['fact_id']}:{i}" for i, x in enumerate(rows)]),
        user_ids=np.array([x["user_id"] for x in rows]), qclass=qclass, sim=sim,
        imp10=np.clip(imp_raw, 0, 10) / 10.0, age=np.where(present, m_age[safe], np.nan), mem=mem, gold=gold,
        n_gold_stored=np.ones(R, np.int64), memories=mems, mode=mode, top_k=effective_top_k(mode),
        boost=p.similarity_boost, adapt=True,
        rep_query={c: texts[int(np.argmax(qclass == c))] for c in range(3) if (qclass == c).any()},
        fast_boost=sim_first & (npres >= 5) & ~tie, slow_boost=sim_first & (npres >= 5) & tie,
    )
    frame = pd.DataFrame([{k: v for k, v in x.items() if k not in ("slot", "mem")} for x in rows])
    return Layout(prep, target_col, np.where(present, m_regex_strong[safe], False),
                  np.where(present, m_lex_strong[safe], False),
                  np.where(present, m_gold_strong[safe], False), imp_raw, frame)


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
        # at search): importance floor 8, and full recency at any age.
        imp10 = np.where(strong, np.maximum(np.nan_to_num(lay.imp_raw), 8.0) / 10.0, prep.imp10)
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


def classifier_quality(events: pd.DataFrame, *, n_boot: int = 300, seed: int = 0) -> pd.DataFrame:
    """How widemem's regex and the lexicon classifier read the timeline's stored facts.

    Recall on the facts the timeline labels strong YMYL (all, medication, oblique
    utterances, legal) and the share flagged strong among facts it labels not YMYL (core =
    importance 7-9, trivial = 1-3, all), per user split (the holdout split's users speak
    in template families the other splits never use). One row per (measure, split,
    classifier), with a cluster-bootstrap interval over users.
    """
    ev = events[events["fact_stripped"].notna() & ~events["restatement"].astype(bool)]
    text = ev["fact_stripped"].map(lambda t: " ".join(str(t).split()))
    flags = {"widemem": text.map(lambda t: _strong(classify_ymyl(t))).to_numpy(bool),
             "lexicon": text.map(lambda t: _strong(classify_ymyl_lexicon(t))).to_numpy(bool)}
    strength = ev["ymyl_strength"]
    imp = ev["importance"].astype(float)
    strong = (strength == "strong").to_numpy()
    plain = strength.isna().to_numpy()
    measures = {
        "recall: strong YMYL, all": strong,
        "recall: medication": strong & (ev["attribute"] == "medication").to_numpy(),
        "recall: oblique utterances": strong & ev["oblique"].fillna(False).astype(bool).to_numpy(),
        "recall: legal": strong & (ev["ymyl_category"] == "legal").to_numpy(),
        "false positives: core (importance 7-9, not YMYL)": plain & imp.between(7, 9).to_numpy(),
        "false positives: trivial (importance 1-3)": plain & (imp <= 3).to_numpy(),
        "false positives: all not YMYL": plain,
    }
    split = ev["split"].to_numpy()
    users = ev["user_id"].to_numpy()
    rows = []
    for measure, mask in measures.items():
        for sp in ("train", "validation", "holdout", "all"):
            m = mask & ((split == sp) if sp != "all" else True)
            for clf, flag in flags.items():
                v, lo, hi = rate_ci(flag[m], users[m], n_boot=n_boot, seed=seed)
                rows.append({"measure": measure, "split": sp, "classifier": clf, "n": int(m.sum()),
                             "value": v, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def vocab_overlap() -> dict[str, int]:
    """How many of the generator's drug and condition names the lexicon happens to list."""
    meds = sorted({m for m, _ in V.MEDICATIONS})
    conds = sorted(set(V.CONDITIONS))
    return {"drugs": sum(is_drug_name(m) for m in meds), "drugs_total": len(meds),
            "conditions": sum(is_condition_name(c) for c in conds), "conditions_total": len(conds)}


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
    plot_store = str(p.get("plot_store", 300))
    if plot_store not in set(table["store"]):
        plot_store = str(table["store"].iloc[0])
    artifacts = write_outputs(table, ctx.output_dir, emb_name, len(users), reach_k, n_targets, plot_store,
                              quality, overlap)
    return ExperimentResult(metrics=metrics, per_query=None, tables={"curve": table, "classifier": quality},
                            artifacts=artifacts)


# ---------------------------------------------------------------- report
# Curves on the plot: (slice, YMYL settings drawn).
_PLOT_LINES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("medication", YMYL_SETTINGS),
    ("trivial", ("off", "on", "on_lexicon")),
    ("critical", ("off", "on_lexicon", "on_gold")),
    ("core", ("off", "on_lexicon")),
)
_STYLES = {"off": "-", "on": "--", "on_lexicon": "-.", "on_gold": ":"}
_COLORS = {"medication": "C3", "critical": "C1", "core": "C0", "context": "C2", "trivial": "C7"}


def _plot(table: pd.DataFrame, path: Path, decay: str, rate: float, reach_k: int, store: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = table[(table["decay"] == decay) & (table["rate"] == rate) & (table["store"] == store)]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    panels = ((axes[0], "in_reach", f"in the top {reach_k}"), (axes[1], "top1", "at top 1"),
              (axes[2], "lost_reach", f"lost: out of the top {reach_k}, of those in it at 1 day"))
    for ax, metric, title in panels:
        for sl, settings in _PLOT_LINES:
            if metric == "lost_reach" and sl not in ("medication", "trivial"):
                continue
            for ymyl in settings:
                s = t[(t["slice"] == sl) & (t["ymyl"] == ymyl)].sort_values("days")
                if s.empty or metric not in s:
                    continue
                ax.plot(s["days"], s[metric], _STYLES[ymyl], color=_COLORS[sl], label=f"{sl}, YMYL {ymyl}")
                if metric == "lost_reach" and sl == "medication" and ymyl in ("off", "on_lexicon"):
                    ax.fill_between(s["days"], s[f"{metric}_lo"], s[f"{metric}_hi"], color=_COLORS[sl],
                                    alpha=0.12 if ymyl == "off" else 0.25, lw=0)
        ax.axvline(60, color="grey", lw=0.8)
        ax.text(60, 1.0, " 60 d", color="grey", fontsize=8, va="top", transform=ax.get_xaxis_transform())
        ax.set_xscale("log")
        ax.set_xlabel("days since the fact was last mentioned")
        ax.set_title(title, fontsize=9)
        # Below 0 so that a flat 0% line (an immune fact is never lost) stays visible.
        ax.set_ylim(-0.03, 1.02)
    axes[0].set_ylabel("share of facts")
    axes[1].legend(fontsize=6, ncol=2, loc="lower left")
    axes[2].legend(fontsize=6, loc="upper left")
    fig.suptitle(f"Decay survival, {decay} rate {rate:g}, store of {store} memories per user "
                 "(right: shaded = 95% cluster-bootstrap interval)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _lost_table(t: pd.DataFrame, reach_k: int, day: float) -> pd.DataFrame:
    """Medication and trivial facts: share lost by ``day`` (top k and top 1) per YMYL setting."""
    out = []
    for sl in ("medication", "trivial"):
        for ymyl in YMYL_SETTINGS:
            s = t[(t["slice"] == sl) & (t["ymyl"] == ymyl)].set_index("days")
            if s.empty or day not in s.index or "lost_reach" not in s:
                continue
            x: Any = s.loc[day]
            b: Any = s.iloc[0]
            out.append({
                "facts": sl, "YMYL": ymyl,
                f"in reach at {s.index[0]:g} d, top {reach_k} / top 1": f"{int(x['lost_reach_n'])} / {int(x['lost_top1_n'])} "
                f"of {int(b['n'])}",
                f"lost by day {day:g}, top {reach_k}": pct(float(x["lost_reach"]), float(x["lost_reach_lo"]),
                                                          float(x["lost_reach_hi"])),
                f"lost by day {day:g}, top 1": pct(float(x["lost_top1"]), float(x["lost_top1_lo"]),
                                                   float(x["lost_top1_hi"])),
            })
    return pd.DataFrame(out)


def _quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """One row per measure: widemem / lexicon per split, the holdout lexicon with its interval."""
    out = []
    for measure, g in quality.groupby("measure", sort=False):
        r: dict[str, Any] = {"measure": measure}
        cell = {(str(q["split"]), str(q["classifier"])): q for q in g.to_dict("records")}
        for sp in ("train", "validation", "holdout"):
            if (sp, "widemem") not in cell or (sp, "lexicon") not in cell:
                continue
            w, lx = cell[(sp, "widemem")], cell[(sp, "lexicon")]
            r[f"{sp}: widemem / lexicon (n)"] = f"{w['value']:.0%} / {lx['value']:.0%} (n={int(lx['n'])})"
        h = cell.get(("holdout", "lexicon"))
        if h is not None:
            r["holdout, lexicon [95% CI]"] = pct(float(h["value"]), float(h["lo"]), float(h["hi"]))
        out.append(r)
    return pd.DataFrame(out)


def render(table: pd.DataFrame, emb_name: str, n_users: int, reach_k: int, n_targets: int,
           figure: str, store: str, decay: str = "exponential", rate: float = 0.01,
           quality: pd.DataFrame | None = None, overlap: dict[str, int] | None = None) -> str:
    """Markdown fragment (pure function of the curve table, the classifier table and the
    lexicon's overlap with the generator's vocabulary)."""
    t = table[(table["decay"] == decay) & (table["rate"] == rate) & (table["store"] == store)]
    show_days = [d for d in (1.0, 30.0, 60.0, 90.0, 180.0, 365.0) if d in set(t["days"])]

    def day_cells(s: pd.DataFrame) -> dict[str, str]:
        out = {}
        for d in show_days:
            x: Any = s.loc[d]
            cell = pct(float(x["in_reach"]), float(x["in_reach_lo"]), float(x["in_reach_hi"]))
            out[f"{int(d)} d"] = f"{cell} / {float(x['top1']):.0%}"
        return out

    rows = []
    for sl in ("medication", "critical", "core", "context", "trivial"):
        for ymyl in YMYL_SETTINGS:
            s = t[(t["slice"] == sl) & (t["ymyl"] == ymyl)].set_index("days")
            if s.empty:
                continue
            rows.append({"facts": sl, "YMYL": ymyl, "n": int(s["n"].iloc[0]), **day_cells(s)})
    stores = []
    for st in dict.fromkeys(table["store"]):
        s_all = table[(table["decay"] == decay) & (table["rate"] == rate) & (table["store"] == st)]
        for sl in ("medication", "trivial"):
            for ymyl in YMYL_SETTINGS:
                s = s_all[(s_all["slice"] == sl) & (s_all["ymyl"] == ymyl)].set_index("days")
                if s.empty:
                    continue
                lost = float(s.loc[60.0, "lost_reach"]) if 60.0 in s.index else float("nan")
                stores.append({"store": st, "facts": sl, "YMYL": ymyl, **day_cells(s),
                               f"lost by day 60, top {reach_k}": f"{lost:.0%}"})
    sweep = []
    for (dec, rt), g in table[(table["slice"] == "medication") & (table["store"] == store)].groupby(
            ["decay", "rate"], sort=False):
        r: dict[str, Any] = {"decay": dec, "rate": rt}
        for ymyl in YMYL_SETTINGS:
            s = g[g["ymyl"] == ymyl].sort_values("days")
            r[f"YMYL {ymyl}"] = " / ".join(
                f"{v:.0%}" for v in (s["in_reach"].iloc[0], s[s["days"] == 60.0]["in_reach"].max(),
                                     s["in_reach"].iloc[-1]))
        sweep.append(r)
    out = [
        "## YMYL decay survival (`ymyl_decay`)",
        "",
        f"{n_targets} facts still true at the end of {n_users} users' timelines ({emb_name}, balanced mode, "
        "widemem's weights); each is asked with its slot's questions as if last said N days ago, against "
        "the user's other memories at their real ages at the end of the timeline (same-slot memories left "
        "out). `store` = memories per user: `own` is the timeline's (~25), a number pads the store with "
        "other users' non-YMYL memories (other attributes, their own ages; non-YMYL by the timeline's "
        "labels and widemem's regex), i.e. a chattier user whose YMYL facts stay their own. "
        f"Decay {decay}, rate {rate:g}. YMYL `off` = widemem's default; `on` = widemem 2.0.2's regex "
        "(importance floor 8 + decay immunity on a strong match of the memory text); `on_lexicon` = the "
        "same two effects with the engine's `ymyl_classifier=lexicon` (widemem's regex plus the project's "
        "drug, condition and medical-usage lexicon), exactly as `MemoryEngine` applies them; `on_gold` = "
        "the same two effects for every fact the timeline labels strong YMYL (widemem's extraction LLM "
        "tagging them all).",
        "",
        f"**Out of reach** = not among the top {reach_k} results for its own question (also reported at "
        "top 1). **Lost by day N** = of the facts in reach when 1 day old, the share out of reach when "
        "N days old (per question; 95% cluster-bootstrap intervals over users).",
        "",
        f"### The 60-day failure and its fix (medication facts, store of {store})",
        "",
        md_table(_lost_table(t, reach_k, 60.0)),
        "",
    ]
    out += _reading(t, reach_k, store)
    if quality is not None and not quality.empty:
        out += [
            "",
            "### The YMYL classifiers on the timelines",
            "",
            "Share of stored facts each classifier reads as strong YMYL: recall on facts the timeline "
            "labels strong YMYL, false positives on facts it labels not YMYL. Per user split; the "
            "holdout split's users speak only in template families the other splits never use. "
            "Cells: widemem's regex / the lexicon classifier (n facts).",
            "",
            md_table(_quality_table(quality)),
        ]
        if overlap:
            out += [
                "",
                f"The lexicon was written from general medical knowledge, not from the generator: "
                f"{overlap['drugs']} of the generator's {overlap['drugs_total']} drug names and "
                f"{overlap['conditions']} of its {overlap['conditions_total']} condition names happen to be "
                "in its lists, so medication recall here measures that coverage more than generalisation; "
                "the oblique row (conditions, allergies and legal matters described without their names) is the "
                "honest test of reading beyond a list.",
            ]
    out += [
        "",
        f"### Survival by age (store of {store})",
        "",
        f"Cells: in the top {reach_k} [95% cluster-bootstrap interval] / at top 1.",
        "",
        md_table(pd.DataFrame(rows)),
        "",
        f"![decay survival]({figure})",
        "",
        "Medication and trivial facts per store size:",
        "",
        md_table(pd.DataFrame(stores)),
        "",
        f"Medication facts, store of {store}, every decay setting (top {reach_k} at 1 / 60 / 365 days):",
        "",
        md_table(pd.DataFrame(sweep)),
    ]
    return "\n".join(out)


def _reading(t: pd.DataFrame, reach_k: int, store: str) -> list[str]:
    """The figures the text quotes, read from the table of one decay setting and store."""
    def at(sl: str, ymyl: str, day: float, m: str) -> float:
        r = t[(t["slice"] == sl) & (t["ymyl"] == ymyl) & (t["days"] == day)]
        return float(r[m].iloc[0]) if len(r) and m in r else float("nan")

    if not {1.0, 30.0, 60.0, 90.0, 365.0} <= set(t["days"]):
        return []
    lost = {y: {d: at("medication", y, d, "lost_reach") for d in (30.0, 60.0, 90.0, 365.0)} for y in YMYL_SETTINGS}
    lost1 = {y: at("medication", y, 60.0, "lost_top1") for y in YMYL_SETTINGS}
    tri = {y: at("trivial", y, 60.0, "lost_reach") for y in YMYL_SETTINGS}
    tri365 = at("trivial", "on_lexicon", 365.0, "lost_reach")
    top1_day1 = {y: at("medication", y, 1.0, "top1") for y in ("off", "on_lexicon")}
    crit = {y: (at("critical", y, 1.0, "in_reach"), at("critical", y, 365.0, "in_reach"))
            for y in ("on_lexicon", "on_gold")}
    off = lost["off"]
    # A cliff would be most of the 60-day loss arriving between 30 and 90 days at once; say
    # which it is from the numbers rather than assume it.
    steps = [off[30.0], off[60.0] - off[30.0], off[90.0] - off[60.0]]
    shape = ("a rising share, not a cliff at 60 days" if max(steps) < 0.5 * off[90.0] or off[90.0] < 0.05
             else "concentrated around 60 days")
    return [
        f"Reading it: with YMYL off, {off[60.0]:.0%} of the medication facts in the top {reach_k} at 1 day are "
        f"out of reach after 60 quiet days ({lost1['off']:.0%} of those at top 1 lose it), and "
        f"{off[365.0]:.0%} after a year; the loss is {shape} ({off[30.0]:.0%} by 30 days, {off[90.0]:.0%} "
        f"by 90). widemem's regex (`on`): {lost['on'][60.0]:.0%} lost by day 60, since \"takes metformin "
        "for type 2 diabetes\" holds at most one weak term and stays unprotected. The lexicon classifier "
        f"(`on_lexicon`), which flags every medication fact: {lost['on_lexicon'][60.0]:.0%} lost by day 60 "
        f"({lost1['on_lexicon']:.0%} at top 1); with the timeline's own labels (`on_gold`): "
        f"{lost['on_gold'][60.0]:.0%}. Trivial facts still fade with the lexicon: "
        f"{tri['on_lexicon']:.0%} of those in reach are lost by day 60 and {tri365:.0%} by day 365 "
        f"(YMYL off: {tri['off']:.0%} by day 60). The price of protection: every other fact the "
        "classifier flags is immune too and floored at importance 8, so a fresh medication fact meets "
        f"stronger competition (top 1 at 1 day: {top1_day1['on_lexicon']:.0%} with the lexicon, "
        f"{top1_day1['off']:.0%} with YMYL off). The lexicon misses most oblique mentions and many legal "
        "facts (table below), so the critical facts as a whole still fade a little with it (in the top "
        f"{reach_k}: {crit['on_lexicon'][0]:.0%} at 1 day, {crit['on_lexicon'][1]:.0%} at 365; `on_gold` "
        f"{crit['on_gold'][1]:.0%}).",
    ]


def write_outputs(table: pd.DataFrame, out_dir: Path, emb_name: str, n_users: int, reach_k: int,
                  n_targets: int, store: str, quality: pd.DataFrame | None = None,
                  overlap: dict[str, int] | None = None) -> dict[str, Path]:
    has = ((table["decay"] == WIDEMEM_DECAY[0]) & (table["rate"] == WIDEMEM_DECAY[1])).any()
    decay, rate = WIDEMEM_DECAY if has else (str(table["decay"].iloc[0]), float(table["rate"].iloc[0]))
    fig = _plot(table, out_dir / "ymyl_decay.png", decay, rate, reach_k, store)
    md = out_dir / "ymyl_decay.md"
    md.write_text(render(table, emb_name, n_users, reach_k, n_targets, "figures/ymyl_decay.png", store,
                         decay, rate, quality, overlap) + "\n")
    return {"ymyl_decay_md": md, "ymyl_decay_png": fig}


@report_section("ymyl_decay", order=61)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """The latest run's fragment and its figures."""
    return publish("ymyl_decay", records, figures_dir, ["ymyl_decay.png"])
