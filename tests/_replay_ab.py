"""The engine's offline replay, this tree against another checkout, interleaved in one run.

`make perf`'s replay (stage `limit_engine`: 40 timeline users, seed 0, the bulk loader's
prefetched vectors) with the encoding taken out: every text is encoded once with
minilm-l6 beforehand, so the timed block is the engine alone (add_fact + search), where a
change to the engine or the store shows. Each (resolver, store) run is a fresh process,
base and new back to back per round; CPU seconds (this process) are compared in pairs,
since wall time on a shared machine moves with the load. Also checks that both trees give
the same answers, memories and histories.

    git archive <base commit> | tar -x -C /tmp/base
    PYTHONPATH=$PWD OMP_NUM_THREADS=1 python tests/_replay_ab.py --base /tmp/base --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CASES = (("append", "memory"), ("rule", "memory"), ("append", "store"), ("rule", "store"))


def prepare(data: Path) -> None:
    from widemem_bench.embedders import load_embedder
    from widemem_bench.peers.replay import replay_steps, select_users
    from widemem_bench.timelines import generate

    tl = generate(n_users=300, seed=0)  # as make perf's prepare_data (sweep_users=300)
    steps = replay_steps(tl.events, tl.questions, select_users(tl.events, 40, 0))
    facts = list(dict.fromkeys(s.text for s in steps if s.kind == "fact"))
    queries = list(dict.fromkeys(s.text for s in steps if s.kind == "question"))
    emb = load_embedder("minilm-l6", cache=True)
    info = {"name": emb.name, "model_id": emb.model_id, "dim": emb.dim, "fingerprint": emb.fingerprint}
    with data.open("wb") as fh:
        pickle.dump({"steps": steps, "passage": dict(zip(facts, emb.encode(facts, "passage"), strict=True)),
                     "query": dict(zip(queries, emb.encode(queries, "query"), strict=True)), **info}, fh)


class _Prefetched:
    def __init__(self, d: dict) -> None:
        self.d = d
        self.name, self.model_id, self.dim, self.fingerprint = d["name"], d["model_id"], d["dim"], d["fingerprint"]

    def encode(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        return np.stack([self.d["query" if kind == "query" else "passage"][t] for t in texts]).astype(np.float32)


def one_run(data: Path, resolver: str, where: str, out: Path) -> None:
    from widemem_bench.engine import EngineConfig, MemoryEngine
    from widemem_bench.peers.replay import replay_engine

    with data.open("rb") as fh:
        d = pickle.load(fh)
    path = Path(tempfile.mkdtemp()) / "s.db" if where == "store" else None
    eng = MemoryEngine(_Prefetched(d), EngineConfig(resolver=resolver), store_path=path)
    t0, c0 = time.perf_counter(), time.process_time()
    answers = replay_engine(eng, d["steps"], mode="balanced")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    users = sorted({s.user_id for s in d["steps"]})
    state = {u: [(m.id, m.content, str(m.created_at), [(h.action, h.old_content, h.new_content)
                                                         for h in eng.history(m.id)]) for m in eng.memories(u)]
             for u in users}
    eng.close()
    out.write_text(json.dumps({"wall": wall, "cpu": cpu, "n_texts": len(d["passage"]) + len(d["query"]),
                               "answers": [repr(a) for a in answers], "state": state}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", type=Path, help="the other checkout (e.g. a git archive of the base commit)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "replay_ab")
    ap.add_argument("--one", nargs=4, metavar=("DATA", "RESOLVER", "WHERE", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        one_run(Path(a.one[0]), a.one[1], a.one[2], Path(a.one[3]))
        return
    if a.base is None:
        ap.error("--base is required")
    a.work.mkdir(parents=True, exist_ok=True)
    data = a.work / "data.pkl"
    if not data.exists():
        prepare(data)
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in range(a.rounds):
        for resolver, where in CASES:
            for tree, src in (("base", a.base.resolve()), ("new", REPO)):
                out = a.work / f"{tree}-{resolver}-{where}-{r}.json"
                env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
                subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", str(data), resolver, where,
                                str(out)], check=True, env=env, cwd=src)
                runs.setdefault((tree, resolver, where), []).append(json.loads(out.read_text()))
    for resolver, where in CASES:
        base, new = runs[("base", resolver, where)], runs[("new", resolver, where)]
        same = all(b["answers"] == n["answers"] and b["state"] == n["state"] for b, n in zip(base, new, strict=True))
        ratio = statistics.median(n["cpu"] / b["cpu"] for b, n in zip(base, new, strict=True))
        n_texts = base[0]["n_texts"]
        cpu_b, cpu_n = (statistics.median(x["cpu"] for x in runs_) for runs_ in (base, new))
        print(f"{resolver:6} {where:6}: {n_texts / cpu_b:,.0f} -> {n_texts / cpu_n:,.0f} texts per CPU s "
              f"(median of {a.rounds}); paired CPU ratio new/base {ratio:.3f}; identical results: {same}")


if __name__ == "__main__":
    main()
