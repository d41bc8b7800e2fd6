"""Per-embedder auto-calibration on the timelines: ``python -m widemem_bench.calibrate``.

For each embedder, on the timelines' train split (questions whose answer is or is
not stored: answerable, never-mentioned, hard-negative, other-person):

1. similarity thresholds: Learn-then-Test on the top-1 cosine (the score widemem
   bands on) for the target precisions of HIGH / MODERATE / LOW;
2. the answerability scorer: features of each search, a logistic regression with
   Platt scaling (out-of-fold, folds by user), and LTT cut-offs of its probability
   for the same targets, fitted on the out-of-fold probabilities;
3. optionally a cap on false confidence of one question kind at MODERATE or above
   (default: hard negatives <= 10 %), certified the same way (see `cap_threshold`):
   the MODERATE cut-off is raised until the cap is certified as well;
4. validation and holdout figures with cluster-bootstrap 95 % intervals (by user)
   for widemem's own thresholds, the calibrated thresholds and the scorer;
5. the calibration file ``widemem_bench/calibration/files/<embedder>.json``.

``report`` writes ``reports/calibration.md`` from the committed files alone.

Usage (key=value, like the Hydra entry point)::

    python -m widemem_bench.calibrate embedder=minilm-l6
    python -m widemem_bench.calibrate embedder=all dataset=timelines targets.high=0.95 delta=0.1
    python -m widemem_bench.calibrate report          # only rewrite reports/calibration.md
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.timelines.dataset import check_fittable

DEFAULT_EMBEDDERS = ("minilm-l6", "minilm-l6-int8", "minilm-l3", "bge-small", "tfidf")
WIDEMEM_WEIGHTS = (0.5, 0.3, 0.2)
WIDEMEM_DECAY = ("exponential", 0.01)
CONFIDENCE_KINDS = ("answerable", "never_mentioned", "hard_negative", "other_person")
NEGATIVE_KINDS = CONFIDENCE_KINDS[1:]
SETTINGS = ("widemem", "calibrated", "answerability")
FIGURES = ("recall_moderate_plus", "precision_moderate_plus", "precision_high",
           *(f"false_confidence_{k}" for k in NEGATIVE_KINDS))
SCORE_FIGURES = ("auroc", "aurc", "adaptive_ece", "brier")
DEFAULT_CAP = {"hard_negative": 0.10}
REPORT_PATH = REPO_ROOT / "reports" / "calibration.md"


@dataclass
class Options:
    """What one calibration run uses; every field can be set as key=value on the command line."""

    embedders: tuple[str, ...] = ("minilm-l6",)
    dataset: str = "timelines"
    targets: dict[str, float] = dataclasses.field(default_factory=lambda: {"high": 0.95, "moderate": 0.80, "low": 0.50})
    delta: float = 0.1
    method: str = "binomial"
    cap: dict[str, float] = dataclasses.field(default_factory=lambda: dict(DEFAULT_CAP))
    n_boot: int = 1000
    seed: int = 0
    install: bool = True
    out: Path | None = None        # folder for the run's per-query tables (default outputs/calibrate)
    report: bool = True            # rewrite reports/calibration.md afterwards


# --------------------------------------------------------------------------- caps


def cap_threshold(scores: Any, is_kind: Any, max_rate: float, delta: float) -> dict[str, Any]:
    """Lowest threshold at which P(score >= t | kind) <= max_rate is certified at level ``delta``.

    The same fixed-sequence test as `calibration.fit_thresholds`: candidate thresholds
    are the kind's distinct scores plus one above them all, tested from the strictest
    down; H_t: rate(t) > max_rate is rejected when P(Binom(n, max_rate) <= k) <= delta,
    with k of the n questions of that kind at or above t. Testing stops at the first
    failure. Returns threshold, certified, rate (empirical, on these scores),
    upper_bound (one-sided Clopper-Pearson at ``delta``), n.
    """
    s = np.sort(np.asarray(scores, dtype=float)[np.asarray(is_kind, dtype=bool)])[::-1]
    n = int(s.size)
    if not 0 < max_rate < 1:
        raise ValueError(f"cap rate must lie in (0, 1), got {max_rate}")
    if n == 0:
        return {"threshold": 0.0, "certified": False, "rate": None, "upper_bound": None, "n": 0, "max_rate": max_rate}
    # Candidate t = just above the (k+1)-th largest score, so exactly k questions reach it.
    uniq = np.unique(s)[::-1]
    cands = [float(np.nextafter(uniq[0], np.inf))] + [float(u) for u in uniq]
    best: tuple[float, int] | None = None
    for t in cands:
        k = int(np.sum(s >= t))
        p = float(stats.binom.cdf(k, n, max_rate))
        if p > delta:
            break
        best = (t, k)
    if best is None:
        return {"threshold": 1.0, "certified": False, "rate": None, "upper_bound": None, "n": n, "max_rate": max_rate}
    t, k = best
    ub = 1.0 if k == n else float(stats.beta.ppf(1 - delta, k + 1, n - k))
    return {"threshold": t, "certified": True, "rate": k / n, "upper_bound": ub, "n": n, "max_rate": max_rate}


def apply_cap(fit: Any, scores: Any, answerable: Any, kinds: Any, cap: Mapping[str, float]) -> tuple[Any, dict[str, Any]]:
    """Raise MODERATE (and HIGH, to stay monotone) to every cap's certified threshold.

    Returns the new `ThresholdFit` (band figures recomputed on the same data; a band
    stays ``certified`` when its precision test still passes at the raised threshold)
    and the caps' figures.
    """
    from widemem_bench.calibration import binomial_p_value, clopper_pearson_lower

    s = np.asarray(scores, dtype=float)
    y = np.asarray(answerable, dtype=bool)
    k = np.asarray(kinds).astype(str)
    caps = {kind: cap_threshold(s, k == kind, float(rate), fit.delta) for kind, rate in cap.items()}
    floor = max((c["threshold"] for c in caps.values()), default=-np.inf)
    bands = dict(fit.bands)
    for b in ("moderate", "high"):
        bf = bands[b]
        if bf.threshold >= floor:
            continue
        reach = s >= floor
        n_i, k_i = int(reach.sum()), int((reach & y).sum())
        pval = float(binomial_p_value(np.array([k_i]), np.array([n_i]), bf.target)[0]) if n_i else 1.0
        bands[b] = dataclasses.replace(
            bf, threshold=float(floor), certified=bool(n_i and pval <= fit.delta),
            precision=k_i / n_i if n_i else float("nan"),
            precision_lower_bound=clopper_pearson_lower(k_i, n_i, fit.delta),
            coverage=n_i / s.size, recall=k_i / y.sum() if y.any() else float("nan"), n=n_i, p_value=pval,
        )
    for b, bf in bands.items():
        if bf.threshold < 0.0:
            # A certified band reaching every question (even "nothing stored", scored -1):
            # the file keeps thresholds in [0, 1], so the band starts at cosine 0.
            bands[b] = dataclasses.replace(bf, threshold=0.0)
    return dataclasses.replace(fit, bands=bands), caps


# --------------------------------------------------------------------------- one embedder


def _platt_similarity(train_scores: np.ndarray, train_y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Similarity alone as a probability (Platt on the top-1 cosine), for ECE / Brier next to the scorer."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=2000).fit(train_scores[:, None], train_y)
    return np.asarray(lr.predict_proba(scores[:, None])[:, 1])


def _load_data(dataset: str) -> tuple[Any, dict[str, Any]]:
    from widemem_bench.experiments.data import load_dataset
    from widemem_bench.timelines.materialize import read_config

    tl, meta = load_dataset(read_config(dataset), {})
    check_fittable(getattr(tl, "world", "a"), "calibration")
    return tl, meta


def _embedder(name: str, events: pd.DataFrame) -> Any:
    from widemem_bench.embedders import load_embedder

    emb = load_embedder(name)
    if hasattr(emb, "fit"):
        # tfidf: vocabulary from the stored memory texts (never from the questions).
        emb.fit(events["fact_stripped"].dropna().astype(str).tolist())
    return emb


def per_query(
    tl: Any, emb: Any, weights: Sequence[float] = WIDEMEM_WEIGHTS, decay: tuple[str, float] = WIDEMEM_DECAY
) -> tuple[pd.DataFrame, np.ndarray]:
    """Per-question table (common.per_query_frame) under widemem's scoring + the feature matrix."""
    from widemem_bench.answerability.data import feature_table
    from widemem_bench.engine import thresholds_for_model
    from widemem_bench.experiments import batch, common

    prep = batch.prepare(tl.events, tl.questions, emb)
    scored = batch.score(prep, tuple(weights), decay[0], float(decay[1]), thresholds_for_model(emb.model_id),
                         keep_final=True)
    pq = common.per_query_frame(prep, scored, tl.questions, emb.name)
    texts = tl.questions.set_index("question_id").loc[prep.question_ids, "text"].tolist()
    x = feature_table(prep, np.asarray(scored.final), texts)
    pq["top1_sim"] = pq["top1_sim"].fillna(-1.0)  # nothing stored = the lowest score
    return pq, x


