"""Encode throughput and cache cold/warm times of the default embedders -> reports/embedders.md.

    OMP_NUM_THREADS=1 widemem-bench bench_embedders [n=10000] [seed=0] [models=[minilm-l6,tfidf]]

All models run in one process over the same seeded sentences, taking turns on chunks of
16 batches, so the ratios against ``minilm-l6`` stay comparable even when the absolute
numbers move with machine load.
Each model gets a fresh temporary cache: "cold" encodes every text (model + cache
write), "warm" is a new embedder instance over the same cache (shard load + lookups).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench import provenance

REPO = Path(__file__).resolve().parents[2]

_NAMES = [
    "Alice",
    "Bob",
    "Carmen",
    "Dev",
    "Emma",
    "Frank",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "my sister",
    "my brother",
    "my boss",
    "my neighbour",
    "my doctor",
    "our landlord",
    "my daughter",
    "my son",
    "my partner",
    "my best friend",
]
_PLACES = [
    "Boston",
    "Chicago",
    "San Francisco",
    "Lisbon",
    "Berlin",
    "Osaka",
    "Toronto",
    "the office",
    "the gym",
    "the library",
    "the lake house",
    "the old flat",
    "Denver",
    "Nairobi",
    "Seoul",
    "the coast",
    "the mountains",
    "a small village",
    "Madrid",
    "Austin",
]
_THINGS = [
    "green tea",
    "peanuts",
    "jazz",
    "sushi",
    "running",
    "chess",
    "gardening",
    "cats",
    "dogs",
    "spicy food",
    "cold weather",
    "early mornings",
    "board games",
    "coffee",
    "oat milk",
    "horror films",
    "sailing",
    "pottery",
    "red wine",
    "podcasts",
]
_TIMES = [
    "last spring",
    "in 2019",
    "yesterday",
    "two weeks ago",
    "every Friday",
    "since May",
    "on Monday",
    "next month",
    "this morning",
    "for five years",
    "after the wedding",
    "before the holidays",
    "at night",
    "in the summer",
    "last winter",
]
_JOBS = [
    "a nurse",
    "an engineer",
    "a teacher",
    "a chef",
    "a lawyer",
    "a pilot",
    "a designer",
    "a data analyst",
    "a carpenter",
    "a pharmacist",
]
_TEMPLATES = [
    "{name} moved to {place} {time}.",
    "{name} likes {thing}.",
    "{name} stopped eating {thing} {time}.",
    "{name} works as {job} in {place}.",
    "{name} is allergic to {thing}.",
    "{name} met {name2} at {place} {time}.",
    "Where does {name} live now?",
    "What does {name} think about {thing}?",
    "{name} started a job as {job} {time}.",
    "The meeting with {name} moved to {place}.",
    "{name} has been learning {thing} {time}.",
    "Remind me that {name} hates {thing}.",
    "Is {name} still {job}?",
    "{name} flew back from {place} {time}.",
]


def make_sentences(n: int = 10_000, seed: int = 0) -> list[str]:
    """``n`` distinct short sentences (3-13 words), drawn deterministically from ``seed``."""
    if n < 1:
        raise ValueError(f"n={n} must be >= 1")
    rng = np.random.default_rng(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        tpl = _TEMPLATES[rng.integers(len(_TEMPLATES))]
        name, name2 = rng.choice(len(_NAMES), size=2, replace=False)
        text = tpl.format(
            name=_NAMES[name],
            name2=_NAMES[name2],
            place=_PLACES[rng.integers(len(_PLACES))],
            thing=_THINGS[rng.integers(len(_THINGS))],
            time=_TIMES[rng.integers(len(_TIMES))],
            job=_JOBS[rng.integers(len(_JOBS))],
        )
        out[text[0].upper() + text[1:]] = None
    return list(out)


@dataclass
class Row:
    name: str
    model_id: str
    runtime: str
    dim: int
    load_s: float
    cold_s: float
    warm_s: float
    warm_model_calls: int
    cold_model_calls: int

    @property
    def texts_per_s(self) -> float:
        return self.n / self.cold_s

    n: int = 0


def _load(name: str, texts: Sequence[str], cache_root: Path, batch_size: int) -> Any:
    from widemem_bench.embedders import TfidfEmbedder, load_embedder

    emb = load_embedder(name, cache_dir=cache_root, batch_size=batch_size, progress=False)
    if isinstance(emb, TfidfEmbedder):
        emb.fit(texts)  # fitting is part of the baseline's load cost
    return emb


def run_models(
    names: Sequence[str], texts: Sequence[str], cache_root: Path, batch_size: int
) -> list[Row]:
    """Cold: the texts are cut into chunks of 16 batches and the models take turns on each
    chunk, so drifting load on a shared machine hits every model alike. Warm: a fresh
    embedder per model over the cache the cold pass filled."""
    loaded, load_s = {}, {}
    for name in names:
        t0 = time.perf_counter()
        loaded[name] = _load(name, texts, cache_root / name, batch_size)
        load_s[name] = time.perf_counter() - t0
    chunk = 16 * batch_size
    cold_s = dict.fromkeys(names, 0.0)
    cold_parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for start in range(0, len(texts), chunk):
        part = texts[start : start + chunk]
        for name in names:
            t0 = time.perf_counter()
            cold_parts[name].append(loaded[name].encode(part))
            cold_s[name] += time.perf_counter() - t0
    rows = []
    for name in names:
        warm_emb = _load(name, texts, cache_root / name, batch_size)
        t0 = time.perf_counter()
        warm = warm_emb.encode(texts)
        warm_s = time.perf_counter() - t0
        if not np.array_equal(np.concatenate(cold_parts[name]), warm):
            raise RuntimeError(f"{name}: warm cache returned other vectors than the cold run")
        emb = loaded[name]
        rows.append(
            Row(
                name,
                emb.model_id,
                emb.spec.runtime,
                emb.dim,
                load_s[name],
                cold_s[name],
                warm_s,
                warm_emb.stats.model_calls,
                emb.stats.model_calls,
                n=len(texts),
            )
        )
    return rows


def _git_sha() -> str:
    g = provenance.git_info()
    if not g["sha"]:
        return "unknown"
    return g["sha"] + (" (working tree has uncommitted changes)" if g["dirty"] else "")


def _versions() -> str:
    names = ("torch", "sentence-transformers", "onnxruntime", "tokenizers", "scikit-learn")
    return ", ".join(f"{k} {v or '-'}" for k, v in provenance.package_versions(names).items())


def render(rows: list[Row], meta: dict[str, str]) -> str:
    base = next((r for r in rows if r.name == "minilm-l6"), rows[0])
    lines = [
        "# Embedder throughput and cache timings",
        "",
        f"- command: `{meta['command']}`",
        f"- date (UTC): {meta['date']}",
        f"- commit: {meta['commit']}",
        f"- machine: {meta['nproc']} cores, {meta['cpu']}; load average {meta['load_before']} "
        f"before, {meta['load_after']} after",
        f"- threads: OMP_NUM_THREADS={meta['omp']}, one intra-op thread per model",
        f"- packages: {meta['versions']}",
        f"- texts: {meta['n']} distinct short sentences from `make_sentences(seed={meta['seed']})`, "
        f"batch size {meta['batch_size']}, kind=passage",
        "",
        "The machine is shared with other jobs (see the load average), so absolute times move "
        "from run to run. All models ran in this one process over the same texts, taking "
        f"turns on chunks of {16 * int(meta['batch_size'])} texts, so the ratio column "
        f"(texts/s over {base.name}'s) is the comparable figure. Cold = encode every text "
        "with an empty cache (model + cache write); warm = a new embedder over the same "
        "cache (shard load + lookups; model load not counted). tfidf's load time includes "
        "fitting on the texts.",
        "",
        "| model | model_id | runtime | dim | load s | cold s | texts/s (cold) | ratio vs "
        f"{base.name} | warm s | model calls cold / warm |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.model_id} | {r.runtime} | {r.dim} | {r.load_s:.2f} | "
            f"{r.cold_s:.2f} | {r.texts_per_s:,.0f} | {r.texts_per_s / base.texts_per_s:.2f} | "
            f"{r.warm_s:.3f} | {r.cold_model_calls} / {r.warm_model_calls} |"
        )
    lines.append("")
    return "\n".join(lines)


def tool(cfg: dict[str, Any]) -> int:
    """Encode `n` sentences with each model, cold then from the cache; write the table to `out`."""
    from widemem_bench.embedders import DEFAULT_SET

    n, seed, batch_size = int(cfg["n"]), int(cfg["seed"]), int(cfg["batch_size"])
    models = [str(m) for m in cfg["models"]] or list(DEFAULT_SET)
    out = Path(str(cfg["out"]))
    # One thread per process: on the loaded 2-core machine more threads made encodes slower.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"

    texts = make_sentences(n, seed)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="widemem-bench-embedders-") as tmp:
        rows = run_models(models, texts, Path(tmp), batch_size)
    for row in rows:
        print(
            f"{row.name}: load {row.load_s:.2f}s cold {row.cold_s:.2f}s "
            f"({row.texts_per_s:,.0f} texts/s) warm {row.warm_s:.3f}s",
            file=sys.stderr,
        )
    meta = {
        "command": provenance.tool_command("bench_embedders", cfg, prefix="OMP_NUM_THREADS=1"),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M"),
        "commit": _git_sha(),
        "nproc": str(os.cpu_count()),
        "cpu": provenance.cpu_model() or "unknown",
        "load_before": load_before,
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "omp": os.environ.get("OMP_NUM_THREADS", ""),
        "versions": _versions(),
        "n": str(n),
        "seed": str(seed),
        "batch_size": str(batch_size),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(rows, meta), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0

