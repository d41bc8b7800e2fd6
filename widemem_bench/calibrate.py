"""Per-embedder auto-calibration with a certificate that holds under clustering: ``python -m widemem_bench.calibrate``.

Two ways in:

- ``embedder=<name>`` (or ``all``): on the timelines' train split (questions whose answer
  is or is not stored: answerable, never-mentioned, hard-negative, other-person),
  1. the similarity ladder: `calibration.certify_ladder` on the top-1 cosine (the score
     widemem bands on): HIGH and MODERATE precision targets, a cap on hard negatives at
     MODERATE or above, and LOW set so that answerable questions rarely read NONE, all
     under one delta with users as the unit;
  2. the answerability scorer: fitted on half of the train users, and its probability
     cut-offs certified with the same machinery on the other half, scored by the very
     model that ships (never by out-of-fold stand-ins);
  3. validation and holdout figures with cluster-bootstrap 95 % intervals (by user) for
     widemem's own thresholds, the calibrated ladder and the scorer, including the NONE
     rate of every question kind.
- ``data=<file.csv|jsonl>``: your own labels from any memory system (see
  `calibration.labels`): the same certificate on your top-1 scores, the same table.

Both print the three ``WIDEMEM_CONFIDENCE_*`` lines to paste and a trade-off table, and
write under ``outputs/calibrate/<name>/``. Only ``write_package_files=true`` (what
``make calibrate`` passes) rewrites ``widemem_bench/calibration/files/<name>.json``.
An embedder run also updates its row of ``reports/calibration.md`` (``report=false``
skips it).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

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
# The trade-off table's rows and columns, in the one order the console and calibration.md share.
ROW_LABELS = {"widemem": "widemem's thresholds", "calibrated": "auto-calibrated", "answerability": "answerability scorer"}
MOD_KIND_ORDER = ("hard_negative", "other_person", "never_mentioned")
TABLE_FIGURE_PREFIXES = ("recall_moderate_plus", "false_confidence_", "none_rate_")
OUTPUT_ROOT = REPO_ROOT / "outputs" / "calibrate"
CALIBRATION_SHARE = 0.5   # share of train users kept out of the scorer's fit, to certify its cut-offs
# Settings an embedder needs to get a reachable ladder, applied unless given on the
# command line and recorded in its file. tfidf: the lexical cosine is exactly 0 for
# every question sharing no word with the stored facts (46 % of answerable train
# questions), so no LOW above 0 keeps answerable NONE under 5 %; and no cosine band
# reaches 0.95 precision on enough users.
EMBEDDER_PRESETS: dict[str, dict[str, Any]] = {
    "tfidf": {"none_answerable": 0.5, "targets": {"high": 0.85}},
}
USAGE = """usage: python -m widemem_bench.calibrate [report] key=value ...

  embedder=NAME[,NAME...]|all   calibrate embedders on the timelines (default minilm-l6)
  data=FILE.csv|FILE.jsonl      calibrate on your own labels: user_id, query, score (or scores), label
  name=NAME                     name of a data= calibration (default: the file's stem)
  model_id=ID                   data=: whose widemem defaults to compare with (default: the generic table)
  targets.high=0.95 targets.moderate=0.80   precision of HIGH and of MODERATE or above
  none.answerable=0.05|none     at most this share of answerable questions reads NONE (sets LOW)
  low_cap.KIND=RATE|none        at most this share of KIND at LOW or above (a floor under LOW; e.g.
                                low_cap.never_mentioned=0.2 trades answerable NONE for it)
  cap.KIND=0.10|none            at most this share of KIND at MODERATE or above (default hard_negative)
  delta=0.1                     one error budget for the whole certificate (split over its statements)
  method=cluster|binomial       cluster: users as the unit (default); binomial: the old i.i.d. test
  dataset=timelines n_boot=1000 seed=0 out=DIR report=true
  write_package_files=true      also rewrite widemem_bench/calibration/files/NAME.json (make calibrate)

  report                        only rewrite reports/calibration.md from the committed files
Prints the WIDEMEM_CONFIDENCE_* lines and a trade-off table; writes under outputs/calibrate/NAME/."""


@dataclass
class Options:
    """What one calibration run uses; every field can be set as key=value on the command line."""

    embedders: tuple[str, ...] = ("minilm-l6",)
    data: Path | None = None
    name: str | None = None
    model_id: str = ""
    dataset: str = "timelines"
    targets: dict[str, float] = dataclasses.field(default_factory=dict)
    none_answerable: float | str | None = None   # None: 0.05 or the preset; "none": no NONE statement
    low_cap: dict[str, float] = dataclasses.field(default_factory=dict)
    delta: float = 0.1
    method: str = "cluster"
    cap: dict[str, float] | None = None       # None: the default (hard negatives <= 10 % when present)
    n_boot: int = 1000
    seed: int = 0
    write_package_files: bool = False
    out: Path | None = None                   # default outputs/calibrate
    report: bool = True                       # update reports/calibration.md (embedder runs)

    def resolved(self, embedder: str | None = None) -> dict[str, Any]:
        """Targets, none_answerable and caps in force (presets for ``embedder`` under explicit keys)."""
        from widemem_bench.calibration.certify import (
            DEFAULT_LADDER_TARGETS,
            DEFAULT_NONE_ANSWERABLE,
        )

        preset = EMBEDDER_PRESETS.get(embedder or "", {})
        targets = {**DEFAULT_LADDER_TARGETS, **preset.get("targets", {}), **self.targets}
        none = self.none_answerable if self.none_answerable is not None else preset.get(
            "none_answerable", DEFAULT_NONE_ANSWERABLE)
        cap = dict(DEFAULT_CAP) if self.cap is None else dict(self.cap)
        return {"targets": targets, "none_answerable": None if none == "none" else float(none), "cap": cap,
                "low_cap": dict(self.low_cap), "delta": self.delta, "method": self.method, "preset": preset}


# --------------------------------------------------------------------------- scorers


class CertifiableScorer(Protocol):
    """What the pipeline needs of a scorer to certify its cut-offs: fit, predict, describe."""

    def fit(self, x: Any, y: np.ndarray, groups: np.ndarray) -> Any: ...

    def predict(self, x: Any) -> np.ndarray: ...

    def to_dict(self) -> dict[str, Any]: ...


class LogisticScorer:
    """Answerability v1 (`answerability.fit_model`) behind the `CertifiableScorer` interface."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.model: Any = None

    def fit(self, x: Any, y: np.ndarray, groups: np.ndarray) -> LogisticScorer:
        from widemem_bench.answerability import fit_model

        self.model, _ = fit_model(np.asarray(x), y, groups, seed=self.seed)
        return self

    def predict(self, x: Any) -> np.ndarray:
        return np.asarray(self.model.predict_proba(np.asarray(x)), dtype=float)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.model.to_dict())


