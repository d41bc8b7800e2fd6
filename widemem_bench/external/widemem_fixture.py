"""widemem 2.0.2's own labelled confidence fixture (62 cases, all-MiniLM-L6-v2 cosines).

File: ``../shared/data/widemem_confidence_minilm.json`` (widemem-ai 2.0.2 sdist,
``tests/fixtures/confidence_minilm.json``, Apache-2.0). Structure, as studied:

- ``meta``: free-text description, model name, split rule;
- ``users[name]``: ``inputs`` (what the user said) and ``facts`` (what widemem's
  ``add()`` stored with llama3.1:8b);
- ``cases``: ``user``, ``query``, ``kind`` (answerable / hard_negative / unrelated),
  ``answer_facts`` (indices into that user's facts, empty unless answerable),
  ``split`` (train = alice, bob, carmen, dev; holdout = emma, frank) and three
  cosines rounded to 4 places:
  ``top_similarity`` (top-1 over all the user's facts),
  ``answer_fact_similarity`` (MAX over the answer facts when there are several;
  null for unanswerable cases) and ``subjectless_answer_similarity`` (the same
  max with the person's name stripped from the answer facts).

Definitions that reproduce the table of ``../shared/data/README.md`` to the case:

- recall at MODERATE or above = share of the answerable cases of a split whose
  similarity is >= moderate (widemem's ``>=``); "subject stripped" rows use
  ``subjectless_answer_similarity``, "answer fact as stored" rows use
  ``answer_fact_similarity``. ``top_similarity`` is NOT what that table uses
  (it would give 100% at 0.30 on both splits);
- hard negatives at MODERATE or above use ``top_similarity`` (they have no answer
  fact), all 12 cases over both splits; "highest unrelated top-1" is the max
  ``top_similarity`` over the unrelated cases of both splits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.provenance import file_sha256

FIXTURE_SHA256 = "d884f82c07b67d0aadf28cf99c172450b7fe7e4b9dcd3c0718a51b699b65ddf7"
FIXTURE_NAME = "widemem_confidence_minilm.json"
# ../shared/data beside the project checkout (widemem_bench/external/ -> repo root -> its parent).
DEFAULT_FIXTURE_PATH = Path(__file__).resolve().parents[2].parent / "shared" / "data" / FIXTURE_NAME
WIDEMEM_MINILM_THRESHOLDS = (0.60, 0.30, 0.20)
FACT_FORMS = {
    "subject stripped": "subjectless_answer_similarity",
    "answer fact as stored": "answer_fact_similarity",
}
SPLITS = ("train", "holdout")
COLUMNS = [
    "case_id",
    "user",
    "query",
    "kind",
    "split",
    "top_similarity",
    "answer_fact_similarity",
    "subjectless_answer_similarity",
    "answer_facts",
    "answer_fact_texts",
    "n_user_facts",
]


class FixtureChecksumError(ValueError):
    """The fixture file's sha256 is not the one recorded in ../shared/data/README.md."""


def load_widemem_fixture_raw(path: str | Path | None = None, *, verify: bool = True) -> dict[str, Any]:
    """The fixture's JSON as a dict, after checking its sha256 (``verify=False`` skips the check)."""
    p = Path(path) if path is not None else DEFAULT_FIXTURE_PATH
    if not p.is_file():
        raise ValueError(
            f"path: widemem fixture not found at {p}; put {FIXTURE_NAME} in ../shared/data or pass path="
        )
    if verify:
        got = file_sha256(p)
        if got != FIXTURE_SHA256:
            raise FixtureChecksumError(f"path: {p} has sha256 {got}, expected {FIXTURE_SHA256} (wrong or edited file)")
    data = json.loads(p.read_text(encoding="utf-8"))
    for key in ("meta", "users", "cases"):
        if key not in data:
            raise ValueError(f"path: {p} has no {key!r} section; not a widemem confidence fixture")
    return data


