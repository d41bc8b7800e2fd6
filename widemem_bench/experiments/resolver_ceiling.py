"""The candidate ceiling of `resolver_transfer` (issue 26 item 3): which superseded facts a
resolver that reads only the engine's ``candidate_k`` nearest memories can reach at all."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.evaluation.replay import clean


def candidate_ranks(events: pd.DataFrame, emb: Any) -> pd.DataFrame:
    """Per superseding statement (gold ``supersedes``), the rank of the fact it supersedes
    among the user's distinct earlier facts by cosine to the statement (1 = nearest): what
    the engine's ``candidate_k`` nearest memories can reach when nothing was retired yet.
    One encode per text (``emb`` is the replay's cached embedder); ranks are array arithmetic."""
    ev = events[events["fact_stripped"].notna()].sort_values(["user_id", "at", "fact_id"], kind="stable")
    out: list[dict[str, Any]] = []
    for uid, u in ev.groupby("user_id", sort=True):
        texts = [clean(t) for t in u["fact_stripped"]]
        ids = [str(f) for f in u["fact_id"]]
        vecs = emb.encode(texts, kind="passage")
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        pos = {f: i for i, f in enumerate(ids)}
        for j, (old, obl) in enumerate(zip(u["supersedes"], u["oblique"], strict=True)):
            if old is None or (isinstance(old, float) and math.isnan(old)) or str(old) not in pos:
                continue
            i = pos[str(old)]
            earlier = {texts[k]: k for k in range(j)}  # distinct wordings stored before
            if texts[i] == texts[j] or texts[i] not in earlier:
                continue
            idx = np.fromiter(earlier.values(), dtype=int)
            sims = vecs[idx] @ vecs[j]
            target = float(vecs[i] @ vecs[j])
            out.append({"user_id": str(uid), "rank": int(np.sum(sims > target)) + 1, "pool": len(idx),
                        "kind": "oblique" if bool(obl) or bool(u["oblique"].iloc[i]) else "direct"})
    return pd.DataFrame(out, columns=["user_id", "rank", "pool", "kind"])


def ceiling_rows(ranks: pd.DataFrame, ks: Sequence[int]) -> list[dict[str, Any]]:
    """Share of superseded facts outside the k nearest candidates, per k and kind."""
    rows = []
    for k in ks:
        for kind in ("all", "direct", "oblique"):
            r = ranks if kind == "all" else ranks[ranks["kind"] == kind]
            miss = int((r["rank"] > k).sum())
            rows.append({"metric": "candidate_miss", "kind": kind, "candidate_k": int(k),
                         "value": miss / len(r) if len(r) else math.nan, "ci_lo": math.nan, "ci_hi": math.nan,
                         "count": miss, "n": len(r)})
    return rows
