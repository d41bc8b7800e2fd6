"""Fit answerability v3 on development data: ``widemem-bench fit_v3``.

Development data only: the train and validation users of world A (``timelines``), of
world C (``world_c``) and of world N (``world_n``, when its dataset config exists). No
holdout split is embedded, parsed or searched here; world B is refused (`check_fittable`).

1. Search every confidence question as widemem's engine does (`sets.world_searches`).
2. v3 features (`v3.feature_rows_v3`): v2's, plus the language layer's reading of the
   question against its top memories; every text is parsed once, in one batch, cached.
3. Users split in two (seeded, by user; `calibration.scorers.split_users`): gradient-boosted trees
   (`trees.fit_trees`; ``model=logistic``: `model.fit_model`) fitted on one half, its
   (high, moderate, low) cut-offs certified by `calibration.certify_ladder` on the other
   half scored by that same model (`calibration.scorers.certify_scorer`): users as the unit, the
   project's targets, hard negatives <= 10 % at MODERATE+, answerable at NONE <= 5 %.
4. Figures per world on the certifying half (users the shipped model never saw): AUROC of
   v3, v2 and top-1 cosine. They steered v3's design, so they are development figures.
5. ``widemem_bench/answerability/files/<embedder>.v3.json``.

Usage::

    widemem-bench fit_v3 embedder=minilm-l6
    widemem-bench fit_v3 embedder=minilm-l6 install=false
    widemem-bench fit_v3 embedder=hash-test out=/tmp/v3 worlds=timelines_small
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.answerability.features_v3 import FEATURES_V3
from widemem_bench.answerability.model import fit_model
from widemem_bench.answerability.trees import fit_trees
from widemem_bench.answerability.v3 import ScorerV3, feature_rows_v3, save_scorer_v3, scorer_path_v3

DEV_WORLDS = ("timelines", "world_c", "world_n")
DEV_SPLITS = ("train", "validation")
TARGETS = {"high": 0.95, "moderate": 0.80}
CAP = {"hard_negative": 0.10}
NONE_ANSWERABLE = 0.05
MODELS = ("trees", "logistic")


@dataclass
class FitOptions:
    embedders: tuple[str, ...] = ("minilm-l6",)
    worlds: tuple[str, ...] = DEV_WORLDS
    model: str = "trees"
    c: float = 1.0          # the logistic model's regularisation
    delta: float = 0.1
    seed: int = 0
    share: float = 0.5          # share of development users that certify (the rest fit the model)
    install: bool = True
    out: Path | None = None
    targets: dict[str, float] = field(default_factory=lambda: dict(TARGETS))


class V3Scorer:
    """v3's model behind `calibration.scorers.CertifiableScorer`: gradient-boosted trees (`trees.fit_trees`,
    the default) or the logistic model (`model.fit_model`, ``model="logistic"``)."""

    def __init__(self, kind: str, c: float, seed: int) -> None:
        if kind not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {kind!r}")
        self.kind, self.c, self.seed = kind, c, seed
        self.model: Any = None

    def fit(self, x: Any, y: np.ndarray, groups: np.ndarray) -> V3Scorer:
        if self.kind == "trees":
            self.model = fit_trees(np.asarray(x), y, FEATURES_V3, seed=self.seed)
        else:
            self.model, _ = fit_model(np.asarray(x), y, groups, c=self.c, seed=self.seed, features=FEATURES_V3)
        return self

    def predict(self, x: Any) -> np.ndarray:
        return np.asarray(self.model.predict_proba(np.asarray(x)), dtype=float)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.model.to_dict())


def available_worlds(worlds: Sequence[str]) -> list[str]:
    """The development worlds whose dataset config exists (world N lands separately)."""
    from widemem_bench.timelines.materialize import CONFIG_DIR

    return [w for w in worlds if (Path(CONFIG_DIR) / f"{w}.yaml").is_file()]


def dev_searches(emb: Any, worlds: Sequence[str]) -> tuple[Any, list[dict[str, Any]]]:
    """Every development search of ``worlds`` (train + validation users), pooled, and each world's meta."""
    from widemem_bench.answerability.sets import (
        Searches,
        load_world,
        load_world_config,
        world_searches,
    )
    from widemem_bench.timelines import check_fittable

    parts, metas = [], []
    for w in worlds:
        check_fittable(str(load_world_config(w).get("world", "a")), "answerability v3")
        tl, meta = load_world(w)
        s = world_searches(tl, emb, w, splits=DEV_SPLITS)
        s.frame = s.frame.assign(world=w, group=[f"{w}:{g}" for g in s.frame["group"]])
        parts.append(s)
        metas.append({"name": w, "version": meta.get("version"), "sha256": meta.get("sha256"),
                      "splits": list(DEV_SPLITS), "n_questions": len(s.frame),
                      "n_users": int(s.frame["group"].nunique())})
    frame = pd.concat([p.frame for p in parts], ignore_index=True)
    return Searches("development", frame, [c for p in parts for c in p.contents],
                    [c for p in parts for c in p.cosines]), metas


