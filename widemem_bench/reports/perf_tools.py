"""The perf tools' writing half: `widemem-bench perf` and `widemem-bench perf_v3` time in
`experiments.perf` / `perf.answerability` and write reports/perf.md here, because only
reports/ renders (docs/ARCHITECTURE.md, floors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from widemem_bench.experiments.perf import run_perf, summarise
from widemem_bench.perf.answerability import stage
from widemem_bench.provenance import tool_command
from widemem_bench.reports.sections.perf import render_report
from widemem_bench.reports.sections.perf_answerability import keep_block, render, write_into


def write_perf(results: dict[str, Any], out: Path) -> None:
    """reports/perf.md from a perf results dict, keeping the answerability block perf_v3 wrote."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(keep_block(out, render_report(results)))


def perf_tool(cfg: dict[str, Any]) -> int:
    """Run the perf benchmark (params.* over the experiment's defaults) and write `out`;
    with `from_json`, only re-render `out` from a saved perf.json."""
    out = Path(str(cfg["out"]))
    if cfg.get("from_json"):
        res = json.loads(Path(str(cfg["from_json"])).read_text())
        res["summary"] = summarise(res)
    else:
        res = run_perf({"params": dict(cfg.get("params") or {})}, Path(str(cfg["run_dir"])))
        print(json.dumps(res["summary"], indent=2))
    write_perf(res, out)
    print(f"wrote {out}")
    return 0


def perf_v3_tool(cfg: dict[str, Any]) -> int:
    """Time v3 against widemem per search and add; print the block and write it into `out`."""
    users, repeats, out = int(cfg["users"]), int(cfg["repeats"]), Path(str(cfg["out"]))
    if users < 1 or repeats < 1:
        raise ValueError(f"users, repeats: must be positive, got {users}, {repeats}")
    res = stage(users, repeats)
    md = render(res, tool_command("perf_v3", cfg, prefix="OMP_NUM_THREADS=1", every=True))
    print(md)
    write_into(out, md)
    return 0
