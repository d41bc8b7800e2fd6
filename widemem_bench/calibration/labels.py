"""Your own labels: a CSV or JSON-lines file of (user, query, score(s), label) from any memory system.

Columns (a header row for CSV, keys for JSONL):

- ``user_id``: who asked (users are the certificate's unit);
- ``query``: the question (kept for the record; not used in fitting);
- ``score``: the top-1 similarity of the search, in [-1, 1]; or ``scores``: the ranked
  similarities (a JSON list, top result first; the first is used; an empty list means
  "no results", scored -1 so it always reads NONE);
- ``label``: ``answerable`` (the answer is stored) or ``unanswerable`` (also ``1`` / ``0``);
- ``kind`` (optional): a finer kind for unanswerable rows (e.g. ``hard_negative``,
  ``never_mentioned``), used by caps and by the per-kind table.

Every problem is one `ValueError` line naming the file and the line (counted as an
editor counts them: a CSV's header is line 1) or the column.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.calibration.certify import MIN_USERS, POSITIVE

REQUIRED = ("user_id", "query", "label")
LABELS = {"answerable": True, "unanswerable": False, "1": True, "0": False}
NEGATIVE = "unanswerable"


def _read_rows(path: Path) -> tuple[pd.DataFrame, list[int]]:
    """The rows as strings, and each row's line number in the file (1-based, as an editor
    shows it: a CSV's header is line 1, and blank or multi-line records are counted)."""
    if not path.is_file():
        raise ValueError(f"params.data={path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            with path.open(encoding="utf-8-sig", newline="") as fh:  # -sig: a BOM is no header
                reader = csv.DictReader(fh)
                rows, lines = [], []
                start = 2  # the line after the header
                for rec in reader:
                    rows.append(rec)
                    lines.append(start)
                    start = reader.line_num + 1
                header = reader.fieldnames
        except (csv.Error, UnicodeDecodeError) as err:
            raise ValueError(f"params.data={path}: not a readable CSV ({str(err).splitlines()[0]})") from None
        if not header:
            raise ValueError(f"params.data={path}: not a readable CSV (no header row)")
        if any(None in rec for rec in rows):  # more fields than the header names
            bad = next(i for i, rec in zip(lines, rows, strict=True) if None in rec)
            raise ValueError(f"params.data={path} line {bad}: more fields than the header has")
        return pd.DataFrame(rows, columns=list(header)).fillna(""), lines
    if suffix in (".jsonl", ".ndjson"):
        objs, lines = [], []
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"params.data={path} line {i}: not valid JSON ({err.msg})") from None
            if not isinstance(obj, dict):
                raise ValueError(f"params.data={path} line {i}: expected a JSON object")
            objs.append(obj)
            lines.append(i)
        return pd.DataFrame(objs), lines
    raise ValueError(f"params.data={path}: expected a .csv or .jsonl file, got {suffix or 'no extension'!r}")


def _top1(value: Any, where: str) -> float:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                raise ValueError(f"{where}: scores {text[:40]!r} is not a JSON list of numbers") from None
    if isinstance(value, list):
        if not value:
            return -1.0  # no results: NONE, as widemem reads an empty search
        value = value[0]
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: score {value!r} is not a number") from None
    if not math.isfinite(s) or not -1.0 <= s <= 1.0:
        raise ValueError(f"{where}: score {s} is outside [-1, 1]")
    return s


def read_labels(path: str | Path, *, min_users: int = MIN_USERS) -> pd.DataFrame:
    """Validated rows: user_id, query, score (top-1), answerable (bool), kind (str)."""
    p = Path(path)
    df, lines = _read_rows(p)
    if df.empty:
        raise ValueError(f"params.data={p}: no rows")
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(f"params.data={p}: missing column {missing[0]!r} (need user_id, query, label and score or scores)")
    score_col = "score" if "score" in df.columns else "scores" if "scores" in df.columns else None
    if score_col is None:
        raise ValueError(f"params.data={p}: missing column 'score' (the top-1 similarity) or 'scores' (the ranked list)")
    scores, answerable, kinds = [], [], []
    has_kind = "kind" in df.columns
    for line, row in zip(lines, df.to_dict("records"), strict=True):
        where = f"params.data={p} line {line}"
        if str(row["user_id"]).strip() in ("", "nan", "None"):
            raise ValueError(f"{where}: empty user_id")
        label = str(row["label"]).strip().lower()
        if label not in LABELS:
            raise ValueError(f"{where}: label {row['label']!r} is not one of answerable, unanswerable (or 1 / 0)")
        y = LABELS[label]
        scores.append(_top1(row[score_col], where))
        kind = str(row.get("kind") or "").strip() if has_kind else ""
        if y and kind not in ("", POSITIVE):
            raise ValueError(f"{where}: kind {kind!r} on an answerable row (must be empty or 'answerable')")
        if not y and kind == POSITIVE:
            raise ValueError(f"{where}: kind 'answerable' on an unanswerable row")
        answerable.append(y)
        kinds.append(POSITIVE if y else (kind or NEGATIVE))
    out = pd.DataFrame({"user_id": df["user_id"].astype(str).str.strip(), "query": df["query"].astype(str),
                        "score": scores, "answerable": answerable, "kind": kinds})
    n_users = out["user_id"].nunique()
    if n_users < min_users:
        raise ValueError(f"params.data={p}: column 'user_id' has {n_users} users; the certificate needs at least "
                         f"{min_users} (users are the unit)")
    if out["answerable"].all() or not out["answerable"].any():
        raise ValueError(f"params.data={p}: column 'label' must hold both answerable and unanswerable rows")
    return out