def split_users(users: np.ndarray, share: float, seed: int) -> np.ndarray:
    """Boolean mask of the rows whose user falls in the calibration share (seeded, by user)."""
    uniq = np.unique(users.astype(str))
    rng = np.random.default_rng(seed)
    held = set(rng.permutation(uniq)[: round(share * uniq.size)].tolist())
    return np.array([u in held for u in users.astype(str)])


def certify_scorer(scorer: CertifiableScorer, x: Any, kinds: np.ndarray, users: np.ndarray, groups: np.ndarray,
                   settings: Mapping[str, Any], *, seed: int = 0, share: float = CALIBRATION_SHARE,
                   score_name: str = "answerability") -> tuple[Any, np.ndarray, dict[str, Any]]:
    """Fit ``scorer`` on some users, certify its cut-offs on the others, scored by that same model.

    ``x`` holds the train rows only (indexable by a boolean mask). Returns the ladder,
    the scorer's probabilities for every row of ``x`` and the split's description.
    """
    from widemem_bench.calibration import certify_ladder

    held = split_users(users, share, seed)
    y = kinds == "answerable"
    scorer.fit(x[~held], y[~held], groups[~held])
    prob = scorer.predict(x)
    ladder = certify_ladder(prob[held], kinds[held], users[held], targets=settings["targets"],
                            caps=settings["cap"], none_answerable=settings["none_answerable"],
                            low_caps=settings["low_cap"], delta=settings["delta"], method=settings["method"],
                            score_name=score_name)
    split = {"fit_users": int(np.unique(users[~held]).size), "calibration_users": int(np.unique(users[held]).size),
             "fit_questions": int((~held).sum()), "calibration_questions": int(held.sum()),
             "note": "cut-offs certified on users the shipped model never saw, scored by the shipped model"}
    return ladder, prob, split


# --------------------------------------------------------------------------- caps


def cap_threshold(scores: Any, is_kind: Any, max_rate: float, delta: float) -> dict[str, Any]:
    """Lowest threshold at which P(score >= t | kind) <= max_rate is certified at level ``delta``.

    The i.i.d. per-question version, for `fit_thresholds` fits (e.g. the answerability
    tests); the pipeline's caps are statements of `calibration.certify_ladder`.

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
    from widemem_bench.timelines.loading import load_dataset
    from widemem_bench.timelines.materialize import read_config

    tl, meta = load_dataset(read_config(dataset), {})
    check_fittable(tl, "calibration")
    return tl, meta


def _embedder(name: str, events: pd.DataFrame) -> Any:
    from widemem_bench.embedders import load_embedder

    emb = load_embedder(name)
    if hasattr(emb, "fit"):
        # tfidf: vocabulary from the train users' stored memory texts only (never from the
        # questions, nor from the holdout, whose fact phrasings are sealed).
        train = events[events["split"] == "train"] if "split" in events.columns else events
        emb.fit(train["fact_stripped"].dropna().astype(str).tolist())
    return emb


def per_query(
    tl: Any, emb: Any, weights: Sequence[float] = WIDEMEM_WEIGHTS, decay: tuple[str, float] = WIDEMEM_DECAY
) -> tuple[pd.DataFrame, np.ndarray]:
    """Per-question table (common.per_query_frame) under widemem's scoring + the feature matrix."""
    from widemem_bench.answerability.data import feature_table
    from widemem_bench.engine import batch, thresholds_for_model
    from widemem_bench.experiments import common

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




