"""Outside update scenarios: hand-written, blind to this project (``/work/outside/``).

One JSON object per line: ``{"id", "kind": "update"|"keep", "person", "oblique",
"facts": [{"id", "text", "day"}], "old": [fact ids], "new": fact id, "query",
"answer_fact"}``. Each scenario is replayed alone through a fresh engine, facts in day
order (``add_fact`` at 2025-01-01 + day). Read at the end:

- an update scenario is **right** when the new fact is stored and no fact in ``old`` is;
- a **true fact lost** is a fact that is not in ``old``, not the new one, and no longer
  stored (in a keep scenario: any earlier fact); it must be 0.

    widemem-bench outside_updates files=[datasets/outside/updates_set1.jsonl] \\
        resolvers=[rule,structure] [embedder=minilm-l6] [out=outputs/outside.md]
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.evaluation.replay import MemoEmbedder, clean
from widemem_bench.timelines.handwritten import Scenario, load

START = dt.datetime(2025, 1, 1, 9, 0)


def run_scenario(sc: Scenario, embedder: Any, resolver: str, candidate_k: int = 5) -> dict[str, Any]:
    engine = MemoryEngine(embedder, EngineConfig(resolver=resolver, candidate_k=candidate_k))
    try:
        for _, text, day in sc.facts:
            engine.add_fact(clean(text), "u", at=START + dt.timedelta(days=day))
        stored = {clean(m.content) for m in engine.memories("u")}
    finally:
        engine.close()
    text_of = {fid: clean(t) for fid, t, _ in sc.facts}
    new_kept = text_of[sc.new] in stored
    old_gone = all(text_of[o] not in stored for o in sc.old)
    lost = [f for f in text_of if f != sc.new and f not in sc.old and text_of[f] not in stored]
    return {"id": sc.id, "kind": sc.kind, "person": sc.person, "oblique": sc.oblique, "resolver": resolver,
            "right": bool(sc.kind == "update" and new_kept and old_gone), "new_kept": new_kept,
            "old_gone": old_gone, "true_lost": len(lost)}


def evaluate(paths: Sequence[str | Path], resolvers: Sequence[str], embedder: Any,
             candidate_k: int = 5) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        scenarios = load(path)
        emb = MemoEmbedder(embedder, [clean(t) for s in scenarios for _, t, _ in s.facts], kinds=("passage",))
        for resolver in resolvers:
            for sc in scenarios:
                rows.append({"set": Path(path).stem, **run_scenario(sc, emb, resolver, candidate_k)})
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        s = out.setdefault((r["set"], r["resolver"]), {
            "set": r["set"], "resolver": r["resolver"], "updates right": 0, "updates": 0,
            "right, oblique": 0, "oblique": 0, "true facts lost, keep": 0, "keep": 0,
            "true facts lost, update": 0})
        if r["kind"] == "update":
            s["updates"] += 1
            s["updates right"] += int(r["right"])
            s["oblique"] += int(r["oblique"])
            s["right, oblique"] += int(r["right"] and r["oblique"])
            s["true facts lost, update"] += r["true_lost"]
        else:
            s["keep"] += 1
            s["true facts lost, keep"] += r["true_lost"]
    return list(out.values())


Sources = Mapping[str, tuple[str, ...]]  # file stem -> `sealed.committed_sources` labels ("set 4", "w1")


def by_name(stems: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each ``<kind>_set<N>`` stem as committed outside set N, any other as the user's own: what a
    report assumes when no tool read the files (the project's own folder)."""
    import re

    return {s: ((f"set {int(m.group(1))}",) if (m := re.fullmatch(r"[a-z]+_set(\d+)", s)) else ()) for s in stems}


def is_own_folder(sources: Sources) -> bool:
    """Whether every file is the committed outside set its name says (the project's own folder)."""
    return all(labels and labels == by_name([stem])[stem] for stem, labels in sources.items())


def measuring_stems(sources: Sources) -> set[str]:
    """Files that hold committed measuring cases only (outside sets 3 on): what a summary sums."""
    from widemem_bench.sealed import OUTSIDE_DEVELOPMENT, outside_sets

    return {stem for stem, labels in sources.items()
            if labels and len(outside_sets(labels)) == len(labels) and not outside_sets(labels) & OUTSIDE_DEVELOPMENT}


