"""Outside hand-written answer sets: Youden J at MODERATE+ per confidence method.

    widemem-bench outside_report dir=datasets/outside out=reports/outside.md

The sets (every ``answer_set<N>.jsonl`` of ``dir``: sets 1 and 2 written 2026-12-01 and
development now, sets 3-11 written 2026-12-05 to 2026-12-07, each by a helper blind to the
project) are measuring sets from 3 on, read once per method version and logged in
reports/DESIGN_LOG.md and reports/seal_ledger.jsonl. One JSON object per user:
``facts`` (``id``, ``text``, ``day``) and ``questions`` (``id``, ``text``, ``kind``:
answerable, hard_negative, other_person, unrelated).

Each question is searched by cosine over its user's facts as stored (top 10, as
`sets.fixture_searches` does); every method of the transfer table scores the same
searches (`evaluation.confidence_methods.method_scores`). J = recall (answerable at MODERATE or above) minus
false confidence (unanswerable at MODERATE or above), with a 95 % cluster bootstrap by user.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

KINDS = ("answerable", "hard_negative", "other_person", "unrelated")


def answer_sets(folder: Path) -> list[str]:
    """The answer sets of ``folder`` (``answer_set<N>.jsonl``, by N); a one-line error when none."""
    found = sorted(folder.glob("answer_set*.jsonl"), key=lambda p: (len(p.stem), p.stem))
    if not found:
        raise ValueError(f"dir: no answer_set*.jsonl in {folder}")
    return [p.stem for p in found]


def outside_searches(embedder: Any, path: Path) -> Any:
    """One `Searches` of a JSON-lines answer set (`answerability.sets.answer_set_searches`)."""
    from widemem_bench.answerability.sets import answer_set_searches

    return answer_set_searches(embedder, path)


def youden(bands: np.ndarray, kinds: np.ndarray) -> tuple[float, float, float]:
    """(J, recall, false confidence) at MODERATE or above (band code >= 2)."""
    up = bands >= 2
    pos = kinds == "answerable"
    rec = float(up[pos].mean()) if pos.any() else float("nan")
    fc = float(up[~pos].mean()) if (~pos).any() else float("nan")
    return rec - fc, rec, fc


def outside_table(embedder: Any, directory: Path, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    from widemem_bench.evaluation.confidence_methods import (
        load_methods,
        load_v3,
        load_v4,
        method_scores,
    )
    from widemem_bench.metrics import auroc

    cal, v1, v2 = load_methods(embedder.name)
    v3, v4 = load_v3(embedder.name), load_v4(embedder.name)
    rows = []
    for name in answer_sets(directory):
        s = outside_searches(embedder, directory / f"{name}.jsonl")
        kinds = s.frame["kind"].to_numpy(dtype=str)
        users = s.frame["group"].to_numpy(dtype=str)
        uniq = np.unique(users)
        rng = np.random.default_rng(seed)
        boots = [np.concatenate([np.flatnonzero(users == u) for u in rng.choice(uniq, uniq.size)])
                 for _ in range(n_boot)]
        for method, (score, bands) in method_scores(s, embedder, cal=cal, v1=v1, v2=v2, v3=v3, v4=v4).items():
            j, rec, fc = youden(bands, kinds)
            js = np.array([youden(bands[b], kinds[b])[0] for b in boots])
            row = {"set": name, "method": method, "embedder": embedder.name, "j": j,
                   "j_lo": float(np.nanpercentile(js, 2.5)), "j_hi": float(np.nanpercentile(js, 97.5)),
                   "recall": rec, "false_confidence": fc,
                   "auroc": float(auroc(score, np.where(kinds == "answerable", "answerable", "unanswerable"))),
                   "n": int(kinds.size), "n_users": int(uniq.size)}
            for k in KINDS[1:]:
                m = kinds == k
                row[f"fc_{k}"] = float((bands[m] >= 2).mean()) if m.any() else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def outside_markdown(table: pd.DataFrame, command: str, sources: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """The report. ``sources``: what each set holds (`sealed.committed_sources`, by stem); left out,
    each ``answer_set<N>`` is committed set N (`evaluation.outside.by_name`: the project's own folder)."""
    from widemem_bench.evaluation.outside import by_name, is_own_folder, sources_caption

    stems = list(dict.fromkeys(table["set"].astype(str))) if len(table) else []
    known = dict(sources) if sources is not None else by_name(stems)
    lines = ["## Outside hand-written answer sets (blind)", ""]
    if is_own_folder(known):
        from widemem_bench.sealed import OUTSIDE_DEVELOPMENT, outside_sets

        nums = sorted(outside_sets(x for labels in known.values() for x in labels) - OUTSIDE_DEVELOPMENT)
        measuring = (f"Sets {nums[0]} to {nums[-1]} are" if len(nums) > 1 else f"Set {nums[0]} is") if nums else "No set is"
        lines += ["Sets 1 and 2 are development: they chose answerability v4's recipe and train its cross-encoder "
                  f"from v4.2 on (reports/DESIGN_LOG.md V7, V8), so their v4 rows are in-sample. {measuring} "
                  "the measuring sets, each read once per method version (set 5 first by v4.3, DESIGN_LOG M7; set 6 "
                  "first by v4.4, M9; set 7 first by v4.4, M11; set 8 first by v4.4, M12; set 9 first by v4.5, M15; "
                  "set 10 first by v4.5, M16; set 11 first by v4.5, M17); each read is also a line of "
                  "reports/seal_ledger.jsonl.", ""]
    else:  # files of the user's own, or copies: the project's history covers only what they hold of its sets
        lines += [sources_caption(known), ""]
    lines += ["Youden J at MODERATE or above = recall (answerable at MODERATE+) minus false confidence (every "
              "unanswerable kind at MODERATE+), 95% cluster bootstrap by user; AUROC of the method's score. "
              "Questions searched by cosine over the user's facts as written (top 10). Read once per method "
              "version (reports/DESIGN_LOG.md).", "", f"Command: `{command}`.", "",
              "| set | method | J [95%] | recall | false conf. | hard neg. | other person | unrelated | AUROC |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in table.to_dict("records"):
        lines.append(f"| {r['set']} | {r['method']} | {r['j']:.3f} [{r['j_lo']:.3f}, {r['j_hi']:.3f}] | "
                     f"{r['recall']:.2f} | {r['false_confidence']:.2f} | {r['fc_hard_negative']:.2f} | "
                     f"{r['fc_other_person']:.2f} | {r['fc_unrelated']:.2f} | {r['auroc']:.3f} |")
    return "\n".join(lines + _over_measuring(table, known)) + "\n"


def _over_measuring(table: pd.DataFrame, sources: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Each method over the sets holding committed measuring cases only (3 on): how many, the median and
    lowest J, the median AUROC."""
    from widemem_bench.evaluation.outside import measuring_stems

    if not len(table):
        return []
    meas = table[table["set"].astype(str).isin(measuring_stems(sources))]
    if not len(meas):
        return []
    from widemem_bench.evaluation.outside import is_own_folder

    head = ("Over the measuring sets (one row per method; each set weighs the same):" if is_own_folder(sources) else
            "Over the files that hold the project's measuring cases alone (one row per method; each weighs the same):")
    out = ["", head, "",
           "| method | sets | median J | lowest J (set) | median AUROC |", "|---|---|---|---|---|"]
    for method, g in meas.groupby("method", sort=False):
        low = g.iloc[int(g["j"].to_numpy().argmin())]
        out.append(f"| {method} | {len(g)} | {g['j'].median():.3f} | {low['j']:.3f} ({low['set']}) | "
                   f"{g['auroc'].median():.3f} |")
    return out


def tool(cfg: dict[str, Any]) -> int:
    """The outside table for one embedder: print it and write `out` (markdown)."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.provenance import tool_command

    folder, out = Path(str(cfg["dir"])), Path(str(cfg["out"]))
    answer_sets(folder)  # a folder without sets: one line, before any model loads
    from widemem_bench.provenance import REPO_ROOT
    from widemem_bench.sealed import OUTSIDE_DIR

    committed = REPO_ROOT / "reports" / "outside.md"
    if out.resolve() == committed.resolve() and folder.resolve() != OUTSIDE_DIR.resolve():
        raise ValueError(f"out: {committed} is the committed report of {OUTSIDE_DIR.name}/; give your sets "
                         "their own, e.g. out=outputs/my_outside.md")
    table = outside_table(load_embedder(str(cfg["embedder"])), folder, n_boot=int(cfg["n_boot"]),
                          seed=int(cfg["seed"]))
    from widemem_bench.sealed import committed_sources, record_outside

    paths = [folder / f"{n}.jsonl" for n in answer_sets(folder)]
    record_outside(paths, "widemem-bench outside_report")
    command = tool_command("outside_report", cfg, every=True)  # n_boot and seed set the intervals
    text = outside_markdown(table, command, dict(zip(answer_sets(folder), committed_sources(paths), strict=True)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(text)
    return 0

