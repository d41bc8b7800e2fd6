"""The `peer` experiment: this engine set to widemem's options against widemem 2.0.2 itself.

Both see the same facts (subject-stripped, gold importance) and the same questions,
user by user in timeline order, step by step in ONE loop, so that their wall-clock
insert times (what widemem ages from) stay close. The engine runs with
`EngineConfig(age_from="insert")` and every other field at its (widemem) default;
widemem runs through `WidememPeer` (real `WideMemory`, pass-through LLM).

Reported: the confusion table of confidence bands, agreement of band and of the
top-1 memory (matched by content), the largest difference in raw similarity and in
final score over memories both returned, and one explained row per disagreement.

Causes a disagreement is put down to (column `cause`), checked in this order:
- `tie`: the two top-1 memories' final scores differ by at most `tie_eps` on widemem's
  side, so the order between them is decided by float noise or by widemem's
  insert-time recency (a memory stored later is a few 1e-9 fresher);
- `float_threshold`: same top-1 memory, its raw similarity on the two sides straddles
  a band threshold by less than `float_eps` (float32 summation order, batched vs
  single-text encoding);
- `candidate_pool`: one side's top-1 is absent from the other side's returned list
  (FAISS candidate fetch vs exhaustive scoring);
- `score`: anything else: a real scoring difference, to be reported as a bug.

Below the top-1, `order_cause` explains a differing top-k list the same way: `tie` when
the final scores agree rank by rank within `tie_eps` (tied memories swapped, also across
the top-k cut), else `candidate_pool` or `score`.

Checked and equal under widemem's options (so not causes here): weights and per-query
adaptation, the two-pass boost, fetch_k per mode, band thresholds (MiniLM table through
the model folder's name), identical-content dedup, hierarchy routing (facts only).
Known difference kept out of the data: the engine collapses runs of whitespace in a fact,
widemem stores it verbatim (timeline facts carry none).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.experiments.context import ExperimentResult, RunContext, metric_row
from widemem_bench.experiments.registry import experiment, report_section
from widemem_bench.peers.replay import (
    Answer,
    Step,
    engine_answer,
    peer_answer,
    replay_steps,
    select_users,
)

BANDS = ("high", "moderate", "low", "none")
CAUSES = ("tie", "float_threshold", "candidate_pool", "score")
DEFAULTS: dict[str, Any] = {
    "n_users": 20,  # timeline users replayed through both (widemem runs ~40 ops/s)
    "seed": 0,
    "mode": "balanced",
    "top_k": None,  # None: the mode's top_k (25 for balanced)
    "tie_eps": 1e-6,
    "float_eps": 1e-4,
    "engine": {"age_from": "insert"},  # EngineConfig overrides: widemem's options
}


def resolve_params(params: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(DEFAULTS)
    for key, value in (params or {}).items():
        if key not in DEFAULTS:
            raise ValueError(f"params.{key}: unknown peer parameter (known: {', '.join(DEFAULTS)})")
        out[key] = value
    if int(out["n_users"]) < 1:
        raise ValueError(f"params.n_users: must be >= 1, got {out['n_users']}")
    for key in ("tie_eps", "float_eps"):
        if not float(out[key]) >= 0:
            raise ValueError(f"params.{key}: must be >= 0, got {out[key]}")
    return out


def replay_both(
    engine: Any, peer: Any, steps: Sequence[Step], *, mode: str = "balanced", top_k: int | None = None
) -> tuple[list[Answer], list[Answer]]:
    """Each step through the engine, then through widemem, before the next step.

    The engine gets no `at` / `now`: with age_from="insert" it stamps wall-clock
    time like widemem, and doing both in one loop keeps the two clocks close.
    """
    mine: list[Answer] = []
    theirs: list[Answer] = []
    for step in steps:
        if step.kind == "fact":
            engine.add_fact(step.text, step.user_id, importance=step.importance)
            peer.add_fact(step.text, step.user_id, step.importance)
        else:
            mine.append(engine_answer(engine.search(step.text, step.user_id, mode=mode, top_k=top_k),
                                      step.key, step.user_id))
            theirs.append(peer_answer(peer.search(step.text, step.user_id, top_k=top_k), step.key))
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
        return "score", f"top-1 {e_top!r} vs {w_top!r}: gap {gap_w:.2e} (widemem), {gap_e:.2e} (engine)"
    # Same top-1 memory, different band: the raw cosine sits on a threshold.
    a = e.raw[0] if e.raw else float("nan")
    b = w.raw[0] if w.raw else float("nan")
    t = _straddles(a, b, thresholds, float_eps)
    if t is not None:
        return "float_threshold", f"raw {a:.7f} (engine) vs {b:.7f} (widemem) around threshold {t}"
    return "score", f"same top-1, bands {e.band} vs {w.band}, raw {a:.7f} vs {b:.7f}"


def order_cause(e: Answer, w: Answer, tie_eps: float) -> str:
    """Why two top-k lists differ ("" when they do not).

    "tie" when the lists have the same length and, rank by rank, the same final score
    within `tie_eps`: only the identity of tied memories differs (an exact tie broken
    apart by float32 rounding or by microseconds of insert-time recency), including a
    tie that straddles the top-k cut; otherwise "candidate_pool" when the lists hold
    different memories and "score" when they hold the same ones in another order.
    """
    if list(e.contents) == list(w.contents):
        return ""
    if len(e.final) == len(w.final) and all(
        abs(a - b) <= tie_eps for a, b in zip(e.final, w.final, strict=True)
    ):
        return "tie"
    return "candidate_pool" if set(e.contents) != set(w.contents) else "score"


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
    for cause in ("tie", "candidate_pool", "score"):
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
) -> ExperimentResult:
    """Replay `steps` through the engine (on `embedder`) and widemem; compare them.

    `peer_embedder=None` gives widemem its own sentence-transformers provider on the
    packaged MiniLM (the real thing); pass a project embedder to share one (tests).
    """
    from widemem_bench.engine import EngineConfig, MemoryEngine
    from widemem_bench.peers import WidememPeer

    config = EngineConfig(**dict(p["engine"]))
    engine = MemoryEngine(embedder, config)
    peer = WidememPeer(embedder=peer_embedder, mode=p["mode"], work_dir=work_dir)
    try:
        mine, theirs = replay_both(engine, peer, steps, mode=p["mode"], top_k=p["top_k"])
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


@experiment("peer", honours=("embedder", "dataset", "mode", "params"))
def run(cfg: dict[str, Any], ctx: RunContext) -> ExperimentResult:
    params = dict(cfg.get("params") or {})
    params.setdefault("mode", cfg.get("mode", "balanced"))
    p = resolve_params(params)
    from widemem_bench.peers import widemem_available

    if not widemem_available():
        # `make bench` on a plain venv: say so in the record and the report, do not fail.
        reason = "widemem-ai 2.0.2 not installed (make venv-peers)"
        ctx.info["skipped"] = reason
        return ExperimentResult(metrics=[metric_row("skipped", 1.0, kind="widemem_missing")])
    tl = ctx.timelines()
    users = select_users(tl.events, int(p["n_users"]), int(p["seed"]))
    steps = replay_steps(tl.events, tl.questions, users)
    embedder = ctx.embedder()
    # widemem gets its own provider on the packaged MiniLM when the engine runs MiniLM;
    # for any other model both share the project embedder (widemem's default table).
    peer_embedder = None if embedder.name == "minilm-l6" else embedder
    with ctx.timer("replay"):
        # widemem's history database lives in a temporary folder, removed afterwards
        result = run_comparison(steps, embedder, p=p, peer_embedder=peer_embedder)
    ctx.info["peer"] = {"widemem": "2.0.2", "n_users": len(users), "engine": dict(p["engine"])}
    return result


def run_peer(cfg: dict[str, Any], out_dir: str | Path) -> ExperimentResult:
    """Plain entry (no Hydra): `cfg` as the resolved config dict, outputs under `out_dir`."""
    ctx = RunContext(output_dir=Path(out_dir), seed=int(cfg.get("seed", 0)), cfg=cfg)
    return run(cfg, ctx)


def _md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _cause_counts(results: pd.DataFrame, metric: str = "disagreements") -> dict[str, float]:
    d = results[results["metric"] == metric]
    last = d.drop_duplicates("kind", keep="last")
    return {str(k): float(v) for k, v in zip(last["kind"], last["value"], strict=True)}


def _kind_counts(results: pd.DataFrame, metric: str) -> str:
    return ", ".join(f"{k}: {int(v)}" for k, v in _cause_counts(results, metric).items())


@report_section("peer", order=80)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """Markdown: agreement figures and the band confusion table of the latest peer run."""
    if results.empty:
        return ""
    if "band_agreement" not in set(results["metric"]):
        return ("## widemem 2.0.2 side by side (`peer`)\n\nSkipped: widemem-ai 2.0.2 is not installed "
                "(`make venv-peers`, then `python -m widemem_bench.run experiment=peer force=true`).")
    get = {m: results[results["metric"] == m]["value"] for m in results["metric"].unique()}

    def val(m: str) -> float:
        s = get.get(m)
        return float(s.iloc[-1]) if s is not None and len(s) else math.nan

    out = [
        "## widemem 2.0.2 side by side (`peer`)",
        "",
        "Engine with widemem's options (`age_from=insert`, all else default) against widemem's real "
        "`WideMemory` (pass-through LLM for extraction only), same MiniLM weights, same facts and questions.",
        "",
        f"- questions: {int(val('n_questions'))}",
        f"- band agreement: {val('band_agreement'):.2%}; top-1 agreement: {val('top1_agreement'):.2%}; "
        f"full top-k order: {val('topk_order_agreement'):.2%}"
        + (f" (order differences: {_kind_counts(results, 'order_differences')})"
           if val("topk_order_agreement") < 1 else ""),
        f"- largest difference over memories both returned: raw similarity "
        f"{val('max_raw_similarity_diff'):.2e}, final score {val('max_final_score_diff'):.2e}. "
        "Raw: float32 sums in a different order (FAISS inner product vs numpy matrix product) and "
        "widemem encoding one text per call vs batches; final: the same plus two wall clocks "
        "(both age memories by insert time, a few microseconds apart).",
        "- disagreement causes checked, in order: tie (top-1 final scores within 1e-6), "
        "float_threshold (raw cosine on a band threshold within 1e-4), candidate_pool, score; "
        + ", ".join(f"{c}: {int(v)}" for c, v in _cause_counts(results).items()),
    ]
    if records:
        run_dir = Path(str(records[-1].get("run_dir", "")))
        conf = run_dir / "band_confusion.parquet"
        if conf.is_file():
            out += ["", "Bands (rows: engine, columns: widemem):", "", _md_table(pd.read_parquet(conf))]
        dis = run_dir / "disagreements.parquet"
        if dis.is_file():
            d = pd.read_parquet(dis)
            if len(d):
                out += ["", "Disagreements:", "",
                        _md_table(d[["question_id", "engine_band", "widemem_band", "cause", "detail"]])]
    out += ["", "Command: `python -m widemem_bench.run experiment=peer`"]
    return "\n".join(out)
