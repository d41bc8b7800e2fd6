"""Drive any `MemoryAdapter` through the timelines and measure what it answers.

`drive` replays the steps (facts with their `at`, questions at `asked_at`) through a
`GuardedAdapter`, timing every call. `score_answers` matches returned contents to the
timeline's gold, stale and other facts of the asking user. `adapter_metrics` gives:

- recall per band (the adapter's own band, when it reports one) and false confidence
  (share at MODERATE or above) per negative kind;
- a ladder certified on the adapter's own top-1 scores, on the train split's users
  (`calibration.certify_ladder` with the settings of ``widemem-bench calibrate``:
  users as the unit, one delta over all statements, HIGH / MODERATE precision 0.95 / 0.80,
  hard negatives at MODERATE+ <= 10 %, LOW the highest cut that leaves answerable
  questions at NONE <= 5 %), and recall / false confidence under it on the validation
  split's users; the same under `fixed` thresholds (mem0's 0.1: "a result is returned"
  as the confidence cut). A band the adapter's scores cannot reach (or too few train
  users to certify anything) is recorded, not raised: `calibrated_band_reachable` rows
  and a one-line ``note`` on the `calibrated_threshold` rows;
- hit@1 / hit@5 on answerable questions whose gold is stored, ms per add and search;
- contradiction survival on `stale_probe` questions (a superseded fact ranked first, or
  ranked above the current one) and duplicated memories (same text stored twice).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.metrics.confidence import NEGATIVE_KINDS
from widemem_bench.peers.adapter import GuardedAdapter
from widemem_bench.peers.replay import Step

BAND_CODE = {"high": 3, "moderate": 2, "low": 1, "none": 0}
BANDS = ("high", "moderate", "low")


def drive(adapter: GuardedAdapter, steps: Sequence[Step], *, top_k: int = 10) -> tuple[pd.DataFrame, list[float]]:
    """(one row per question: contents, scores, band, seconds), seconds per add."""
    rows: list[dict[str, Any]] = []
    add_s: list[float] = []
    for step in steps:
        t0 = time.perf_counter()
        if step.kind == "fact":
            adapter.add_fact(step.text, step.user_id, step.at, importance=step.importance)
            add_s.append(time.perf_counter() - t0)
            continue
        recall = adapter.search(step.text, step.user_id, top_k, now=step.at)
        rows.append({"question_id": step.key, "user_id": step.user_id, "contents": list(recall.contents),
                     "scores": list(recall.scores), "band": recall.band,
                     "search_s": time.perf_counter() - t0})
    return pd.DataFrame(rows), add_s


def _norm(text: Any) -> str:
    return " ".join(str(text).split())


def _ids(value: Any) -> list[str]:
    return [] if value is None else [str(v) for v in value]


def score_answers(answers: pd.DataFrame, events: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Answers joined with each question's kind and split, the gold rank (1-based, 0 = not
    returned), top-1 score, and stale survival (stale fact first / above the gold)."""
    text = dict(zip(events["fact_id"].astype(str), events["fact_stripped"].map(_norm), strict=True))
    by_id: dict[str, dict[Any, Any]] = {str(r["question_id"]): r for r in questions.to_dict("records")}
    out = []
    for row in answers.to_dict("records"):
        qr = by_id[str(row["question_id"])]
        gold = {text[f] for f in _ids(qr.get("gold_fact_ids")) if f in text}
        stale = {text[f] for f in _ids(qr.get("stale_fact_ids")) if f in text} - gold
        contents = [_norm(c) for c in row["contents"]]
        scores = list(row["scores"])
        gold_rank = next((i + 1 for i, c in enumerate(contents) if c in gold), 0)
        stale_rank = next((i + 1 for i, c in enumerate(contents) if c in stale), 0)
        out.append({
            "question_id": row["question_id"], "user_id": row["user_id"], "kind": str(qr["kind"]),
            "split": str(qr["split"]), "band": row["band"], "n_results": len(contents),
            "top1": contents[0] if contents else None,
            "top1_score": float(scores[0]) if scores else -1.0,
            "gold_rank": gold_rank, "stale_rank": stale_rank,
            "stale_first": bool(stale_rank == 1),
            "stale_above_gold": bool(stale_rank and (gold_rank == 0 or stale_rank < gold_rank)),
            "duplicates": len(contents) - len(set(contents)),
            "search_s": float(row["search_s"]),
        })
    return pd.DataFrame(out)


