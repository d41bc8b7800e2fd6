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


def render(rows: Sequence[dict[str, Any]], command: str, committed: Mapping[str, int | None] | None = None) -> str:
    """The report. ``committed``: which committed outside set each file is (`sealed.committed_outside`;
    None for a file of the user's own); left out, a file named ``updates_set<N>`` is set N."""
    summ = summary(rows)
    cols = list(summ[0]) if summ else []
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(s[c]) for c in cols) + " |" for s in summ]
    return "\n".join(["## Outside update scenarios", "", *lines, *_over_measuring(summ, committed), "",
                      f"Command: `{command}`."])


def _over_measuring(summ: Sequence[dict[str, Any]], committed: Mapping[str, int | None] | None = None) -> list[str]:
    """Each resolver summed over the committed measuring sets among the files (updates_set3 on)."""
    import re

    from widemem_bench.sealed import OUTSIDE_DEVELOPMENT

    def number(name: str) -> int | None:
        if committed is not None:
            return committed.get(name)
        m = re.fullmatch(r"updates_set(\d+)", name)
        return int(m.group(1)) if m else None

    meas = [s for s in summ if (n := number(s["set"])) is not None and n not in OUTSIDE_DEVELOPMENT]
    if not meas:
        return []
    out = ["", "Over the measuring sets among them (updates_set3 on), summed:", "",
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
    from widemem_bench.sealed import committed_outside

    text = render(rows, cmd, {Path(f).stem: n for f, n in zip(files, committed_outside(files), strict=True)})
    if cfg.get("out"):  # written before it is shown: a failed write shows nothing and logs no read
        out = Path(str(cfg["out"]))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", "utf-8")
        (out.with_suffix(".jsonl")).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    print(text)
    return 0