def fit_v3(name: str, opts: FitOptions) -> tuple[ScorerV3, pd.DataFrame]:
    """The v3 scorer of one embedder and a per-question frame of the development data."""
    from widemem_bench.answerability.v2 import feature_rows
    from widemem_bench.calibration.scorers import certify_scorer, split_users
    from widemem_bench.embedders import load_embedder
    from widemem_bench.metrics import auroc

    t0 = time.perf_counter()
    emb = load_embedder(name)
    worlds = available_worlds(opts.worlds)
    if not worlds:
        raise ValueError(f"worlds: none of {list(opts.worlds)} has a dataset config")
    s, metas = dev_searches(emb, worlds)
    f = s.frame
    x = feature_rows_v3(f["query"].tolist(), s.contents, s.cosines, emb)
    kinds = f["kind"].to_numpy(dtype=str)
    users = f["group"].to_numpy(dtype=str)
    settings = {"targets": dict(opts.targets), "cap": dict(CAP), "none_answerable": NONE_ANSWERABLE,
                "low_cap": {}, "delta": opts.delta, "method": "cluster"}
    scorer = V3Scorer(opts.model, opts.c, opts.seed)
    ladder, prob, split = certify_scorer(scorer, x, kinds, users, users, settings, seed=opts.seed,
                                         share=opts.share, score_name="answerability v3")
    held = split_users(users, opts.share, opts.seed)
    v2 = _v2_prob(name, f["query"].tolist(), s.contents, s.cosines, emb, feature_rows)
    f = f.assign(prob_v3=prob, prob_v2=v2, certifying=held)
    figures: dict[str, Any] = {}
    for w in worlds:
        m = held & (f["world"] == w).to_numpy()
        k = kinds[m]
        figures[w] = {"auroc_v3": float(auroc(prob[m], k)), "auroc_top1": float(auroc(f["top1"].to_numpy()[m], k)),
                      **({"auroc_v2": float(auroc(v2[m], k))} if v2 is not None else {}),
                      "n": int(m.sum()), "n_users": int(np.unique(users[m]).size)}
    cert = ladder.certificate()
    none_st = ladder.statements.get("none")
    out = ScorerV3(name, scorer.model, tuple(float(t) for t in ladder.thresholds), meta={  # type: ignore[arg-type]
        "model_id": emb.model_id,
        "development": metas,
        "split": split,
        "certificate": cert,
        "bands": ladder.bands,
        "answerable_at_none": {"certified_max": NONE_ANSWERABLE,
                               "on_certifying_users": None if none_st is None else none_st.value,
                               "upper_bound": None if none_st is None else none_st.bound},
        "targets": dict(opts.targets), "cap": dict(CAP), "delta": opts.delta, "model_kind": opts.model,
        **({"c": opts.c} if opts.model == "logistic" else {}), "seed": opts.seed,
        "figures_certifying_users": figures,
        "seconds": round(time.perf_counter() - t0, 1),
    })
    return out, f


def _v2_prob(name: str, queries: list[str], contents: Any, cosines: Any, emb: Any, rows: Any) -> np.ndarray | None:
    """v2's committed probability on the same searches (a comparison figure; None without its file)."""
    from widemem_bench.answerability.v2 import load_scorer_v2

    try:
        v2 = load_scorer_v2(name)
    except ValueError:
        return None
    return np.asarray(v2.model.predict_proba(rows(queries, contents, cosines, emb, v2.prototypes)), dtype=float)


def options(cfg: Mapping[str, Any]) -> FitOptions:
    """FitOptions from the front door's composed config (configs/tool/fit_v3.yaml)."""
    worlds = tuple(str(w) for w in cfg.get("worlds") or ())
    bad = [w for w in worlds if w not in (*DEV_WORLDS, "timelines_small")]
    if bad or not worlds:
        raise ValueError(f"worlds: {bad or 'none'} are not development worlds ({', '.join(DEV_WORLDS)}, timelines_small)")
    if cfg["model"] not in MODELS:
        raise ValueError(f"model: {cfg['model']!r} is not one of {', '.join(MODELS)}")
    out = cfg.get("out")
    return FitOptions(embedders=tuple(str(e) for e in cfg.get("embedder") or ()), worlds=worlds,
                      model=str(cfg["model"]), c=float(cfg["c"]), delta=float(cfg["delta"]), seed=int(cfg["seed"]),
                      share=float(cfg["share"]), install=bool(cfg["install"]),
                      out=Path(str(out)) if out is not None else None)


def tool(cfg: Mapping[str, Any]) -> int:
    """Fit answerability v3 per embedder and (install=true) write its committed file."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    opts = options(cfg)
    for name in opts.embedders:
        scorer, _ = fit_v3(name, opts)
        print(f"[{name}] cut-offs {tuple(round(c, 4) for c in scorer.cutoffs)}  "
              f"answerable at NONE {scorer.meta['answerable_at_none']}")
        for w, fig in scorer.meta["figures_certifying_users"].items():
            print(f"  {w}: " + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in fig.items()))
        if opts.install:
            print(f"wrote {save_scorer_v3(scorer, scorer_path_v3(name, opts.out))}")
    return 0