def load_widemem_fixture(path: str | Path | None = None, *, verify: bool = True) -> pd.DataFrame:
    """One row per case (columns ``COLUMNS``); unanswerable cases have NaN answer similarities."""
    data = load_widemem_fixture_raw(path, verify=verify)
    users: Mapping[str, Any] = data["users"]
    rows = []
    for i, case in enumerate(data["cases"]):
        facts = users[case["user"]]["facts"]
        idx = [int(j) for j in case.get("answer_facts", [])]
        rows.append(
            {
                "case_id": i,
                "user": case["user"],
                "query": case["query"],
                "kind": case["kind"],
                "split": case["split"],
                "top_similarity": float(case["top_similarity"]),
                "answer_fact_similarity": _nan_if_none(case.get("answer_fact_similarity")),
                "subjectless_answer_similarity": _nan_if_none(case.get("subjectless_answer_similarity")),
                "answer_facts": idx,
                "answer_fact_texts": [facts[j] for j in idx],
                "n_user_facts": len(facts),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _nan_if_none(value: Any) -> float:
    return float("nan") if value is None else float(value)


def fixture_recall_table(df: pd.DataFrame, moderates: tuple[float, ...] = (0.50, 0.30)) -> pd.DataFrame:
    """Recall at MODERATE or above per fact form and split, as counts and rounded percents.

    Columns: ``fact form``, ``split``, ``n`` (answerable cases), and for each
    moderate m: ``hits@m`` (cases with similarity >= m) and ``recall@m`` (share).
    """
    ans = df[df["kind"] == "answerable"]
    rows = []
    for form, column in FACT_FORMS.items():
        for split in SPLITS:
            sims = ans.loc[ans["split"] == split, column].to_numpy(dtype=float)
            row: dict[str, Any] = {"fact form": form, "split": split, "n": int(sims.size)}
            for m in moderates:
                hits = int(np.sum(sims >= m))
                row[f"hits@{m:.2f}"] = hits
                row[f"recall@{m:.2f}"] = hits / sims.size if sims.size else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def fixture_negative_figures(df: pd.DataFrame, moderates: tuple[float, ...] = (0.50, 0.30)) -> dict[str, Any]:
    """Hard negatives at MODERATE or above (top-1 cosine, both splits) and the highest unrelated top-1."""
    hn = df.loc[df["kind"] == "hard_negative", "top_similarity"].to_numpy(dtype=float)
    un = df.loc[df["kind"] == "unrelated", "top_similarity"].to_numpy(dtype=float)
    out: dict[str, Any] = {"n_hard_negative": int(hn.size), "n_unrelated": int(un.size)}
    for m in moderates:
        out[f"hard_negative_moderate_plus@{m:.2f}"] = int(np.sum(hn >= m))
        out[f"unrelated_moderate_plus@{m:.2f}"] = int(np.sum(un >= m))
    out["max_unrelated_top_similarity"] = float(un.max()) if un.size else float("nan")
    return out


def _split_figures(part: pd.DataFrame, thresholds: tuple[float, float, float]) -> dict[str, Any]:
    from widemem_bench.calibration import assign_bands
    from widemem_bench.metrics import compute

    bands = assign_bands(part["top_similarity"].to_numpy(), thresholds)
    kinds = part["kind"].to_numpy(dtype=str)
    n_ans = int(np.sum(kinds == "answerable"))
    return {
        "n": len(part),
        "n_answerable": n_ans,
        "answerable_moderate_plus": int(np.sum((kinds == "answerable") & (bands >= 2))),
        "recall_moderate_plus": compute("recall_moderate_plus", bands, kinds),
        "hard_negative_moderate_plus": int(np.sum((kinds == "hard_negative") & (bands >= 2))),
        "n_hard_negative": int(np.sum(kinds == "hard_negative")),
        "false_confidence_hard_negative": compute("false_confidence_hard_negative", bands, kinds),
        "unrelated_moderate_plus": int(np.sum((kinds == "unrelated") & (bands >= 2))),
        "precision_moderate_plus": compute("precision_moderate_plus", bands, kinds),
        "precision_high": compute("precision_high", bands, kinds),
    }


def fixture_calibration_table(
    df: pd.DataFrame,
    *,
    targets: Mapping[str, float] | None = None,
    delta: float = 0.1,
    method: str = "binomial",
) -> tuple[pd.DataFrame, Any]:
    """widemem's MiniLM thresholds vs thresholds fitted on the fixture's train split.

    Rows: widemem's 0.60/0.30/0.20, LTT (certified at ``delta``) and, for contrast,
    the naive empirical-precision choice, each on train and holdout.
    Score = ``top_similarity`` (what widemem bands on), label = kind == answerable.
    Returns (table with one row per thresholds x split, the ``ThresholdFit``).
    """
    from widemem_bench.calibration import fit_thresholds

    train = df[df["split"] == "train"]
    fit = fit_thresholds(
        train["top_similarity"].to_numpy(),
        (train["kind"] == "answerable").to_numpy(),
        targets=targets,
        delta=delta,
        method=method,
    )
    # The naive choice (plain empirical precision, no guarantee) shows what LTT guards against.
    naive = fit_thresholds(
        train["top_similarity"].to_numpy(),
        (train["kind"] == "answerable").to_numpy(),
        targets=targets,
        delta=delta,
        method="empirical",
    )
    rows = []
    for label, th in (
        ("widemem 0.60/0.30/0.20", WIDEMEM_MINILM_THRESHOLDS),
        ("LTT auto-calibrated", fit.thresholds),
        ("empirical precision (no guarantee)", naive.thresholds),
    ):
        for split in SPLITS:
            rows.append(
                {
                    "thresholds": label,
                    "high": th[0],
                    "moderate": th[1],
                    "low": th[2],
                    "split": split,
                    **_split_figures(df[df["split"] == split], th),
                }
            )
    return pd.DataFrame(rows), fit


def tool(cfg: dict[str, Any]) -> int:
    """Print the fixture's recall table, negative figures and the calibration comparison."""
    df = load_widemem_fixture(cfg.get("path"))
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(fixture_recall_table(df).to_string(index=False))
        print()
        for key, value in fixture_negative_figures(df).items():
            print(f"{key}: {value}")
        print()
        table, fit = fixture_calibration_table(df, delta=float(cfg["delta"]))
        print(fit.to_frame().to_string(index=False))
        print()
        print(table.to_string(index=False))
    return 0
