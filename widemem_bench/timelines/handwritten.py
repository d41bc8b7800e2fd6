"""Hand-written scenario files: update scenarios (a resolver's cases) in JSON lines.

One object per line: ``{"id", "kind": "update"|"keep", "person", "oblique", "facts":
[{"id", "text", "day"}], "old": [fact ids], "new": fact id, "query", "answer_fact"}``
(the schema of ``datasets/outside/`` and ``datasets/handwritten/``). Facts are returned in
day order.

Two folders hold such files, with different roles:

- ``datasets/outside/``: outside cases, written blind; sets 1 and 2 are development for the
  structure resolver (read by its versions 1-3.2), sets 3 and 4 are measuring sets.
- ``datasets/handwritten/``: written blind by four helpers as DEVELOPMENT data in the natural
  register, one writer per file (the natural fold); DESIGN_LOG R22 is what was tried on them.

Answer sets (:func:`load_answers`), one user per line: ``{"user_id", "register", "facts":
[{"id", "text", "day"}], "questions": [{"id", "text", "kind", "gold"}]}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from widemem_bench.provenance import REPO_ROOT

HANDWRITTEN = REPO_ROOT / "datasets" / "handwritten"
OUTSIDE = REPO_ROOT / "datasets" / "outside"


@dataclass(frozen=True)
class Scenario:
    id: str
    kind: str  # "update" | "keep"
    person: str
    oblique: bool
    facts: tuple[tuple[str, str, float], ...]  # (id, text, day), in day order
    old: tuple[str, ...]
    new: str


def load(path: str | Path) -> list[Scenario]:
    """The scenarios of one file; a missing file or a bad line is a one-line ``ValueError`` naming it."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"scenario file {p} not found")
    out = []
    for n, line in enumerate(p.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            facts = tuple(sorted(((str(f["id"]), str(f["text"]), float(f["day"])) for f in d["facts"]),
                                 key=lambda f: f[2]))
            sc = Scenario(str(d["id"]), str(d["kind"]), str(d.get("person", "")), bool(d.get("oblique", False)),
                          facts, tuple(str(x) for x in d.get("old") or ()), str(d["new"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"outside: {p}:{n}: not a scenario ({type(exc).__name__}: {exc})") from None
        ids = {f[0] for f in sc.facts}
        if sc.kind not in ("update", "keep") or sc.new not in ids or not set(sc.old) <= ids:
            raise ValueError(f"outside: {p}:{n}: kind must be update/keep and new/old must name its facts")
        out.append(sc)
    return out


ANSWER_KINDS = ("answerable", "hard_negative", "other_person", "unrelated")


@dataclass(frozen=True)
class AnswerUser:
    user_id: str
    register: str
    facts: tuple[tuple[str, str], ...]  # (id, text)
    questions: tuple[tuple[str, str, str, tuple[str, ...]], ...]  # (id, text, kind, gold fact ids)


def load_answers(path: str | Path) -> list[AnswerUser]:
    """The users of one answer-set file; a missing file or a bad line is a one-line ``ValueError``."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"answer set {p} not found")
    out = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            u = json.loads(line)
            facts = tuple((str(f["id"]), str(f["text"])) for f in u["facts"])
            qs = tuple((str(q["id"]), str(q["text"]), str(q["kind"]), tuple(str(g) for g in q.get("gold") or ()))
                       for q in u["questions"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{p}:{n}: not an answer-set user ({exc})") from None
        bad = sorted({k for _, _, k, _ in qs} - set(ANSWER_KINDS))
        if bad:
            raise ValueError(f"{p}:{n}: unknown question kinds {bad}")
        out.append(AnswerUser(str(u["user_id"]), str(u.get("register", "")), facts, qs))
    return out
