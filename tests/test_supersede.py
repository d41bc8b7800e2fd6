"""Issue 26 item 2: an UPDATE keeps the version it replaces, superseded, and can be undone.

The oracle resolver (gold slots) makes the updates, so these tests do not move when the
rule resolver changes. Stores: in memory, SQLite, SQLite reopened after ``kill -9`` of
the process that wrote it, and a schema-2 file built with the old CREATE TABLE.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.engine.recency import decay
from widemem_bench.engine.store import (
    SCHEMA_VERSION,
    Change,
    MemoryStore,
    StoreDamagedError,
    content_hash,
    row_checksum,
)

T0 = dt.datetime(2025, 1, 6)
T1 = T0 + dt.timedelta(days=40)
T2 = T0 + dt.timedelta(days=90)
CITY = ("user", "city")
REPO = Path(__file__).resolve().parents[1]
QUERY = "which city does the user live in"
ORACLE = EngineConfig(resolver="oracle")


@pytest.fixture(scope="module")
def emb():
    return load_embedder("hash-test", cache=False)


def _engine(emb, path=None):
    return MemoryEngine(emb, ORACLE, store_path=path)


def _ids(result):
    return [h.memory.id for h in result]


def _moved(eng):
    """Leeds at T0, a job, then Bristol at T1 (an UPDATE of Leeds): (live id, old version)."""
    first = eng.add_fact("the user lives in Leeds", "u", at=T0, slot=CITY).memories[0]
    eng.add_fact("the user works as a nurse", "u", at=T0, slot=("user", "job"))
    res = eng.add_fact("the user lives in Bristol", "u", at=T1, slot=CITY)
    assert [a.kind for a in res.actions] == ["UPDATE"] and res.memories[0].id == first.id
    (old,) = res.superseded
    return first.id, old


def _check_superseded(eng, live_id, old_id):
    """Default search leaves the old version out; include_superseded brings it back with its interval."""
    assert old_id not in _ids(eng.search(QUERY, "u", now=T2))
    assert [m.content for m in eng.memories("u")] == ["the user lives in Bristol", "the user works as a nurse"]
    past = eng.search(QUERY, "u", now=T2, include_superseded=True)
    (hit,) = [h for h in past if h.memory.id == old_id]
    assert hit.memory.content == "the user lives in Leeds"
    assert (hit.valid_from, hit.valid_to, hit.superseded_by) == (T0, T1, live_id)
    assert {h.memory.id for h in past} >= {live_id, old_id}
    live = next(h for h in past if h.memory.id == live_id)
    assert live.valid_to is None and live.superseded_by is None
    # the live version is valid from the update that wrote it: [T0, T1) then [T1, ...), no overlap;
    # created_at (what recency scores by) stays widemem's, the memory's creation
    assert (live.valid_from, live.memory.created_at) == (T1, T0)
    assert not live.superseded and hit.superseded
    assert [h.superseded for h in past] == sorted(h.superseded for h in past)  # live ones first
    assert eng.get(old_id).superseded and eng.get(live_id).content == "the user lives in Bristol"
    assert [m.id for m in eng.memories("u", include_superseded=True)][-1] == old_id
    sup = [(h.action, h.old_content, h.new_content, h.at) for h in eng.history(old_id)]
    assert sup[0] == ("SUPERSEDE", "the user lives in Leeds", "the user lives in Bristol", T1)
    assert [h.action for h in eng.history(live_id)] == ["ADD", "UPDATE"]  # as before issue 26


def _check_restored(eng, old_id):
    res = eng.search(QUERY, "u", now=T2)
    assert old_id in _ids(res)
    restored = eng.get(old_id)
    assert not restored.superseded and restored.valid_to is None and restored.superseded_by is None
    assert restored.created_at == T0 and restored.content == "the user lives in Leeds"
    assert "the user lives in Leeds" in [m.content for m in eng.memories("u")]
    assert [h.action for h in eng.history(old_id)] == ["SUPERSEDE", "UNSUPERSEDE"]
    # live again: a conflict candidate, so the next move updates it (and keeps it again)
    assert eng.memories("u", include_superseded=True)[-1].id == old_id


def test_update_keeps_the_old_version_and_unsupersede_restores_it(emb):
    eng = _engine(emb)
    live_id, old = _moved(eng)
    assert old.id == f"{live_id}~1" and old.created_at == T0
    _check_superseded(eng, live_id, old.id)
    restored = eng.unsupersede(old.id, user_id="u", at=T2)
    assert restored.id == old.id and restored.updated_at == T2
    _check_restored(eng, old.id)
    # an undone update was a wrong one: both facts are live and open-ended (README says so)
    both = {h.memory.id: h for h in eng.search(QUERY, "u", now=T2, include_superseded=True)}
    assert {live_id, old.id} <= set(both)
    assert all(not both[i].superseded and both[i].valid_to is None for i in (live_id, old.id))


def test_search_result_repr_shows_the_top_hits(emb):
    eng = _engine(emb)
    _moved(eng)
    text = repr(eng.search(QUERY, "u", now=T2))
    assert text.startswith("SearchResult(n=2,") and "'the user lives in Bristol'@" in text


def test_superseded_versions_never_change_default_results(emb):
    """What a default search, the candidates and new ids see is what overwriting gave."""
    eng = _engine(emb)
    _, old = _moved(eng)
    assert eng.store.history_count == 3  # ADD, ADD, UPDATE: the SUPERSEDE entry is not counted
    assert len(eng.store.memories("u")) == 2 and len(eng.store) == 3
    assert eng.store.find_hash("u", content_hash("the user lives in Leeds")) is None  # dedup: live only
    q = emb.encode([QUERY], "query")[0]
    assert old.id not in [m.id for m, _ in eng.store.search("u", q, 50)]
    # the same content again is a new live memory (widemem: the old text is gone), not a duplicate
    again = eng.add_fact("the user lives in Leeds", "u", at=T2)
    assert [a.kind for a in again.actions] == ["ADD"]
    with pytest.raises(ValueError, match=f"{old.id} holds the same content as live memory"):
        eng.unsupersede(old.id)


def test_two_updates_keep_both_versions_with_their_intervals(emb):
    eng = _engine(emb)
    live_id, first = _moved(eng)
    second = eng.add_fact("the user lives in York", "u", at=T2, slot=CITY).superseded[0]
    assert second.id == f"{live_id}~2" and second.content == "the user lives in Bristol"
    assert (second.valid_from, second.valid_to) == (T1, T2)  # from the update that wrote it
    assert eng.store.superseded_versions(live_id) == [eng.get(first.id), eng.get(second.id)]
    past = eng.search(QUERY, "u", now=T2, include_superseded=True, top_k=10)
    assert {first.id, second.id, live_id} <= set(_ids(past))


def _intervals(eng, live_id):
    """[valid_from, valid_to) of every version of ``live_id``, oldest first, the live one last."""
    versions = [*eng.store.superseded_versions(live_id), eng.get(live_id)]
    return [(m.content.rsplit(" ", 1)[-1], m.valid_from, m.valid_to) for m in versions]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_each_version_is_valid_from_its_own_update_and_none_overlap(emb, tmp_path, backend):
    """Review 8 C1: the live memory's validity starts at the update that wrote it (Graphiti:
    each version valid [from, to)), before and after a reopen; recency still ages from created_at."""
    path = tmp_path / "s.db" if backend == "sqlite" else None
    eng = _engine(emb, path)
    live_id, _ = _moved(eng)
    eng.add_fact("the user lives in York", "u", at=T2, slot=CITY)
    want = [("Leeds", T0, T1), ("Bristol", T1, T2), ("York", T2, None)]
    assert _intervals(eng, live_id) == want
    live = eng.get(live_id)
    assert (live.created_at, live.valid_since, live.updated_at) == (T0, T2, T2)
    later = T2 + dt.timedelta(days=30)
    hit = next(h for h in eng.search(QUERY, "u", now=later) if h.memory.id == live_id)
    assert hit.valid_from == T2 and hit.valid_to is None
    # recency / decay untouched: the age is counted from created_at (T0), as widemem does
    assert hit.recency_score == pytest.approx(float(decay(np.array([(later - T0).days]), "exponential", 0.01)[0]))
    assert hit.recency_score < float(decay(np.array([30.0]), "exponential", 0.01)[0])
    # a PIN moves updated_at, never the validity start
    live = live.replace(importance=9.0, updated_at=later)
    eng.store.apply([Change("PIN", live, None, live.content, later)])
    assert eng.get(live_id).valid_from == T2 and _intervals(eng, live_id) == want
    if path is not None:
        eng.close()
        eng = _engine(emb, path)  # read back from the history: no column, no migration
        assert _intervals(eng, live_id) == want and eng.get(live_id) == live
    restored = eng.unsupersede(f"{live_id}~1", at=later)  # Leeds again, valid from when it was said
    assert (restored.valid_from, restored.valid_to, restored.valid_since) == (T0, None, None)
    eng.close()


def test_a_superseded_version_ranks_after_every_live_memory(emb):
    """Review 8 C2: the stale 'Leeds' (the query's own words) never ranks above the live Bristol;
    the live part is the default search, hit for hit, and so is the confidence."""
    eng = _engine(emb)
    live_id, old = _moved(eng)
    q = "the user lives in Leeds"
    assert eng.store.search("u", emb.encode([q], "query")[0], 5, include_superseded=True)[0][0].id != old.id
    default = eng.search(q, "u", now=T2)
    past = eng.search(q, "u", now=T2, include_superseded=True)
    assert [h.memory.id for h in past] == [*(h.memory.id for h in default), old.id]
    assert past[0].memory.id == live_id and not past[0].superseded
    assert past[-1].superseded and past[-1].valid_to == T1 and past[-1].raw_similarity_score > past[0].raw_similarity_score
    assert [(h.final_score, h.recency_score) for h in past[:len(default)]] == \
        [(h.final_score, h.recency_score) for h in default]
    assert past.confidence == default.confidence
    assert len(eng.search(q, "u", now=T2, top_k=1, include_superseded=True)) == 2  # top_k of each part


def test_unsupersede_of_what_is_not_superseded_is_a_one_line_error(emb):
    eng = _engine(emb)
    live_id, old = _moved(eng)
    cases = [(live_id, None, "is not superseded"), ("no-such-id", None, "not found"),
             (old.id, "someone_else", "not found for user 'someone_else'"), ("", None, "non-empty string")]
    for mid, user, match in cases:
        with pytest.raises(ValueError, match=match) as info:
            eng.unsupersede(mid, user_id=user)
        assert "\n" not in str(info.value)
    eng.unsupersede(old.id)
    with pytest.raises(ValueError, match=f"memory_id: {old.id} is not superseded"):
        eng.unsupersede(old.id)
    with pytest.raises(ValueError, match="include_superseded"):
        eng.search(QUERY, "u", include_superseded="yes")
    assert len(eng.memories("u")) == 3


def test_store_refuses_a_supersede_without_its_update_and_an_update_of_a_superseded_row(emb):
    eng = _engine(emb)
    live_id, old = _moved(eng)
    live = eng.get(live_id)
    orphan = live.replace(id="x~1", superseded_at=T2, superseded_by=live_id)
    with pytest.raises(ValueError, match="needs an UPDATE"):
        eng.store.apply([Change("SUPERSEDE", orphan, None, None, T2)])
    with pytest.raises(ValueError, match="unsupersede it before an UPDATE"):
        eng.store.apply([Change("UPDATE", eng.get(old.id).replace(content="edited", content_hash=""), None,
                                old.content, T2)])
    assert eng.get("x~1") is None and len(eng.store) == 3


def test_sqlite_reopen_keeps_versions_order_and_undo(emb, tmp_path):
    path = tmp_path / "s.db"
    with _engine(emb, path) as eng:
        live_id, old = _moved(eng)
        before = [(h.memory, h.raw_similarity_score) for h in eng.search(QUERY, "u", now=T2, include_superseded=True)]
        everything = eng.memories("u", include_superseded=True)
    with _engine(emb, path) as eng:
        assert [(h.memory, h.raw_similarity_score)
                for h in eng.search(QUERY, "u", now=T2, include_superseded=True)] == before
        assert eng.memories("u", include_superseded=True) == everything
        _check_superseded(eng, live_id, old.id)
        eng.unsupersede(old.id, at=T2)
        order = eng.memories("u")
    with _engine(emb, path) as eng:  # the restored row sits where it was put back: last
        assert eng.memories("u") == order and order[-1].id == old.id
        _check_restored(eng, old.id)


# ------------------------------------------------------------------- kill -9
_CHILD = """
import datetime as dt, sys, time
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig, MemoryEngine
eng = MemoryEngine(load_embedder("hash-test", cache=False), EngineConfig(resolver="oracle"), store_path=sys.argv[1])
T0, T1, T2 = dt.datetime(2025, 1, 6), dt.datetime(2025, 2, 15), dt.datetime(2025, 4, 6)
if sys.argv[2] == "update":
    eng.add_fact("the user lives in Leeds", "u", at=T0, slot=("user", "city"))
    eng.add_fact("the user works as a nurse", "u", at=T0, slot=("user", "job"))
    eng.add_fact("the user lives in Bristol", "u", at=T1, slot=("user", "city"))
else:
    eng.unsupersede(sys.argv[2], at=T2)
print("written", flush=True)
time.sleep(600)  # killed here, the store never closed
"""


def _write_then_kill(path: Path, what: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), what], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "written", proc.stderr.read() if proc.stderr else line
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.timeout(300)
def test_superseded_fact_and_its_undo_survive_kill_9(emb, tmp_path):
    path = tmp_path / "killed.db"
    _write_then_kill(path, "update")
    assert Path(f"{path}-wal").exists()  # the commits sit in the WAL: never checkpointed by a close
    with _engine(emb, path) as eng:
        live_id = eng.memories("u")[0].id
        _check_superseded(eng, live_id, f"{live_id}~1")
    _write_then_kill(path, f"{live_id}~1")
    with _engine(emb, path) as eng:
        _check_restored(eng, f"{live_id}~1")


# ------------------------------------------------------------ schema 2 -> 3
# The memories / history tables exactly as schema 2 (before issue 26) created them.
_SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL,
    content TEXT NOT NULL, content_hash TEXT NOT NULL, importance REAL NOT NULL,
    created_at TEXT NOT NULL, inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    ymyl_category TEXT, slot_subject TEXT, slot_attribute TEXT, vector BLOB NOT NULL,
    checksum TEXT NOT NULL
);
CREATE INDEX memories_user ON memories (user_id, content_hash);
CREATE TABLE history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, user_id TEXT NOT NULL,
    action TEXT NOT NULL, old_content TEXT, new_content TEXT, at TEXT NOT NULL,
    logged_at TEXT NOT NULL, checksum TEXT NOT NULL
);
CREATE INDEX history_memory ON history (memory_id);
"""


def _schema_2_store(path: Path, emb, facts: list[tuple[str, str, tuple[str, str]]]) -> None:
    """A store file as schema-2 code wrote it: its rows, checksums and meta."""
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(_SCHEMA_2)
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
            ("kind", "widemem_bench.memory_store"), ("schema_version", "2"), ("dim", str(emb.dim)),
            ("embedder", f"{emb.name}:{emb.fingerprint}")])
        for mid, content, slot in facts:
            vec = emb.encode([content], "passage")[0].astype(np.float32).tobytes()
            row = (mid, "u", content, content_hash(content), 5.0, T0.isoformat(), T0.isoformat(), T0.isoformat(),
                   None, slot[0], slot[1], vec)
            conn.execute("INSERT INTO memories (id, user_id, content, content_hash, importance, created_at, "
                         "inserted_at, updated_at, ymyl_category, slot_subject, slot_attribute, vector, checksum) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", (*row, row_checksum(row)))
            hist = (mid, "u", "ADD", None, content, T0.isoformat(), T0.isoformat())
            conn.execute("INSERT INTO history (memory_id, user_id, action, old_content, new_content, at, "
                         "logged_at, checksum) VALUES (?,?,?,?,?,?,?,?)", (*hist, row_checksum(hist)))
    conn.close()


