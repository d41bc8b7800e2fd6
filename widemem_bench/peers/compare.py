"""Engine against widemem 2.0.2, answer by answer: replay both, compare, explain.

Both see the same facts (subject-stripped, gold importance) and the same questions,
user by user in timeline order, step by step in ONE loop. Reported per question: both
bands and top-1s, agreement flags, the largest raw / final score differences over the
memories both returned, and a cause for every disagreement.

Causes, checked in this order (column `cause`):
- `tie`: the two top-1 memories' final scores differ by at most `tie_eps` on one side, so
  the order between them is decided by float noise or by microseconds of insert-time
  recency (a memory stored later is a few 1e-9 fresher);
- `float_threshold`: same top-1 memory, its raw similarity on the two sides straddles a
  band threshold by less than `float_eps` (float32 summation order, batched vs
  single-text encoding);
- `boost_tie`: the memories whose final scores differ each tie in raw similarity with
  another memory (within 1e-6): an exact similarity tie at the two-pass boost's top-5
  cut, broken one way by FAISS's float32 sums and the other by numpy's, so each side
  boosts a different memory of the pair (seen with the hash-test embedder, whose
  bag-of-words vectors give different texts the same cosine; never with MiniLM here);
- `candidate_pool`: one side's top-1 is absent from the other side's returned list
  (FAISS candidate fetch vs exhaustive scoring);
- `score`: anything else: a real scoring difference, to be reported as a bug.

Below the top-1, `order_cause` explains a differing top-k list the same way.
Checked and equal under widemem's options (so not causes here): weights and per-query
adaptation, the two-pass boost, fetch_k per mode, band thresholds, identical-content
dedup, hierarchy routing (facts only). Known difference kept out of the data: the engine
collapses runs of whitespace in a fact, widemem stores it verbatim.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.metrics.rows import ExperimentResult, metric_row
from widemem_bench.peers.replay import Answer, Step, engine_answer, peer_answer

BANDS = ("high", "moderate", "low", "none")
CAUSES = ("tie", "boost_tie", "float_threshold", "candidate_pool", "score")


def replay_both(
    engine: Any,
    peer: Any,
    steps: Sequence[Step],
    *,
    mode: str = "balanced",
    top_k: int | None = None,
    clock: bool = False,
    pinned: Collection[str] = (),
) -> tuple[list[Answer], list[Answer]]:
    """Each step through the engine, then through widemem, before the next step.

    clock=False: neither gets `at` / `now`; with age_from="insert" the engine stamps
    wall-clock time like widemem, and one loop keeps the two clocks close.
    clock=True: both get the timeline times (the engine's `at` / `now`, widemem's
    injected clock, `WidememClock`). Facts whose key is in `pinned` go through `pin()`.
    """
    mine: list[Answer] = []
    theirs: list[Answer] = []
    for step in steps:
        when = step.at if clock else None
        if step.kind == "fact":
            importance = step.importance
            if step.key in pinned:
                # pin() takes raw text through the engine's extractor (importance 5 for the
                # verbatim one); widemem's stand-in LLM must extract the same importance,
                # or a fact rated 10 would stay 10 there and become 9 here.
                importance = engine.extractor.extract(step.text)[0].importance
                engine.pin(step.text, step.user_id, at=when)
            else:
                engine.add_fact(step.text, step.user_id, importance=importance, at=when)
            peer.add_fact(step.text, step.user_id, importance, at=when, pin=step.key in pinned)
        else:
            mine.append(engine_answer(engine.search(step.text, step.user_id, mode=mode, top_k=top_k, now=when),
                                      step.key, step.user_id))
            theirs.append(peer_answer(peer.search(step.text, step.user_id, top_k=top_k, now=when), step.key))
    return mine, theirs


def _straddles(a: float, b: float, thresholds: Sequence[float], eps: float) -> float | None:
    """The band threshold that a and b fall on opposite sides of, when |a - b| <= eps."""
    if not abs(a - b) <= eps:
        return None
    for t in thresholds:
        if (a >= t) != (b >= t):  # widemem compares with >=
            return float(t)
    return None


def explain(e: Answer, w: Answer, thresholds: Sequence[float], tie_eps: float, float_eps: float) -> tuple[str, str]:
    """(cause, detail) for one question where engine `e` and widemem `w` disagree."""
    e_top = e.contents[0] if e.contents else None
    w_top = w.contents[0] if w.contents else None
    if e_top != w_top:
        if e_top is None or w_top is None:
            return "candidate_pool", f"one side returned nothing (engine {len(e.contents)}, widemem {len(w.contents)})"
        if e_top not in w.contents:
            return "candidate_pool", f"engine top-1 {e_top!r} not in widemem's {len(w.contents)} results"
        if w_top not in e.contents:
            return "candidate_pool", f"widemem top-1 {w_top!r} not in the engine's {len(e.contents)} results"
        gap_w = w.final[0] - w.final[w.contents.index(e_top)]
        gap_e = e.final[0] - e.final[e.contents.index(w_top)]
        if abs(gap_w) <= tie_eps or abs(gap_e) <= tie_eps:
            return "tie", (
                f"top-1 {e_top!r} (engine) vs {w_top!r} (widemem): final-score gap "
                f"{gap_w:.2e} on widemem's side, {gap_e:.2e} on the engine's"
            )
        detail = boost_tie(e, w, tie_eps)
        if detail is not None:
            return "boost_tie", detail
        return "score", f"top-1 {e_top!r} vs {w_top!r}: gap {gap_w:.2e} (widemem), {gap_e:.2e} (engine)"
    # Same top-1 memory, different band: the raw cosine sits on a threshold.
    a = e.raw[0] if e.raw else float("nan")
    b = w.raw[0] if w.raw else float("nan")
    t = _straddles(a, b, thresholds, float_eps)
    if t is not None:
        return "float_threshold", f"raw {a:.7f} (engine) vs {b:.7f} (widemem) around threshold {t}"
    return "score", f"same top-1, bands {e.band} vs {w.band}, raw {a:.7f} vs {b:.7f}"


RAW_TIE_EPS = 1e-6  # float32 noise of one cosine: FAISS and numpy sum in another order


def boost_tie(e: Answer, w: Answer, tie_eps: float, raw_eps: float = RAW_TIE_EPS) -> str | None:
    """Detail when every memory whose final score differs between the sides has a twin of
    equal raw similarity (within float32 noise): an exact similarity tie at the two-pass
    boost's top-5 cut (factual queries), which float32 rounding breaks one way in FAISS and
    the other in numpy, so each side boosts a different memory of the tied pair. Else None.
    """
    raw = dict(zip(e.contents, e.raw, strict=True))
    fin_e = dict(zip(e.contents, e.final, strict=True))
    fin_w = dict(zip(w.contents, w.final, strict=True))
    moved = [c for c in fin_e if c in fin_w and abs(fin_e[c] - fin_w[c]) > tie_eps]
    if not moved:
        return None
    pairs = []
    for c in moved:
        twin = next((o for o in raw if o != c and abs(raw[o] - raw[c]) <= raw_eps), None)
        if twin is None:
            return None
        pairs.append(f"{c!r} ~ {twin!r} (raw {raw[c]:.8f} vs {raw[twin]:.8f})")
    return "similarity tie at the two-pass boost cut: " + "; ".join(pairs[:2])


def order_cause(e: Answer, w: Answer, tie_eps: float) -> str:
    """Why two top-k lists differ ("" when they do not).

    "tie" when the lists have the same length and, rank by rank, the same final score
    within `tie_eps`: only the identity of tied memories differs (an exact tie broken
    apart by float32 rounding or by microseconds of insert-time recency), including a
    tie that straddles the top-k cut; "boost_tie" when the moved memories all tie in raw
    similarity with another memory (`boost_tie`); otherwise "candidate_pool" when the
    lists hold different memories and "score" when they hold the same ones in another order.
    """
    if list(e.contents) == list(w.contents):
        return ""
    if len(e.final) == len(w.final) and all(
        abs(a - b) <= tie_eps for a, b in zip(e.final, w.final, strict=True)
    ):
        return "tie"
    if set(e.contents) != set(w.contents):
        return "candidate_pool"
    return "boost_tie" if boost_tie(e, w, tie_eps) else "score"


def compare(
    engine: Sequence[Answer],
    peer: Sequence[Answer],
    thresholds: Sequence[float],
    *,
    tie_eps: float = 1e-6,
    float_eps: float = 1e-4,
) -> pd.DataFrame:
    """One row per question: both bands and top-1s, agreement flags, diffs, cause."""
    by_q = {a.question_id: a for a in peer}
    rows = []
    for e in engine:
        w = by_q.get(e.question_id)
        if w is None:
            raise ValueError(f"peer: no widemem answer for question {e.question_id!r}")
        common = [c for c in e.contents if c in w.contents]
        raw_d = [abs(e.raw[e.contents.index(c)] - w.raw[w.contents.index(c)]) for c in common]
        fin_d = [abs(e.final[e.contents.index(c)] - w.final[w.contents.index(c)]) for c in common]
        band_ok = e.band == w.band
        top1_ok = (e.contents[:1] == w.contents[:1])
        cause, detail = ("", "") if band_ok and top1_ok else explain(e, w, thresholds, tie_eps, float_eps)
        rows.append(
            {
                "question_id": e.question_id,
                "user_id": e.user_id,
                "engine_band": e.band,
                "widemem_band": w.band,
                "engine_top1": e.contents[0] if e.contents else None,
                "widemem_top1": w.contents[0] if w.contents else None,
                "engine_top1_raw": e.raw[0] if e.raw else math.nan,
                "widemem_top1_raw": w.raw[0] if w.raw else math.nan,
                "engine_top1_final": e.final[0] if e.final else math.nan,
                "widemem_top1_final": w.final[0] if w.final else math.nan,
                "n_engine": len(e.contents),
                "n_widemem": len(w.contents),
                "n_common": len(common),
                "same_set": set(e.contents) == set(w.contents),
                "same_order": list(e.contents) == list(w.contents),
                "order_cause": order_cause(e, w, tie_eps),
                "max_raw_diff": max(raw_d) if raw_d else math.nan,
                "max_final_diff": max(fin_d) if fin_d else math.nan,
                "band_agree": band_ok,
                "top1_agree": top1_ok,
                "cause": cause,
                "detail": detail,
            }
        )
    return pd.DataFrame(rows)


def band_confusion(per_query: pd.DataFrame) -> pd.DataFrame:
    """Counts: rows = engine band, columns = widemem band, in order high..none."""
    table = pd.crosstab(per_query["engine_band"], per_query["widemem_band"])
    table = table.reindex(index=list(BANDS), columns=list(BANDS), fill_value=0)
    table.index.name = "engine \\ widemem"
    return table.astype(int)


def summary_metrics(per_query: pd.DataFrame, embedder: str) -> list[dict[str, Any]]:
    n = len(per_query)
    rows = [
        metric_row("n_questions", n, embedder=embedder),
        metric_row("band_agreement", float(per_query["band_agree"].mean()) if n else math.nan, embedder=embedder),
        metric_row("top1_agreement", float(per_query["top1_agree"].mean()) if n else math.nan, embedder=embedder),
        metric_row("topk_order_agreement", float(per_query["same_order"].mean()) if n else math.nan,
                   embedder=embedder),
        metric_row("max_raw_similarity_diff", float(np.nanmax(per_query["max_raw_diff"])) if n else math.nan,
                   embedder=embedder),
        metric_row("max_final_score_diff", float(np.nanmax(per_query["max_final_diff"])) if n else math.nan,
                   embedder=embedder),
    ]
    for cause in CAUSES:
        rows.append(metric_row("disagreements", int((per_query["cause"] == cause).sum()), embedder=embedder,
                               kind=cause))
    # Below the top-1: questions whose top-k order differs, by cause (tie / candidate_pool / score).
    for cause in ("tie", "boost_tie", "candidate_pool", "score"):
        rows.append(metric_row("order_differences", int((per_query["order_cause"] == cause).sum()),
                               embedder=embedder, kind=cause))
    return rows


def run_comparison(
    steps: Sequence[Step],
    embedder: Any,
    *,
    p: dict[str, Any],
    peer_embedder: Any | None = None,
    work_dir: Path | None = None,
    pinned: Collection[str] = (),
) -> ExperimentResult:
    """Replay `steps` through the engine (on `embedder`) and widemem; compare them.

    `peer_embedder=None` gives widemem its own sentence-transformers provider on the
    packaged MiniLM (the real thing); pass a project embedder to share one (tests).
    """
    from widemem_bench.engine import EngineConfig
    from widemem_bench.harness.engines import build_engine
    from widemem_bench.peers import WidememPeer

    config = EngineConfig(**dict(p["engine"]))
    engine = build_engine(embedder, config)
    clock = config.age_from == "clock"
    peer = WidememPeer(embedder=peer_embedder, mode=p["mode"], work_dir=work_dir, clock=clock,
                       options=widemem_options(config))
    try:
        mine, theirs = replay_both(engine, peer, steps, mode=p["mode"], top_k=p["top_k"], clock=clock,
                                   pinned=pinned)
        thresholds = peer.thresholds()
    finally:
        peer.close()
        engine.close()
    per_query = compare(mine, theirs, thresholds, tie_eps=float(p["tie_eps"]), float_eps=float(p["float_eps"]))
    name = str(getattr(embedder, "name", "?"))
    confusion = band_confusion(per_query)
    disagreements = per_query[per_query["cause"] != ""].reset_index(drop=True)
    return ExperimentResult(
        metrics=summary_metrics(per_query, name),
        per_query=per_query,
        tables={
            "band_confusion": confusion.reset_index().rename(columns={"engine \\ widemem": "engine_band"}),
            "disagreements": disagreements,
        },
    )




def widemem_options(config: Any) -> dict[str, Any]:
    """The widemem settings (`WidememPeer(options=...)`) matching an `EngineConfig`:
    decay function and rate, YMYL on, topic weights. Any other engine field stays the
    engine's alone, so its effect shows up as disagreements (what the tests that switch
    off weight adaptation rely on)."""
    out: dict[str, Any] = {"decay_function": config.decay_function, "decay_rate": config.decay_rate}
    if config.ymyl_enabled:
        out["ymyl_enabled"] = True
    if config.topic_weights:
        out["topic_weights"] = dict(config.topic_weights)
    return out
