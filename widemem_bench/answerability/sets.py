"""Searches to score: one row per question with the memories a search returned.

Every confidence method (widemem's bands, calibrated thresholds, answerability v1 and
v2) reads the same thing: a question, its returned memories in rank order and their
raw cosines. These builders produce that for each evaluation set:

- a timelines world (`world_searches`: world A = ``timelines``, world B when its
  dataset config exists), searched as widemem's engine does (batched scorer);
- widemem's 62-case fixture (`fixture_searches`), facts as stored or with the
  person's name stripped, searched by cosine over the user's facts;
- LoCoMo (`locomo_searches`), each turn one memory ("Speaker: text"), searched by
  cosine over the conversation's turns; answerable = categories 1-4, negative = 5.

``Searches.frame`` columns: ``qid``, ``group`` (the bootstrap cluster: user or
conversation), ``split``, ``kind`` ("answerable" or a negative kind), ``query``,
``top1`` (rank-1 raw cosine, -1 when nothing is stored) and optional extras.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# Question kinds whose answer is or is not stored (the rest test other things).
CONFIDENCE_KINDS = ("answerable", "never_mentioned", "hard_negative", "other_person")
MAX_RESULTS = 10


@dataclass
class Searches:
    """Questions and what their search returned (lists aligned with ``frame``'s rows)."""

    name: str
    frame: pd.DataFrame
    contents: list[list[str]]
    cosines: list[list[float]]

    def __post_init__(self) -> None:
        if not len(self.frame) == len(self.contents) == len(self.cosines):
            raise ValueError(f"{self.name}: frame, contents and cosines differ in length")

    def subset(self, mask: Any) -> Searches:
        idx = np.flatnonzero(np.asarray(mask, dtype=bool))
        return Searches(self.name, self.frame.iloc[idx].reset_index(drop=True),
                        [self.contents[i] for i in idx], [self.cosines[i] for i in idx])


def load_world_config(dataset: str = "timelines") -> dict[str, Any]:
    """A world's dataset config (``configs/dataset/<name>.yaml``) as a dict."""
    from widemem_bench.timelines.materialize import read_config

    return read_config(dataset)


def load_world(dataset: str = "timelines") -> tuple[Any, dict[str, Any]]:
    """(Timelines, meta) of a world by dataset config name, built on first use."""
    from widemem_bench.timelines.loading import load_world as load

    return load(dataset)


def world_searches(tl: Any, embedder: Any, name: str = "timelines", *, kinds: tuple[str, ...] = CONFIDENCE_KINDS,
                   text_col: str = "fact_stripped", splits: tuple[str, ...] | None = None) -> Searches:
    """Every confidence question of a timelines world, searched as widemem's engine searches.

    Scoring is widemem's defaults (weights 0.5 / 0.3 / 0.2, exponential decay 0.01,
    balanced mode: top 10); the returned memories are the engine's final ranking.
    ``splits``: only these splits' users (questions and stored facts) are embedded and
    searched, so a fit that passes ``("train", "validation")`` never reads the sealed
    holdout's texts; a search only ever sees its own user's memories, so the result for
    a kept user is the same.
    """
    from widemem_bench.answerability.data import returned_columns
    from widemem_bench.engine import batch, thresholds_for_model
    from widemem_bench.engine.config import WIDEMEM_DECAY, WIDEMEM_WEIGHTS

    events, questions = tl.events, tl.questions[tl.questions["kind"].isin(kinds)]
    if splits is not None:
        events = events[events["split"].isin(splits)]
        questions = questions[questions["split"].isin(splits)]
    questions = questions.reset_index(drop=True)
    prep = batch.prepare(events, questions, embedder, text_col=text_col)
    scored = batch.score(prep, WIDEMEM_WEIGHTS, WIDEMEM_DECAY[0], WIDEMEM_DECAY[1],
                         thresholds_for_model(embedder.model_id), keep_final=True)
    cols = returned_columns(prep, np.asarray(scored.final))
    texts = prep.memories["content"].to_numpy()
    q = questions.set_index("question_id").loc[prep.question_ids]
    contents, cosines = [], []
    for i in range(prep.n_questions):
        c = cols[i][cols[i] >= 0][:MAX_RESULTS]
        contents.append([str(t) for t in texts[prep.mem[i, c]]])
        cosines.append([float(v) for v in prep.sim[i, c]])
    frame = pd.DataFrame({
        "qid": prep.question_ids,
        "group": prep.user_ids,
        "split": q["split"].to_numpy(),
        "kind": q["kind"].to_numpy(),
        "query": q["text"].astype(str).to_numpy(),
        "attribute": q["attribute"].to_numpy() if "attribute" in q else None,
        "template_family": q["template_family"].astype(str).to_numpy() if "template_family" in q else "",
    })
    frame["top1"] = [cs[0] if cs else -1.0 for cs in cosines]
    return Searches(name, frame, contents, cosines)


_POSSESSIVE = "(?:'s|\u2019s)?"


def strip_name(fact: str, name: str) -> str:
    """A fact without the person's name ("Frank moved to Denver" -> "moved to Denver").

    The name is the user's own (the fixture keys users by it), removed wherever it
    stands, with its possessive; a leading capital is lowered where the name stood first.
    """
    out = re.sub(rf"\b{re.escape(name)}{_POSSESSIVE}\b\s*", "", fact, flags=re.IGNORECASE).strip()
    return out if out else fact


def fixture_searches(embedder: Any, form: str = "stripped", path: Any = None) -> Searches:
    """widemem's fixture cases searched over the user's facts (``form``: "stored" or "stripped")."""
    from widemem_bench.sealed import open_split

    if form not in ("stored", "stripped"):
        raise ValueError(f"form must be 'stored' or 'stripped', got {form!r}")
    raw = open_split("widemem fixture", path=path)
    facts: dict[str, list[str]] = {}
    for user, d in raw["users"].items():
        fs = [str(f) for f in d["facts"]]
        facts[user] = [strip_name(f, user) for f in fs] if form == "stripped" else fs
    vecs = {u: np.asarray(embedder.encode(f, kind="passage"), dtype=np.float32) for u, f in facts.items()}
    cases = raw["cases"]
    qv = np.asarray(embedder.encode([str(c["query"]) for c in cases], kind="query"), dtype=np.float32)
    rows, contents, cosines = [], [], []
    for i, c in enumerate(cases):
        sims = vecs[c["user"]] @ qv[i]
        order = np.argsort(-sims, kind="stable")[:MAX_RESULTS]
        contents.append([facts[c["user"]][j] for j in order])
        cosines.append([float(sims[j]) for j in order])
        rows.append({"qid": f"fixture-{i}", "group": c["user"], "split": c["split"], "kind": c["kind"],
                     "query": str(c["query"]), "top1_fixture": float(c["top_similarity"])})
    frame = pd.DataFrame(rows)
    frame["top1"] = [cs[0] for cs in cosines]
    return Searches(f"fixture ({form})", frame, contents, cosines)


def answer_set_searches(embedder: Any, path: Any) -> Searches:
    """A hand-written answer set (JSON lines, `timelines.handwritten.load_answers`) searched by
    cosine over each user's facts as stored, top `MAX_RESULTS` (a one-line error for a missing or bad file)."""
    from widemem_bench.timelines.handwritten import load_answers

    rows, contents, cosines = [], [], []
    for u in load_answers(path):
        facts = [t for _, t in u.facts]
        mv = np.asarray(embedder.encode(facts, kind="passage"), dtype=np.float32)
        qv = np.asarray(embedder.encode([t for _, t, _, _ in u.questions], kind="query"), dtype=np.float32)
        sims = qv @ mv.T
        for i, (qid, text, kind, _) in enumerate(u.questions):
            order = np.argsort(-sims[i], kind="stable")[:MAX_RESULTS]
            contents.append([facts[j] for j in order])
            cosines.append([float(sims[i, j]) for j in order])
            rows.append({"qid": f"{u.user_id}-{qid}", "group": u.user_id, "split": "all",
                         "kind": kind, "query": text, "register": u.register})
    frame = pd.DataFrame(rows)
    frame["top1"] = [c[0] if c else -1.0 for c in cosines]
    return Searches(Path(path).stem, frame, contents, cosines)


def locomo_searches(embedder: Any, path: Any = None) -> Searches:
    """LoCoMo questions searched over their conversation's turns ("Speaker: text" memories).

    Nothing here reads the speaker list: the question and memory texts are all a
    method sees, as with any other set.
    """
    from widemem_bench.sealed import open_split

    data = open_split("LoCoMo", path=path)
    mem = data.memories("turn").reset_index(drop=True)
    q = data.questions.reset_index(drop=True)
    e_mem = np.asarray(embedder.encode(list(mem["content"].astype(str)), kind="passage"), dtype=np.float32)
    e_q = np.asarray(embedder.encode(list(q["question"].astype(str)), kind="query"), dtype=np.float32)
    m_sid = mem["sample_id"].to_numpy()
    contents_all = mem["content"].astype(str).to_numpy()
    contents: list[list[str]] = [[] for _ in range(len(q))]
    cosines: list[list[float]] = [[] for _ in range(len(q))]
    q_sid = q["sample_id"].to_numpy()
    for sid in pd.unique(q_sid):
        mi = np.flatnonzero(m_sid == sid)
        qi = np.flatnonzero(q_sid == sid)
        if mi.size == 0:
            continue
        s = e_q[qi] @ e_mem[mi].T
        order = np.argsort(-s, axis=1, kind="stable")[:, :MAX_RESULTS]
        for k, i in enumerate(qi):
            contents[i] = [str(contents_all[mi[j]]) for j in order[k]]
            cosines[i] = [float(s[k, j]) for j in order[k]]
    frame = pd.DataFrame({
        "qid": [f"{s}-{j}" for s, j in zip(q["sample_id"], q["qa_index"], strict=True)],
        "group": q_sid,
        "split": "all",
        "kind": np.where(q["answerable"].to_numpy(dtype=bool), "answerable", "adversarial"),
        "query": q["question"].astype(str).to_numpy(),
    })
    frame["top1"] = [cs[0] if cs else -1.0 for cs in cosines]
    return Searches("LoCoMo", frame, contents, cosines)