def _share(mask: np.ndarray, within: np.ndarray) -> float:
    n = int(within.sum())
    return float((mask & within).sum() / n) if n else math.nan


def _row(metric: str, value: float, kind: str = "all", **extra: Any) -> dict[str, Any]:
    return {"metric": metric, "value": float(value), "kind": kind, **extra}


def band_metrics(codes: np.ndarray, kinds: np.ndarray, label: str) -> list[dict[str, Any]]:
    """Recall (answerable at each band and at MODERATE+) and false confidence per kind."""
    ans = kinds == "answerable"
    rows = [_row("recall_at_moderate", _share(codes >= 2, ans), thresholds=label)]
    for band, code in BAND_CODE.items():
        rows.append(_row("answerable_band_share", _share(codes == code, ans), kind=band, thresholds=label))
    for kind in NEGATIVE_KINDS:
        rows.append(_row("false_confidence", _share(codes >= 2, kinds == kind), kind=kind, thresholds=label))
    return rows


def certified_rows(score: np.ndarray, kinds: np.ndarray, users: np.ndarray) -> tuple[list[dict[str, Any]],
                                                                                       tuple[float, float, float] | None]:
    """Certify a ladder on one adapter's calibration questions; rows and the thresholds (None: none certified).

    Same settings as ``widemem-bench calibrate`` (`calibration.options.Options` defaults, no
    embedder preset). Never raises for data that cannot be certified: the rows say which
    band is unreachable and why, in one line.
    """
    from widemem_bench.calibration import UnreachableBandError, certify_ladder, check_reachable
    from widemem_bench.calibration.options import Options

    st = Options().resolved(None)
    # The default cap names a timelines kind; drop it when no calibration question has it.
    caps = {k: v for k, v in st["cap"].items() if (kinds == k).any()}
    extra = {"n_fit": int(kinds.size), "n_users": int(np.unique(users.astype(str)).size), "unit": "user",
             "delta": float(st["delta"]), "none_answerable": st["none_answerable"]}
    try:
        ladder = certify_ladder(score, kinds, users, targets=st["targets"], caps=caps,
                                none_answerable=st["none_answerable"], low_caps=st["low_cap"],
                                delta=st["delta"], method=st["method"], score_name="top-1 score", strict=False)
    except ValueError as err:   # too few users, one class only: nothing certified, no band reachable
        note = f"not certified: {err}".splitlines()[0]
        rows = [_row("calibrated_threshold", math.nan, kind=b, reachable=0.0, note=note, **extra)
                for b in BANDS]
        return rows + [_row("calibrated_band_reachable", 0.0, kind=b) for b in (*BANDS, "none")], None
    high, moderate, low = (float(t) for t in ladder.thresholds)
    s = ladder.statements
    reach = {
        "high": s["high"].certified and high < 1,
        "moderate": s["moderate"].certified and all(v.certified for v in s.values() if v.kind == "cap")
        and moderate < high,
        "low": all(v.certified for v in s.values() if v.kind in ("none", "low_cap")) and low < moderate,
        "none": low > 0,   # check_reachable's rule: LOW <= 0 and NONE never comes back
    }
    try:
        check_reachable(ladder, score_name="top-1 score")
        note = ""
    except UnreachableBandError as err:
        note = str(err).splitlines()[0]
    rows = [_row("calibrated_threshold", t, kind=b, reachable=float(reach[b]), note=note, **extra)
            for b, t in zip(BANDS, (high, moderate, low), strict=True)]
    return rows + [_row("calibrated_band_reachable", float(reach[b]), kind=b) for b in reach], (high, moderate, low)


