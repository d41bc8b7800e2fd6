"""The calibration figures: per split, per setting, with cluster-bootstrap intervals by user.

`figures` (band and score metrics through `metrics.with_ci`), `none_figures` and
`tradeoff_rows` (rates through `metrics.rates.rate_ci` over a split's users), and the
trade-off table's columns in the one order the console (`format_tradeoff`) and
reports/calibration.md share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.calibration.options import CONFIDENCE_KINDS, NEGATIVE_KINDS
from widemem_bench.metrics import with_ci
from widemem_bench.metrics.rates import rate_ci

FIGURES = ("recall_moderate_plus", "precision_moderate_plus", "precision_high",
           *(f"false_confidence_{k}" for k in NEGATIVE_KINDS))
SCORE_FIGURES = ("auroc", "aurc", "adaptive_ece", "brier")
# The trade-off table's rows and columns, in the one order the console and calibration.md share.
ROW_LABELS = {"widemem": "widemem's thresholds", "calibrated": "auto-calibrated", "answerability": "answerability scorer"}
MOD_KIND_ORDER = ("hard_negative", "other_person", "never_mentioned")
TABLE_FIGURE_PREFIXES = ("recall_moderate_plus", "false_confidence_", "none_rate_")


def figures(pq: pd.DataFrame, band_col: str, *, prob_col: str | None = None, score_col: str = "top1_sim",
            n_boot: int = 1000, seed: int = 0) -> dict[str, list[float | None]]:
    """[value, lo, hi] per figure on one split's confidence questions (cluster bootstrap by user)."""
    bands = pq[band_col].to_numpy()
    kinds = pq["kind"].to_numpy(dtype=str)
    groups = pq["user_id"].to_numpy()
    out: dict[str, list[float | None]] = {}
    jobs: list[tuple[str, tuple[Any, ...], int]] = [(m, (bands, kinds), n_boot) for m in FIGURES]
    jobs += [("auroc", (pq[score_col].to_numpy(), kinds), max(100, n_boot // 5)),
             ("aurc", (pq[score_col].to_numpy(), kinds), max(100, n_boot // 5))]
    if prob_col is not None:
        labels = (kinds == "answerable").astype(float)
        jobs += [("adaptive_ece", (pq[prob_col].to_numpy(), labels), max(100, n_boot // 5)),
                 ("brier", (pq[prob_col].to_numpy(), labels), n_boot)]
    for name, arrays, nb in jobs:
        triple = with_ci(name, *arrays, groups=groups, seed=seed, n_boot=nb)
        out[name] = [None if v != v else float(v) for v in triple]
    out["n"] = [float(len(pq)), None, None]
    return out


def _rate(num: np.ndarray, den: np.ndarray, users: np.ndarray, *, n_boot: int, seed: int) -> list[float | None]:
    """[value, lo, hi]: share of ``den`` rows that are ``num`` rows, every user of the split resampled."""
    triple = rate_ci(num, users, within=den, n_boot=n_boot, seed=seed)
    return [None if v != v else float(v) for v in triple]


def none_figures(bands: np.ndarray, kinds: np.ndarray, users: np.ndarray, *, n_boot: int = 1000,
                 seed: int = 0) -> dict[str, list[float | None]]:
    """NONE rate (band 0) and false confidence at LOW or above, per kind present."""
    out: dict[str, list[float | None]] = {}
    for kind in sorted(set(kinds.tolist()), key=lambda k: (k != "answerable", k)):
        den = kinds == kind
        out[f"none_rate_{kind}"] = _rate(bands == 0, den, users, n_boot=n_boot, seed=seed)
    return out


def tradeoff_rows(settings: Mapping[str, tuple[Sequence[float], np.ndarray]], kinds: np.ndarray, users: np.ndarray,
                  *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """One row per setting: recall (MODERATE+), false confidence (MODERATE+) and NONE rate per kind."""
    rows = []
    neg = [k for k in sorted(set(kinds.tolist())) if k != "answerable"]
    ans = kinds == "answerable"
    for label, (th, bands) in settings.items():
        row: dict[str, Any] = {"setting": label, "thresholds": [float(t) for t in th],
                               "recall_moderate_plus": _rate(bands >= 2, ans, users, n_boot=n_boot, seed=seed)}
        for k in neg:
            row[f"false_confidence_{k}"] = _rate(bands >= 2, kinds == k, users, n_boot=n_boot, seed=seed)
        row.update(none_figures(bands, kinds, users, n_boot=n_boot, seed=seed))
        rows.append(row)
    return rows


def _ordered(kinds: Sequence[str], order: Sequence[str]) -> list[str]:
    return [k for k in order if k in kinds] + sorted(k for k in kinds if k not in order)


def table_columns(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(header, figure key) of the trade-off table, in the order both views print it: recall,
    each kind at MODERATE+ (hard negative, other person, never mentioned, then any other), and
    the NONE rate per kind (answerable first, as CONFIDENCE_KINDS)."""
    neg = _ordered([k.removeprefix("false_confidence_") for k in row if k.startswith("false_confidence_")],
                   MOD_KIND_ORDER)
    none = _ordered([k.removeprefix("none_rate_") for k in row if k.startswith("none_rate_")], CONFIDENCE_KINDS)
    return ([("recall MOD+", "recall_moderate_plus")]
            + [(f"{k.replace('_', '-')} MOD+", f"false_confidence_{k}") for k in neg]
            + [(f"NONE {k.replace('_', '-')}", f"none_rate_{k}") for k in none])


def format_tradeoff(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    """The trade-off table as aligned text, the columns and intervals of reports/calibration.md."""
    spec = table_columns(rows[0])
    cols = ["setting", "thresholds (high / moderate / low)"] + [h for h, _ in spec]
    body = [[r["setting"], th_text(r["thresholds"])] + [ci_text(r.get(k)) for _, k in spec] for r in rows]
    width = [max(len(c), *(len(b[i]) for b in body)) for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, width, strict=True)).rstrip()  # noqa: E731
    return "\n".join([title, line(cols), *(line(b) for b in body)])


def ci_text(triple: Any, percent: bool = True) -> str:
    """[value, lo, hi] as text: percent (one decimal) or three decimals; n/a when absent."""
    if not triple or triple[0] is None:
        return "n/a"
    v, lo, hi = triple
    if percent:
        return f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None else f"{100 * v:.1f}%"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{v:.3f}"


def th_text(t: Sequence[float]) -> str:
    """Thresholds as ``high / moderate / low`` with three decimals."""
    return " / ".join(f"{x:.3f}" for x in t)
