"""reports/perf.md and the `perf` section of reports/README.md, from a perf results dict.

Two speed figures, each labelled: **online** (every add and search encodes only its own
text, at its call: what a memory layer in production does) against widemem as it ships
and against widemem given the same encoder, and **offline replay** (the bulk loader's
lookahead batching: every fact and question encoded in advance, one batch per kind)
against the batched-encode limit.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from widemem_bench.perf.common import median
from widemem_bench.reports.sections import report_section

TARGET_ONLINE = 2.0  # online engine over widemem as it ships
TARGET_BEYOND = 0.2  # engine's time beyond encoding over widemem's, same encoder
TARGET_OFFLINE = 0.8  # offline replay over the batched-encode limit


def _fmt(x: Any, nd: int = 1) -> str:
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        return "-" if not math.isfinite(float(x)) else f"{float(x):,.{nd}f}"
    return str(x)


def _runtime(name: str) -> str:
    """The runtime of a registry entry, for the report (never fails the report)."""
    try:
        from widemem_bench.embedders import registry

        return registry.get_spec(name).runtime
    except Exception:  # a renamed entry in an old perf.json
        return "?"


def _ok(value: float, target: float, at_most: bool = False) -> str:
    good = value <= target if at_most else value >= target
    return "meets" if good else "MISSES"


def _dirty(m: dict[str, Any]) -> str:
    """" (plus uncommitted work)" when tracked files differ from the commit (a record made before the
    flag was recorded says so too: it cannot tell)."""
    return " (plus uncommitted work)" if m.get("dirty", True) else ""


def _pairs(xs: list[float], nd: int = 2) -> str:
    return ", ".join(f"{x:.{nd}f}" for x in xs)


def _header(results: dict[str, Any]) -> list[str]:
    m, p = results["machine"], results["params"]
    return [
        "# Performance: this engine against the encode limit and against widemem 2.0.2",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores (shared), load average at start {m['load_avg']}, "
        f"at the end {results.get('load_avg_end', '-')}; Python {m['python']}, torch {m['versions'].get('torch')}, "
        f"sentence-transformers {m['versions'].get('sentence-transformers')}, widemem-ai "
        f"{m['versions'].get('widemem-ai')}, faiss-cpu {m['versions'].get('faiss-cpu')}.",
        f"Commit {m['commit'] or '-'}{_dirty(m)}, {m['date']}. One thread per process "
        f"(OMP_NUM_THREADS=1, torch.set_num_threads(1)); each stage in its own subprocess; medians of "
        f"{p['repeats']} rounds; every ratio is a median of per-round ratios of runs made back to back "
        "(order rotated each round), so machine load hits both sides of a ratio alike.",
        "",
        "Command: `make perf` (`widemem-bench perf out=reports/perf.md`).",
        "",
        f"Data: synthetic timelines (`widemem_bench.timelines.generate`), seed {p['seed']}: "
        f"{results['data'].get('n_events'):,} events and {results['data'].get('n_questions'):,} questions "
        f"for {max(int(p['n_users']), int(p['sweep_users']))} users; the offline limit stage replays "
        f"{p['n_users']} of them, the widemem stage the first {p['widemem_users']} of those, the sweep all "
        f"{p['sweep_users']}. Engine encoder `{p.get('engine_embedder') or p['embedder']}`, widemem's "
        f"`{p['embedder']}`, retrieval mode `{p['mode']}`.",
    ]


def _online_lines(results: dict[str, Any]) -> list[str]:
    wm, s, p = results.get("widemem") or {}, results.get("summary", {}), results["params"]
    if "widemem_s" not in wm:
        return ["", "## Online", "", f"Skipped: {wm.get('skipped', 'not run')}."]
    n_ops = wm["n_adds"] + wm["n_searches"]
    eng = wm["engine_embedder"]
    rows = [("3 widemem as it ships", f"widemem's own `{wm['widemem_embedder']}` provider, one encode per call",
             "widemem"),
            ("3o engine online", f"`{eng}`, each add / search encodes its own text at its call", "online"),
            ("3s widemem, same encoder", f"widemem given the engine's `{eng}`", "widemem_same")]
    out = ["", "## Online: every call encodes only its own text", "",
           f"{wm['n_adds']:,} add + {wm['n_searches']:,} search calls of {wm['n_users']} users "
           f"({wm['n_texts']:,} unique texts), in timeline order, nothing batched across calls and nothing known "
           "in advance. Both sides serve a repeated text from an in-process LRU of 1,024 texts (widemem's own; "
           "`LruEmbedder` for the engine), fresh per run. Encode s = wall time inside the encoder "
           "(`TimedEmbedder`), the same model object on both sides.", "",
           "| run | encoder | median s | calls/s | encode s | beyond encoding s |", "|---|---|---|---|---|---|"]
    for label, what, job in rows:
        t, enc = median(wm[f"{job}_s"]), median(wm[f"{job}_encode_s"])
        out.append(f"| {label} | {what} | {_fmt(t, 2)} | {_fmt(n_ops / t)} | {_fmt(enc, 2)} | "
                   f"{_fmt(t - enc, 2) if math.isfinite(enc) else '-'} |")
    out += ["",
            f"- online engine / widemem as it ships = **{s['online_over_widemem']:.2f}x** "
            f"({_ok(s['online_over_widemem'], TARGET_ONLINE)} the {TARGET_ONLINE:g}x target; rounds "
            f"{_pairs(wm['online_over_widemem'])}).",
            f"- same encoder on both sides: the engine's time beyond encoding is **{s['beyond_ratio']:.3f}** of "
            f"widemem's ({_ok(s['beyond_ratio'], TARGET_BEYOND, at_most=True)} the <= {TARGET_BEYOND:g} target; "
            f"rounds {_pairs(wm['beyond_ratio'], 3)}); on CPU time {s['beyond_cpu_ratio']:.3f} (rounds "
            f"{_pairs(wm['beyond_cpu_ratio'], 3)}; engine {median(wm['online_beyond_cpu_s']):.2f} CPU s beyond "
            f"encoding, widemem {median(wm['widemem_same_beyond_cpu_s']):.2f}); whole runs: "
            f"{s['online_over_widemem_same']:.2f}x.",
            f"- per call beyond encoding: engine {1e3 * median(wm['online_beyond_cpu_s']) / n_ops:.2f} ms CPU, "
            f"widemem {1e3 * median(wm['widemem_same_beyond_cpu_s']) / n_ops:.2f} ms CPU and "
            f"{1e3 * median(wm['widemem_same_beyond_s']) / n_ops:.2f} ms wall (the rest off the CPU: its SQLite "
            "history commits every add). Wall-time rounds swing with the machine's load; CPU time is the steadier "
            "of the two.",
            f"- peak RSS after loading the models: {wm.get('rss_after_model_mb', float('nan')):.0f} MB "
            f"(widemem stage, both widemem instances and the engine's encoder); {p['repeats']} rounds."]
    return out


def _offline_rows(le: dict[str, Any], wm: dict[str, Any]) -> list[str]:
    out = ["| stage | what is timed | texts | calls | median s | texts/s | calls/s |", "|---|---|---|---|---|---|---|"]
    for i, (name, ts) in enumerate(le["limit_s_by"].items()):
        out.append(f"| 1{'' if i == 0 else 't'} limit, `{name}` | batched encode of every unique fact and question "
                   f"text ({_runtime(name)}, sorted by length) | {_fmt(le['n_texts'])} | - | {_fmt(median(ts), 2)} | "
                   f"{_fmt(le['n_texts'] / median(ts))} | - |")
    n2 = le["n_adds"] + le["n_searches"]
    out.append(f"| 2 engine, `{le['engine_embedder']}` | cold cache: encode (one batch per kind) + {le['n_adds']:,} "
               f"add_fact + {le['n_searches']:,} search, {le['n_users']} users | {_fmt(le['n_texts'])} | {_fmt(n2)} | "
               f"{_fmt(median(le['engine_s']), 2)} | {_fmt(le['engine_texts_per_s'])} | {_fmt(le['engine_ops_per_s'])} |")
    if le.get("engine_sqlite_s"):
        out.append(f"| 2b engine, SQLite store | as 2, store on disk (WAL, one committed transaction per add) | "
                   f"{_fmt(le['n_texts'])} | {_fmt(n2)} | {_fmt(median(le['engine_sqlite_s']), 2)} | "
                   f"{_fmt(le['n_texts'] / median(le['engine_sqlite_s']))} | {_fmt(le['engine_sqlite_ops_per_s'])} |")
    for res, tps in (le.get("engine_resolver_texts_per_s") or {}).items():
        ratios = le["engine_resolver_ratios"][res]
        out.append(f"| 2r engine, `resolver={res}` | as 2, cold parse cache: every fact parsed in one batch before "
                   f"the first call (lookahead, as the encoder), back to back with 2; its speed / 2's = "
                   f"{median(ratios):.2f} (rounds {', '.join(f'{x:.2f}' for x in ratios)}) | {_fmt(le['n_texts'])} | "
                   f"{_fmt(n2)} | {_fmt(le['n_texts'] / tps, 2)} | {_fmt(tps)} | {_fmt(n2 * tps / le['n_texts'])} |")
    if "offline_s" in wm:
        t = median(wm["offline_s"])
        n3 = wm["n_adds"] + wm["n_searches"]
        out.append(f"| 3e engine, `{wm['engine_embedder']}`, same steps | stage 3's steps as in 2 (offline), back to "
                   f"back with widemem | {_fmt(wm['n_texts'])} | {_fmt(n3)} | {_fmt(t, 2)} | "
                   f"{_fmt(wm['n_texts'] / t)} | {_fmt(n3 / t)} |")
    return out


def _offline_lines(results: dict[str, Any]) -> list[str]:
    le, wm, s = results.get("limit_engine") or {}, results.get("widemem") or {}, results.get("summary", {})
    out = ["", "## Offline replay (lookahead batching)", "",
           "The bulk loader (`PrefetchedEmbedder`, widemem_bench/peers/replay.py) encodes every fact and every "
           "future question of the workload in one batch per kind, duplicates removed, before the first call: "
           "a replay of a known workload, not what a memory layer can do online.", ""]
    if "limit_s" not in le:
        return [*out, f"Skipped: {le.get('skipped', 'not run')}."]
    out += [*_offline_rows(le, wm), ""]
    out.append(f"- (2)/(1) = **{s['engine_over_limit']:.2f}** of the batched-encode limit "
               f"({_ok(s['engine_over_limit'], TARGET_OFFLINE)} the {TARGET_OFFLINE:g} target): rounds "
               f"{_pairs(le['pair_ratios'])}; on CPU time {s.get('engine_over_limit_cpu', float('nan')):.2f}; "
               f"ratio of the medians {s['engine_over_limit_of_medians']:.2f}."
               + (" A ratio above 1 is the shared machine's noise: the engine runs the same encode plus its own "
                  "work, so CPU time is the figure to read." if max(le["pair_ratios"]) > 1 else ""))
    enc = median(le["engine_encode_s"])
    rest = median(le["engine_s"]) - enc
    out.append(f"  Inside (2): encode {enc:.2f} s, store + conflict candidates + scoring {rest:.2f} s "
               f"({1e3 * rest / max(1, le['n_adds'] + le['n_searches']):.3f} ms per call).")
    if "engine_over_widemem" in s:
        out.append(f"- (2)/(3): offline engine on widemem's steps (3e) / widemem as it ships = "
                   f"**{s['engine_over_widemem']:.1f}x** (rounds {_pairs(wm['offline_over_widemem'], 1)}); labelled "
                   "offline: the engine knew every text in advance.")
    singles = le.get("single_texts_per_s_by") or {}
    per = "; ".join(f"`{n}` ({_runtime(n)}) {1e3 / r:.1f} ms per text batched, {1e3 / singles[n]:.1f} ms one per call"
                    for n, r in le["limit_texts_per_s_by"].items() if n in singles)
    out.append(f"- Encode cost per text, one thread: {per}.")
    return out


def render_report(results: dict[str, Any]) -> str:
    """reports/perf.md from a results dict (pure function of it)."""
    lines = _header(results) + _online_lines(results) + _offline_lines(results)
    lines += _scaling_lines(results.get("scaling") or {})
    lines += _sweep_lines(results.get("sweep") or {}, results.get("joblib") or {})
    lines += ["", SCALE_SECTION.format(**_scale_numbers(results))]
    return "\n".join(lines) + "\n"


def _scaling_lines(sc: dict[str, Any]) -> list[str]:
    if not sc.get("rows"):
        return ["", "## Scaling", "", f"Skipped: {sc.get('skipped', 'not run')}."]
    df = pd.DataFrame(sc["rows"])
    out = ["", "## How time grows (engine only, precomputed random unit vectors, no model)", ""]
    for curve, title in (("memories_per_user", "memories per user (1 user)"), ("users", "users")):
        d = df[df["curve"] == curve]
        out += [f"By {title}:", "", "| users | memories/user | memories | ingest s | us/memory | queries | ms/query |",
                "|---|---|---|---|---|---|---|"]
        for _, r in d.iterrows():
            out.append(
                f"| {_fmt(int(r['users']))} | {_fmt(int(r['memories_per_user']))} | {_fmt(int(r['memories']))} | "
                f"{_fmt(r['ingest_s'], 2)} | {_fmt(r['ingest_us_per_memory'], 0)} | {_fmt(int(r['queries']))} | "
                f"{_fmt(r['search_ms_per_query'], 3)} |"
            )
        out.append("")
    out.append(
        "Ingest cost per memory grows with the user's memory count: every add looks up the user's 5 "
        "nearest memories as conflict candidates (an exhaustive cosine over that user's vectors, like "
        "widemem's flat FAISS index), so one user's ingest is quadratic overall; search is linear in the "
        "user's memories. With many users of a fixed size, time per memory stays flat. (The store appends "
        "each new vector to a growing per-user matrix; it used to restack the whole matrix on every add, "
        "which made 3,000 adds of one user take 17 s.)"
    )
    out.append("")
    out.append(f"Peak RSS of the scaling process: {sc.get('peak_rss_mb', float('nan')):.0f} MB.")
    return out


def _sweep_lines(sw: dict[str, Any], jb: dict[str, Any]) -> list[str]:
    out = ["", "## Warm-cache scoring sweep", ""]
    if "settings_per_s" in sw:
        out.append(
            f"- {sw['n_settings']:,} weight/decay settings over {sw['n_queries']:,} questions x their users' "
            f"memories ({sw['scorer']}): median {median(sw['times_s']):.2f} s, "
            f"**{sw['settings_per_s']:,.0f} settings/s**; peak RSS {sw['peak_rss_mb']:.0f} MB."
        )
    else:
        out.append(f"- Skipped: {sw.get('skipped', 'not run')}.")
    if "speedup" in jb:
        out.append(
            f"- Embedder x setting sweep ({', '.join(jb['embedders'])} x {jb['n_settings']:,} settings) on joblib "
            f"workers: 1 worker {jb['t1_s']:.2f} s, 2 workers {jb['t2_s']:.2f} s (medians): speed-up "
            f"**{jb['speedup']:.2f}x** (median of rounds "
            f"{', '.join(f'{x:.2f}' for x in jb.get('pair_speedups', []))}; load average at the end "
            f"{jb.get('load_avg')}). Each job loads its embedder, prepares the cached similarities and "
            f"scores every setting; two workers only help when the second core is free."
        )
    else:
        out.append(f"- Joblib 1 vs 2 workers: skipped: {jb.get('skipped', 'not run')}.")
    return out


def _scale_numbers(results: dict[str, Any]) -> dict[str, str]:
    s = results.get("summary", {})
    sc = results.get("scaling") or {}
    rows = pd.DataFrame(sc.get("rows") or [])
    big = "-"
    if not rows.empty:
        u = rows[rows["curve"] == "users"].sort_values("memories").iloc[-1]
        big = f"{int(u['users']):,} users x {int(u['memories_per_user'])} memories in {u['ingest_s']:.1f} s"
    return {
        "engine_tps": _fmt(s.get("engine_texts_per_s", float("nan")), 0),
        "limit_tps": _fmt(s.get("limit_texts_per_s", float("nan")), 0),
        "sweep_sps": _fmt(s.get("sweep_settings_per_s", float("nan")), 0),
        "speedup": _fmt(s.get("joblib_speedup_2_workers", float("nan")), 2),
        "joblib_embedders": ", ".join((results.get("joblib") or {}).get("embedders", ["-"])),
        "joblib_load": str((results.get("joblib") or {}).get("load_avg", "-")),
        "big": big,
    }


SCALE_SECTION = """## Scale (text for the README)

