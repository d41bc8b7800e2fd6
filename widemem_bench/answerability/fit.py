"""Fit answerability v2 on world A's train split: ``widemem-bench fit_v2``.

1. Search every confidence question of world A as widemem's engine does (`sets`).
2. Attribute prototypes from train embeddings only: masked train facts and masked
   answerable train questions, one mean vector per attribute label.
3. v2 features of every train question; a standardised logistic regression with
   Platt scaling on out-of-fold values (folds by phrasing family, as v1).
4. Band cut-offs of the out-of-fold probability certified as one ladder by
   `calibration.certify.certify_ladder` with users as the unit (the similarity
   calibration's certificate): HIGH and MODERATE precision, the hard-negative cap,
   and LOW by the NONE rule. The file's ``certificate`` names it.
5. Validation figures (model selection only); the holdout is not read here.
6. ``widemem_bench/answerability/files/<embedder>.json``.

Usage::

    widemem-bench fit_v2 embedder=minilm-l6
    widemem-bench fit_v2 embedder=minilm-l6 prototypes=false install=false
    widemem-bench fit_v2 embedder=hash-test out=/tmp/v2   # /tmp/v2/hash-test.json
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.answerability.features_v2 import FEATURES_V2, Prototypes, fit_prototypes
from widemem_bench.answerability.model import fit_model
from widemem_bench.answerability.sets import Searches, load_world, load_world_config, world_searches
from widemem_bench.answerability.subject import mask_subject
from widemem_bench.answerability.v2 import ScorerV2, feature_rows, save_scorer_v2, scorer_path

TARGETS = {"high": 0.95, "moderate": 0.80}
CAP = {"hard_negative": 0.10}
# NONE: at most this share of answerable questions below LOW (the calibration's rule).
NONE_ANSWERABLE = 0.05
# What every v2 file (and every later scorer's) names as the certificate of its cut-offs.
CERTIFICATE = "certify_ladder, per user (calibration.certify, method=cluster, unit=user)"


@dataclass
class FitOptions:
    embedders: tuple[str, ...] = ("minilm-l6",)
    dataset: str = "timelines"
    # Off: leave-attribute-out CV on world A train+validation (attributes held out of the
    # prototypes and the regression) gave AUROC 0.66-0.77 with them, 0.95-0.96 without.
    prototypes: bool = False
    tau: float = 20.0
    c: float = 1.0
    delta: float = 0.1
    seed: int = 0
    install: bool = True
    out: Path | None = None   # a folder for <embedder>.json instead of the committed files
    targets: dict[str, float] = field(default_factory=dict)  # explicit targets.<band>=, over TARGETS


def train_prototypes(tl: Any, embedder: Any, tau: float = 20.0) -> Prototypes:
    """Attribute prototypes from the train split's facts and answerable questions only."""
    ev = tl.events
    ev = ev[(ev["split"] == "train") & ev["attribute"].notna() & ev["fact_stripped"].notna()]
    q = tl.questions
    q = q[(q["split"] == "train") & (q["kind"] == "answerable") & q["attribute"].notna()]
    mtexts = [mask_subject(str(t)) for t in ev["fact_stripped"]]
    qtexts = [mask_subject(str(t)) for t in q["text"]]
    mv = np.asarray(embedder.encode(mtexts, kind="passage"), dtype=np.float32)
    qv = np.asarray(embedder.encode(qtexts, kind="query"), dtype=np.float32)
    return fit_prototypes(qv, q["attribute"].astype(str).tolist(), mv, ev["attribute"].astype(str).tolist(), tau)


def features_of(s: Searches, embedder: Any, prototypes: Prototypes | None) -> np.ndarray:
    return feature_rows(s.frame["query"].tolist(), s.contents, s.cosines, embedder, prototypes)


def choose_cutoffs(prob: np.ndarray, kinds: np.ndarray, users: np.ndarray, targets: dict[str, float],
                   delta: float) -> tuple[tuple[float, float, float], dict[str, Any]]:
    """Cut-offs of a probability certified as one ladder by `certify_ladder`, users as the unit.

    HIGH and MODERATE precision, the hard-negative cap at MODERATE and the NONE rule (answerable
    below LOW <= NONE_ANSWERABLE, which sets LOW) hold together with probability >= 1 - delta
    (Bonferroni over the families), each tested on per-user sums (cluster t-test and exact
    binomial, the larger p-value), so questions of one user may depend on each other.
    The per-question binomial at the full delta per band, used before, ignored both.
    A statement the data cannot certify (tfidf's v2 never reaches 80 % precision per user)
    leaves its band at 1.0, unreachable, and ``certified: false`` in the file, as before.
    """
    from widemem_bench.calibration.certify import certify_ladder

    tgt: dict[str, float] = {b: float(targets[b]) for b in ("high", "moderate") if b in targets}
    ladder = certify_ladder(prob, kinds, users, targets=tgt, caps=CAP, none_answerable=NONE_ANSWERABLE,
                            delta=delta, method="cluster", score_name="answerability v2", strict=False)
    info: dict[str, Any] = {b: dict(v) for b, v in ladder.bands.items()}
    info["low"]["rule"] = f"answerable below LOW <= {NONE_ANSWERABLE:g}"
    info["certificate"] = {"name": CERTIFICATE, **ladder.certificate(),
                           "uncertified": sorted(k for k, st in ladder.statements.items() if not st.certified)}
    high, moderate, low = (float(t) for t in ladder.thresholds)
    return (high, moderate, low), info


