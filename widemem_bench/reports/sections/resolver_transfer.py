"""Report section of `resolver_transfer`: false updates and contradiction survival per
resolver and set, rendered from the run's summary table (the experiment only computes)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.reports.sections import report_section


def _pct(v: float, lo: float, hi: float) -> str:
    if not math.isfinite(v):
        return "n/a"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{v:.1%}"
    return f"{v:.1%} [{lo:.1%}, {hi:.1%}]"


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


# Data set config and split -> the set's DESIGN_LOG name; resolver -> the method a decision changes.
_WORLD = {"timelines": "world A", "timelines_small": "world A", "world_b": "world B", "world_c": "world C",
          "world_n": "world N"}
_FRESH = re.compile(r"fresh(\d+)")
_METHOD = {"rule": "rule resolver", "structure": "structure resolver", "pair": "pair resolver"}


def log_set(set_name: str, split: str) -> str:
    """The DESIGN_LOG name of a (data set, split) row: "world A holdout", "world B", ..."""
    # world N's fresh splits (sealed.FRESH_N, FRESH_N2, ...): set "world_n_fresh<k>", split "fresh<k>"
    world = "world N" if set_name.startswith("world_n_fresh") else _WORLD.get(set_name, set_name)
    if world in ("world B", "world C"):
        return world
    m = _FRESH.fullmatch(split)
    split = f"fresh {m.group(1)}" if m else split  # split "fresh2" -> its set "world N fresh 2"
    return f"{world} {split}" if split != "all" else f"{world} holdout"


def role(set_name: str, split: str) -> str:
    """"measuring" for held-out users (world A's holdout, world N's); every other row is
    development for the resolvers: world A train / validation, world C, and world B (the rule
    resolver's decisions read it, DESIGN_LOG R2-R10)."""
    ls = log_set(set_name, split)
    return "measuring" if ls in ("world A holdout", "world N holdout") or is_fresh(ls) else "development"


def is_fresh(log_name: str) -> bool:
    """A world N fresh split: users generated in memory for one read per method version."""
    return log_name.startswith("world N fresh")


def _order(key: tuple[Any, ...]) -> tuple[int, str]:
    """Held-out rows first (world A's holdout, world N's), then world B, then development."""
    ls = log_set(str(key[0]), str(key[1]))
    rank = 0 if is_fresh(ls) else {"world A holdout": 0, "world N holdout": 1, "world B": 2}.get(ls, 3)
    return rank, ""


def render_ceiling(ceil: pd.DataFrame, seen: Any = None) -> str:
    """Item 3 of issue 26: superseded facts outside the k nearest candidates, and the
    survival / false updates / time per fact of the ceiling resolvers at each k."""
    if ceil is None or ceil.empty:
        return ""
    from widemem_bench.design_log import mark

    def mk(set_name: str, split: str, resolver: str = "structure") -> str:
        method = _METHOD.get(resolver)
        return mark(method, log_set(set_name, split), seen) if method else ""

    miss = ceil[ceil["metric"] == "candidate_miss"]
    rows = []
    for (set_name, split), g in miss.groupby(["set", "split"], sort=False):
        row: dict[str, Any] = {"set": f"{set_name}{mk(str(set_name), str(split))}", "split": split}
        for r in g[g["kind"] == "all"].to_dict("records"):
            v = float(r["value"])
            row[f"k={int(r['candidate_k'])}"] = f"{v:.1%} ({int(r['count'])}/{int(r['n'])})" if math.isfinite(v) else "n/a"
        rows.append(row)
    out = ["### Candidate ceiling", "",
           "Share of superseded facts that are not among the k nearest earlier facts of the user "
           "(cosine to the superseding statement, every earlier wording stored): no resolver that "
           "reads only the engine's candidates can retire them.", "", _md_table(pd.DataFrame(rows))]
    rec = ceil[ceil["metric"] != "candidate_miss"]
    if not rec.empty:
        rows = []
        for (set_name, split, resolver, k), g in rec.groupby(["set", "split", "resolver", "candidate_k"], sort=False):
            def val(metric: str, kind: str = "all", g: pd.DataFrame = g) -> Any:
                r = g[(g["metric"] == metric) & (g["kind"] == kind)]
                return r.iloc[0] if not r.empty else None
            sd, so, fu, ms = val("survival", "direct"), val("survival", "oblique"), val("false_update_rate"), val("ms_per_fact")
            rows.append({
                "set": f"{set_name}{mk(str(set_name), str(split), str(resolver))}", "split": split, "resolver": resolver, "candidate_k": int(str(k)),
                "survival, direct": f"{sd['value']:.1%} ({sd['count']}/{sd['n']})" if sd is not None else "n/a",
                "survival, oblique": f"{so['value']:.1%} ({so['count']}/{so['n']})" if so is not None else "n/a",
                "false updates": int(fu["count"]) if fu is not None else "n/a",
                "replay ms / fact": f"{ms['value']:.2f} ms" if ms is not None else "n/a",  # the unit lets check mask it
            })
        out += ["", "Recall and cost against the candidate count (replay ms per fact is wall time on a shared "
                "machine: compare within a run only).", "", _md_table(pd.DataFrame(rows))]
    return "\n".join(out)


def _causes(g: pd.DataFrame) -> str:
    """"coexisting/other person/other attribute" false-update counts of one (set, split, resolver)
    group ("n/a" for a run recorded before the experiment counted them)."""
    why = g[g["metric"] == "false_update_cause"].set_index("kind")["count"]
    if not len(why):
        return "n/a"
    unread = int(why.get("unknown", 0))
    return "/".join(str(int(why[k])) for k in ("coexisting", "other_person", "other_attribute")) \
        + (f" (+{unread} unclassified)" if unread else "")


def render(table: pd.DataFrame, emb_name: str, candidate_k: int, seen: Any = None,
           metas: dict[str, Any] | None = None, ceiling: pd.DataFrame | None = None) -> str:
    """The markdown fragment of one run's summary (pure function of it and of the DESIGN_LOG
    marks ``seen``: `design_log.marks()` when None)."""
    from widemem_bench.design_log import mark, mark_note, marks

    seen = marks() if seen is None else seen
    rows = []
    notes: dict[str, str] = {}
    if not table.empty:
        groups = sorted(table.groupby(["set", "split", "resolver"], sort=False), key=lambda kv: _order(kv[0]))
        for (set_name, split, resolver), g in groups:
            def cell(metric: str, kind: str = "all", g: pd.DataFrame = g) -> tuple[str, int, int]:
                r = g[(g["metric"] == metric) & (g["kind"] == kind)]
                if r.empty:
                    return "n/a", 0, 0
                x = r.iloc[0]
                return _pct(float(x["value"]), float(x["ci_lo"]), float(x["ci_hi"])), int(x["count"]), int(x["n"])

            fu, fu_c, n_f = cell("false_update_rate")
            sd, sd_c, sd_n = cell("survival", "direct")
            so, so_c, so_n = cell("survival", "oblique")
            method, ls = _METHOD.get(str(resolver)), log_set(str(set_name), str(split))
            m = mark(method, ls, seen) if method else ""
            if m and method:
                notes[ls] = mark_note(method, ls, seen)
            rows.append({
                "set": f"{set_name}{m}", "split": split, "role": role(str(set_name), str(split)),
                "resolver": resolver,
                "users": int(g["users"].iloc[0]), "facts": n_f,
                "false updates / fact": f"{fu} ({fu_c})",
                "survival, direct": f"{sd} ({sd_c}/{sd_n})",
                "survival, oblique": f"{so} ({so_c}/{so_n})",
                "false updates: coexisting value / other person / other attribute": _causes(g),
            })
    # A set with no built version (world N fresh) is generated in memory for the read, never saved.
    versions = ", ".join(f"{k}: {v.get('version') if isinstance(v.get('version'), str) else 'generated in memory'}"
                         for k, v in (metas or {}).items())
    return "\n".join([
        "## Resolver transfer (`resolver_transfer`)",
        "",
        f"Every user replayed through the engine ({emb_name}, {candidate_k} candidates per new fact), "
        "facts in time order. False updates = UPDATE/DELETE of a memory whose fact was still true then "
        "(a coexisting value, another attribute, another person), per ingested fact, with their count, "
        "and how many of them retired a coexisting value of the same person's attribute (issue 26 asks "
        "for none), a fact of another person, or another attribute of the same person. "
        "Survival = a superseded fact's wording is still stored right after the statement that superseded "
        "it (direct: both plain; oblique: either one oblique), with stored/superseded counts. 95% "
        "cluster-bootstrap intervals (users resampled). † on a rule, structure or pair row = a decision of that resolver saw this "
        "set's numbers, read from the entry headers of reports/DESIGN_LOG.md"
        + (" (" + "; ".join(f"{k}: {v}" for k, v in notes.items()) + ")" if notes else "") + ". "
        "Held-out rows come first. Role: world A's holdout (and world N's, when built) is for measuring; "
        "world A train/validation, world C (written blind to world B, datasets/world_c/README.md) and, for "
        "the resolvers, world B (read by the rule resolver's decisions) are development.",
        "",
        f"Data: {versions}." if versions else "",
        "",
        _md_table(pd.DataFrame(rows)) if rows else "(no rows)",
        "",
        "Command: `widemem-bench resolver_transfer`.",
        "",
        "Reading it: `append` never resolves (every stale fact survives, nothing true is lost); `oracle` "
        "knows each fact's gold (subject, attribute) but not whether the attribute holds several values, "
        "so where values coexist (world B's pets, children, languages, hobbies, allergies) it overwrites "
        "true facts. `rule` (engine/resolvers.py, engine/slots.py) updates only on the same subject (a "
        "name counts as the user once the store states it is the user's) and the same single-valued "
        "attribute (its patterns, or a possessor's \"<noun> is <value>\"), on an explicit change marker "
        "naming the old value, or on the same frame with one value replaced and a change marker "
        "(\"now\", \"switched to\"), and adds the fact otherwise: a phrasing it does not read leaves the "
        "stale fact stored (survival), never a true fact lost on purpose. It never DELETEs. World C's "
        "false updates are places it cannot tell a part of a town from a town (\"lives in Saltmarsh\"). "
        "`structure` (engine/structure.py) reads (owner, frame, value) from the spaCy parse and updates "
        "only on the same owner, one frame class of the frame table fitted on development data, a frame "
        "holding one value at a time and another value. `pair` keeps `structure`'s gate and scores what it "
        "leaves with a cross-encoder over (old fact, new fact) fine-tuned on development pairs, hand-written "
        "ones among them (engine/pair_cross.py, `make resolver-cross`).",
        "",
        render_ceiling(ceiling, seen) if ceiling is not None else "",
    ])


@report_section("resolver_transfer", order=61)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    """The latest run's fragment, rendered from its tables; also refreshed as
    reports/resolver_transfer.md. A run recorded before the experiment stopped rendering
    (no sets.parquet) holds the fragment it rendered then: that one is used."""
    if not records:
        return ""
    run = Path(str(records[-1].get("run_dir", "")))
    if (run / "sets.parquet").is_file():
        sets = pd.read_parquet(run / "sets.parquet")
        ceiling = pd.read_parquet(run / "ceiling.parquet") if (run / "ceiling.parquet").is_file() else pd.DataFrame()
        emb = str(sets["embedder"].iloc[0]) if len(sets) else str(records[-1].get("config", {}).get("embedder", {}).get("name"))
        k = int(sets["candidate_k"].iloc[0]) if len(sets) else 5
        metas = {str(r["set"]): {"version": r["version"]} for _, r in sets.iterrows()}
        text = render(pd.read_parquet(run / "summary.parquet"), emb, k, None, metas, ceiling) + "\n"
    elif (run / "resolver_transfer.md").is_file():
        text = (run / "resolver_transfer.md").read_text()
    else:
        return ""
    figures_dir.parent.mkdir(parents=True, exist_ok=True)
    (figures_dir.parent / "resolver_transfer.md").write_text(text)
    return text
