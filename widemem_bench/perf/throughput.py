"""Throughput stages: the engine against the batched-encode limit and against widemem.

`stage_limit_engine` (offline replay, stages 1 and 2): batched encode alone of every
unique text (the limit), interleaved with the engine's ingest + search fed by the bulk
loader (`PrefetchedEmbedder`: one batched encode of all facts and one of all questions,
known in advance: lookahead batching, labelled offline).

`stage_widemem` (stage 3, online and offline on the same steps, back to back per round,
order rotated):
- `widemem`: widemem 2.0.2 as it ships (its own torch sentence-transformers MiniLM);
- `online`: the engine with nothing batched across calls and nothing known in advance:
  each add and search encodes only its own text, at its call (`engine_embedder`, the
  fastest verified MiniLM runtime), behind an in-process LRU of 1,024 texts
  (`LruEmbedder`), as widemem's own embedder cache serves a repeated text;
- `widemem_same`: widemem given the engine's encoder (uncached: widemem's LRU is in front);
- `offline`: the engine on the same steps through the bulk loader.
`TimedEmbedder` on the online engine and on widemem_same splits each run into encoding
and everything else ("time beyond encoding"). The online and widemem runs time only the
systems' own add and search calls (`engine_calls`, `widemem_calls`).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

from widemem_bench.peers.replay import PrefetchedEmbedder, replay_engine
from widemem_bench.perf.common import (
    _LAST_CPU,
    WARMUP,
    LruEmbedder,
    TimedEmbedder,
    _cold_embedder,
    _engine,
    _one_by_one,
    _one_thread,
    _settle,
    _timed,
    engine_name,
    limit_names,
    load_steps,
    median,
    peak_rss_mb,
    step_texts,
)


def _offline_run(cold: Any, facts: list[str], questions: list[str], steps: list[Any], mode: str,
                 store: Path | None = None, resolver: str | None = None,
                 parse_dir: Path | None = None, resolver_emb: Any = None) -> tuple[float, int]:
    """The engine through the bulk loader; returns (encode seconds, texts encoded).

    ``resolver``: another resolver than the engine default; ``structure`` gets a parser on
    a fresh cache folder ``parse_dir`` (every parse a miss) that parses every fact in one
    batch before the first call, as the bulk loader encodes them (lookahead, offline), and
    its pair scorer's own MiniLM (``resolver_emb``, on a fresh cache, model loaded outside
    the timed block) encodes every fact in one batch the same way."""
    pre = PrefetchedEmbedder(cold)
    t0 = time.perf_counter()
    pre.prefetch(facts, "passage")
    pre.prefetch(questions, "query")
    t_enc = time.perf_counter() - t0
    engine = _engine(pre, {"resolver": resolver} if resolver else None, store_path=store)
    if resolver in ("structure", "pair"):
        from widemem_bench.language import Parser

        parser = Parser(cache_dir=parse_dir, progress=False)
        parser.parse_many(facts)
        engine.resolver._parser = parser  # type: ignore[attr-defined]
    if resolver == "pair":
        engine.resolver.pair.memo.clear()  # type: ignore[attr-defined]  # every pair scored anew, each round
    if resolver == "structure":
        pair = engine.resolver.pair  # type: ignore[attr-defined]
        if resolver_emb is not None:  # the engine's embedder is not the scorer's MiniLM
            pair._emb = resolver_emb
        pair.prefetch(facts)
    replay_engine(engine, steps, mode=mode)
    engine.close()
    return t_enc, pre.inner_texts


def _load_parser() -> None:
    """Load the spaCy pipeline outside the timed block (as the encoder's warm-up does)."""
    from widemem_bench.language import default_parser

    _ = default_parser().nlp


def _limit_run(emb: Any, facts: list[str], questions: list[str]) -> None:
    emb.encode(facts, "passage")
    emb.encode(questions, "query")


def _limit_round(r: int, p: dict[str, Any], work: Path, limit_embs: dict[str, Any], data: tuple,
                 acc: dict[str, Any]) -> None:
    """One round of (1) and (2), order rotated; appends to the lists in `acc`."""
    facts, questions, steps = data
    eng_name = engine_name(p)
    cold = _cold_embedder(eng_name, work, str(r))  # a fresh cache folder: every text is a miss
    cold.encode(WARMUP, "passage")  # loads the model outside the timed block
    _one_thread()
    jobs: list[str] = ["engine", *limit_embs]
    shift = r % len(jobs)  # on a shared machine the load drifts within a round
    for job in jobs[shift:] + jobs[:shift]:
        if job == "engine":
            dt_e, (t_enc, n_enc) = _timed(functools.partial(_offline_run, cold, facts, questions, steps, p["mode"]))
            acc["engine_s"].append(dt_e)
            acc["engine_cpu_s"].append(_LAST_CPU[0])
            acc["engine_encode_s"].append(t_enc)
            acc["texts_computed_per_engine_run"].append(n_enc)
        else:
            dt, _ = _timed(functools.partial(_limit_run, limit_embs[job], facts, questions))
            acc["limit_s_by"][job].append(dt)
            acc["limit_cpu_by"][job].append(_LAST_CPU[0])
    best = min(limit_embs, key=lambda n: acc["limit_s_by"][n][-1])  # this round's limit: the faster runtime
    acc["limit_s"].append(acc["limit_s_by"][best][-1])
    acc["limit_cpu_s"].append(acc["limit_cpu_by"][best][-1])
    for res in p.get("engine_resolvers") or ():  # (2r) the same with another resolver, cold caches
        cold_r = _cold_embedder(eng_name, work, f"{r}{res}")
        cold_r.encode(WARMUP, "passage")
        _load_parser()
        remb = None
        if res == "pair":  # its onnxruntime session and tokenizer load before the clock, as the parser
            from widemem_bench.engine.pair_cross import load_pair_scorer

            load_pair_scorer()
        if res == "structure":
            from widemem_bench.engine.pair_model import EMBEDDER, same_weights

            # the pair scorer shares the engine's vectors when they are its MiniLM's; else its
            # own MiniLM on a cold cache, loaded before the clock
            if not same_weights(cold_r):
                remb = _cold_embedder(EMBEDDER, work, f"{r}{res}-pair")
                remb.encode(WARMUP, "passage")
        _one_thread()
        dt_r, _ = _timed(functools.partial(_offline_run, cold_r, facts, questions, steps, p["mode"],
                                           resolver=res, parse_dir=work / f"parse-{r}-{res}", resolver_emb=remb))
        acc["engine_resolver_s"].setdefault(res, []).append(dt_r)
    if p["engine_sqlite"]:  # (2b) the same on the SQLite store: a second cold cache, a fresh file
        cold_b = _cold_embedder(eng_name, work, f"{r}b")
        cold_b.encode(WARMUP, "passage")
        _one_thread()
        dt_b, _ = _timed(functools.partial(_offline_run, cold_b, facts, questions, steps, p["mode"],
                                           work / f"store-{r}.sqlite"))
        acc["engine_sqlite_s"].append(dt_b)


def stage_limit_engine(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(1) batched encode alone, with every runtime of these weights, and (2) engine
    ingest+search from a cold cache (offline: lookahead batching), interleaved."""
    from widemem_bench.embedders import load_embedder

    _one_thread()
    steps = load_steps(work, int(p["n_users"]), int(p["seed"]))
    facts, questions = step_texts(steps)
    n_texts = len(facts) + len(questions)
    names = limit_names(p)
    # The limit is the best batched encode we know for each runtime: texts sorted by length.
    limit_embs = {n: load_embedder(n, cache=False, cache_dir=work / "models-root", sort_by_length=True)
                  for n in names}
    for emb in limit_embs.values():
        emb.encode(WARMUP)
    _settle()
    rss_model = peak_rss_mb()
    acc: dict[str, Any] = {k: [] for k in ("limit_s", "limit_cpu_s", "engine_s", "engine_cpu_s",
                                           "engine_encode_s", "engine_sqlite_s", "texts_computed_per_engine_run")}
    acc["limit_s_by"] = {n: [] for n in names}
    acc["limit_cpu_by"] = {n: [] for n in names}
    acc["engine_resolver_s"] = {}
    for r in range(int(p["repeats"])):
        _limit_round(r, p, work, limit_embs, (facts, questions, steps), acc)
    # One text per call, as widemem encodes: batched / single is what batching alone gains.
    sample = (facts + questions)[: min(200, n_texts)]
    single = {n: len(sample) / _timed(functools.partial(_one_by_one, emb, sample))[0]
              for n, emb in limit_embs.items()}
    n_adds = sum(s.kind == "fact" for s in steps)
    n_ops = len(steps)
    t_sqlite = acc.pop("engine_sqlite_s")
    return {
        **acc, "engine_embedder": engine_name(p), "limit_embedders": names,
        "single_texts_per_s": single[engine_name(p)], "single_texts_per_s_by": single,
        "n_texts": n_texts, "n_adds": n_adds, "n_searches": n_ops - n_adds,
        "n_users": len({s.user_id for s in steps}),
        "limit_texts_per_s_by": {n: n_texts / median(t) for n, t in acc["limit_s_by"].items()},
        # per round (same repeat, back to back): limit time / engine time
        "pair_ratios": [a / b for a, b in zip(acc["limit_s"], acc["engine_s"], strict=True)],
        "cpu_pair_ratios": [a / b for a, b in zip(acc["limit_cpu_s"], acc["engine_cpu_s"], strict=True)],
        "limit_texts_per_s": n_texts / median(acc["limit_s"]),
        "engine_texts_per_s": n_texts / median(acc["engine_s"]),
        "engine_ops_per_s": n_ops / median(acc["engine_s"]),
        "engine_ops_per_cpu_s": n_ops / median(acc["engine_cpu_s"]),
        "engine_sqlite_s": t_sqlite,
        # (2r) per resolver: texts/s, and per round its time / the default engine's (back to back)
        "engine_resolver_texts_per_s": {k: n_texts / median(v) for k, v in acc["engine_resolver_s"].items()},
        "engine_resolver_ratios": {k: [a / b for a, b in zip(acc["engine_s"], v, strict=True)]
                                   for k, v in acc["engine_resolver_s"].items()},
        "engine_sqlite_ops_per_s": n_ops / median(t_sqlite) if t_sqlite else None,
        "rss_after_model_mb": rss_model, "peak_rss_mb": peak_rss_mb(),
    }


def engine_calls(engine: Any, steps: list[Any], mode: str) -> int:
    """Only the engine's own add_fact / search calls, in order (no answer conversion, which
    is the harness's work, not the memory layer's); returns the number of results."""
    n = 0
    for step in steps:
        if step.kind == "fact":
            engine.add_fact(step.text, step.user_id, importance=step.importance)
        else:
            n += len(engine.search(step.text, step.user_id, mode=mode))
    return n


def widemem_calls(peer: Any, steps: list[Any]) -> int:
    """Only widemem's own add / search calls (through the pass-through LLM), in order."""
    n = 0
    for step in steps:
        if step.kind == "fact":
            peer.llm.queue(step.text, [(step.text, float(step.importance))])
            peer.memory.add(step.text, user_id=step.user_id)
        else:
            n += len(peer.memory.search(step.text, user_id=step.user_id).results)
    return n


def _online_run(plain: Any, steps: list[Any], mode: str) -> tuple[float, float]:
    """The engine online: each add and search encodes its own text; returns encode (wall, CPU) s."""
    timed = TimedEmbedder(LruEmbedder(plain))  # a fresh LRU per run: every text is a miss once
    engine = _engine(timed)
    engine_calls(engine, steps, mode)
    engine.close()
    return timed.encode_s, timed.encode_cpu_s


def _widemem_round(r: int, p: dict[str, Any], work: Path, peers: dict[str, Any], plain: Any,
                   steps: list[Any], texts: tuple[list[str], list[str]], acc: dict[str, list[float]]) -> None:
    """One round of every stage-3 job on the same steps, order rotated."""
    for peer in peers.values():
        peer.reset()  # empty store, empty LRU
    cold = _cold_embedder(engine_name(p), work, f"w{r}")  # the offline job's fresh on-disk cache
    cold.encode(WARMUP, "passage")
    timed_same = TimedEmbedder(plain)
    peers["widemem_same"].memory.embedder._inner = timed_same  # widemem's BenchEmbedder wraps it
    _one_thread()
    jobs = ["widemem", "online", "widemem_same", "offline"]
    shift = r % len(jobs)
    for job in jobs[shift:] + jobs[:shift]:
        enc = enc_cpu = float("nan")
        if job in peers:
            dt_x, _ = _timed(functools.partial(widemem_calls, peers[job], steps))
            if job == "widemem_same":
                enc, enc_cpu = timed_same.encode_s, timed_same.encode_cpu_s
        elif job == "online":
            dt_x, (enc, enc_cpu) = _timed(functools.partial(_online_run, plain, steps, p["mode"]))
        else:
            dt_x, _ = _timed(functools.partial(_offline_run, cold, *texts, steps, p["mode"]))
        acc[f"{job}_s"].append(dt_x)
        acc[f"{job}_cpu_s"].append(_LAST_CPU[0])
        acc[f"{job}_encode_s"].append(enc)
        acc[f"{job}_encode_cpu_s"].append(enc_cpu)


def stage_widemem(p: dict[str, Any], work: Path) -> dict[str, Any]:
    """(3) widemem and the engine, online and offline, on the same steps (module docstring)."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.peers import WidememPeer, widemem_available

    _one_thread()
    if not widemem_available():
        return {"skipped": "widemem-ai 2.0.2 not installed (make venv-peers)"}
    steps = load_steps(work, int(p["n_users"]), int(p["seed"]), first=int(p["widemem_users"]))
    texts = step_texts(steps)
    eng_name = engine_name(p)
    # The engine's encoder, uncached (the export made once under the models root).
    plain = load_embedder(eng_name, cache=False, cache_dir=work / "models-root")
    plain.encode(WARMUP)
    own = None if p["embedder"] == "minilm-l6" else load_embedder(p["embedder"], cache=False)
    peers = {"widemem": WidememPeer(embedder=own, mode=p["mode"], work_dir=work / "widemem"),
             "widemem_same": WidememPeer(embedder=TimedEmbedder(plain), mode=p["mode"],
                                         work_dir=work / "widemem-same")}
    for peer in peers.values():
        peer.memory.embedder.embed_batch(WARMUP)
    _settle()
    rss_model = peak_rss_mb()
    jobs = ("widemem", "online", "widemem_same", "offline")
    acc: dict[str, list[float]] = {f"{j}_{m}": [] for j in jobs for m in ("s", "cpu_s", "encode_s", "encode_cpu_s")}
    for r in range(int(p["repeats"])):
        _widemem_round(r, p, work, peers, plain, steps, texts, acc)
    for peer in peers.values():
        peer.close()
    n_adds = sum(s.kind == "fact" for s in steps)
    beyond = {f"{j}{c}": [t - e for t, e in zip(acc[f"{j}{c}_s"], acc[f"{j}_encode{c}_s"], strict=True)]
              for j in ("online", "widemem_same") for c in ("", "_cpu")}
    return {
        **acc, "n_users": len({s.user_id for s in steps}), "n_adds": n_adds, "n_searches": len(steps) - n_adds,
        "n_texts": len(texts[0]) + len(texts[1]), "engine_embedder": eng_name, "widemem_embedder": p["embedder"],
        "widemem_ops_per_s": len(steps) / median(acc["widemem_s"]),
        "online_beyond_s": beyond["online"], "widemem_same_beyond_s": beyond["widemem_same"],
        # per back-to-back round: widemem time / engine time on the same steps
        "online_over_widemem": [w / e for w, e in zip(acc["widemem_s"], acc["online_s"], strict=True)],
        "offline_over_widemem": [w / e for w, e in zip(acc["widemem_s"], acc["offline_s"], strict=True)],
        "online_over_widemem_same": [w / e for w, e in zip(acc["widemem_same_s"], acc["online_s"], strict=True)],
        "beyond_ratio": [e / w for e, w in zip(beyond["online"], beyond["widemem_same"], strict=True)],
        "beyond_cpu_ratio": [e / w for e, w in zip(beyond["online_cpu"], beyond["widemem_same_cpu"], strict=True)],
        "online_beyond_cpu_s": beyond["online_cpu"], "widemem_same_beyond_cpu_s": beyond["widemem_same_cpu"],
        "rss_after_model_mb": rss_model, "peak_rss_mb": peak_rss_mb(),
    }