def rate_ci(num: np.ndarray, den: np.ndarray, users: np.ndarray, *, n_boot: int = 1000,
            seed: int = 0) -> list[float | None]:
    """[value, lo, hi]: share of ``den`` rows that are ``num`` rows, 95 % cluster bootstrap by user."""
    num = np.asarray(num, dtype=bool) & np.asarray(den, dtype=bool)
    den = np.asarray(den, dtype=bool)
    if not den.any():
        return [None, None, None]
    u = np.unique(np.asarray(users).astype(str), return_inverse=True)[1]
    n_u = int(u.max()) + 1
    a = np.bincount(u, weights=num.astype(float), minlength=n_u)
    b = np.bincount(u, weights=den.astype(float), minlength=n_u)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(n_u, np.full(n_u, 1.0 / n_u), size=n_boot).astype(float)
    bs = w @ b
    boot = np.where(bs > 0, (w @ a) / np.maximum(bs, 1e-12), np.nan)
    lo, hi = np.nanpercentile(boot, [2.5, 97.5])
    return [float(a.sum() / b.sum()), float(lo), float(hi)]


def none_figures(bands: np.ndarray, kinds: np.ndarray, users: np.ndarray, *, n_boot: int = 1000,
                 seed: int = 0) -> dict[str, list[float | None]]:
    """NONE rate (band 0) and false confidence at LOW or above, per kind present."""
    out: dict[str, list[float | None]] = {}
    for kind in sorted(set(kinds.tolist()), key=lambda k: (k != "answerable", k)):
        den = kinds == kind
        out[f"none_rate_{kind}"] = rate_ci(bands == 0, den, users, n_boot=n_boot, seed=seed)
    return out