**What one machine handles.** On this shared 2-core machine, one thread per process, the
engine ingests and queries the timelines from a cold cache at {engine_tps} texts/s, against
{limit_tps} texts/s for MiniLM encoding the same texts in batches and nothing else: encoding
is the cost, every text is encoded once (one batch per kind) and then read from the on-disk
cache. With vectors cached, scoring is numpy arithmetic: {sweep_sps} weight/decay settings
per second over the default timelines (300 users). The in-memory store held {big}
(precomputed vectors); the tables above give how ingest and search time grow.

**Spreading the embedder x setting sweep.** Settings are swept inside one process (array
arithmetic over cached similarities); embedders are the Hydra multirun axis, one job per
embedder, and Hydra's launchers place those jobs:

- local processes (the default for `-m`): `widemem-bench -m compare_embedders embedder=minilm-l6,minilm-l3,bge-small hydra/launcher=joblib hydra.launcher.n_jobs=2`
- a Ray cluster (`make venv-ray`, a venv of its own: the ray extra moves three locked packages): the same command with `hydra/launcher=ray
  hydra.launcher.ray.init.address=auto +hydra.launcher.ray.init.object_store_memory=null`
  and `RAY_AUTH_MODE=token` in the environment (hydra-ray-launcher 1.2.2 with ray 2.x);
