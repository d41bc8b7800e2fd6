"""The answerability v3 / v4 block of reports/perf.md (`perf.answerability`), kept across `make perf` rewrites.

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
          "v3": "engine online, confidence=answerability_v3",
          "v4": "engine online, confidence=answerability_v4"}
TARGET = 3.0


def render(res: dict[str, Any], command: str) -> str:
    j = res["jobs"]
    versions = [v for v in ("v3", "v4") if v in j]
    v = " and ".join(versions)
    who = f"{v} {'were' if len(versions) > 1 else 'was'}"
    lines = [START, f"## Answerability {v}: what it adds per search and per add", "",
             f"Command: `{command}`. One process, one thread; {res['n_users']} users of the perf timelines: "
             f"{res['n_add']} add + {res['n_search']} search calls (`{res['mode']}`), each call encoding its own "
             f"text (engine: MiniLM-L6 torch behind a fresh 1,024-text LRU, the model {who} fitted for); {v} "
             f"parse{'' if len(versions) > 1 else 's'} each memory once at add time and each query at its search, "
             "fresh parser, no disk cache"
             + ("; v4 also scores the search's top memories with its cross-encoder (its committed file's "
                "version; empty pair memo each round)" if "v4" in versions else "") + ". Medians of "
             f"{res['repeats']} rounds, jobs back to back, order rotated.", "",
             "| run | add ms (wall) | add ms (CPU) | search ms (wall) | search ms (CPU) |", "|---|---|---|---|---|"]
    for k, label in LABELS.items():
        if k not in j:
            continue
        r = j[k]
        lines.append(f"| {label} | {r['add_s_ms']:.2f} | {r['add_cpu_s_ms']:.2f} | {r['search_s_ms']:.2f} | "
                     f"{r['search_cpu_s_ms']:.2f} |")
    lines.append("")
    for ver in versions:
        ratio, ratio_cpu = res[f"{ver}_over_widemem_search"], res[f"{ver}_over_widemem_search_cpu"]
        add = j[ver]["add_cpu_s_ms"] - j["similarity"]["add_cpu_s_ms"]
        search = j[ver]["search_cpu_s_ms"] - j["similarity"]["search_cpu_s_ms"]
        lines += [f"- {ver} adds **{search:.2f} ms CPU per search** and **{add:.2f} ms CPU per add** over the engine "
                  "with widemem's confidence (same run).",
                  f"- a {ver} search / a widemem search as it ships = {ratio:.2f}x wall, **{ratio_cpu:.2f}x CPU** "
                  f"({'meets' if ratio_cpu <= TARGET else 'misses'} the <= {TARGET:g}x target on CPU time; "
                  f"{'meets' if ratio <= TARGET else 'misses'} it on wall time; medians of per-round ratios)."]
    lines.append(END)
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