def sources_caption(sources: Sources) -> str:
    """What the project knows of each file that is not simply its own committed set: a file of the
    user's own, or one holding cases of committed sets (a copy, a merge, a few cases)."""
    from widemem_bench.sealed import OUTSIDE_DEVELOPMENT, outside_sets

    own = [stem for stem, labels in sources.items() if not labels]
    said = []
    for stem, labels in sources.items():
        if labels and labels != by_name([stem])[stem]:
            kinds = [f"outside set {n} ({'development' if n in OUTSIDE_DEVELOPMENT else 'measuring: this read is logged'})"
                     if (n := next(iter(outside_sets([x])), None)) is not None else f"hand-written development file {x}"
                     for x in labels]
            said.append(f"{stem} holds cases of the project's {', '.join(kinds)}")
    dev = any(not outside_sets([x]) or outside_sets([x]) & OUTSIDE_DEVELOPMENT
              for labels in sources.values() for x in labels)
    parts = []
    if own:
        parts.append(f"{', '.join(own)}: {'files' if len(own) > 1 else 'a file'} of your own, not the project's committed cases, so no entry of "
                     "reports/DESIGN_LOG.md covers them; a set read to choose a method or a cut-off is development "
                     "from then on.")
    if said:
        parts.append("; ".join(said) + ".")
    if dev:
        parts.append("Rows over the project's development cases are in-sample for the methods fitted or chosen on "
                     "them (answerability v4's cross-encoder trains on w1-w10 and outside sets 1-2, the pair "
                     "resolver's on w1-w7's updates and sets 1-2; datasets/handwritten/README.md).")
    return " ".join(parts)


def render(rows: Sequence[dict[str, Any]], command: str, sources: Sources | None = None) -> str:
    """The report. ``sources``: what each file holds (`sealed.committed_sources`, by stem); left out,
    a file named ``updates_set<N>`` is committed set N (`by_name`)."""
    summ = summary(rows)
    known = dict(sources) if sources is not None else by_name([str(s["set"]) for s in summ])
    cols = list(summ[0]) if summ else []
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(s[c]) for c in cols) + " |" for s in summ]
    caption = [] if is_own_folder(known) else [sources_caption(known), ""]
    return "\n".join(["## Outside update scenarios", "", *caption, *lines, *_over_measuring(summ, known), "",
                      f"Command: `{command}`."])


def _over_measuring(summ: Sequence[dict[str, Any]], sources: Sources) -> list[str]:
    """Each resolver summed over the files holding committed measuring cases only (updates_set3 on)."""
    keep = measuring_stems(sources)
    meas = [s for s in summ if s["set"] in keep]
    if not meas:
        return []
    head = ("Over the measuring sets among them (updates_set3 on), summed:" if is_own_folder(sources) else
            "Over the files that hold the project's measuring cases alone, summed:")
    out = ["", head, "",
           "| resolver | sets | updates right | right, oblique | true facts lost | sets with none lost |",
           "|---|---|---|---|---|---|"]
    for res in dict.fromkeys(s["resolver"] for s in meas):
        g = [s for s in meas if s["resolver"] == res]
        lost = [s["true facts lost, keep"] + s["true facts lost, update"] for s in g]
        out.append(f"| {res} | {len(g)} | {sum(s['updates right'] for s in g)}/{sum(s['updates'] for s in g)} | "
                   f"{sum(s['right, oblique'] for s in g)}/{sum(s['oblique'] for s in g)} | {sum(lost)} | "
                   f"{sum(x == 0 for x in lost)}/{len(g)} |")
    return out


def tool(cfg: dict[str, Any]) -> int:
    """Replay every scenario of `files` under each resolver; print the summary, write `out`."""
    from widemem_bench.provenance import tool_command

    files = [str(f) for f in cfg["files"]]
    if not files:
        raise ValueError("files: required, e.g. files=[datasets/outside/updates_set1.jsonl]")
    for f in files:
        load(f)  # every file checked before anything runs
    if cfg.get("out"):  # out and its .jsonl sibling never overwrite an input set
        out = Path(str(cfg["out"]))
        inputs = {Path(f).resolve() for f in files}
        for target in (out, out.with_suffix(".jsonl")):
            if target.resolve() in inputs:
                raise ValueError(f"out: {out} would overwrite the input file {target}; choose another out")
    resolvers = [str(r) for r in cfg["resolvers"]]
    for r in resolvers:
        EngineConfig(resolver=r)  # a bad name: one line before any model loads
    if "pair" in resolvers:  # an unbuilt cross-encoder: one line before any text is embedded
        from widemem_bench.engine.pair_cross import load_pair_scorer

        load_pair_scorer()
    from widemem_bench.embedders import load_embedder

    rows = evaluate(files, resolvers, load_embedder(str(cfg["embedder"])), int(cfg["candidate_k"]))
    from widemem_bench.sealed import record_outside

    record_outside(files, "widemem-bench outside_updates")  # a ledger line once the tool ends well
    cmd = tool_command("outside_updates", cfg)
    from widemem_bench.sealed import committed_sources

    text = render(rows, cmd, dict(zip((Path(f).stem for f in files), committed_sources(files), strict=True)))
    if cfg.get("out"):  # written before it is shown: a failed write shows nothing and logs no read
        out = Path(str(cfg["out"]))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", "utf-8")
        (out.with_suffix(".jsonl")).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    print(text)
    return 0