- SLURM (`pip install -e ".[slurm]"`): `hydra/launcher=submitit_slurm
  hydra.launcher.partition=<partition> hydra.launcher.account=<account>`; each job
  exports `OMP_NUM_THREADS=1` and `HF_HUB_OFFLINE=1`.

Every job writes its own record under `outputs/<experiment>/multiruns/`;
`widemem-bench aggregate root=outputs/<experiment>/multiruns` gathers them into one
`results.parquet`. Keep one thread per job: on a loaded machine a second torch thread
per process made MiniLM many times slower, not faster.

**Measured speed-up from 1 to 2 local workers** (joblib, warm cache, one job per embedder
over {joblib_embedders}): {speedup}x on this 2-core machine, which other work shared during
the measurement (load average {joblib_load}).
"""


@report_section("perf", order=90)
def section(results: pd.DataFrame, records: list[dict[str, Any]], figures_dir: Path) -> str:
    if results.empty:
        return ""
    val = {str(r["metric"]): float(r["value"]) for _, r in results.iterrows()}
    out = ["## Speed (`perf`)", "",
           "`make bench` runs a light variant of `make perf` (fewer rounds) so the report has the ratios "
           "of this machine and commit; `reports/perf.md` (`make perf`) holds the full tables and the targets. "
           "Wall-clock ratios measured back to back in one run, on a machine shared with other jobs; timings "
           "are not part of `make check-report`.", ""]
    if "online_over_widemem" in val:
        out.append(f"- online (each call encodes its own text): {val['online_over_widemem']:.2f}x widemem 2.0.2 as "
                   f"it ships; with the same encoder on both sides the engine's time beyond encoding is "
                   f"{val['beyond_ratio']:.3f} of widemem's")
    if "engine_over_limit" in val:
        out.append(f"- offline replay (lookahead batching): {val['engine_texts_per_s']:,.0f} texts/s = "
                   f"{val['engine_over_limit']:.2f} of the batched-encode limit ({val['limit_texts_per_s']:,.0f}/s)"
                   + (f"; {val['engine_over_widemem']:.1f}x widemem on its steps" if "engine_over_widemem" in val else ""))
    if "sweep_settings_per_s" in val:
        out.append(f"- warm-cache scoring sweep: {val['sweep_settings_per_s']:,.0f} settings/s")
    out += ["", "Full figures: `reports/perf.md` (`make perf`)."]
    return "\n".join(out)
