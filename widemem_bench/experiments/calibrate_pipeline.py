"""The `calibrate` experiment's pipeline: one embedder on the timelines, or a labels file.

On the timelines' train split (answerable, never-mentioned, hard-negative and
other-person questions):

1. the similarity ladder: `calibration.certify_ladder` on the top-1 cosine (the score
   widemem bands on), users as the unit, one delta;
2. the answerability scorer: fitted on half of the train users, its probability cut-offs
   certified on the other half (`calibration.scorers.certify_scorer`), scored by the very
   model that ships;
3. validation and holdout figures with cluster-bootstrap 95 % intervals by user
   (`calibration.tradeoff`) for widemem's own thresholds, the ladder and the scorer.

A labels file (`calibration.labels`) gets the same certificate on its own top-1 scores.
Nothing here writes a file: the experiment (`experiments/calibrate.py`) does.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench import calibration as cal
from widemem_bench.calibration.options import CONFIDENCE_KINDS, Options
from widemem_bench.calibration.scorers import CertifiableScorer, certify_scorer
from widemem_bench.calibration.simulate import measure_icc
from widemem_bench.calibration.tradeoff import (
    ROW_LABELS,
    TABLE_FIGURE_PREFIXES,
    figures,
    none_figures,
    tradeoff_rows,
)
from widemem_bench.engine import thresholds_for_model
from widemem_bench.engine.config import WIDEMEM_DECAY, WIDEMEM_WEIGHTS
from widemem_bench.evaluation.calibration_fixture import fixture_table
from widemem_bench.timelines.dataset import check_fittable


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


@dataclass
class EmbedderResult:
    name: str
    calibration: Any          # CalibrationFile
    per_query: pd.DataFrame   # every question, with bands / probabilities of every setting
    fixture: pd.DataFrame | None
    seconds: dict[str, float]
    table: list[dict[str, Any]] = field(default_factory=list)   # holdout trade-off rows
    ladder: Any = None        # the similarity ladder (calibration.Ladder: its statements)


@dataclass
class DataResult:
    name: str
    calibration: Any          # CalibrationFile
    table: list[dict[str, Any]]
    rows: pd.DataFrame


# --------------------------------------------------------------------------- inputs


def load_data(dataset: str) -> tuple[Any, dict[str, Any]]:
    """The named data set and its meta (version, sha256); world B is refused here."""
    from widemem_bench.timelines.loading import load_dataset
    from widemem_bench.timelines.materialize import read_config

    tl, meta = load_dataset(read_config(dataset), {})
    check_fittable(tl, "calibration")
    return tl, meta


def prepared_embedder(name: str, events: pd.DataFrame) -> Any:
    """The embedder; tfidf's vocabulary from the train users' stored memory texts only
    (never from the questions, nor from the holdout, whose fact phrasings are sealed)."""
    from widemem_bench.embedders import load_embedder

    emb = load_embedder(name)
    if hasattr(emb, "fit"):
        train = events[events["split"] == "train"] if "split" in events.columns else events
        emb.fit(train["fact_stripped"].dropna().astype(str).tolist())
    return emb


def frame(prep: Any, scored: Any, tl: Any, emb: Any) -> tuple[pd.DataFrame, np.ndarray]:
    """Per-question table (`common.per_query_frame`) of a scored batch + the feature matrix."""
    from widemem_bench.answerability.data import feature_table
    from widemem_bench.experiments import common

    pq = common.per_query_frame(prep, scored, tl.questions, emb.name)
    texts = tl.questions.set_index("question_id").loc[prep.question_ids, "text"].tolist()
    x = feature_table(prep, np.asarray(scored.final), texts)
    pq["top1_sim"] = pq["top1_sim"].fillna(-1.0)  # nothing stored = the lowest score
    return pq, x


def per_query(tl: Any, emb: Any, weights: Sequence[float] = WIDEMEM_WEIGHTS,
              decay: tuple[str, float] = WIDEMEM_DECAY) -> tuple[pd.DataFrame, np.ndarray]:
    """`frame` under widemem's scoring (the library entry; the experiment scores its engine node)."""
    from widemem_bench.engine import batch

    prep = batch.prepare(tl.events, tl.questions, emb)
    scored = batch.score(prep, tuple(weights), decay[0], float(decay[1]), thresholds_for_model(emb.model_id),
                         keep_final=True)
    return frame(prep, scored, tl, emb)


# --------------------------------------------------------------------------- one embedder