def _version(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        conn.close()


def test_schema_2_store_migrates_on_open_and_keeps_its_checks(emb, tmp_path):
    path = tmp_path / "v2.db"
    _schema_2_store(path, emb, [("m1", "the user lives in Leeds", CITY), ("m2", "the user works as a nurse",
                                                                           ("user", "job"))])
    with _engine(emb, path) as eng:
        assert [m.id for m in eng.memories("u")] == ["m1", "m2"]
        assert _version(path) == str(SCHEMA_VERSION) == "3"
        res = eng.add_fact("the user lives in Bristol", "u", at=T1, slot=CITY)
        assert res.superseded[0].id == "m1~1"
    with _engine(emb, path) as eng:
        _check_superseded(eng, "m1", "m1~1")
    conn = sqlite3.connect(path)
    with conn:  # a migrated row is still checked: its schema-2 checksum covers it
        conn.execute("UPDATE memories SET content = 'the user lives in Paris' WHERE id = 'm2'")
    conn.close()
    with pytest.raises(StoreDamagedError, match=r"id 'm2'.*checksum"):
        _engine(emb, path)


def test_schema_2_row_damaged_before_the_migration_is_still_caught(emb, tmp_path):
    path = tmp_path / "v2.db"
    _schema_2_store(path, emb, [("m1", "the user lives in Leeds", CITY)])
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE memories SET importance = 9.0 WHERE id = 'm1'")
    conn.close()
    with pytest.raises(StoreDamagedError, match="fails its checksum"):
        _engine(emb, path)
    with MemoryStore(path, dim=emb.dim, on_damage="quarantine") as store:
        assert store.get("m1") is None and len(store.damaged) == 1


@pytest.mark.parametrize(("sql", "row"), [
    ("UPDATE memories SET superseded_at = NULL, superseded_by = NULL WHERE id = ?", "old"),  # revived silently
    ("UPDATE memories SET superseded_by = 'someone' WHERE id = ?", "old"),
    ("UPDATE memories SET superseded_at = '2025-03-01T00:00:00' WHERE id = ?", "old"),
    ("UPDATE memories SET superseded_at = '2025-03-01T00:00:00', superseded_by = 'x' WHERE id = ?", "live"),
])
def test_edited_supersession_fields_are_refused_on_open(emb, tmp_path, sql, row):
    path = tmp_path / "s.db"
    with _engine(emb, path) as eng:
        live_id, old = _moved(eng)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, (old.id if row == "old" else live_id,))
    conn.close()
    with pytest.raises(StoreDamagedError, match="fails its checksum"):
        _engine(emb, path)
