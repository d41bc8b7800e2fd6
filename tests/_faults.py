"""Fault injection for the store, the embedding cache and the run records (issue 17).

Each function below injects one class of fault and counts what came back:

- tried: faults injected (or operations attempted under the fault);
- survived: the right data came back, or a one-line ValueError that names the problem;
- lost: wrong data reached a caller silently, a committed write vanished, a duplicate was
  stored, or the error was not one line / not a ValueError.

``tests/test_faults.py`` runs them at fast-tier sizes and asserts ``lost == 0``. They use
only what the engine offered before issue 17, so the same tests run against older code
and show what it lost. Run as a script, this module writes ``reports/reliability.md``:

    python tests/_faults.py --out reports/reliability.md
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import multiprocessing as mp
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

T0 = dt.datetime(2024, 1, 1)
DIM = 64
USERS = ("user0", "user1", "user2")
WORDS = ("Paris", "metformin", "a dog named Rex", "jazz", "Toyota", "the night shift", "Lisbon",
         "peanut allergy", "chess", "Dr. Alvarez", "a red bike", "sushi", "marathon", "Python")
REPO = Path(__file__).resolve().parents[1]


@dataclasses.dataclass
class Outcome:
    fault: str
    tried: int = 0
    survived: int = 0
    lost: int = 0
    notes: list[str] = dataclasses.field(default_factory=list)
    example: str | None = None  # what a survived case looked like (first one)

    def add(self, ok: bool, note: str | None = None) -> None:
        self.tried += 1
        if ok:
            self.survived += 1
            if self.example is None and note is not None:
                self.example = note
        else:
            self.lost += 1
            if note is not None and len(self.notes) < 5:
                self.notes.append(note)


def hash_embedder(dim: int = DIM) -> Any:
    from widemem_bench.embedders import load_embedder

    return load_embedder("hash-test", cache=False, dim=dim)


def engine(path: Path | None, emb: Any = None) -> Any:
    from widemem_bench.engine import MemoryEngine

    return MemoryEngine(emb if emb is not None else hash_embedder(), store_path=path)


def one_line(exc: BaseException) -> bool:
    """A clear error: a ValueError whose message is one line."""
    return isinstance(exc, ValueError) and not isinstance(exc, sqlite3.Error) and "\n" not in str(exc)


def facts(n: int, tag: str = "") -> list[str]:
    return [f"{tag}fact {i}: the user mentioned {WORDS[i % len(WORDS)]} ({i * 7 % 13})" for i in range(n)]


# --- 1. two writers -----------------------------------------------------------------------


def two_engines_one_process(work: Path) -> Outcome:
    """Engine A deletes a memory, engine B (opened on the same file) then updates it."""
    from widemem_bench.engine.store import Change

    out = Outcome("two engines on one store file (same process)")
    path = work / "two-engines.db"
    a = engine(path)
    mid = a.add_fact("the user lives in Paris", "u", at=T0).memories[0].id
    try:
        b = engine(path)
    except Exception as exc:  # the single-writer rule
        out.add(one_line(exc) and "pid" in str(exc), f"{type(exc).__name__}: {exc}")
        a.close()
        return out
    a.delete(mid, "u")
    m = b.get(mid, "u")
    b.store.apply([Change("UPDATE", m.replace(content="the user lives in Rome", content_hash=""), None,
                          m.content, T0)])  # reported success
    a.close()
    b.close()
    with engine(path) as again:
        kept = again.get(mid, "u")
    out.add(kept is not None and kept.content == "the user lives in Rome",
            "B's UPDATE reported success, and after a reopen the memory is gone")
    return out


def _writer(path: str, texts: list[str], barrier: Any, queue: Any) -> None:
    try:
        eng = engine(Path(path))
    except Exception as exc:
        queue.put(("refused", f"{type(exc).__name__}: {exc}", one_line(exc) and "pid" in str(exc)))
        barrier.abort()
        return
    with contextlib.suppress(threading.BrokenBarrierError):
        barrier.wait(timeout=60)  # both writers hold the store before either writes
    errors = []
    for t in texts:
        try:
            eng.add_fact(t, "u", at=T0)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    eng.close()
    queue.put(("ran", errors, True))


def two_writer_processes(work: Path, n_texts: int = 300) -> Outcome:
    """Two processes open one store and add the same texts."""
    out = Outcome("two processes adding the same texts to one store")
    path = work / "two-processes.db"
    engine(path).close()
    texts = facts(n_texts)
    ctx = mp.get_context("fork")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(path), texts, barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    with engine(path) as eng:
        stored = [m.content for m in eng.memories("u")]
    counts: dict[str, int] = {}
    for c in stored:
        counts[c] = counts.get(c, 0) + 1
    for kind, detail, clear in results:
        if kind == "refused":  # the whole batch met a clear error
            for _ in texts:
                out.add(clear, detail)
            continue
        for e in detail:
            out.add(False, e)
        for t in texts[: len(texts) - len(detail)]:
            out.add(counts.get(t, 0) == 1, f"{counts.get(t, 0)} rows for one text ({len(stored)} rows in all)")
    return out


# --- 2. damaged store files ---------------------------------------------------------------


def build_store(path: Path, emb: Any) -> None:
    with engine(path, emb) as eng:
        for u, user in enumerate(USERS):
            for i, text in enumerate(facts(15, tag=f"{user} ")):
                eng.add_fact(text, user, importance=float((i + u) % 10), at=T0 + dt.timedelta(days=i))


def snapshot(path: Path, emb: Any) -> Any:
    """Everything a caller can read from the store: users, memories, vectors, history,
    and the ranked results (with confidence) of a few searches per user."""
    queries = ("where does the user live?", "what medicine?", "fact 3", "Rex")
    with engine(path, emb) as eng:
        state: list[Any] = [sorted(eng.store.users())]
        for user in USERS:
            mems = eng.memories(user)
            state.append([dataclasses.astuple(m) for m in mems])
            state.append([eng.store.vector(m.id, user).tobytes() for m in mems])
            state.append([[dataclasses.astuple(h) for h in eng.history(m.id)] for m in mems])
            for q in queries:
                res = eng.search(q, user, now=T0 + dt.timedelta(days=30), top_k=10)
                state.append((res.confidence, [(h.memory.id, h.memory.user_id, h.memory.content,
                                                h.raw_similarity_score, h.final_score) for h in res]))
    return state


def _clean(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        p.unlink(missing_ok=True)


def bit_flips(work: Path, trials: int = 300, seed: int = 0) -> Outcome:
    """Flip one random bit in each of 1-16 random bytes of a closed store file, then open it."""
    out = Outcome("random bit flips in the .db file (1-16 bytes each)")
    emb = hash_embedder()
    base = work / "pristine.db"
    build_store(base, emb)
    reference = snapshot(base, emb)
    data = base.read_bytes()
    rng = np.random.default_rng(seed)
    loud = same = 0
    for trial in range(trials):
        buf = bytearray(data)
        for off in rng.choice(len(buf), int(rng.integers(1, 17)), replace=False):
            buf[int(off)] ^= 1 << int(rng.integers(0, 8))
        path = work / f"flip-{trial}.db"
        path.write_bytes(bytes(buf))
        try:
            state = snapshot(path, emb)
        except Exception as exc:
            ok = one_line(exc)
            loud += ok
            out.add(ok, f"trial {trial}: {type(exc).__name__}: {str(exc)[:160]}")
            continue
        finally:
            _clean(path)
        same += state == reference
        out.add(state == reference,
                f"trial {trial}: opened, reads {'unchanged' if state == reference else 'CHANGED'}")
    out.notes.insert(0, f"{loud} refused with a one-line error, {same} opened with every read unchanged")
    return out


def edited_rows(work: Path) -> Outcome:
    """Targeted edits of one stored row, made behind the store's back (no checksum update)."""
    out = Outcome("one row edited in the .db (user_id, vector x1000, content, importance)")
    emb = hash_embedder()
    base = work / "edit-base.db"
    build_store(base, emb)
    reference = snapshot(base, emb)
    edits: dict[str, Callable[[sqlite3.Connection, str, bytes], None]] = {
        "user_id user0 -> user1": lambda c, mid, v: c.execute(
            "UPDATE memories SET user_id = 'user1' WHERE id = ?", (mid,)),
        "vector x1000": lambda c, mid, v: c.execute(
            "UPDATE memories SET vector = ? WHERE id = ?",
            ((np.frombuffer(v, np.float32) * 1000).astype(np.float32).tobytes(), mid)),
        "content": lambda c, mid, v: c.execute(
            "UPDATE memories SET content = 'the user is allergic to nothing' WHERE id = ?", (mid,)),
        "importance": lambda c, mid, v: c.execute(
            "UPDATE memories SET importance = 10.0 WHERE id = ?", (mid,)),
    }
    for name, edit in edits.items():
        path = work / "edited.db"
        shutil.copyfile(base, path)
        conn = sqlite3.connect(path)
        mid, vec = conn.execute("SELECT id, vector FROM memories WHERE user_id = 'user0' LIMIT 1 OFFSET 3").fetchone()
        with conn:
            edit(conn, mid, vec)
        conn.close()
        try:
            state = snapshot(path, emb)
        except Exception as exc:
            out.add(one_line(exc), f"{name}: {type(exc).__name__}: {exc}")
            continue
        finally:
            _clean(path)
        out.add(state == reference, f"{name}: opened without error, with changed data")
    return out