@dataclass
class _Rows:
    """The per-question arrays every step reads (train = confidence questions of the train split)."""

    kinds: np.ndarray
    users: np.ndarray
    conf: np.ndarray
    train: np.ndarray
    y: np.ndarray
    families: np.ndarray
    sim: np.ndarray

    @classmethod
    def of(cls, pq: pd.DataFrame) -> _Rows:
        kinds = pq["kind"].to_numpy(dtype=str)
        conf = np.isin(kinds, CONFIDENCE_KINDS)
        # Platt folds by phrasing family inside the fit users: validation and holdout differ
        # from train in users AND phrasings (see answerability.fit_model).
        return cls(kinds, pq["user_id"].to_numpy().astype(str), conf, conf & (pq["split"].to_numpy() == "train"),
                   kinds == "answerable", pq["template_family"].astype(str).to_numpy(),
                   pq["top1_sim"].to_numpy(dtype=float))


def _platt_similarity(train_scores: np.ndarray, train_y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Similarity alone as a probability (Platt on the top-1 cosine), for ECE / Brier next to the scorer."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=2000).fit(train_scores[:, None], train_y)
    return np.asarray(lr.predict_proba(scores[:, None])[:, 1])


def _certify(name: str, opts: Options, r: _Rows, x: np.ndarray,
             scorer: CertifiableScorer) -> tuple[Any, Any, dict[str, Any]]:
    """The similarity ladder and the scorer's certified cut-offs (the scorer is fitted here)."""
    s = opts.resolved(name)
    t = r.train
    ladder = cal.certify_ladder(r.sim[t], r.kinds[t], r.users[t], targets=s["targets"], caps=s["cap"],
                                none_answerable=s["none_answerable"], low_caps=s["low_cap"], delta=opts.delta,
                                method=opts.method, score_name=f"{name} similarity")
    # Presets are for the cosine's shape (see EMBEDDER_PRESETS); the scorer gets the plain settings.
    prob_ladder, _, split = certify_scorer(scorer, x[t], r.kinds[t], r.users[t], r.families[t], opts.resolved(None),
                                           seed=opts.seed, score_name=f"{name} answerability")
    return ladder, prob_ladder, split


def _split_figures(part: pd.DataFrame, opts: Options) -> dict[str, dict[str, Any]]:
    """The three settings' figures on one split (band, score and NONE figures)."""
    pk, pu = part["kind"].to_numpy(dtype=str), part["user_id"].to_numpy().astype(str)
    nb, seed = opts.n_boot, opts.seed

    def with_none(f: dict[str, Any], col: str) -> dict[str, Any]:
        return {**f, **none_figures(part[col].to_numpy(), pk, pu, n_boot=nb, seed=seed)}

    return {
        "calibrated": with_none(figures(part, "band_calibrated", prob_col="prob_similarity", n_boot=nb, seed=seed),
                                "band_calibrated"),
        "widemem": with_none(figures(part, "band_widemem", n_boot=nb, seed=seed), "band_widemem"),
        "answerability": with_none(figures(part, "band_answerability", prob_col="prob_answerability",
                                           score_col="prob_answerability", n_boot=nb, seed=seed),
                                   "band_answerability"),
    }


def holdout_table(f: dict[str, dict[str, Any]], ths: dict[str, Sequence[float]]) -> list[dict[str, Any]]:
    """The console's trade-off rows: the file's holdout (or, without params.holdout, validation)
    figures themselves (one bootstrap, one seed), so the run and reports/calibration.md print
    the same intervals."""
    return [{"setting": ROW_LABELS[key], "thresholds": [float(t) for t in ths[key]],
             **{k: v for k, v in f[key].items() if k.startswith(TABLE_FIGURE_PREFIXES)}}
            for key in ("widemem", "calibrated", "answerability")]


def _latency_us(model: Any, x: np.ndarray) -> float | None:
    """Mean microseconds of the model's per-query probability (features excluded; see tests)."""
    if model is None or not hasattr(model, "prob_one"):
        return None
    t = time.perf_counter()
    for row in x:
        model.prob_one(row)
    return (time.perf_counter() - t) / max(len(x), 1) * 1e6


def _file(name: str, emb: Any, opts: Options, meta: dict[str, Any], r: _Rows, figs: dict[str, Any],
          fits: tuple[Any, Any, dict[str, Any]], scorer: CertifiableScorer, x: np.ndarray) -> Any:
    """The calibration file of one embedder run."""
    ladder, prob_ladder, split = fits
    widemem_th = list(thresholds_for_model(emb.model_id))

    def section(split_name: str) -> dict[str, Any] | None:
        f = figs.get(split_name)
        if f is None:   # the holdout, not asked for: no figures rather than a read of the sealed split
            return None
        return {**f["calibrated"], "widemem_thresholds": {"thresholds": widemem_th, **f["widemem"]}}

    answer = cal.answerability_section(
        prob_ladder, model=scorer.to_dict(), validation=figs["validation"]["answerability"],
        **({"holdout": figs["holdout"]["answerability"]} if "holdout" in figs else {}), split=split,
        latency_us=_latency_us(getattr(scorer, "model", None), x[:200]),
    )
    return cal.CalibrationFile.from_ladder(
        ladder, embedder=name, model_id=emb.model_id, fingerprint=str(getattr(emb, "fingerprint", "")),
        dataset={"name": opts.dataset, "version": meta["version"], "sha256": meta["sha256"],
                 "generator_version": meta.get("generator_version"), "split": "train",
                 "kinds": list(CONFIDENCE_KINDS), "n_train": int(r.train.sum())},
        validation=section("validation"), holdout=section("holdout"), answerability=answer,
        options=opts.record(opts.resolved(name)),
        intra_user_correlation=measure_icc(r.sim[r.train], r.users[r.train], r.kinds[r.train]),
    )


def _open_holdout(tl: Any, holdout: bool) -> None:
    # world B is evaluation-only (issue 13): refuse before anything is fitted or written
    check_fittable(tl, "calibration")
    if holdout and (tl.events["split"] == "holdout").any():
        from widemem_bench.sealed import open_split

        open_split("world A holdout", world=tl)   # its holdout figures read the sealed split: the ledger sees it


def calibrate_embedder(name: str, opts: Options, tl: Any = None, meta: dict[str, Any] | None = None,
                       scorer: CertifiableScorer | None = None, *, emb: Any = None,
                       scored: tuple[pd.DataFrame, np.ndarray] | None = None) -> EmbedderResult:
    """Certify the similarity ladder and the scorer's cut-offs of one embedder; figures per split.

    ``scorer``: any `CertifiableScorer` on the feature table (default: answerability v1);
    ``emb`` and ``scored`` (`frame`'s output): the experiment's, under its engine node.
    """
    t0 = time.perf_counter()
    secs: dict[str, float] = {}
    if tl is None or meta is None:
        tl, meta = load_data(opts.dataset)
    _open_holdout(tl, opts.holdout)
    emb = emb if emb is not None else prepared_embedder(name, tl.events)
    pq, x = scored if scored is not None else per_query(tl, emb)
    secs["prepare"] = time.perf_counter() - t0
    r = _Rows.of(pq)
    t1 = time.perf_counter()
    scorer = scorer or LogisticScorer(seed=opts.seed)
    fits = _certify(name, opts, r, x, scorer)
    secs["fit"] = time.perf_counter() - t1
    ladder, prob_ladder, _ = fits
    prob = scorer.predict(x)
    widemem_th = thresholds_for_model(emb.model_id)
    pq["prob_answerability"] = prob
    pq["prob_similarity"] = _platt_similarity(r.sim[r.train], r.y[r.train], r.sim)
    pq["band_widemem"] = cal.assign_bands(r.sim, widemem_th)
    pq["band_calibrated"] = cal.assign_bands(r.sim, ladder.thresholds)
    pq["band_answerability"] = cal.assign_bands(prob, prob_ladder.thresholds)
    pq["band"] = pq["band_widemem"]
    t2 = time.perf_counter()
    split = pq["split"].to_numpy()
    shown = ("validation", "holdout") if opts.holdout else ("validation",)
    figs = {s: _split_figures(pq[r.conf & (split == s)], opts) for s in shown}
    table = holdout_table(figs[shown[-1]], {"widemem": widemem_th, "calibrated": ladder.thresholds,
                                            "answerability": prob_ladder.thresholds})
    secs["figures"] = time.perf_counter() - t2
    calfile = _file(name, emb, opts, meta, r, figs, fits, scorer, x)
    fitted_model = getattr(scorer, "model", None)   # answerability v1's; another scorer skips the fixture
    fixture = fixture_table(emb, fitted_model, calfile) if name == "minilm-l6" and fitted_model is not None else None
    secs["total"] = time.perf_counter() - t0
    return EmbedderResult(name, calfile, pq, fixture, secs, table, ladder)


# --------------------------------------------------------------------------- your own labels


def data_name(opts: Options) -> str:
    """The name of a labels-file calibration: ``params.name`` or the file's stem."""
    assert opts.data is not None
    return opts.name or re.sub(r"[^A-Za-z0-9._-]", "-", opts.data.stem).strip("-.") or "labels"


def calibrate_data(opts: Options) -> DataResult:
    """Certify a ladder on a labels file (`calibration.labels`); the table is on the same rows."""
    from widemem_bench.calibration.labels import read_labels

    assert opts.data is not None
    rows = read_labels(opts.data)
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
        ladder, embedder=data_name(opts), model_id=opts.model_id or "unknown", fingerprint="",
        dataset={"name": "labels file", "path": str(opts.data), "sha256": _sha256(opts.data),
                 "n_rows": len(rows), "n_users": int(rows["user_id"].nunique())},
        validation={"in_sample": table}, options=opts.record(settings),
        intra_user_correlation=measure_icc(s, users, kinds),
    )
    return DataResult(data_name(opts), calfile, table, rows)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