def adapter_metrics(scored: pd.DataFrame, add_s: Sequence[float], *,
                    fixed: dict[str, tuple[float, float, float]] | None = None) -> tuple[list[dict[str, Any]], dict]:
    """Metric rows (see the module docstring) and the certified thresholds (none when nothing could be)."""
    from widemem_bench.calibration import assign_bands

    kinds = scored["kind"].to_numpy(dtype=str)
    score = scored["top1_score"].to_numpy(dtype=float)
    calib = scored["split"].eq("train").to_numpy() & np.isin(kinds, ("answerable", *NEGATIVE_KINDS))
    evaluate = scored["split"].eq("validation").to_numpy()
    users = scored["user_id"].to_numpy().astype(str)
    rows, ladder = certified_rows(score[calib], kinds[calib], users[calib])
    fitted: dict[str, tuple[float, float, float]] = {} if ladder is None else {"calibrated": ladder}
    if scored["band"].notna().all():
        own = scored["band"].map(BAND_CODE).to_numpy()
        rows += band_metrics(own[evaluate], kinds[evaluate], "own")
    for label, thr in {**fitted, **(fixed or {})}.items():
        rows += band_metrics(assign_bands(score[evaluate], thr), kinds[evaluate], label)
    ans = kinds == "answerable"
    for k in (1, 5):
        rows.append(_row(f"hit@{k}", _share((scored["gold_rank"] > 0).to_numpy() & (scored["gold_rank"] <= k).to_numpy(),
                                            ans)))
    stale = kinds == "stale_probe"
    rows.append(_row("stale_first", _share(scored["stale_first"].to_numpy(), stale)))
    rows.append(_row("stale_above_current", _share(scored["stale_above_gold"].to_numpy(), stale)))
    rows.append(_row("results_with_duplicates", _share(scored["duplicates"].to_numpy() > 0, np.ones_like(ans))))
    rows.append(_row("ms_per_add", 1e3 * float(np.median(add_s)) if len(add_s) else math.nan))
    rows.append(_row("ms_per_search", 1e3 * float(scored["search_s"].median())))
    rows.append(_row("n_questions", len(scored)))
    rows.append(_row("n_eval_questions", int(evaluate.sum())))
    return rows, fitted


def console_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """What a peer run prints for one adapter: per threshold set, recall at MODERATE or
    above, false confidence per negative kind and the answerable share at NONE; then the
    certified thresholds, or the one line saying why a band could not be certified."""
    by = pd.DataFrame(list(rows))
    if by.empty:
        return []
    lines = []
    if "thresholds" in by:
        for label, part in by[by["thresholds"].notna()].groupby("thresholds", sort=False):
            v = {(r["metric"], r["kind"]): r["value"] for r in part.to_dict("records")}
            fc = ", ".join(f"{k} {v[('false_confidence', k)]:.1%}" for k in NEGATIVE_KINDS
                           if ("false_confidence", k) in v)
            lines.append(f"{label:>10}: recall MOD+ {v.get(('recall_at_moderate', 'all'), math.nan):.1%} | "
                         f"false confidence MOD+ {fc} | answerable at NONE "
                         f"{v.get(('answerable_band_share', 'none'), math.nan):.1%}")
    thr = by[by["metric"] == "calibrated_threshold"]
    if len(thr):
        cut = ", ".join(f"{r['kind']} {r['value']:.3f}" for r in thr.to_dict("records"))
        lines.append(f"calibrated thresholds (train users): {cut}")
        notes = sorted({str(n) for n in thr.get("note", pd.Series(dtype=str)).dropna() if str(n)})
        lines += notes  # e.g. too few users to certify a band: one line each
    return lines
