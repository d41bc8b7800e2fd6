"""Replay timelines through a memory layer, one user at a time, in time order.

Shared by the `peer` experiment and the `perf` benchmark, so that both engines
see exactly the same facts, in the same order, with the same questions asked
at the same points:

- a user's facts (subject-stripped, gold importance 0-10) are stored in order
  of `at`; a question is asked once every fact with `at <= asked_at` is stored;
- `PrefetchedEmbedder` lets the reference engine be fed from ONE batched encode
  of all facts and questions (the bulk loader of the perf benchmark); the
  engine then finds every text already encoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Step:
    """One replay step: store a fact, or ask a question."""

    kind: str  # "fact" | "question"
    user_id: str
    key: str  # fact_id or question_id
    text: str  # fact_stripped or question text
    importance: float = 5.0  # gold importance 0-10 (facts only)
    at: datetime | None = None  # timeline time: fact's `at`, question's `asked_at`


@dataclass(frozen=True)
class Answer:
    """What one memory layer answered to one question (top-k, best first)."""

    question_id: str
    user_id: str
    band: str  # "high" | "moderate" | "low" | "none"
    contents: tuple[str, ...]
    raw: tuple[float, ...]  # raw cosine per hit
    final: tuple[float, ...]  # final score per hit


def select_users(events: pd.DataFrame, n_users: int | None, seed: int = 0) -> list[str]:
    """`n_users` user ids drawn with `seed` (all of them, sorted, when None or too many)."""
    users = sorted(str(u) for u in pd.unique(events["user_id"]))
    if n_users is None or n_users >= len(users):
        return users
    if n_users < 1:
        raise ValueError(f"n_users: must be >= 1, got {n_users}")
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(users), size=n_users, replace=False)
    return [users[i] for i in sorted(picked)]


def replay_steps(
    events: pd.DataFrame,
    questions: pd.DataFrame,
    users: Iterable[str] | None = None,
    *,
    question_kinds: Sequence[str] | None = None,
) -> list[Step]:
    """Facts and questions of `users`, user by user, each user's steps in time order.

    A fact dated exactly at a question's time is stored before the question. Events
    without a fact are skipped; a fact without importance gets widemem's default 5.
    """
    for col in ("fact_id", "user_id", "at", "fact_stripped", "importance"):
        if col not in events.columns:
            raise ValueError(f"events: missing column {col!r}")
    for col in ("question_id", "user_id", "asked_at", "text"):
        if col not in questions.columns:
            raise ValueError(f"questions: missing column {col!r}")
    wanted = None if users is None else {str(u) for u in users}
    q = questions
    if question_kinds is not None and "kind" in q.columns:
        q = q[q["kind"].isin(list(question_kinds))]
    # Events that state no fact (a bare frustration message) have nothing to store.
    has_fact = events["fact_stripped"].notna() & events["fact_stripped"].astype(str).str.strip().ne("")
    events = events[has_fact]
    ev = events.assign(_u=events["user_id"].astype(str), _t=pd.to_datetime(events["at"]), _o=0)
    qs = q.assign(_u=q["user_id"].astype(str), _t=pd.to_datetime(q["asked_at"]), _o=1)
    if wanted is not None:
        ev = ev[ev["_u"].isin(wanted)]
        qs = qs[qs["_u"].isin(wanted)]
    steps: list[Step] = []
    ev_rows = [
        (u, t, 0, i, Step("fact", u, str(fid), str(txt), 5.0 if pd.isna(imp) else float(imp), t.to_pydatetime()))
        for i, (u, t, fid, txt, imp) in enumerate(
            zip(ev["_u"], ev["_t"], ev["fact_id"], ev["fact_stripped"], ev["importance"], strict=True)
        )
    ]
    q_rows = [
        (u, t, 1, i, Step("question", u, str(qid), str(txt), 5.0, t.to_pydatetime()))
        for i, (u, t, qid, txt) in enumerate(
            zip(qs["_u"], qs["_t"], qs["question_id"], qs["text"], strict=True)
        )
    ]
    # Sort key: user, time, facts before questions at equal time, then table order.
    for *_, step in sorted(ev_rows + q_rows, key=lambda r: (r[0], r[1], r[2], r[3])):
        steps.append(step)
    return steps


def iter_users(steps: Sequence[Step]) -> Iterator[tuple[str, list[Step]]]:
    """Group consecutive steps by user (steps come grouped from `replay_steps`)."""
    current: str | None = None
    group: list[Step] = []
    for step in steps:
        if step.user_id != current and group:
            yield current or "", group
            group = []
        current = step.user_id
        group.append(step)
    if group:
        yield current or "", group


class PrefetchedEmbedder:
    """An embedder that answers from vectors encoded ahead, in one batch per kind.

    Wraps a project embedder (same name, model_id, dim, fingerprint, so the
    engine picks the same thresholds). `prefetch(texts, kind)` encodes every
    text not yet held in ONE call to the inner embedder; `encode` then serves
    held texts from memory and passes any other text to the inner embedder.
    `inner_calls` / `inner_texts` count what reached the inner embedder.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.model_id = inner.model_id
        self.dim = int(inner.dim)
        self.fingerprint = getattr(inner, "fingerprint", "")
        self._held: dict[tuple[str, str], np.ndarray] = {}
        self.inner_calls = 0
        self.inner_texts = 0

    def prefetch(self, texts: Iterable[str], kind: str = "passage") -> int:
        """Encode the texts not held yet in one batched call; returns how many were encoded."""
        todo = list(dict.fromkeys(t for t in texts if (kind, t) not in self._held))
        if todo:
            vectors = np.asarray(self.inner.encode(todo, kind=kind), dtype=np.float32)
            self.inner_calls += 1
            self.inner_texts += len(todo)
            for text, vec in zip(todo, vectors, strict=True):
                self._held[(kind, text)] = vec
        return len(todo)

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._held]
        if missing:
            self.prefetch(missing, kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1:  # the engine's usual call: no stack for one row
            return self._held[(kind, texts[0])][None, :]
        return np.stack([self._held[(kind, t)] for t in texts])

    def __getattr__(self, item: str) -> Any:
        # Anything else (fit, cache stats...) is the inner embedder's.
        return getattr(self.inner, item)


def engine_answer(result: Any, question_id: str, user_id: str) -> Answer:
    """An `Answer` from a reference-engine `SearchResult`."""
    hits = list(result)
    return Answer(
        question_id=question_id,
        user_id=user_id,
        band=str(getattr(result.confidence, "value", result.confidence)),
        contents=tuple(str(h.memory.content) for h in hits),
        raw=tuple(float(h.raw_similarity_score) for h in hits),
        final=tuple(float(h.final_score) for h in hits),
    )


def peer_answer(result: Any, question_id: str) -> Answer:
    """An `Answer` from a `PeerSearch` of the widemem adapter."""
    return Answer(
        question_id=question_id,
        user_id=result.user_id,
        band=result.band,
        contents=tuple(h.content for h in result.hits),
        raw=tuple(h.raw_similarity for h in result.hits),
        final=tuple(h.final_score for h in result.hits),
    )


def answers_frame(answers: Sequence[Answer], prefix: str = "") -> pd.DataFrame:
    """One row per question: band, top-1 content / raw / final and the top-k lists."""
    rows = []
    for a in answers:
        rows.append(
            {
                "question_id": a.question_id,
                "user_id": a.user_id,
                f"{prefix}band": a.band,
                f"{prefix}top1": a.contents[0] if a.contents else None,
                f"{prefix}top1_raw": a.raw[0] if a.raw else float("nan"),
                f"{prefix}top1_final": a.final[0] if a.final else float("nan"),
                f"{prefix}contents": list(a.contents),
                f"{prefix}raw": list(a.raw),
                f"{prefix}final": list(a.final),
            }
        )
    return pd.DataFrame(rows)


def replay_engine(
    engine: Any,
    steps: Sequence[Step],
    *,
    mode: str = "balanced",
    top_k: int | None = None,
    use_clock: bool = True,
) -> list[Answer]:
    """Run `steps` through a reference `MemoryEngine`; one `Answer` per question.

    use_clock: pass the timeline times (`at` to add_fact, `asked_at` as `now`);
    False leaves both None, so the engine stamps wall-clock time, as widemem does.
    """
    answers: list[Answer] = []
    for step in steps:
        when = step.at if use_clock else None
        if step.kind == "fact":
            engine.add_fact(step.text, step.user_id, importance=step.importance, at=when)
        else:
            result = engine.search(step.text, step.user_id, mode=mode, now=when, top_k=top_k)
            answers.append(engine_answer(result, step.key, step.user_id))
    return answers


def replay_peer(peer: Any, steps: Sequence[Step], *, top_k: int | None = None) -> list[Answer]:
    """Run `steps` through a `WidememPeer` (widemem always ages by insert time)."""
    answers: list[Answer] = []
    for step in steps:
        if step.kind == "fact":
            peer.add_fact(step.text, step.user_id, step.importance)
        else:
            answers.append(peer_answer(peer.search(step.text, step.user_id, top_k=top_k), step.key))
    return answers


_TOY_FACTS = (
    ("lives in {city}", 7.0),
    ("works as a {job}", 7.0),
    ("allergic to {food}", 9.0),
    ("sister lives in {city2}", 5.0),
    ("had {food} for lunch", 2.0),
    ("is vegetarian", 6.0),
    ("watched a film about {city2}", 2.0),
    ("bank account is at {bank}", 8.0),
)
_TOY_QUESTIONS = (
    "where do I live?", "what is my job?", "what am I allergic to?", "where does my sister live?",
    "what's my doctor's name?", "when did I move?", "tell me everything about me", "which bank do I use?",
)
_TOY_VALUES = {
    "city": ("Boston", "Denver", "Lisbon", "Austin"),
    "city2": ("Paris", "Oslo", "Quito", "Perth"),
    "job": ("data engineer", "nurse", "teacher", "pilot"),
    "food": ("peanuts", "shellfish", "soup", "pasta"),
    "bank": ("Chase", "Ally", "Monzo", "N26"),
}


def toy_timeline(n_users: int = 3, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A tiny seeded (events, questions) pair with the timeline columns replay needs.

    For fast tests and demos only; the real data set is `widemem_bench.timelines`.
    """
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2025-01-01")
    ev, qs = [], []
    for u in range(n_users):
        user = f"user{u:03d}"
        vals = {k: v[int(rng.integers(len(v)))] for k, v in _TOY_VALUES.items()}
        for j, (tmpl, imp) in enumerate(_TOY_FACTS):
            ev.append({"fact_id": f"{user}-f{j}", "user_id": user, "at": t0 + pd.Timedelta(days=3 * j),
                       "fact_stripped": tmpl.format(**vals), "importance": imp})
        for j, text in enumerate(_TOY_QUESTIONS):
            qs.append({"question_id": f"{user}-q{j}", "user_id": user,
                       "asked_at": t0 + pd.Timedelta(days=3 * j + 1), "text": text, "kind": "answerable"})
    return pd.DataFrame(ev), pd.DataFrame(qs)
