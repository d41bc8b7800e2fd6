"""reports/DESIGN_LOG.md read as data: each entry's header, and the † marks derived from it.

Every entry opens (the line after its ``### <id>. <date> — <title>`` heading) with one
machine-readable header line::

    `sets: world A holdout, world B; changed: rule resolver; commit: 706028d`

- ``sets``: the sets whose numbers the entry saw, comma-separated names from `SETS`;
- ``changed``: the method(s) the entry changed, comma-separated from `METHODS`, or ``nothing``;
- ``commit``: the commit of the change (``none`` when nothing changed).

A figure of method M on a measuring or outside set S carries † when some entry changed M
after seeing S (`marks`): that set is development for M from then on. Development sets
(world A train / validation, world C) carry no mark; the report labels them development.
A missing or malformed header, or an unknown set or method, is a `DesignLogError` whose
one line names the entry.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.sealed import DEVELOPMENT_SETS, SETS

LOG_PATH = REPO_ROOT / "reports" / "DESIGN_LOG.md"
# Methods a decision can change. "generator" = the synthetic worlds' ground truth (a data
# change, not a method: it marks no method's figures).
METHODS = ("answerability v1", "answerability v2", "answerability v3", "answerability v4", "calibrated thresholds",
           "rule resolver", "structure resolver", "pair resolver", "language layer", "generator")
MARK = "†"
_HEADING = re.compile(r"^### (?P<id>[A-Z]?\d+)\. (?P<date>\d{4}-\d{2}-\d{2}) — (?P<title>.+)$")
_HEADER = re.compile(r"^`sets: (?P<sets>[^;`]+); changed: (?P<changed>[^;`]+); commit: (?P<commit>[0-9a-f]{7,40}|none)`$")


class DesignLogError(ValueError):
    """A DESIGN_LOG entry without a valid header: one line naming the entry."""


@dataclass(frozen=True)
class Entry:
    id: str
    date: str
    title: str
    sets: tuple[str, ...]
    changed: tuple[str, ...]   # () when nothing changed
    commit: str | None

    @property
    def label(self) -> str:
        return f"entry {self.id} ({self.date}, {self.title[:60]})"


def _split(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def parse(text: str) -> list[Entry]:
    """Every entry under ``## Entries``, in file order; `DesignLogError` on a bad header."""
    _, sep, body = text.partition("\n## Entries\n")
    if not sep:
        raise DesignLogError("DESIGN_LOG: no '## Entries' section")
    lines = body.splitlines()
    entries: list[Entry] = []
    for i, line in enumerate(lines):
        if not line.startswith("### "):
            continue
        h = _HEADING.match(line)
        if h is None:
            raise DesignLogError(f"DESIGN_LOG: heading {line!r} is not '### <id>. <YYYY-MM-DD> — <title>'")
        name = f"DESIGN_LOG entry {h['id']} ({h['title'][:60]})"
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        m = _HEADER.match(nxt)
        if m is None:
            raise DesignLogError(f"{name}: no header line `sets: ...; changed: ...; commit: ...` after its heading")
        sets = _split(m["sets"])
        unknown = [s for s in sets if s not in SETS]
        if unknown or not sets:
            raise DesignLogError(f"{name}: unknown set(s) {unknown or ['(none)']}; known: {', '.join(SETS)}")
        changed = () if m["changed"].strip() == "nothing" else _split(m["changed"])
        bad = [c for c in changed if c not in METHODS]
        if bad:
            raise DesignLogError(f"{name}: unknown method(s) {bad}; known: {', '.join(METHODS)}, or nothing")
        commit = None if m["commit"] == "none" else m["commit"]
        if changed and commit is None:
            raise DesignLogError(f"{name}: changed {', '.join(changed)} but names no commit")
        if any(e.id == h["id"] for e in entries):
            raise DesignLogError(f"{name}: a second entry with id {h['id']}")
        entries.append(Entry(h["id"], h["date"], h["title"], sets, changed, commit))
    return entries


def load(path: str | Path | None = None) -> list[Entry]:
    p = Path(path) if path is not None else LOG_PATH
    if not p.is_file():
        raise DesignLogError(f"DESIGN_LOG: no file {p}")
    return parse(p.read_text(encoding="utf-8"))


def seen_by(entries: Iterable[Entry]) -> dict[str, dict[str, list[str]]]:
    """method -> set -> ids of the entries that changed the method after seeing the set
    (development sets left out: deciding on them is allowed)."""
    out: dict[str, dict[str, list[str]]] = {}
    for e in entries:
        for m in e.changed:
            if m == "generator":
                continue
            for s in e.sets:
                if s not in DEVELOPMENT_SETS:
                    out.setdefault(m, {}).setdefault(s, []).append(e.id)
    return out


def marks(entries: Iterable[Entry] | None = None) -> dict[str, dict[str, list[str]]]:
    """`seen_by` of the committed log (or of ``entries``)."""
    return seen_by(load() if entries is None else entries)


def needs_mark(method: str, set_name: str, seen: Mapping[str, Mapping[str, list[str]]] | None = None) -> bool:
    seen = marks() if seen is None else seen
    return bool((seen.get(method) or {}).get(set_name))


def mark(method: str, set_name: str, seen: Mapping[str, Mapping[str, list[str]]] | None = None) -> str:
    """" †" when a logged decision of ``method`` saw ``set_name``, else ""."""
    return f" {MARK}" if needs_mark(method, set_name, seen) else ""


def mark_note(method: str, set_name: str, seen: Mapping[str, Mapping[str, list[str]]] | None = None) -> str:
    """The entries behind a mark, "DESIGN_LOG 4, 8", or "" (for footnotes)."""
    seen = marks() if seen is None else seen
    ids = (seen.get(method) or {}).get(set_name) or []
    return f"DESIGN_LOG {', '.join(dict.fromkeys(ids))}" if ids else ""


def last_change_commit(entries: Iterable[Entry], set_name: str | None = None) -> Entry | None:
    """The newest entry that changed a method (and, with ``set_name``, saw that set)."""
    last = None
    for e in entries:
        if e.changed and e.changed != ("generator",) and (set_name is None or set_name in e.sets):
            last = e
    return last


def commit_time(commit: str | None) -> str | None:
    """ISO commit time of ``commit`` in this repository, or None when git cannot tell."""
    if not commit:
        return None
    try:
        out = subprocess.run(["git", "show", "-s", "--format=%cI", commit], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None