def tradeoff_rows(settings: Mapping[str, tuple[Sequence[float], np.ndarray]], kinds: np.ndarray, users: np.ndarray,
                  *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """One row per setting: recall (MODERATE+), false confidence (MODERATE+) and NONE rate per kind."""
    rows = []
    neg = [k for k in sorted(set(kinds.tolist())) if k != "answerable"]
    ans = kinds == "answerable"
    for label, (th, bands) in settings.items():
        row: dict[str, Any] = {"setting": label, "thresholds": [float(t) for t in th],
                               "recall_moderate_plus": rate_ci(bands >= 2, ans, users, n_boot=n_boot, seed=seed)}
        for k in neg:
            row[f"false_confidence_{k}"] = rate_ci(bands >= 2, kinds == k, users, n_boot=n_boot, seed=seed)
        row.update(none_figures(bands, kinds, users, n_boot=n_boot, seed=seed))
        rows.append(row)
    return rows


def _pct(triple: Any) -> str:
    if not triple or triple[0] is None:
        return "n/a"
    v, lo, hi = triple
    return f"{100 * v:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def _ordered(kinds: Sequence[str], order: Sequence[str]) -> list[str]:
    return [k for k in order if k in kinds] + sorted(k for k in kinds if k not in order)


def table_columns(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(header, figure key) of the trade-off table, in the order both views print it: recall,
    each kind at MODERATE+ (hard negative, other person, never mentioned, then any other), and
    the NONE rate per kind (answerable first, as CONFIDENCE_KINDS)."""
    neg = _ordered([k.removeprefix("false_confidence_") for k in row if k.startswith("false_confidence_")],
                   MOD_KIND_ORDER)
    none = _ordered([k.removeprefix("none_rate_") for k in row if k.startswith("none_rate_")], CONFIDENCE_KINDS)
    return ([("recall MOD+", "recall_moderate_plus")]
            + [(f"{k.replace('_', '-')} MOD+", f"false_confidence_{k}") for k in neg]
            + [(f"NONE {k.replace('_', '-')}", f"none_rate_{k}") for k in none])


def format_tradeoff(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    """The trade-off table as aligned text, the columns and intervals of reports/calibration.md."""
    spec = table_columns(rows[0])
    cols = ["setting", "thresholds (high / moderate / low)"] + [h for h, _ in spec]
    body = [[r["setting"], _th(r["thresholds"])] + [_ci(r.get(k)) for _, k in spec] for r in rows]
    width = [max(len(c), *(len(b[i]) for b in body)) for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, width, strict=True)).rstrip()  # noqa: E731
    return "\n".join([title, line(cols), *(line(b) for b in body)])


@dataclass
class EmbedderResult:
    name: str
    calibration: Any          # CalibrationFile
    per_query: pd.DataFrame   # every question, with bands / probabilities of every setting
    fixture: pd.DataFrame | None
    seconds: dict[str, float]
    table: list[dict[str, Any]] = dataclasses.field(default_factory=list)   # holdout trade-off rows


def calibrate_embedder(name: str, opts: Options, tl: Any = None, meta: dict[str, Any] | None = None,
                       scorer: CertifiableScorer | None = None) -> EmbedderResult:
    """Certify the similarity ladder and the scorer's cut-offs of one embedder; figures per split.

    ``scorer``: any `CertifiableScorer` on the feature table (default: answerability v1).
    """
    from widemem_bench import calibration as cal
    from widemem_bench.calibration.simulate import measure_icc
    from widemem_bench.engine import thresholds_for_model

    t0 = time.perf_counter()
    secs: dict[str, float] = {}
    if tl is None or meta is None:
        tl, meta = _load_data(opts.dataset)
    # world B is evaluation-only (issue 13): refuse before anything is fitted or written
    check_fittable(tl, "calibration")
    if (tl.events["split"] == "holdout").any():
        from widemem_bench.sealed import open_split

        open_split("world A holdout", world=tl)   # its holdout figures below read the sealed split: the ledger sees it
    emb = _embedder(name, tl.events)
    pq, x = per_query(tl, emb)
    secs["prepare"] = time.perf_counter() - t0
    settings = opts.resolved(name)

    kinds = pq["kind"].to_numpy(dtype=str)
    users = pq["user_id"].to_numpy().astype(str)
    conf = np.isin(kinds, CONFIDENCE_KINDS)
    train = conf & (pq["split"].to_numpy() == "train")
    y = kinds == "answerable"
    # Platt folds by phrasing family inside the fit users: validation and holdout differ
    # from train in users AND phrasings (see answerability.fit_model).
    families = pq["template_family"].astype(str).to_numpy()
    sim = pq["top1_sim"].to_numpy(dtype=float)

    t1 = time.perf_counter()
    ladder = cal.certify_ladder(sim[train], kinds[train], users[train], targets=settings["targets"],
                                caps=settings["cap"], none_answerable=settings["none_answerable"],
                                low_caps=settings["low_cap"], delta=opts.delta, method=opts.method,
                                score_name=f"{name} similarity")
    scorer = scorer or LogisticScorer(seed=opts.seed)
    # Presets are for the cosine's shape (see EMBEDDER_PRESETS); the scorer gets the plain settings.
    prob_ladder, _, split = certify_scorer(
        scorer, x[train], kinds[train], users[train], families[train], opts.resolved(None), seed=opts.seed,
        score_name=f"{name} answerability")
    secs["fit"] = time.perf_counter() - t1

    prob = scorer.predict(x)
    pq["prob_answerability"] = prob
    pq["prob_similarity"] = _platt_similarity(sim[train], y[train], sim)
    widemem_th = thresholds_for_model(emb.model_id)
    pq["band_widemem"] = cal.assign_bands(sim, widemem_th)
    pq["band_calibrated"] = cal.assign_bands(sim, ladder.thresholds)
    pq["band_answerability"] = cal.assign_bands(prob, prob_ladder.thresholds)
    pq["band"] = pq["band_widemem"]

    t2 = time.perf_counter()
    figs: dict[str, dict[str, Any]] = {}
    table: list[dict[str, Any]] = []
    for split_name in ("validation", "holdout"):
        part = pq[conf & (pq["split"].to_numpy() == split_name)]
        pk, pu = part["kind"].to_numpy(dtype=str), part["user_id"].to_numpy().astype(str)

        def with_none(f: dict[str, Any], col: str, p: pd.DataFrame = part, k: np.ndarray = pk,
                      u: np.ndarray = pu) -> dict[str, Any]:
            return {**f, **none_figures(p[col].to_numpy(), k, u, n_boot=opts.n_boot, seed=opts.seed)}

        figs[split_name] = {
            "calibrated": with_none(figures(part, "band_calibrated", prob_col="prob_similarity", n_boot=opts.n_boot,
                                            seed=opts.seed), "band_calibrated"),
            "widemem": with_none(figures(part, "band_widemem", n_boot=opts.n_boot, seed=opts.seed), "band_widemem"),
            "answerability": with_none(figures(part, "band_answerability", prob_col="prob_answerability",
                                               score_col="prob_answerability", n_boot=opts.n_boot, seed=opts.seed),
                                       "band_answerability"),
        }
        if split_name == "holdout":
            # The console's table is the file's holdout figures themselves (one bootstrap, one
            # seed), so `calibrate` and reports/calibration.md print the same intervals.
            f = figs[split_name]
            table = [{"setting": label, "thresholds": [float(t) for t in th],
                      **{k: v for k, v in f[key].items() if k.startswith(TABLE_FIGURE_PREFIXES)}}
                     for label, th, key in ((ROW_LABELS["widemem"], widemem_th, "widemem"),
                                            (ROW_LABELS["calibrated"], ladder.thresholds, "calibrated"),
                                            (ROW_LABELS["answerability"], prob_ladder.thresholds, "answerability"))]
    secs["figures"] = time.perf_counter() - t2

    def split_section(split_name: str) -> dict[str, Any]:
        f = figs[split_name]
        return {**f["calibrated"], "widemem_thresholds": {"thresholds": list(widemem_th), **f["widemem"]}}

    icc = measure_icc(sim[train], users[train], kinds[train])
    answer = cal.answerability_section(
        prob_ladder, model=scorer.to_dict(), validation=figs["validation"]["answerability"],
        holdout=figs["holdout"]["answerability"], split=split,
        latency_us=_latency_us(getattr(scorer, "model", None), x[:200]),
    )
    calfile = cal.CalibrationFile.from_ladder(
        ladder, embedder=name, model_id=emb.model_id, fingerprint=str(getattr(emb, "fingerprint", "")),
        dataset={"name": opts.dataset, "version": meta["version"], "sha256": meta["sha256"],
                 "generator_version": meta.get("generator_version"), "split": "train",
                 "kinds": list(CONFIDENCE_KINDS), "n_train": int(train.sum())},
        validation=split_section("validation"), holdout=split_section("holdout"), answerability=answer,
        options=_options_record(settings, opts), intra_user_correlation=icc,
    )
    fixture = None
    fitted_model = getattr(scorer, "model", None)   # answerability v1's; another scorer skips the fixture
    if name == "minilm-l6" and fitted_model is not None:
        fixture = fixture_table(emb, fitted_model, calfile)
    secs["total"] = time.perf_counter() - t0
    return EmbedderResult(name, calfile, pq, fixture, secs, table)


def _options_record(settings: Mapping[str, Any], opts: Options) -> dict[str, Any]:
    return {"targets": dict(settings["targets"]), "none_answerable": settings["none_answerable"],
            "caps": dict(settings["cap"]), "low_caps": dict(settings["low_cap"]), "delta": opts.delta, "method": opts.method,
            "preset": dict(settings.get("preset") or {}), "seed": opts.seed}


def _latency_us(model: Any, x: np.ndarray) -> float | None:
    """Mean microseconds of the model's per-query probability (features excluded; see tests)."""
    if model is None or not hasattr(model, "prob_one"):
        return None
    t = time.perf_counter()
    for row in x:
        model.prob_one(row)
    return (time.perf_counter() - t) / max(len(x), 1) * 1e6


# --------------------------------------------------------------------------- your own labels


@dataclass
class DataResult:
    name: str
    calibration: Any          # CalibrationFile
    table: list[dict[str, Any]]
    rows: pd.DataFrame


def calibrate_data(opts: Options) -> DataResult:
    """Certify a ladder on a labels file (`calibration.labels`); the table is on the same rows."""
    import re

    from widemem_bench import calibration as cal
    from widemem_bench.calibration.labels import read_labels
    from widemem_bench.calibration.simulate import measure_icc
    from widemem_bench.engine import thresholds_for_model

    assert opts.data is not None
    rows = read_labels(opts.data)
    name = opts.name or re.sub(r"[^A-Za-z0-9._-]", "-", opts.data.stem).strip("-.") or "labels"
    settings = opts.resolved()
    kinds = rows["kind"].to_numpy(dtype=str)
    if opts.cap is None:
        # The default cap names a timelines kind; a labels file without it gets no cap.
        settings["cap"] = {k: v for k, v in settings["cap"].items() if (kinds == k).any()}
    users = rows["user_id"].to_numpy().astype(str)
    s = rows["score"].to_numpy(dtype=float)
    ladder = cal.certify_ladder(s, kinds, users, targets=settings["targets"], caps=settings["cap"],
                                none_answerable=settings["none_answerable"], low_caps=settings["low_cap"],
                                delta=opts.delta, method=opts.method, score_name=f"data={opts.data}")
    widemem_th = thresholds_for_model(opts.model_id)
    table = tradeoff_rows({
        f"widemem defaults{' (' + opts.model_id + ')' if opts.model_id else ''}": (widemem_th, cal.assign_bands(s, widemem_th)),
        "calibrated": (ladder.thresholds, cal.assign_bands(s, ladder.thresholds)),
    }, kinds, users, n_boot=opts.n_boot, seed=opts.seed)
    calfile = cal.CalibrationFile.from_ladder(
        ladder, embedder=name, model_id=opts.model_id or "unknown", fingerprint="",
        dataset={"name": "labels file", "path": str(opts.data), "sha256": _sha256(opts.data),
                 "n_rows": len(rows), "n_users": int(rows["user_id"].nunique())},
        validation={"in_sample": table}, options=_options_record(settings, opts),
        intra_user_correlation=measure_icc(s, users, kinds),
    )
    return DataResult(name, calfile, table, rows)


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def report_calibrations(run: Mapping[str, Any] | None = None) -> dict[str, tuple[Any, str]]:
    """Files the report shows: committed ones, other models' runs in outputs/, then this run's."""
    from widemem_bench.calibration import available_calibrations, load_calibration, read_calibration

    out: dict[str, tuple[Any, str]] = {}
    for n in available_calibrations():
        out[n] = (load_calibration(n), "committed")
    for path in sorted(OUTPUT_ROOT.glob("*/calibration.json")) if OUTPUT_ROOT.is_dir() else []:
        name = path.parent.name
        if name in out:
            continue
        try:
            c = read_calibration(path)
        except ValueError:
            continue  # a run of an older version: not shown rather than misread
        if c.holdout:
            out[name] = (c, f"outputs/calibrate/{name}")
    for name, c in (run or {}).items():
        same = name in out and out[name][1] == "committed" and out[name][0].to_dict() == c.to_dict()
        out[name] = (c, "committed" if same else f"outputs/calibrate/{name}")
    order = [n for n in DEFAULT_EMBEDDERS if n in out] + sorted(n for n in out if n not in DEFAULT_EMBEDDERS)
    return {n: out[n] for n in order}


def coverage_lines(icc: float, n_reps: int = 1000, delta: float = 0.1) -> list[str]:
    """The coverage simulation's table for the report (fixed seed; a few seconds)."""
    from widemem_bench.calibration.simulate import simulate_coverage

    configs = (("new: users as the unit, one delta (Bonferroni)", "cluster", True),
               ("old: i.i.d. binomial, delta per statement", "binomial", False),
               ("i.i.d. binomial, one delta (Bonferroni)", "binomial", True))
    lines = ["| certificate | statements violated (any) | HIGH | MODERATE | hard-negative cap | NONE |",
             "|---|---|---|---|---|---|"]
    for scen_icc in (icc, 0.2):
        res = simulate_coverage(n_reps=n_reps, icc=scen_icc, delta=delta, configs=configs)
        for r in res:
            ps = r.per_statement
            lines.append(f"| {r.label} (ICC {scen_icc:.3f}) | {100 * r.violation_rate:.1f}% | {100 * ps['high']:.1f}% "
                         f"| {100 * ps['moderate']:.1f}% | {100 * ps['cap:hard_negative']:.1f}% | {100 * ps['none']:.1f}% |")
    return lines


def report_markdown(cals: Mapping[str, tuple[Any, str]] | None = None, fixture: pd.DataFrame | None = None,
                    simulation: Sequence[str] | None = None) -> str:
    """reports/calibration.md from calibration files (default: the committed ones)."""
    from widemem_bench.calibration.certify import ASSUMPTION

    cals = dict(cals if cals is not None else report_calibrations())
    kinds = CONFIDENCE_KINDS
    # the console's columns (format_tradeoff), for the timelines' kinds
    spec = table_columns({**{f"false_confidence_{k}": None for k in NEGATIVE_KINDS},
                          **{f"none_rate_{k}": None for k in kinds}})
    lines = ["## Confidence calibration per embedder", "",
             "Timelines holdout split (users and phrasings never seen in fitting), questions whose answer is "
             "or is not stored. Recall = answerable questions at MODERATE or above; \"X MOD+\" = questions of "
             "kind X at MODERATE or above (false confidence); \"NONE X\" = questions of kind X that read NONE. "
             "95% intervals: cluster bootstrap by user. Written by `python -m widemem_bench.calibrate` "
             "(`make calibrate` for the committed files).", "",
             "| embedder | setting | thresholds (high / moderate / low) | "
             + " | ".join(h for h, _ in spec) + " |", "|---|---|---|" + "---|" * len(spec)]
    for n, (c, source) in cals.items():
        h = c.holdout
        if not h:
            continue
        label = n if source.startswith("committed") else f"{n} ({source})"
        rows = [(ROW_LABELS["widemem"], h["widemem_thresholds"]["thresholds"], h["widemem_thresholds"]),
                (ROW_LABELS["calibrated"], c.thresholds, h),
                (ROW_LABELS["answerability"], c.answerability_thresholds, (c.answerability or {}).get("holdout", {}))]
        for setting, th, f in rows:
            lines.append(f"| {label} | {setting} | {_th(th or ())} | "
                         + " | ".join(_ci(f.get(k)) for _, k in spec) + " |")
    lines += ["", "NONE against widemem's defaults: widemem's LOW (0.20 for all-MiniLM-L6-v2, 0.30 for other "
              "models) reaches its NONE rate on never-mentioned questions by also sending answerable questions to "
              "NONE (the \"NONE answerable\" column). The certified LOW keeps answerable questions at NONE under "
              "5 % (tfidf: 50 %, its preset), so on a top-1 cosine it says NONE to fewer never-mentioned questions "
              "than widemem's LOW does wherever widemem's LOW costs more than 5 % of answerable questions; the "
              "answerability scorer, which separates the kinds far better, does both. `low_cap.never_mentioned=<rate>` "
              "certifies the other side of the trade-off instead (with `none.answerable=none`), or fails with a "
              "one-line error when both are asked and no LOW meets both.", "",
              "Answerability scorer against similarity alone (holdout; similarity's probability = Platt "
              "scaling of the top-1 cosine on the train split):", "",
              "| embedder | score | AUROC | AURC | adaptive ECE | Brier |", "|---|---|---|---|---|---|"]
    for n, (c, _) in cals.items():
        a = (c.answerability or {}).get("holdout", {})
        if not c.holdout:
            continue
        for setting, f in (("similarity", c.holdout), ("answerability", a)):
            lines.append(f"| {n} | {setting} | {_ci(f.get('auroc'), False)} | {_ci(f.get('aurc'), False)} "
                         f"| {_ci(f.get('adaptive_ece'), False)} | {_ci(f.get('brier'), False)} |")
    lines += ["", "### The certificate", "",
              "Each file certifies, on the timelines' train split (210 users), with one delta = 0.1 for all "
              "statements together (Bonferroni: delta / 4 each): HIGH precision >= 0.95; precision of MODERATE or "
              "above >= 0.80; hard negatives at MODERATE or above <= 10 %; answerable questions reading NONE "
              "<= 5 % (LOW is the highest threshold certified for this, so NONE means \"below what all but a "
              "certified 5 % of answerable questions score\"). The answerability scorer's cut-offs are certified "
              "the same way on half of the train users, which the shipped model never saw (it is fitted on the "
              "other half). tfidf uses `targets.high=0.85` and `none.answerable=0.5`, recorded in its file: its "
              "cosine is exactly 0 for every question sharing no word with the stored facts (46 % of answerable "
              "train questions).", "", f"Assumption: {ASSUMPTION}", ""]
    icc_rows = [(n, c.certificate.get("intra_user_correlation")) for n, (c, _) in cals.items() if c.certificate]
    if icc_rows:
        lines += ["Intra-user correlation of the top-1 cosine within a question kind (one-way ANOVA over users, "
                  "train split): " + ", ".join(f"{n} {v:.4f}" for n, v in icc_rows if v is not None) + ".", ""]
    if simulation:
        lines += ["Coverage simulation (`widemem_bench.calibration.simulate.simulate_coverage`, 1,000 simulated "
                  "calibrations of 210 users x 27 questions each, kinds and score spreads of minilm-l6 on the "
                  "timelines, a per-user score offset giving the intra-user correlation shown; delta = 0.1): share "
                  "of calibrations in which a certified statement is false at the exported thresholds.", "",
                  *simulation, "",
                  "Reading: the old certificate fails mostly because each of its statements spent its own delta; "
                  "at the timelines' weak intra-user correlation an i.i.d. binomial test with the delta split over "
                  "the statements also stays within delta. Testing per-user totals costs little here and does not "
                  "rely on questions being independent, which real users' repeated questions are not.", ""]
    lines += ["### Calibration files", ""]
    for n, (c, source) in cals.items():
        def cert(bands: Mapping[str, Any]) -> str:
            return ", ".join(f"{b} {'certified' if bands[b]['certified'] else 'uncertified'}"
                             for b in ("high", "moderate", "low"))
        a = c.answerability or {}
        lat = a.get("latency_us")
        lines += [f"**{n}** ({source}; `{c.model_id}`; data set {c.dataset.get('version', c.dataset.get('name'))}, "
                  f"sha256 `{str(c.dataset.get('sha256'))[:12]}…`): similarity thresholds {_th(c.thresholds)} "
                  f"({cert(c.bands)}); answerability cut-offs {_th(c.answerability_thresholds or ())} "
                  f"({cert(a['bands']) if a else 'n/a'})"
                  + (f"; model latency {lat:.1f} µs/query" if lat is not None else "") + ".", "",
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
        lines += [""]
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


def write_report(path: Path = REPORT_PATH, fixture: pd.DataFrame | None = None,
                 run: Mapping[str, Any] | None = None) -> Path:
    cals = report_calibrations(run)
    if fixture is None and "minilm-l6" not in (run or {}):
        fixture = fixture_report_table()
    icc = next((c.certificate.get("intra_user_correlation") for n, (c, _) in cals.items()
                if n == "minilm-l6" and c.certificate), None)
    simulation = coverage_lines(float(icc)) if icc is not None else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_markdown(cals, fixture=fixture, simulation=simulation), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- CLI


def _bool(key: str, value: str) -> bool:
    v = value.lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{key} must be true or false, got {value!r}")


def parse_args(argv: Sequence[str]) -> tuple[str, Options]:
    """key=value arguments (and an optional leading command: ``run``, ``report`` or ``--help``)."""
    opts = Options()
    command = "run"
    args = list(argv)
    if any(a in ("-h", "--help", "help") for a in args):
        return "help", opts
    if args and "=" not in args[0]:
        command = args.pop(0)
        if command not in ("run", "report"):
            raise ValueError(f"command must be 'run' or 'report', got {command!r} (see --help)")
    for arg in args:
        if "=" not in arg:
            raise ValueError(f"argument {arg!r} is not key=value (see --help)")
        key, value = arg.split("=", 1)
        try:
            _set(opts, key, value)
        except ValueError as err:
            if key in str(err):
                raise
            raise ValueError(f"{key}: {err}") from None
    if opts.data is not None and opts.write_package_files:
        raise ValueError("write_package_files=true is for embedder runs; a data= calibration is written under outputs/")
    return command, opts


def _set(opts: Options, key: str, value: str) -> None:
    if key == "embedder":
        opts.embedders = DEFAULT_EMBEDDERS if value == "all" else tuple(v for v in value.split(",") if v)
    elif key == "data":
        opts.data = Path(value)
    elif key in ("name", "model_id", "dataset", "method"):
        setattr(opts, key, value)
    elif key.startswith("targets."):
        band = key.split(".", 1)[1]
        if band == "low":
            raise ValueError("targets.low: LOW is no longer a precision target; set none.answerable "
                             "(the share of answerable questions allowed to read NONE)")
        if band not in ("high", "moderate"):
            raise ValueError(f"{key}: unknown band {band!r}; expected high, moderate")
        opts.targets[band] = float(value)
    elif key == "none.answerable":
        opts.none_answerable = "none" if value.lower() in ("none", "null", "off") else float(value)
    elif key.startswith("low_cap."):
        kind = key.split(".", 1)[1]
        if kind == "answerable" or not kind:
            raise ValueError(f"{key}: unknown kind {kind!r}; low caps name an unanswerable kind, e.g. never_mentioned")
        if value.lower() in ("none", "null", "off"):
            opts.low_cap.pop(kind, None)
        else:
            opts.low_cap[kind] = float(value)
    elif key.startswith("cap."):
        kind = key.split(".", 1)[1]
        if kind == "answerable" or not kind:
            raise ValueError(f"{key}: unknown kind {kind!r}; caps name an unanswerable kind, e.g. hard_negative")
        if opts.cap is None:
            opts.cap = dict(DEFAULT_CAP)
        if value.lower() in ("none", "null", "off"):
            opts.cap.pop(kind, None)
        else:
            opts.cap[kind] = float(value)
    elif key == "delta":
        opts.delta = float(value)
    elif key in ("n_boot", "seed"):
        setattr(opts, key, int(value))
    elif key in ("write_package_files", "commit"):
        opts.write_package_files = _bool(key, value)
    elif key == "report":
        opts.report = _bool(key, value)
    elif key == "install":
        raise ValueError("install= is now write_package_files=true (make calibrate); runs write under outputs/")
    elif key == "out":
        opts.out = Path(value)
    else:
        raise ValueError(f"unknown key {key!r} (see --help)")


def _print_result(name: str, calfile: Any, table: Sequence[Mapping[str, Any]], where: str) -> None:
    print(f"\n[{name}] paste into widemem's environment:")
    for line in calfile.env:
        print(f"  {line}")
    print(format_tradeoff(table, f"trade-off on {where} (percent, 95% cluster-bootstrap intervals by user):"))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (also ``widemem-bench calibrate ARGS``); returns the exit code."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _main(argv: list[str]) -> int:
    command, opts = parse_args(argv)
    if command == "help":
        print(USAGE)
        return 0
    if command == "report":
        print(f"wrote {write_report()}")
        return 0
    from widemem_bench.calibration import calibration_dir, save_calibration

    out = opts.out or OUTPUT_ROOT
    if opts.data is not None:
        d = calibrate_data(opts)   # every check happens here, before anything is written
        folder = out / d.name
        folder.mkdir(parents=True, exist_ok=True)
        save_calibration(d.calibration, folder / "calibration.json")
        _print_result(d.name, d.calibration, d.table, f"{opts.data} itself (in sample; the certificate is the guarantee)")
        print(f"wrote {folder / 'calibration.json'}")
        return 0
    tl, meta = _load_data(opts.dataset)
    fixture = None
    run: dict[str, Any] = {}
    results = [calibrate_embedder(name, opts, tl, meta) for name in opts.embedders]
    for r in results:
        folder = out / r.name
        folder.mkdir(parents=True, exist_ok=True)
        save_calibration(r.calibration, folder / "calibration.json")
        r.per_query.to_parquet(folder / "per_query.parquet")
        (folder / "tradeoff.json").write_text(json.dumps(r.table, indent=1) + "\n", encoding="utf-8")
        if r.fixture is not None:
            fixture = r.fixture
            r.fixture.to_csv(folder / "fixture.csv", index=False)
        if opts.write_package_files:
            print(f"wrote {save_calibration(r.calibration, calibration_dir() / f'{r.name}.json')}")
        run[r.name] = r.calibration
        _print_result(r.name, r.calibration, r.table, "the timelines holdout")
        print(f"  wrote {folder}/  seconds {json.dumps({k: round(v, 1) for k, v in r.seconds.items()})}", flush=True)
    if opts.report:
        print(f"wrote {write_report(fixture=fixture, run=run)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