def fit_v2(name: str, opts: FitOptions, tl: Any = None, meta: dict[str, Any] | None = None) -> tuple[ScorerV2, pd.DataFrame]:
    """The v2 scorer of one embedder, and a per-question frame (train and validation only)."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.metrics import auroc
    from widemem_bench.timelines import check_fittable

    if tl is None or meta is None:
        tl, meta = load_world(opts.dataset)
    check_fittable(tl if hasattr(tl, "meta") else meta, "answerability v2")
    t0 = time.perf_counter()
    emb = load_embedder(name)
    if hasattr(emb, "fit"):
        # tfidf: vocabulary from the train split's stored memory texts only.
        ev = tl.events
        emb.fit(ev.loc[ev["split"] == "train", "fact_stripped"].dropna().astype(str).tolist())
    # The holdout split is sealed: its questions and facts are neither embedded nor searched.
    s = world_searches(tl, emb, opts.dataset, splits=("train", "validation"))
    protos = train_prototypes(tl, emb, opts.tau) if opts.prototypes else None
    x = features_of(s, emb, protos)
    f = s.frame
    kinds = f["kind"].to_numpy(dtype=str)
    y = kinds == "answerable"
    train = (f["split"] == "train").to_numpy()
    model, oof = fit_model(x[train], y[train], f["template_family"].to_numpy()[train], c=opts.c,
                           seed=opts.seed, features=FEATURES_V2)
    targets = {**TARGETS, **opts.targets}
    cutoffs, bands = choose_cutoffs(oof, kinds[train], f["group"].to_numpy()[train], targets, opts.delta)
    prob = model.predict_proba(x)
    prob[train] = oof
    f = f.assign(prob_v2=prob)
    val = ~train
    figures = {
        "validation_auroc": float(auroc(prob[val], kinds[val])),
        "validation_auroc_top1": float(auroc(f["top1"].to_numpy()[val], kinds[val])),
        "train_oof_auroc": float(auroc(oof, kinds[train])),
    }
    scorer = ScorerV2(name, model, protos, cutoffs, meta={
        "model_id": emb.model_id,
        "dataset": {"name": opts.dataset, "version": meta.get("version"), "sha256": meta.get("sha256"),
                    "fitted_on": "train", "selected_on": "validation"},
        "targets": targets, "delta": opts.delta, "cap": dict(CAP),
        "none_answerable": NONE_ANSWERABLE, "certificate": bands.pop("certificate"), "bands": bands,
        "figures": figures, "n_train": int(train.sum()),
        "seconds": round(time.perf_counter() - t0, 1),
    })
    return scorer, f


def options(cfg: Mapping[str, Any]) -> FitOptions:
    """FitOptions from the front door's composed config (configs/tool/fit_v2.yaml)."""
    targets = dict(cfg.get("targets") or {})
    bad = sorted(set(targets) - {"high", "moderate"})
    if bad:
        raise ValueError(f"targets.{bad[0]}: not a target (accepted: targets.high, targets.moderate)")
    out = cfg.get("out")
    return FitOptions(embedders=tuple(str(e) for e in cfg.get("embedder") or ()), dataset=str(cfg["dataset"]),
                      prototypes=bool(cfg["prototypes"]), tau=float(cfg["tau"]), c=float(cfg["c"]),
                      delta=float(cfg["delta"]), seed=int(cfg["seed"]), install=bool(cfg["install"]),
                      out=Path(str(out)) if out is not None else None,
                      targets={k: float(v) for k, v in targets.items()})


def tool(cfg: Mapping[str, Any]) -> int:
    """Fit answerability v2 per embedder and (install=true) write its committed file."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    opts = options(cfg)
    from widemem_bench.timelines import check_fittable

    check_fittable(str(load_world_config(opts.dataset).get("world", "a")), "answerability v2")
    tl, meta = load_world(opts.dataset)
    for name in opts.embedders:
        scorer, _ = fit_v2(name, opts, tl, meta)
        print(f"[{name}] cut-offs {scorer.cutoffs}  {scorer.meta['figures']}")
        if scorer.meta["certificate"]["uncertified"]:
            print(f"  not certified per user (band left at 1.0 when a precision): "
                  f"{', '.join(scorer.meta['certificate']['uncertified'])}")
        print("  coef " + ", ".join(f"{f}={c:+.2f}" for f, c in zip(FEATURES_V2, scorer.model.coef, strict=True)))
        if opts.install:
            print(f"wrote {save_scorer_v2(scorer, scorer_path(name, opts.out))}")
    return 0

