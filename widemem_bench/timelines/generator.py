"""Seeded generator of synthetic user timelines with known ground truth.

One ``numpy.random.Generator(PCG64(...))`` per user, seeded from ``(seed, user index)``,
so user ``u0007`` is the same whatever ``n_users`` is (a small set is a prefix of a big
one) and nothing depends on ``hash()`` or on set order.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.timelines import vocab as V

# The generator's parts: phrasebook (templates a user draws from), user (the simulated
# user and its draws), events (fact chains and their ground truth), questions (what is
# asked and its labels). Re-exported: the names other worlds and callers import from here.
from widemem_bench.timelines.events import _finalise_events, _frustration_reassure, _gen_events
from widemem_bench.timelines.phrasebook import BOOKS, Phrasebook
from widemem_bench.timelines.questions import _gen_questions
from widemem_bench.timelines.user import _User

__all__ = [
    "BOOKS", "DEFAULT_START", "EVENT_COLUMNS", "EVENT_KINDS", "GENERATOR_VERSION", "GOLD_ACTIONS",
    "QUESTION_COLUMNS", "QUESTION_KINDS", "Phrasebook", "generate_tables", "normalise_events",
    "normalise_questions", "quiet_days", "user_splits",
]

# 1: issue 4. 2: event columns multi_valued / update_kind (issue 13). 3: the sealed
# holdout (holdout_templates.py); train and validation rows are unchanged since 1.
# 4: a question about the user's name is answerable when a stored full-form fact names
# the user ("Oliver lives in Dublin"), not a hard negative / other-person question (the
# random draws are unchanged: only those labels, and the holdout's oblique utterances).
GENERATOR_VERSION = "4"

DEFAULT_START = dt.datetime(2025, 1, 6)

EVENT_KINDS: tuple[str, ...] = (
    "profile", "move", "job", "relation", "ymyl", "preference", "trivial", "restatement",
    "frustration",
)
QUESTION_KINDS: tuple[str, ...] = (
    "answerable", "stale_probe", "never_mentioned", "hard_negative", "other_person", "broad",
    "frustration",
)
GOLD_ACTIONS: tuple[str, ...] = ("reassure", "recover_and_pin", "apologize_and_ask")

# Splits of users: a fixed 20-position pattern (14/3/3) shuffled once per seed, so that
# every prefix of 20 users has exact proportions.
_USER_PATTERN = ("train",) * 14 + ("validation",) * 3 + ("holdout",) * 3

# ---------------------------------------------------------------- entry point
EVENT_COLUMNS: tuple[str, ...] = (
    "fact_id", "user_id", "split", "user_name", "at", "event_kind", "utterance",
    "utterance_family", "fact_full", "fact_stripped", "fact_stored", "importance", "ymyl_category",
    "ymyl_strength", "subject", "attribute", "value", "valid_from", "valid_to", "supersedes",
    "oblique", "restatement", "gold_action", "multi_valued", "update_kind",
)
QUESTION_COLUMNS: tuple[str, ...] = (
    "question_id", "user_id", "split", "asked_at", "session_id", "text", "kind", "subject",
    "attribute", "gold_fact_ids", "stale_fact_ids", "distractor_fact_ids", "gold_value",
    "template_family", "gold_mode", "gold_action", "rephrase_of", "quiet_frustration",
)


def user_splits(n_users: int, seed: int) -> list[str]:
    """Split of each user index: a 14/3/3 pattern of 20 shuffled once per seed."""
    perm = np.random.Generator(np.random.PCG64(seed)).permutation(len(_USER_PATTERN))
    return [_USER_PATTERN[int(perm[i % len(perm)])] for i in range(n_users)]


def generate_tables(n_users: int, seed: int, span_days: int, start: dt.datetime,
                    questions_per_user: int, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    splits = user_splits(n_users, seed)
    ev_rows: list[dict[str, Any]] = []
    q_rows: list[dict[str, Any]] = []
    it: Any = range(n_users)
    if progress:
        from tqdm import tqdm
        it = tqdm(it, desc="timelines", unit="user")
    for i in it:
        rng = np.random.Generator(np.random.PCG64([seed, i]))
        name = V.FIRST_NAMES[int(rng.integers(len(V.FIRST_NAMES)))]
        u = _User(i, f"u{i:04d}", splits[i], name, rng, span_days * 1440, BOOKS[splits[i]])
        _gen_events(u, float(span_days))
        _frustration_reassure(u)
        ev_rows.extend(_finalise_events(u, start))
        q_rows.extend(_gen_questions(u, questions_per_user, start))
    events = pd.DataFrame(ev_rows, columns=list(EVENT_COLUMNS))
    questions = pd.DataFrame(q_rows, columns=list(QUESTION_COLUMNS))
    return normalise_events(events), normalise_questions(questions)


def normalise_events(df: pd.DataFrame) -> pd.DataFrame:
    """Fixed dtypes and row order, shared by ``generate`` and ``load`` (round trips equal)."""
    df = df.sort_values("fact_id", kind="stable").reset_index(drop=True)
    for c in ("at", "valid_from", "valid_to"):
        df[c] = pd.to_datetime(df[c]).astype("datetime64[us]")
    df["importance"] = df["importance"].astype("Int64")
    for c in ("oblique", "restatement", "multi_valued"):
        df[c] = df[c].astype(bool)
    for c in EVENT_COLUMNS:
        if c not in ("at", "valid_from", "valid_to", "importance", "oblique", "restatement",
                     "multi_valued"):
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def normalise_questions(df: pd.DataFrame) -> pd.DataFrame:
    df = df.sort_values("question_id", kind="stable").reset_index(drop=True)
    df["asked_at"] = pd.to_datetime(df["asked_at"]).astype("datetime64[us]")
    df["quiet_frustration"] = df["quiet_frustration"].astype(bool)
    for c in ("gold_fact_ids", "stale_fact_ids", "distractor_fact_ids"):
        df[c] = [[str(x) for x in v] for v in df[c]]
    for c in QUESTION_COLUMNS:
        if c not in ("asked_at", "quiet_frustration", "gold_fact_ids", "stale_fact_ids",
                     "distractor_fact_ids"):
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def quiet_days(events: pd.DataFrame, until: dt.datetime | pd.Timestamp | None = None) -> pd.Series:
    """Days each fact stays unmentioned: from its ``at`` to the next event of the same user
    stating the same (subject, attribute, value), or to ``until`` (default: the last event's
    day + 1) when it is never stated again. Rows without a fact get NaN. Float days."""
    has = events["fact_stripped"].notna()
    ev = events.loc[has, ["user_id", "subject", "attribute", "value", "at"]]
    nxt = ev.groupby(["user_id", "subject", "attribute", "value"], dropna=False)["at"].shift(-1)
    end = pd.Timestamp(until) if until is not None else events["at"].max().normalize() + pd.Timedelta(days=1)
    days = (nxt.fillna(end) - ev["at"]).dt.total_seconds() / 86400.0
    return days.reindex(events.index)
