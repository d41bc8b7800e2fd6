"""widemem's own 62-case fixture under widemem's thresholds, a calibrated ladder and the answerability scorer.

Cut-offs fitted on the timelines, applied unchanged to widemem's fixture: the
reports/calibration.md table of the minilm-l6 file.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


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
