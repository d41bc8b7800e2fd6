"""The answerability-v3 block of reports/perf.md (`perf.answerability`), kept across `make perf` rewrites.

`render` is a pure function of the stage's results; `write_into` replaces the block
between its markers in a report (appending it when absent); `keep_block` carries an
existing block into a freshly rendered report, so `make perf` never drops it silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

START, END = "<!-- answerability-v3 -->", "<!-- /answerability-v3 -->"
LABELS = {"widemem": "widemem 2.0.2 as it ships (its own MiniLM)",
          "similarity": "engine online, confidence=similarity (top-1 cosine)",
          "v2": "engine online, confidence=answerability_v2",
          "v3": "engine online, confidence=answerability (v3)"}
TARGET = 3.0


def render(res: dict[str, Any], command: str) -> str:
    j = res["jobs"]
    ratio, ratio_cpu = res["v3_over_widemem_search"], res["v3_over_widemem_search_cpu"]
    lines = [START, "## Answerability v3: what it adds per search and per add", "",
             f"Command: `{command}`. One process, one thread; {res['n_users']} users of the perf timelines: "
             f"{res['n_add']} add + {res['n_search']} search calls (`{res['mode']}`), each call encoding its own "
             f"text (engine: MiniLM-L6 torch behind a fresh 1,024-text LRU, the model v3 was fitted for); v3 parses "
             "each memory once at add time and each query at its search, fresh parser, no disk cache. Medians of "
             f"{res['repeats']} rounds, jobs back to back, order rotated.", "",
             "| run | add ms (wall) | add ms (CPU) | search ms (wall) | search ms (CPU) |", "|---|---|---|---|---|"]
    for k, label in LABELS.items():
        r = j[k]
        lines.append(f"| {label} | {r['add_s_ms']:.2f} | {r['add_cpu_s_ms']:.2f} | {r['search_s_ms']:.2f} | "
                     f"{r['search_cpu_s_ms']:.2f} |")
    add = j["v3"]["add_cpu_s_ms"] - j["similarity"]["add_cpu_s_ms"]
    search = j["v3"]["search_cpu_s_ms"] - j["similarity"]["search_cpu_s_ms"]
    verdict = "meets" if ratio <= TARGET else "misses"
    lines += ["", f"- v3 adds **{search:.2f} ms CPU per search** and **{add:.2f} ms CPU per add** over the engine "
              "with widemem's confidence (same run).",
              f"- a v3 search / a widemem search as it ships = **{ratio:.2f}x** wall ({verdict} the <= {TARGET:g}x "
              f"target), {ratio_cpu:.2f}x CPU (medians of per-round ratios).", END]
    return "\n".join(lines) + "\n"


def write_into(path: Path, block: str) -> None:
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def keep_block(old_report: Path, new_text: str) -> str:
    """``new_text`` with the block of ``old_report`` (if it has one) appended."""
    p = Path(old_report)
    old = p.read_text(encoding="utf-8") if p.is_file() else ""
    if START not in old or END not in old or START in new_text:
        return new_text
    block = START + old.split(START, 1)[1].split(END, 1)[0] + END + "\n"
    return new_text.rstrip("\n") + "\n\n" + block