# --- 3. model files -----------------------------------------------------------------------


def model_copy(work: Path, name: str = "minilm_copy") -> tuple[Any, Path]:
    """A copy of minilm-l6's folder as an importable package under ``work`` (the weights
    symlinked, never modified) and a registry spec pointing at it."""
    from widemem_bench.embedders.registry import get_spec, package_root

    spec = get_spec("minilm-l6")
    assert spec.module and spec.package and spec.model_dir
    src = package_root(spec.module, spec.package) / spec.model_dir
    dst = work / name / spec.model_dir
    for f in src.rglob("*"):
        if f.is_file():
            target = dst / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            if f.name == "model.safetensors":
                target.symlink_to(f)
            else:
                shutil.copyfile(f, target)
    return dataclasses.replace(spec, module=name, package=name.replace("_", "-")), dst


def tamper(path: Path) -> None:
    """Change one vector-shaping setting (or byte) of a model file."""
    if path.name == "config.json" and path.parent.name == "1_Pooling":
        import json

        cfg = json.loads(path.read_text())
        cfg["pooling_mode_cls_token"], cfg["pooling_mode_mean_tokens"] = True, False
        path.write_text(json.dumps(cfg, indent=2))
    else:
        path.write_bytes(path.read_bytes() + b" ")


def tampered_model_files(work: Path, files: list[str] | None = None) -> Outcome:
    """Tamper one file of a copy of the MiniLM folder at a time; the load must refuse it."""
    from widemem_bench.embedders.cache import EmbeddingCache
    from widemem_bench.embedders.runtimes import SentenceTransformerEmbedder

    out = Outcome("one file of the MiniLM folder tampered (pooling, config, tokenizer, ...)")
    names = files or ["1_Pooling/config.json", "config.json", "tokenizer.json", "tokenizer_config.json",
                      "vocab.txt", "special_tokens_map.json", "sentence_bert_config.json",
                      "modules.json", "config_sentence_transformers.json"]
    sys.path.insert(0, str(work))
    try:
        for i, rel in enumerate(names):
            import importlib

            importlib.invalidate_caches()
            spec, folder = model_copy(work, f"minilm_copy_{i}")
            tamper(folder / rel)
            try:
                SentenceTransformerEmbedder(spec, cache=EmbeddingCache(work / "cache"))
            except Exception as exc:
                out.add(one_line(exc) and rel in str(exc), f"{rel}: {type(exc).__name__}: {exc}")
                continue
            out.add(False, f"{rel}: tampered model loaded without complaint")
    finally:
        sys.path.remove(str(work))
    return out


