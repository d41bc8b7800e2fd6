"""reports/DESIGN_LOG.md as data (issue 27): every entry has a valid header, and every report
figure on a set that a logged decision of its method saw carries †.

The mark check reads the committed report fragments (transfer.md, resolver_transfer.md):
a † removed from a cell that needs one fails it, naming the file, method, set and entries.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from widemem_bench import design_log as D
from widemem_bench.experiments.transfer import LOG_METHOD, LOG_SET
from widemem_bench.reports.sections.resolver_transfer import _METHOD, log_set

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"


def _tables(text: str) -> list[list[list[str]]]:
    """Every markdown table of ``text``: rows of stripped cells, header first (rule line dropped)."""
    out: list[list[list[str]]] = []
    cur: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-:") for c in cells):
                cur.append(cells)
        elif cur:
            out.append(cur)
            cur = []
    return out


def _bare(cell: str) -> str:
    return cell.replace(D.MARK, "").strip()


def unmarked(text: str, where: str, seen: dict | None = None) -> list[str]:
    """One line per figure on a set a logged decision of its method saw, without its †."""
    seen = D.marks() if seen is None else seen
    out = []
    for t in _tables(text):
        head = t[0]
        if head[0] == "method":                     # transfer: methods x sets
            for row in t[1:]:
                method = LOG_METHOD.get(row[0]) or next((f"answerability {v}" for v in ("v2", "v4")
                                                         if row[0].startswith(f"{v} minus")), None)
                for s, c in zip(head[1:], row[1:], strict=False):
                    ls = LOG_SET.get(s)
                    if method and ls and c != "n/a" and "/" not in c.split("[")[0]  \
                            and D.needs_mark(method, ls, seen) and not c.endswith(D.MARK):
                        out.append(f"{where}: {row[0]} on {s} = {c!r} has no {D.MARK} "
                                   f"({D.mark_note(method, ls, seen)})")
        elif head[:2] == ["set", "split"] and "resolver" in head:   # resolver_transfer
            ri = head.index("resolver")
            for row in t[1:]:
                method, ls = _METHOD.get(row[ri]), log_set(_bare(row[0]), row[1])
                if method and D.needs_mark(method, ls, seen) and not row[0].endswith(D.MARK):
                    out.append(f"{where}: {row[ri]} on {ls} (row {' | '.join(row[:4])}) has no {D.MARK} "
                               f"({D.mark_note(method, ls, seen)})")
    return out


def test_committed_log_parses_and_names_known_sets() -> None:
    entries = D.load()
    assert len(entries) >= 22 and len({e.id for e in entries}) == len(entries)
    by_id = {e.id: e for e in entries}
    assert by_id["8"].changed == ("answerability v2",) and "world B" in by_id["8"].sets
    assert by_id["G1"].changed == ("generator",) and by_id["G1"].commit == "73e71c1"
    seen = D.marks(entries)
    # entry 8 changed v2 after seeing world B and world A's holdout: both are marked now
    assert D.needs_mark("answerability v2", "world B", seen)
    assert D.needs_mark("answerability v2", "world A holdout", seen)
    assert not D.needs_mark("answerability v2", "world A train", seen)   # development carries no mark
    assert not seen.get("generator")


@pytest.mark.parametrize(("entry", "match"), [
    ("### 99. 2026-12-01 — no header\n- set: world B\n", r"^DESIGN_LOG entry 99 \(no header\): no header line"),
    ("### 99. 2026-12-01 — odd set\n`sets: world Q; changed: nothing; commit: none`\n",
     r"^DESIGN_LOG entry 99 \(odd set\): unknown set\(s\) \['world Q'\]"),
    ("### 99. 2026-12-01 — odd method\n`sets: world B; changed: magic; commit: abc1234`\n",
     r"^DESIGN_LOG entry 99 \(odd method\): unknown method\(s\) \['magic'\]"),
    ("### 99. 2026-12-01 — no commit\n`sets: world B; changed: rule resolver; commit: none`\n",
     r"^DESIGN_LOG entry 99 \(no commit\): changed rule resolver but names no commit"),
])
def test_bad_entry_is_one_line_naming_it(entry: str, match: str) -> None:
    text = (REPORTS / "DESIGN_LOG.md").read_text(encoding="utf-8").rstrip() + "\n\n" + entry
    with pytest.raises(D.DesignLogError, match=match) as err:
        D.parse(text)
    assert "\n" not in str(err.value)


def test_make_test_refuses_the_committed_log_if_broken(tmp_path: Path) -> None:
    """`load` is what the report and this suite read: a broken committed log fails here."""
    bad = tmp_path / "DESIGN_LOG.md"
    bad.write_text((REPORTS / "DESIGN_LOG.md").read_text(encoding="utf-8").replace(
        "`sets: world B; changed: rule resolver; commit: edb3a33`\n", "", 1), encoding="utf-8")
    with pytest.raises(D.DesignLogError, match=r"^DESIGN_LOG entry R2 "):
        D.load(bad)
    D.load()  # the committed one is valid


@pytest.mark.parametrize("name", ["transfer.md", "resolver_transfer.md", "README.md"])
def test_every_figure_on_a_seen_set_is_marked(name: str) -> None:
    text = (REPORTS / name).read_text(encoding="utf-8")
    assert _tables(text), f"{name}: no table"
    missing = unmarked(text, name)
    assert not missing, "\n".join(missing)


def test_mark_check_fails_when_a_mark_is_removed() -> None:
    """The check can fail: one † taken off a v2 cell on world B is reported."""
    from widemem_bench.experiments.transfer import transfer_markdown

    rows = [{"set": s, "method": "answerability v2", "embedder": "e", "n_answerable": 1, "n_unanswerable": 1,
             **{f"{k}{x}": 0.5 for k in ("auroc", "recall", "false_confidence", "auroc_minus_top1")
                for x in ("", "_lo", "_hi")},
             "hard_negative_moderate_plus": 0, "n_hard_negative": 1, "answerable_moderate_plus": 1}
            for s in ("world A holdout", "world B", "LoCoMo")]
    md = transfer_markdown(pd.DataFrame(rows))
    assert unmarked(md, "rendered") == []
    line = next(ln for ln in md.splitlines() if ln.startswith("| answerability v2 |"))
    cut = md.replace(line, line.replace(" † |", " |", 2), 1)   # world A holdout and world B lose theirs
    missing = unmarked(cut, "rendered")
    assert len(missing) == 2 and "answerability v2 on world B" in missing[1] and "DESIGN_LOG 8" in missing[1]
