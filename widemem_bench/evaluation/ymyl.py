"""How the YMYL classifiers read the timeline's facts: recall on labelled strong YMYL, false
positives on facts labelled not YMYL, and the lexicon's overlap with the generator's names."""

from __future__ import annotations

from typing import Any

import pandas as pd

from widemem_bench.engine.ymyl import classify_ymyl, classify_ymyl_lexicon
from widemem_bench.engine.ymyl_lexicon import is_condition_name, is_drug_name
from widemem_bench.metrics.rates import rate_ci
from widemem_bench.timelines import vocab as V


def is_strong(match: Any) -> bool:
    """A classifier match of strength "strong" (None: no match)."""
    return match is not None and match.strength == "strong"


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
    flags = {"widemem": text.map(lambda t: is_strong(classify_ymyl(t))).to_numpy(bool),
             "lexicon": text.map(lambda t: is_strong(classify_ymyl_lexicon(t))).to_numpy(bool)}
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