# --- 4. threads, resume, sweep folders, cache, store-open errors --------------------------


def threads(n_threads: int = 4, per_thread: int = 60, n_users: int = 6) -> Outcome:
    """Threads share one in-memory engine and its users: each adds facts (and adds then
    deletes a scratch fact now and then, which makes the store rebuild a user's matrix);
    afterwards every kept fact must be its own top search hit."""
    out = Outcome(f"{n_threads} threads adding to (and deleting from) one in-memory engine")
    eng = engine(None)
    errors: list[str] = []

    def kept(t: int) -> list[tuple[str, str]]:
        return [(f"user{i % n_users}", text) for i, text in enumerate(facts(per_thread, tag=f"thread {t} "))]

    def work(t: int) -> None:
        for i, (user, text) in enumerate(kept(t)):
            try:
                eng.add_fact(text, user, at=T0)
                if i % 3 == 0:
                    scratch = eng.add_fact(f"scratch {t} {i} {text}", user, at=T0).memories
                    for m in scratch:
                        eng.delete(m.id, user)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        pool = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
    finally:
        sys.setswitchinterval(old)
    for t in range(n_threads):
        for user, text in kept(t):
            try:
                res = eng.search(text, user, now=T0, top_k=1)
                stored = [m.content for m in eng.memories(user)].count(text)
            except Exception as exc:
                out.add(False, f"search for {text!r} raised {type(exc).__name__}: {exc}")
                continue
            hit = bool(len(res)) and res[0].memory.content == text
            out.add(hit and stored == 1,
                    f"{text!r}: top hit {'is itself' if hit else 'MISSED'}, stored {stored}x")
    for e in errors[:3]:
        out.notes.append(e)
    out.lost += len(errors)
    return out


