"""The sets the project measures on, and a ledger of who read a measuring split and why.

`SETS` names every set a DESIGN_LOG entry may name, with its role:

- ``measuring``: read once per method version, by `make bench` and the tests
  (world A's holdout, world N's holdout, LoCoMo, widemem's fixture);
- ``evaluation``: world B (an outside world for the confidence methods; the resolver
  decisions R1-R7 read it, so for resolvers it is development);
- ``development``: fitting, tuning and reading failures allowed (world A train and
  validation, world C);
- ``outside``: hand-written cases kept outside the project; a tool's read of the committed
  measuring ones (sets 3 on) is logged by `record_outside`.

Every load of a measuring split goes through `open_split(name, purpose, ...)`, and every
load of a whole world that holds one (world A's or world N's holdout, `HOLDOUTS`) is
recorded by `record_world` (an experiment's `RunContext.timelines()`). The purpose
"measure" is what `make bench` (`widemem_bench.bench`) and the test suite pass (through
``WIDEMEM_BENCH_PURPOSE``, so a Hydra job launched by the bench inherits it); any other
read appends one JSON line ``{time, commit, caller, purpose, set}`` to
``reports/seal_ledger.jsonl``, so reading a sealed set to look at it leaves a trace the
report counts (`reads_outside_measurement`). A load that fails (a missing file) writes
no line. Inside `held_reads()` (each experiment run, each tool of the front door) the
lines wait for the block to end: one line per set and purpose, written only when the
block ends without an error, so a run refused in one line leaves the ledger as it was.
A new measuring set (world N) is one more `register` call with its loader.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT

MEASURE = "measure"
PURPOSE_ENV = "WIDEMEM_BENCH_PURPOSE"
LEDGER_ENV = "WIDEMEM_BENCH_LEDGER"
# The command line the front door (widemem_bench.cli) was given, for an ad hoc purpose.
COMMAND_ENV = "WIDEMEM_BENCH_COMMAND"
LEDGER_PATH = REPO_ROOT / "reports" / "seal_ledger.jsonl"

SETS: dict[str, str] = {
    "world A train": "development",
    "world A validation": "development",
    "world C": "development",
    "world N train": "development",
    "world N validation": "development",
    "gate users": "development",
    "hand-written development": "development",  # datasets/handwritten (DESIGN_LOG R22)
    "world A holdout": "measuring",
    "world N holdout": "measuring",
    "world N fresh": "measuring",
    "world N fresh 2": "measuring",
    "world N fresh 3": "measuring",
    "world N fresh 4": "measuring",
    "world N fresh 5": "measuring",
    "world N fresh 6": "measuring",
    "world N fresh 7": "measuring",
    "world N fresh 8": "measuring",
    "world N fresh 9": "measuring",
    "LoCoMo": "measuring",
    "widemem fixture": "measuring",
    "world B": "evaluation",
    "outside cases": "outside",
}
DEVELOPMENT_SETS = frozenset(k for k, v in SETS.items() if v == "development")
# The worlds whose data set holds a measuring split (by `Timelines.world`): its holdout users.
HOLDOUTS: dict[str, str] = {"a": "world A holdout", "n": "world N holdout"}


@dataclass(frozen=True)
class Split:
    name: str
    load: Callable[..., Any]
    doc: str


_SPLITS: dict[str, Split] = {}


def register(name: str, load: Callable[..., Any], doc: str = "") -> None:
    """Add a measuring split (its loader takes keyword arguments only)."""
    if SETS.get(name) != "measuring":
        raise ValueError(f"{name!r} is not a measuring set of sealed.SETS")
    _SPLITS[name] = Split(name, load, doc)


def measuring_splits() -> tuple[str, ...]:
    return tuple(_SPLITS)


def current_purpose(purpose: str | None = None) -> str:
    """The purpose given, else ``WIDEMEM_BENCH_PURPOSE``, else "ad hoc: <front-door command line>"."""
    if purpose:
        return purpose
    env = os.environ.get(PURPOSE_ENV, "").strip()
    # The front door (widemem_bench.cli) puts its command line in COMMAND_ENV; a read from
    # Python without it (a test, a notebook) names the process instead.
    command = os.environ.get(COMMAND_ENV, "").strip() or f"python (pid {os.getpid()}, no front-door command)"
    return env or "ad hoc: " + command[:200]


def _caller() -> str:
    f = sys._getframe(3)   # open_split -> record_read -> _caller: the frame that called open_split
    return f"{f.f_globals.get('__name__', '?')}.{f.f_code.co_name}:{f.f_lineno}"


def ledger_path() -> Path:
    return Path(os.environ.get(LEDGER_ENV) or LEDGER_PATH)


# The open `held_reads` blocks, innermost last: each holds its lines until it ends.
_HELD: list[list[dict[str, Any]]] = []


def record_read(name: str, purpose: str, caller: str | None = None) -> dict[str, Any] | None:
    """Append the ledger line of a read outside measurement; None (nothing written) for "measure".

    Inside `held_reads` the line waits for the block's end, and a second read of the same
    set for the same purpose adds none (the first line is returned).
    """
    if purpose == MEASURE:
        return None
    if name not in SETS:
        raise ValueError(f"{name!r} is not a set of sealed.SETS")
    from widemem_bench.provenance import git_info

    line = {"time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "commit": (git_info().get("sha") or "unknown")[:12], "caller": caller or _caller(),
            "purpose": purpose, "set": name}
    if _HELD:
        held = _HELD[-1]
        same = next((x for x in held if (x["set"], x["purpose"]) == (name, purpose)), None)
        if same is not None:
            return same
        held.append(line)
        return line
    _append([line])
    return line


# The committed outside cases: sets 1-2 are development (DESIGN_LOG R22, V7), the rest measuring.
OUTSIDE_DIR = REPO_ROOT / "datasets" / "outside"
OUTSIDE_DEVELOPMENT = frozenset({1, 2})
_OUTSIDE_FILE = re.compile(r"_set(\d+)\.jsonl$")


HAND_DIR = REPO_ROOT / "datasets" / "handwritten"  # the project's development writers (w1 on)
_HAND_FILE = re.compile(r"_(w\d+)\.jsonl$")


def committed_sources(paths: Iterable[str | Path]) -> list[tuple[str, ...]]:
    """Per path, the committed case files whose cases it holds, by label: "set N" for
    ``datasets/outside/*_setN.jsonl``, "wN" for the hand-written development files
    ``datasets/handwritten/*_wN.jsonl``; empty for a file of the user's own. A committed file
    is itself by where it is (a symlink is its target); any other file holds a committed file's
    cases when it shares a line with it (one user or one scenario a line: a renamed copy, another
    clone's file, an edited or merged copy, a few of its cases)."""
    out: list[tuple[str, ...]] = []
    lines: list[tuple[str, frozenset[str]]] | None = None
    for p in (Path(x).resolve() for x in paths):  # a symlink, whatever its name, is its target
        m = _OUTSIDE_FILE.search(p.name)
        if m and p.parent == OUTSIDE_DIR.resolve():
            out.append((f"set {int(m.group(1))}",))
            continue
        if not p.is_file():
            out.append(())
            continue
        lines = _committed_lines() if lines is None else lines
        mine = _line_digests(p)
        out.append(tuple(dict.fromkeys(label for label, theirs in lines if mine & theirs)))
    return out


def outside_sets(labels: Iterable[str]) -> set[int]:
    """The outside set numbers among `committed_sources` labels."""
    return {int(x.split()[1]) for x in labels if x.startswith("set ")}


def record_outside(paths: Iterable[str | Path], tool: str, purpose: str | None = None) -> dict[str, Any] | None:
    """Log a tool's read of the committed outside measuring sets (3 on) among ``paths`` as one
    ledger line naming them; None when it read none (sets 1-2, a file of the user's own), as
    `committed_sources` tells them apart: a file holding even one measuring case is a read."""
    sets = outside_sets(x for labels in committed_sources(paths) for x in labels) - OUTSIDE_DEVELOPMENT
    if not sets:
        return None
    return record_read("outside cases", current_purpose(purpose), caller=f"{tool} (sets {', '.join(map(str, sorted(sets)))})")


def _committed_lines() -> list[tuple[str, frozenset[str]]]:
    """(label, line digests) of each committed outside set file and hand-written development
    file (under a megabyte in all)."""
    out: list[tuple[str, frozenset[str]]] = []
    for folder, pattern, label in ((OUTSIDE_DIR, _OUTSIDE_FILE, "set {}"), (HAND_DIR, _HAND_FILE, "{}")):
        d = folder.resolve()
        for f in sorted(d.glob("*.jsonl")) if d.is_dir() else []:
            m = pattern.search(f.name)
            if m:
                key = str(int(m.group(1))) if label.startswith("set") else m.group(1)
                out.append((label.format(key), _line_digests(f)))
    return out


def _line_digests(p: Path) -> frozenset[str]:
    """sha256 of each non-blank line, whitespace at its ends ignored (a user or scenario per line)."""
    try:
        text = p.read_bytes()
    except OSError:
        return frozenset()
    return frozenset(hashlib.sha256(ln.strip()).hexdigest() for ln in text.splitlines() if ln.strip())


def _append(lines: list[dict[str, Any]]) -> None:
    if not lines:
        return
    p = ledger_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(x) + "\n" for x in lines))


@contextlib.contextmanager
def held_reads() -> Iterator[list[dict[str, Any]]]:
    """Hold the ledger lines of the reads in the block; write them when it ends without an
    exception (a block inside another hands them to it). The caller may empty the yielded
    list to drop them (a tool that failed without raising)."""
    held: list[dict[str, Any]] = []
    _HELD.append(held)
    try:
        yield held
    except BaseException:
        held.clear()
        raise
    finally:
        _HELD.remove(held)
    if not _HELD:
        _append(held)
        return
    outer = _HELD[-1]
    seen = {(x["set"], x["purpose"]) for x in outer}
    outer.extend(x for x in held if (x["set"], x["purpose"]) not in seen)


def sets_held(tl: Any) -> list[str]:
    """The measuring sets a loaded world holds: its holdout, when its world has a sealed one
    (`HOLDOUTS`) and any holdout row is in it."""
    name = HOLDOUTS.get(str(getattr(tl, "world", "")))
    if name is None:
        return []
    frames = (getattr(tl, "events", None), getattr(tl, "questions", None))
    rows = any(df is not None and "split" in df.columns and bool((df["split"] == "holdout").any()) for df in frames)
    return [name] if rows else []


def record_world(tl: Any, caller: str, purpose: str | None = None) -> list[dict[str, Any]]:
    """Record the read of every measuring set a whole loaded world holds (`sets_held`)."""
    out = [record_read(name, current_purpose(purpose), caller) for name in sets_held(tl)]
    return [x for x in out if x is not None]


def open_split(name: str, purpose: str | None = None, **kwargs: Any) -> Any:
    """Load measuring split ``name`` for ``purpose`` (see the module docstring)."""
    if name not in _SPLITS:
        known = ", ".join(_SPLITS)
        raise ValueError(f"{name!r} is not a measuring split (known: {known})")
    data = _SPLITS[name].load(**kwargs)   # first: a missing or refused file reads nothing, logs nothing
    record_read(name, current_purpose(purpose))
    return data


def read_ledger(path: str | Path | None = None) -> list[dict[str, Any]]:
    p = Path(path) if path is not None else ledger_path()
    if not p.is_file():
        return []
    out = []
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            raise ValueError(f"{p}:{i}: not a JSON line") from None
    return out


def reads_outside_measurement(lines: Iterable[dict[str, Any]], since: dict[str, str | None]) -> dict[str, int]:
    """Per measuring set: ledger reads at or after ``since[set]`` (ISO time; None = all)."""
    out = dict.fromkeys(measuring_splits(), 0)
    for ln in lines:
        s = str(ln.get("set"))
        if s not in out:
            continue
        t0 = since.get(s)
        if t0 is None or _time(str(ln.get("time"))) >= _time(t0):
            out[s] += 1
    return out


def _time(iso: str) -> dt.datetime:
    t = dt.datetime.fromisoformat(iso)
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


# ---------------------------------------------------------------------------- the splits


def _world_split(world: Any = None, dataset: str = "timelines", split: str = "holdout") -> Any:
    """The ``split`` users of a world (every table row of theirs), as a Timelines."""
    from widemem_bench.timelines.dataset import Timelines

    if world is None:
        from widemem_bench.timelines.loading import load_world

        world = load_world(dataset)[0]
    ev, q = world.events, world.questions
    return Timelines(ev[ev["split"] == split].reset_index(drop=True),
                     q[q["split"] == split].reset_index(drop=True), dict(world.meta))


def _world_n(world: Any = None) -> Any:
    return _world_split(world, dataset="world_n")


# World N with users never generated before (structure resolver v2's measuring read, issue 26:
# world A's and world N's holdouts were read, failures included, for version 1): the world N
# generator with a seed no other set, fit or gate uses (datasets use 0, the gate users 23).
FRESH_N: dict[str, Any] = {"world": "n", "seed": 2612, "n_users": 40, "span_days": 365,
                           "questions_per_user": 40, "start": "2025-01-06"}
FRESH_SPLIT = "fresh"


# Structure resolver v3's measuring read (issue 26: world N fresh and the outside sets were
# read by version 2): world N's generator again, with a seed never used before.
FRESH_N2: dict[str, Any] = {**FRESH_N, "seed": 2613}
FRESH_SPLIT2 = "fresh2"  # (no space: a Hydra override escapes it, and the run folder is named from it)


# Structure resolver v3.1's measuring read (issue 26: world N fresh and fresh 2 were read by
# versions 2 and 3, and their failures drove 3.1): world N's generator, a seed never used before.
FRESH_N3: dict[str, Any] = {**FRESH_N, "seed": 2614}
FRESH_SPLIT3 = "fresh3"


# Structure resolver v3.2's measuring read (issue 26: fresh, fresh 2 and fresh 3 were read by
# versions 2, 3 and 3.1): world N's generator, a seed never used before.
FRESH_N4: dict[str, Any] = {**FRESH_N, "seed": 2615}
FRESH_SPLIT4 = "fresh4"


# The pair resolver's measuring read (issue 26: fresh to fresh 4 were read by structure versions
# 2 to 3.2): world N's generator, a seed never used before.
FRESH_N5: dict[str, Any] = {**FRESH_N, "seed": 2616}
FRESH_SPLIT5 = "fresh5"


# The pair resolver version 2's measuring read (issue 26: fresh to fresh 5 were read by structure
# versions 2 to 3.2 and pair version 1): world N's generator, a seed never used before.
FRESH_N6: dict[str, Any] = {**FRESH_N, "seed": 2617}
FRESH_SPLIT6 = "fresh6"


# The pair resolver version 3's measuring read (issue 26: fresh to fresh 6 were read by structure
# versions 2 to 3.2 and pair versions 1 and 2): world N's generator, a seed never used before.
FRESH_N7: dict[str, Any] = {**FRESH_N, "seed": 2618}
FRESH_SPLIT7 = "fresh7"


# The pair resolver version 3.1's measuring read (issue 26: fresh to fresh 7 were read by structure
# versions 2 to 3.2 and pair versions 1 to 3): world N's generator, a seed never used before.
FRESH_N8: dict[str, Any] = {**FRESH_N, "seed": 2619}
FRESH_SPLIT8 = "fresh8"


# The pair resolver version 3.2's measuring read (issue 26: fresh to fresh 8 were read by structure
# versions 2 to 3.2 and pair versions 1 to 3.1): world N's generator, a seed never used before.
FRESH_N9: dict[str, Any] = {**FRESH_N, "seed": 2620}
FRESH_SPLIT9 = "fresh9"


def _world_n_fresh(g: dict[str, Any] | None = None, split: str = FRESH_SPLIT, prefix: str = "f") -> Any:
    """World N's fresh users (`FRESH_N`), generated in memory, never saved; split "fresh"."""
    from widemem_bench.timelines.dataset import Timelines, generate

    g = g or FRESH_N
    tl = generate(int(g["n_users"]), int(g["seed"]), span_days=int(g["span_days"]),
                  questions_per_user=int(g["questions_per_user"]), start=str(g["start"]), world=str(g["world"]))
    out = []
    for df in (tl.events, tl.questions):
        df = df.copy()
        df["user_id"] = prefix + df["user_id"].astype(str)
        df["split"] = split
        out.append(df.reset_index(drop=True))
    return Timelines(out[0], out[1], {**tl.meta, "split": split, "fresh": dict(g)})


def _world_n_fresh2() -> Any:
    """World N's second fresh users (`FRESH_N2`), in memory, never saved; split "fresh2"."""
    return _world_n_fresh(FRESH_N2, FRESH_SPLIT2, "g")


def _world_n_fresh3() -> Any:
    """World N's third fresh users (`FRESH_N3`), in memory, never saved; split "fresh3"."""
    return _world_n_fresh(FRESH_N3, FRESH_SPLIT3, "h")


def _world_n_fresh4() -> Any:
    """World N's fourth fresh users (`FRESH_N4`), in memory, never saved; split "fresh4"."""
    return _world_n_fresh(FRESH_N4, FRESH_SPLIT4, "i")


def _world_n_fresh5() -> Any:
    """World N's fifth fresh users (`FRESH_N5`), in memory, never saved; split "fresh5"."""
    return _world_n_fresh(FRESH_N5, FRESH_SPLIT5, "j")


def _world_n_fresh6() -> Any:
    """World N's sixth fresh users (`FRESH_N6`), in memory, never saved; split "fresh6"."""
    return _world_n_fresh(FRESH_N6, FRESH_SPLIT6, "k")


def _world_n_fresh7() -> Any:
    """World N's seventh fresh users (`FRESH_N7`), in memory, never saved; split "fresh7"."""
    return _world_n_fresh(FRESH_N7, FRESH_SPLIT7, "l")


def _world_n_fresh8() -> Any:
    """World N's eighth fresh users (`FRESH_N8`), in memory, never saved; split "fresh8"."""
    return _world_n_fresh(FRESH_N8, FRESH_SPLIT8, "m")


def _world_n_fresh9() -> Any:
    """World N's ninth fresh users (`FRESH_N9`), in memory, never saved; split "fresh9"."""
    return _world_n_fresh(FRESH_N9, FRESH_SPLIT9, "n")


def _locomo(path: Any = None, verify: bool = True) -> Any:
    from widemem_bench.external.locomo import load_locomo

    return load_locomo(path, verify=verify)


def _fixture(path: Any = None, verify: bool = True) -> Any:
    from widemem_bench.external.widemem_fixture import load_widemem_fixture_raw

    return load_widemem_fixture_raw(path, verify=verify)


register("world A holdout", _world_split, "world A's holdout users (world=<Timelines> or dataset=<config>)")
register("world N holdout", _world_n, "world N's holdout users (world=<Timelines>, else dataset world_n)")
register("LoCoMo", _locomo, "the LoCoMo conversations (path=)")
register("widemem fixture", _fixture, "widemem's own fixture, raw (path=)")
register("world N fresh", _world_n_fresh, "world N's generator, fresh users (sealed.FRESH_N), in memory")
register("world N fresh 2", _world_n_fresh2, "world N's generator, fresh users (sealed.FRESH_N2), in memory")
register("world N fresh 3", _world_n_fresh3, "world N's generator, fresh users (sealed.FRESH_N3), in memory")
register("world N fresh 4", _world_n_fresh4, "world N's generator, fresh users (sealed.FRESH_N4), in memory")
register("world N fresh 5", _world_n_fresh5, "world N's generator, fresh users (sealed.FRESH_N5), in memory")
register("world N fresh 6", _world_n_fresh6, "world N's generator, fresh users (sealed.FRESH_N6), in memory")
register("world N fresh 7", _world_n_fresh7, "world N's generator, fresh users (sealed.FRESH_N7), in memory")
register("world N fresh 8", _world_n_fresh8, "world N's generator, fresh users (sealed.FRESH_N8), in memory")
register("world N fresh 9", _world_n_fresh9, "world N's generator, fresh users (sealed.FRESH_N9), in memory")