def figures(pq: pd.DataFrame, band_col: str, *, prob_col: str | None = None, score_col: str = "top1_sim",
            n_boot: int = 1000, seed: int = 0) -> dict[str, list[float | None]]:
    """[value, lo, hi] per figure on one split's confidence questions (cluster bootstrap by user)."""
    from widemem_bench.metrics import with_ci

    bands = pq[band_col].to_numpy()
    kinds = pq["kind"].to_numpy(dtype=str)
    groups = pq["user_id"].to_numpy()
    out: dict[str, list[float | None]] = {}
    jobs: list[tuple[str, tuple[Any, ...], int]] = [(m, (bands, kinds), n_boot) for m in FIGURES]
    jobs += [("auroc", (pq[score_col].to_numpy(), kinds), max(100, n_boot // 5)),
             ("aurc", (pq[score_col].to_numpy(), kinds), max(100, n_boot // 5))]
    if prob_col is not None:
        labels = (kinds == "answerable").astype(float)
        jobs += [("adaptive_ece", (pq[prob_col].to_numpy(), labels), max(100, n_boot // 5)),
                 ("brier", (pq[prob_col].to_numpy(), labels), n_boot)]
    for name, arrays, nb in jobs:
        triple = with_ci(name, *arrays, groups=groups, seed=seed, n_boot=nb)
        out[name] = [None if v != v else float(v) for v in triple]
    out["n"] = [float(len(pq)), None, None]
    return out


@dataclass
class EmbedderResult:
    name: str
    calibration: Any          # CalibrationFile
    per_query: pd.DataFrame   # every question, with bands / probabilities of every setting
    fixture: pd.DataFrame | None
    seconds: dict[str, float]


def calibrate_embedder(name: str, opts: Options, tl: Any = None, meta: dict[str, Any] | None = None) -> EmbedderResult:
    from widemem_bench import calibration as cal
    from widemem_bench.answerability import fit_model
    from widemem_bench.engine import thresholds_for_model

    t0 = time.perf_counter()
    secs: dict[str, float] = {}
    if tl is None or meta is None:
        tl, meta = _load_data(opts.dataset)
    # world B is evaluation-only (issue 13): refuse before anything is fitted or written
    check_fittable(getattr(tl, "world", "a"), "calibration")
    emb = _embedder(name, tl.events)
    pq, x = per_query(tl, emb)
    secs["prepare"] = time.perf_counter() - t0

    kinds = pq["kind"].to_numpy(dtype=str)
    conf = np.isin(kinds, CONFIDENCE_KINDS)
    train = conf & (pq["split"].to_numpy() == "train")
    y = kinds == "answerable"
    # Out-of-fold folds by phrasing family: the validation and holdout splits differ from
    # train in users AND phrasings, and folds by user alone share every phrasing with the
    # fold that was fitted, which made the cut-offs optimistic on new phrasings.
    families = pq["template_family"].astype(str).to_numpy()
    sim = pq["top1_sim"].to_numpy(dtype=float)

    t1 = time.perf_counter()
    sim_fit = cal.fit_thresholds(sim[train], y[train], targets=opts.targets, delta=opts.delta, method=opts.method)
    sim_fit, sim_caps = apply_cap(sim_fit, sim[train], y[train], kinds[train], opts.cap)
    model, oof = fit_model(x[train], y[train], families[train], seed=opts.seed)
    prob_fit = cal.fit_thresholds(oof, y[train], targets=opts.targets, delta=opts.delta, method=opts.method)
    prob_fit, prob_caps = apply_cap(prob_fit, oof, y[train], kinds[train], opts.cap)
    secs["fit"] = time.perf_counter() - t1

    prob = model.predict_proba(x)
    prob[train] = oof  # train rows: the out-of-fold probability (what the cut-offs were fitted on)
    pq["prob_answerability"] = prob
    pq["prob_similarity"] = _platt_similarity(sim[train], y[train], sim)
    widemem_th = thresholds_for_model(emb.model_id)
    pq["band_widemem"] = cal.assign_bands(sim, widemem_th)
    pq["band_calibrated"] = cal.assign_bands(sim, sim_fit.thresholds)
    pq["band_answerability"] = cal.assign_bands(prob, prob_fit.thresholds)
    pq["band"] = pq["band_widemem"]

    t2 = time.perf_counter()
    figs: dict[str, dict[str, Any]] = {}
    for split in ("validation", "holdout"):
        part = pq[conf & (pq["split"].to_numpy() == split)]
        figs[split] = {
            "calibrated": figures(part, "band_calibrated", prob_col="prob_similarity", n_boot=opts.n_boot, seed=opts.seed),
            "widemem": figures(part, "band_widemem", n_boot=opts.n_boot, seed=opts.seed),
            "answerability": figures(part, "band_answerability", prob_col="prob_answerability",
                                     score_col="prob_answerability", n_boot=opts.n_boot, seed=opts.seed),
        }
    secs["figures"] = time.perf_counter() - t2

    def split_section(split: str) -> dict[str, Any]:
        f = figs[split]
        return {**f["calibrated"], "widemem_thresholds": {"thresholds": list(widemem_th), **f["widemem"]}}

    answer = cal.answerability_section(
        prob_fit, model=model.to_dict(),
        caps=prob_caps, validation=figs["validation"]["answerability"], holdout=figs["holdout"]["answerability"],
        train_probabilities="out-of-fold (5 folds by phrasing family)",
        latency_us=_latency_us(model, x[:200]),
    )
    calfile = cal.CalibrationFile.from_fit(
        sim_fit, embedder=name, model_id=emb.model_id, fingerprint=str(getattr(emb, "fingerprint", "")),
        dataset={"name": opts.dataset, "version": meta["version"], "sha256": meta["sha256"],
                 "generator_version": meta.get("generator_version"), "split": "train",
                 "kinds": list(CONFIDENCE_KINDS), "n_train": int(train.sum())},
        validation=split_section("validation"), holdout=split_section("holdout"), answerability=answer,
    )
    calfile.bands["moderate"]["caps"] = sim_caps
    fixture = fixture_table(emb, model, calfile) if name == "minilm-l6" else None
    secs["total"] = time.perf_counter() - t0
    return EmbedderResult(name, calfile, pq, fixture, secs)


def _latency_us(model: Any, x: np.ndarray) -> float:
    """Mean microseconds of the model's per-query probability (features excluded; see tests)."""
    t = time.perf_counter()
    for row in x:
        model.prob_one(row)
    return (time.perf_counter() - t) / max(len(x), 1) * 1e6


# --------------------------------------------------------------------------- widemem fixture


def fixture_table(emb: Any, model: Any, calfile: Any) -> pd.DataFrame:
    """widemem's 62-case fixture under widemem's, the calibrated thresholds and the scorer.

    Each user's stored facts and each query are embedded with ``emb``; a case's
    "returned memories" are the user's facts by cosine (the fixture has no
    importance or time, so similarity order is the engine's order). Rows: one per
    setting x split with recall at MODERATE or above (answerable), hard negatives
    and unrelated at MODERATE or above (counts).
    """
    from widemem_bench.answerability.features import MAX_RESULTS, query_features
    from widemem_bench.calibration import assign_bands
    from widemem_bench.external.widemem_fixture import (
        WIDEMEM_MINILM_THRESHOLDS,
        load_widemem_fixture_raw,
    )

    raw = load_widemem_fixture_raw()
    facts = {u: [str(f) for f in d["facts"]] for u, d in raw["users"].items()}
    vecs = {u: np.asarray(emb.encode(f, kind="passage"), dtype=np.float32) for u, f in facts.items()}
    cases = raw["cases"]
    qv = np.asarray(emb.encode([c["query"] for c in cases], kind="query"), dtype=np.float32)
    rows = []
    for i, c in enumerate(cases):
        sims = vecs[c["user"]] @ qv[i]
        order = np.argsort(-sims, kind="stable")[:MAX_RESULTS]
        f = query_features(c["query"], [facts[c["user"]][j] for j in order], sims[order].tolist())
        rows.append({"case": i, "user": c["user"], "split": c["split"], "kind": c["kind"],
                     "top1_fixture": float(c["top_similarity"]), "top1": float(sims[order[0]]),
                     "prob": model.prob_one(f)})
    df = pd.DataFrame(rows)
    settings = {
        "widemem 0.60/0.30/0.20": assign_bands(df["top1_fixture"].to_numpy(), WIDEMEM_MINILM_THRESHOLDS),
        "auto-calibrated (timelines)": assign_bands(df["top1"].to_numpy(), calfile.thresholds),
        "answerability scorer": assign_bands(df["prob"].to_numpy(), calfile.answerability_thresholds),
    }
    out = []
    for label, bands in settings.items():
        for split in ("train", "holdout", "all"):
            m = np.ones(len(df), bool) if split == "all" else (df["split"] == split).to_numpy()
            k = df["kind"].to_numpy()
            ans, hn, un = m & (k == "answerable"), m & (k == "hard_negative"), m & (k == "unrelated")
            out.append({"setting": label, "split": split,
                        "answerable_moderate_plus": f"{int((bands[ans] >= 2).sum())}/{int(ans.sum())}",
                        "recall_moderate_plus": float((bands[ans] >= 2).mean()) if ans.any() else float("nan"),
                        "hard_negative_moderate_plus": f"{int((bands[hn] >= 2).sum())}/{int(hn.sum())}",
                        "unrelated_moderate_plus": f"{int((bands[un] >= 2).sum())}/{int(un.sum())}"})
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- report


def _ci(triple: Any, percent: bool = True) -> str:
    if not triple or triple[0] is None:
        return "n/a"
    v, lo, hi = triple
    if percent:
        return f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None else f"{100 * v:.1f}%"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{v:.3f}"


def _th(t: Sequence[float]) -> str:
    return " / ".join(f"{x:.3f}" for x in t)


def report_markdown(names: Sequence[str] | None = None, fixture: pd.DataFrame | None = None) -> str:
    """reports/calibration.md from the committed calibration files (``fixture``: optional table)."""
    from widemem_bench.calibration import available_calibrations, load_calibration

    names = [n for n in (names or DEFAULT_EMBEDDERS) if n in available_calibrations()]
    lines = ["## Confidence calibration per embedder", "",
             "Timelines holdout split (users and phrasings never seen in fitting), questions whose answer is "
             "or is not stored. Recall = answerable questions at MODERATE or above; false confidence = hard "
             "negatives at MODERATE or above. 95% intervals: cluster bootstrap by user. "
             "Written by `python -m widemem_bench.calibrate`.", "",
             "| embedder | setting | thresholds (high / moderate / low) | recall at MODERATE+ | hard negatives at MODERATE+ "
             "| other-person at MODERATE+ | never-mentioned at MODERATE+ | AUROC |",
             "|---|---|---|---|---|---|---|---|"]
    cals = {n: load_calibration(n) for n in names}
    for n, c in cals.items():
        h = c.holdout
        rows = [("widemem's thresholds", h["widemem_thresholds"]["thresholds"], h["widemem_thresholds"]),
                ("auto-calibrated", c.thresholds, h),
                ("answerability scorer", c.answerability_thresholds, (c.answerability or {}).get("holdout", {}))]
        for label, th, f in rows:
            lines.append(f"| {n} | {label} | {_th(th or ())} | {_ci(f.get('recall_moderate_plus'))} "
                         f"| {_ci(f.get('false_confidence_hard_negative'))} | {_ci(f.get('false_confidence_other_person'))} "
                         f"| {_ci(f.get('false_confidence_never_mentioned'))} | {_ci(f.get('auroc'), percent=False)} |")
    lines += ["", "Answerability scorer against similarity alone (holdout; similarity's probability = Platt "
              "scaling of the top-1 cosine on the train split):", "",
              "| embedder | score | AUROC | AURC | adaptive ECE | Brier |", "|---|---|---|---|---|---|"]
    for n, c in cals.items():
        a = (c.answerability or {}).get("holdout", {})
        for label, f in (("similarity", c.holdout), ("answerability", a)):
            lines.append(f"| {n} | {label} | {_ci(f.get('auroc'), False)} | {_ci(f.get('aurc'), False)} "
                         f"| {_ci(f.get('adaptive_ece'), False)} | {_ci(f.get('brier'), False)} |")
    lines += ["", "### Calibration files", "",
              "Fitted on the train split with Learn-then-Test (binomial p-values, fixed-sequence, delta per band); "
              "targets HIGH >= 0.95, MODERATE >= 0.80, LOW >= 0.50 precision, and hard negatives at MODERATE or "
              "above <= 10 % (certified the same way). A band that could not be certified reads `uncertified` and "
              "its threshold is 1.0 (or the band above's).", ""]
    for n, c in cals.items():
        def cert(bands: Mapping[str, Any]) -> str:
            return ", ".join(f"{b} {'certified' if bands[b]['certified'] else 'uncertified'}"
                             for b in ("high", "moderate", "low"))
        a = c.answerability or {}
        lines += [f"**{n}** (`{c.model_id}`; data set {c.dataset.get('version')}, sha256 "
                  f"`{str(c.dataset.get('sha256'))[:12]}…`): similarity thresholds {_th(c.thresholds)} "
                  f"({cert(c.bands)}); answerability cut-offs {_th(c.answerability_thresholds or ())} "
                  f"({cert(a['bands']) if a else 'n/a'}); model latency {a.get('latency_us', float('nan')):.1f} µs/query.", "",
                  "```", *c.env, "```", ""]
    if fixture is not None and len(fixture):
        lines += ["### widemem's own fixture (62 cases, minilm-l6)", "",
                  "Cut-offs fitted on the timelines, applied unchanged to widemem's fixture (its stored facts "
                  "embedded with minilm-l6; widemem's row uses the fixture's own top-1 cosines).", "",
                  "| setting | split | answerable at MODERATE+ | recall | hard negatives at MODERATE+ | unrelated at MODERATE+ |",
                  "|---|---|---|---|---|---|"]
        for r in fixture.to_dict("records"):
            lines.append(f"| {r['setting']} | {r['split']} | {r['answerable_moderate_plus']} "
                         f"| {100 * float(r['recall_moderate_plus']):.0f}% "
                         f"| {r['hard_negative_moderate_plus']} | {r['unrelated_moderate_plus']} |")
        lines += ["",
                  "Every setting here bands the top-1 search result, as widemem does at search time. The "
                  "77% / 58% of ../shared/data/README.md measure the answer fact's own (subject-stripped) "
                  "cosine instead; for 21 of the 38 answerable cases the top-1 fact is a fact naming the person, "
                  "so top-1 recall is higher. The fixture asks in the third person (\"does frank have any pets\") "
                  "about facts that name the person (\"Frank moved to ...\"): the scorer's subject and lexical "
                  "features, developed on first-person timelines, read the shared name as a match, which is why "
                  "it is confident on all 12 hard negatives there, and its low cut-off lets 5 of 12 unrelated "
                  "questions (cosine near 0.1) reach MODERATE: out of domain it is worse than similarity at "
                  "saying \"not stored\". Recall there (95%) is the only gain.",
                  ""]
    return "\n".join(lines) + "\n"


def fixture_report_table() -> pd.DataFrame | None:
    """The fixture table from the committed minilm-l6 file (loads the model; None if absent)."""
    from widemem_bench.answerability import AnswerabilityModel
    from widemem_bench.calibration import available_calibrations, load_calibration
    from widemem_bench.embedders import load_embedder

    if "minilm-l6" not in available_calibrations():
        return None
    c = load_calibration("minilm-l6")
    if not c.answerability:
        return None
    return fixture_table(load_embedder("minilm-l6"), AnswerabilityModel.from_dict(c.answerability["model"]), c)


def write_report(path: Path = REPORT_PATH, fixture: pd.DataFrame | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fixture is None:
        fixture = fixture_report_table()
    path.write_text(report_markdown(fixture=fixture), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- CLI


def parse_args(argv: Sequence[str]) -> tuple[str, Options]:
    """key=value arguments (and an optional leading command: ``run`` or ``report``)."""
    opts = Options()
    command = "run"
    args = list(argv)
    if args and "=" not in args[0]:
        command = args.pop(0)
        if command not in ("run", "report"):
            raise ValueError(f"command must be 'run' or 'report', got {command!r}")
    for arg in args:
        if "=" not in arg:
            raise ValueError(f"argument {arg!r} is not key=value")
        key, value = arg.split("=", 1)
        if key == "embedder":
            opts.embedders = DEFAULT_EMBEDDERS if value == "all" else tuple(v for v in value.split(",") if v)
        elif key == "dataset":
            opts.dataset = value
        elif key.startswith("targets."):
            band = key.split(".", 1)[1]
            if band not in ("high", "moderate", "low"):
                raise ValueError(f"{key}: unknown band {band!r}; expected high, moderate, low")
            opts.targets[band] = float(value)
        elif key.startswith("cap."):
            kind = key.split(".", 1)[1]
            if kind not in NEGATIVE_KINDS:
                raise ValueError(f"{key}: unknown kind {kind!r}; expected one of {', '.join(NEGATIVE_KINDS)}")
            if value.lower() in ("none", "null", "off"):
                opts.cap.pop(kind, None)
            else:
                opts.cap[kind] = float(value)
        elif key in ("delta",):
            opts.delta = float(value)
        elif key == "method":
            opts.method = value
        elif key in ("n_boot", "seed"):
            setattr(opts, key, int(value))
        elif key in ("install", "report"):
            setattr(opts, key, value.lower() in ("1", "true", "yes"))
        elif key == "out":
            opts.out = Path(value)
        else:
            raise ValueError(f"unknown key {key!r} (embedder, dataset, targets.<band>, cap.<kind>, delta, method, "
                             "n_boot, seed, install, report, out)")
    return command, opts


def _summary(r: EmbedderResult) -> str:
    c = r.calibration
    h = c.holdout
    a = c.answerability or {}
    lines = [f"[{r.name}] thresholds {_th(c.thresholds)}  answerability cut-offs {_th(c.answerability_thresholds or ())}"]
    for label, f in (("widemem", h["widemem_thresholds"]), ("calibrated", h), ("answerability", a.get("holdout", {}))):
        lines.append(f"  holdout {label:14s} recall {_ci(f.get('recall_moderate_plus'))}  hard-neg "
                     f"{_ci(f.get('false_confidence_hard_negative'))}  other-person "
                     f"{_ci(f.get('false_confidence_other_person'))}  never-mentioned "
                     f"{_ci(f.get('false_confidence_never_mentioned'))}  AUROC {_ci(f.get('auroc'), False)}")
    lines.append(f"  seconds {json.dumps({k: round(v, 1) for k, v in r.seconds.items()})}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    command, opts = parse_args(sys.argv[1:] if argv is None else argv)
    if command == "report":
        print(f"wrote {write_report()}")
        return 0
    from widemem_bench.calibration import calibration_dir, save_calibration

    tl, meta = _load_data(opts.dataset)
    out = opts.out or REPO_ROOT / "outputs" / "calibrate"
    fixture = None
    for name in opts.embedders:
        r = calibrate_embedder(name, opts, tl, meta)
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        save_calibration(r.calibration, folder / "calibration.json")
        r.per_query.to_parquet(folder / "per_query.parquet")
        if r.fixture is not None:
            fixture = r.fixture
            r.fixture.to_csv(folder / "fixture.csv", index=False)
            print(r.fixture.to_string(index=False))
        if opts.install:
            print(f"wrote {save_calibration(r.calibration, calibration_dir() / f'{name}.json')}")
        print(_summary(r), flush=True)
    if opts.report and opts.install:
        print(f"wrote {write_report(fixture=fixture)}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