SMOKE = {"task_name": "smoke", "seed": 3, "embedder": {"name": "hash-test"}, "params": {"n": 200},
         "progress": False}


def truncated_outputs(work: Path) -> Outcome:
    """A finished run's output truncated / edited / deleted; a re-run must recompute it."""
    import pandas as pd

    from widemem_bench.experiments.resume import should_skip
    from widemem_bench.experiments.runner import execute

    out = Outcome("a finished run's per_query.parquet truncated, edited or deleted, then resumed")
    faults: dict[str, Callable[[Path], None]] = {
        "truncated to half": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
        "one byte flipped": lambda p: p.write_bytes(
            (lambda b: b[: len(b) // 2] + bytes([b[len(b) // 2] ^ 1]) + b[len(b) // 2 + 1:])(p.read_bytes())),
        "cut to 0 bytes": lambda p: p.write_bytes(b""),
        "deleted": lambda p: p.unlink(),
    }
    for name, fault in faults.items():
        run = work / name.replace(" ", "-")
        cfg = {**SMOKE, "paths": {"output_dir": str(run)}}
        execute(cfg, run)
        per_query = run / "per_query.parquet"
        good = pd.read_parquet(per_query)
        fault(per_query)
        if should_skip(run, cfg):
            out.add(False, f"{name}: resume skipped the run as done")
            continue
        execute(cfg, run)
        same = pd.read_parquet(per_query).equals(good)
        out.add(same, f"{name}: recomputed on resume, output {'identical' if same else 'DIFFERS'}")
    return out


TRAVERSALS = ("../escaped", "/../../../../escaped", "a/../../../../escaped", "x\\..\\..\\escaped",
              "ok,../../../../escaped", "x/..")


def traversal_values(work: Path, run_cli: bool = True) -> Outcome:
    """Sweep values with a '..' path component: the run folder would leave the sweep folder."""
    from widemem_bench.experiments import hydra_resolvers

    out = Outcome("swept values with a '..' path component")
    sweep = (work / "out" / "smoke" / "multiruns").resolve()
    for value in TRAVERSALS:
        name = f"+params.tag={value}"
        try:
            folder = hydra_resolvers._dirname(name)
        except ValueError as exc:
            out.add(one_line(exc), f"{value}: {exc}")
            continue
        target = Path(os.path.normpath(sweep / folder.replace("\\", "/")))
        out.add(target != sweep and sweep in target.parents, f"{value}: run folder {target}")
    if run_cli:
        value = "/../../../../escaped"
        cmd = [sys.executable, "-m", "widemem_bench.cli", "-m", "experiment=smoke",
               f"+params.tag={value}", f"paths.output_dir={work / 'out'}", "hydra/launcher=basic"]
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=300)
        escaped = [p for p in work.rglob("record.json") if sweep not in p.parents]
        err = proc.stderr.strip().splitlines()
        out.add(proc.returncode != 0 and not escaped and len(err) == 1 and err[0].startswith("error:"),
                f"widemem-bench ... +params.tag={value}: rc {proc.returncode}, "
                f"wrote {[str(p) for p in escaped]}")
    return out


def cache_rows(work: Path) -> Outcome:
    """Shards whose checksum is valid but whose rows are not embeddings; stale temp files."""
    from widemem_bench.embedders.cache import KEY_BYTES, CacheBucket, write_shard

    out = Outcome("embedding-cache shard rows not unit vectors (valid checksum); stale temp files")
    folder = work / "bucket"
    rng = np.random.default_rng(0)
    good = rng.standard_normal((4, 8)).astype(np.float32)
    good /= np.linalg.norm(good, axis=1, keepdims=True)
    bad = good.copy()
    bad[1, 0] = np.nan
    bad[2] *= 1000.0
    bad[3] = np.inf
    keys = rng.integers(0, 256, (4, KEY_BYTES), dtype=np.uint8)
    write_shard(folder, keys, bad)
    stale = folder / ".tmp-killed-writer.npz"
    stale.write_bytes(b"half a shard")
    past = time.time() - 2 * 86400
    os.utime(stale, (past, past))
    bucket = CacheBucket(folder, 8)
    for i in range(4):
        row = bucket.get(keys[i].tobytes())
        ok = row is not None and np.allclose(row, good[i]) if i == 0 else row is None
        out.add(ok, f"row {i}: {'not served' if row is None else f'served {row[:3]}'}")
    out.add(not stale.exists(), f"a killed write's temp file {'is still there' if stale.exists() else 'removed'}")
    return out


def _flip_page(p: Path) -> None:
    """Garbage over the second page (the memories table's root): a damaged file."""
    engine(p).close()
    data = bytearray(p.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    data[page : 2 * page] = np.random.default_rng(1).bytes(page)
    p.write_bytes(bytes(data))


def store_open_errors(work: Path) -> Outcome:
    """Files a store cannot use: each must give a one-line error that says what is wrong."""
    out = Outcome("store files that cannot be opened (missing folder, empty, not a store, ...)")

    def schema_99(p: Path) -> None:
        engine(p).close()
        with sqlite3.connect(p) as c:
            c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")

    cases: dict[str, tuple[Callable[[Path], Path], str]] = {
        "missing folder": (lambda p: p.parent / "no-such-folder" / "s.db", "does not exist"),
        "a directory": (lambda p: (p.mkdir(), p)[1], "directory"),
        "a 0-byte file": (lambda p: (p.write_bytes(b""), p)[1], "empty"),
        "random bytes": (lambda p: (p.write_bytes(np.random.default_rng(0).bytes(4096)), p)[1],
                         "not a valid store"),
        "another SQLite database": (
            lambda p: (sqlite3.connect(p).execute("CREATE TABLE other (x)").connection.commit(), p)[1],
            "not a widemem_bench store"),
        "a newer schema": (lambda p: (schema_99(p), p)[1], "schema_version"),
        "a damaged page": (lambda p: (_flip_page(p), p)[1], "damaged"),
    }
    for i, (name, (setup, phrase)) in enumerate(cases.items()):
        path = setup(work / f"open-{i}.db")
        try:
            engine(path).close()
        except Exception as exc:
            out.add(one_line(exc) and phrase in str(exc), f"{name}: {type(exc).__name__}: {exc}")
            continue
        out.add(False, f"{name}: opened as a store")
    return out


ALL: dict[str, Callable[[Path], Outcome]] = {
    "two_engines": two_engines_one_process,
    "two_processes": lambda w: two_writer_processes(w, 300),
    "bit_flips": lambda w: bit_flips(w, 300),
    "edited_rows": edited_rows,
    "model_files": tampered_model_files,
    "threads": lambda w: threads(4, 200),
    "resume": truncated_outputs,
    "traversal": traversal_values,
    "cache_rows": cache_rows,
    "store_open": store_open_errors,
}


def _cell(text: str | None, limit: int = 220) -> str:
    text = " ".join((text or "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    ap.add_argument("--json", type=Path, default=None, help="also dump the outcomes as JSON")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="JSON from a run on other code (e.g. main), shown as a 'lost before' column")
    ap.add_argument("--baseline-name", default="main")
    ap.add_argument("--only", nargs="*", default=None, help="run only these fault classes")
    args = ap.parse_args()
    import json
    import tempfile

    from widemem_bench import provenance

    rows: list[tuple[str, Outcome, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for key, fn in ALL.items():
            if args.only and key not in args.only:
                continue
            work = Path(tmp) / key
            work.mkdir(parents=True, exist_ok=True)
            t = time.perf_counter()
            rows.append((key, fn(work), time.perf_counter() - t))
            print(f"{key}: tried {rows[-1][1].tried}, lost {rows[-1][1].lost}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({k: {**dataclasses.asdict(o), "seconds": round(t, 2)}
                                         for k, o, t in rows}, indent=1))
    if args.out is None:
        return
    base = json.loads(args.baseline.read_text()) if args.baseline else {}
    sha = provenance.git_info().get("sha", "?")
    lines = [
        "# Reliability: fault injection on the store, the embedding cache and the run records",
        "",
        f"Written by `python tests/_faults.py --out reports/reliability.md"
        f"{' --baseline <json of a run on ' + args.baseline_name + '>' if base else ''}` at commit "
        f"`{str(sha)[:10]}` on {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M')} UTC (issue 17). "
        "The same fault classes run at fast-tier sizes in `tests/test_faults.py`, which asserts "
        "`lost == 0` for each.",
        "",
        "**survived**: the right data came back, or a one-line `ValueError` said what is wrong. "
        "**lost**: wrong data reached a caller silently, a committed write vanished, a duplicate "
        "was stored, or the error was not one clear line (a raw `sqlite3` error, a traceback).",
        "",
    ]
    head = "| fault class | tried | survived | lost | seconds |"
    rule = "|---|---:|---:|---:|---:|"
    if base:
        head += f" lost on {args.baseline_name} |"
        rule += "---:|"
    lines += [head + " what came back |", rule + "---|"]
    for key, o, secs in rows:
        row = f"| {o.fault} | {o.tried} | {o.survived} | {o.lost} | {secs:.1f} |"
        if base:
            b = base.get(key)
            row += f" {b['lost'] if b else '-'} of {b['tried'] if b else '-'} |"
        shown = o.notes[0] if o.notes else o.example
        if o.notes and o.example:
            shown = f"{o.notes[0]}; e.g. {o.example}"
        row += f" {_cell(shown)} |"
        lines.append(row)
    lines += [
        "",
        "Not covered here: damage to the `-wal` file of a store that was not closed (SQLite's "
        "own frame checksums guard it), power loss (WAL with `synchronous=NORMAL` may drop the "
        "last commits, never half of one), and a real read-only mount or unprivileged user "
        "(these tests run as root; `tests/test_faults.py` simulates EACCES / EROFS instead).",
    ]
    if base:
        lines += [
            "",
            f"The `lost on {args.baseline_name}` column: the same script with that code first on the "
            f"path (`PYTHONPATH=<its checkout> python tests/_faults.py --json {args.baseline}`). "
            f"What it lost (first notes per class):",
            "",
        ]
        for key, o, _ in rows:
            b = base.get(key)
            if b and b["lost"]:
                lines.append(f"- {o.fault}: {_cell('; '.join(b['notes'][:2]), 400)}")
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
