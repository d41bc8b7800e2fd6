"""MemoryStore: both backends, persistence, atomic writes, invalid files, user isolation."""

from __future__ import annotations

import datetime as dt
import sqlite3

import numpy as np
import pytest

from widemem_bench.engine.store import Change, Memory, MemoryStore, content_hash

T0 = dt.datetime(2024, 1, 1)
DIM = 8


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _mem(mid: str, user: str, content: str, importance: float = 5.0) -> Memory:
    return Memory(
        id=mid,
        user_id=user,
        content=content,
        importance=importance,
        created_at=T0,
        inserted_at=T0,
        updated_at=T0,
        content_hash=content_hash(content),
    )


def _fill(store: MemoryStore) -> None:
    store.apply([Change("ADD", _mem(f"a{i}", "alice", f"alice fact {i}"), _vec(i), at=T0) for i in range(5)])
    store.apply([Change("ADD", _mem(f"b{i}", "bob", f"bob fact {i}"), _vec(100 + i), at=T0) for i in range(3)])


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    s = MemoryStore(tmp_path / "s.db" if request.param == "sqlite" else None, dim=DIM)
    _fill(s)
    yield s
    s.close()


def test_search_is_per_user_and_sorted(store):
    hits = store.search("alice", _vec(3), 5)
    assert [m.user_id for m, _ in hits] == ["alice"] * 5
    assert hits[0][0].id == "a3" and hits[0][1] == pytest.approx(1.0, abs=1e-6)
    sims = [s for _, s in hits]
    assert sims == sorted(sims, reverse=True)
    # bob's own vector is not visible to alice
    assert all(m.id.startswith("a") for m, _ in store.search("alice", _vec(100), 10))
    assert store.search("carol", _vec(1), 5) == []


def test_reads_check_ownership(store):
    assert store.get("a1", "alice") is not None
    assert store.get("a1", "bob") is None
    assert store.get("a1") is not None
    assert store.find_hash("alice", content_hash("alice fact 2")).id == "a2"
    assert store.find_hash("bob", content_hash("alice fact 2")) is None


def test_update_or_delete_of_other_users_memory_is_refused(store):
    forged = _mem("a1", "bob", "bob says hi")
    with pytest.raises(ValueError, match="memory_id"):
        store.apply([Change("UPDATE", forged, _vec(9), "x")])
    with pytest.raises(ValueError, match="memory_id"):
        store.apply([Change("DELETE", forged)])
    assert store.get("a1").content == "alice fact 1"


def test_update_keeps_order_and_history(store):
    old = store.get("a1")
    store.apply([Change("UPDATE", old.replace(content="alice moved", content_hash=""), _vec(50), old.content)])
    assert [m.id for m in store.memories("alice")] == ["a0", "a1", "a2", "a3", "a4"]
    assert store.get("a1").content_hash == content_hash("alice moved")
    assert store.find_hash("alice", content_hash("alice fact 1")) is None
    h = store.history("a1")
    assert [e.action for e in h] == ["ADD", "UPDATE"]
    assert (h[1].old_content, h[1].new_content) == ("alice fact 1", "alice moved")


def test_failed_batch_writes_nothing(store):
    before = [m.id for m in store.memories("alice")]
    n_hist = len(store.history("a0"))
    bad = [
        Change("ADD", _mem("a9", "alice", "new"), _vec(9)),
        Change("ADD", _mem("a0", "alice", "dup id"), _vec(10)),  # id exists -> whole batch refused
    ]
    with pytest.raises(ValueError, match="already exists"):
        store.apply(bad)
    with pytest.raises(ValueError, match="dim"):
        store.apply([Change("ADD", _mem("a9", "alice", "new"), np.ones(DIM + 1, np.float32))])
    assert [m.id for m in store.memories("alice")] == before
    assert store.get("a9") is None and len(store.history("a0")) == n_hist


def test_sqlite_rollback_on_failure_inside_transaction(tmp_path):
    path = tmp_path / "s.db"
    s = MemoryStore(path, dim=DIM)
    _fill(s)
    # Make the history insert fail after the memory row is written: the transaction must roll back.
    s._conn.execute(
        "CREATE TRIGGER boom BEFORE INSERT ON history WHEN NEW.new_content = 'crash' "
        "BEGIN SELECT RAISE(ABORT, 'simulated crash'); END"
    )
    with pytest.raises(sqlite3.DatabaseError):
        s.apply([Change("ADD", _mem("c1", "alice", "crash"), _vec(7))])
    assert s.get("c1") is None
    s.close()
    again = MemoryStore(path, dim=DIM)
    assert again.get("c1") is None and len(again.memories("alice")) == 5
    again.close()


def test_sqlite_reopen_is_identical(tmp_path):
    path = tmp_path / "s.db"
    s = MemoryStore(path, dim=DIM, embedder="e:1")
    _fill(s)
    s.apply([Change("DELETE", s.get("b1"), old_content="bob fact 1")])
    q = _vec(4)
    before = [(m, sim) for m, sim in s.search("alice", q, 5)]
    mems = {u: s.memories(u) for u in ("alice", "bob")}
    hist = s.history("b1")
    s.close()
    with MemoryStore(path, dim=DIM, embedder="e:1") as r:
        assert [(m, sim) for m, sim in r.search("alice", q, 5)] == before
        assert {u: r.memories(u) for u in ("alice", "bob")} == mems
        assert r.history("b1") == hist
        np.testing.assert_array_equal(r.vector("a2", "alice"), _vec(2))


@pytest.mark.parametrize(
    "setup, match",
    [
        (lambda p: p.write_bytes(np.random.default_rng(0).bytes(4096)), "not a valid store"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE other (x)").connection.commit(), "not a widemem_bench store"),
    ],
)
def test_invalid_files_are_refused(tmp_path, setup, match):
    path = tmp_path / "bad.db"
    setup(path)
    with pytest.raises(ValueError, match=match):
        MemoryStore(path)


def test_wrong_schema_version_dim_or_embedder(tmp_path):
    path = tmp_path / "s.db"
    MemoryStore(path, dim=DIM, embedder="e:1").close()
    with pytest.raises(ValueError, match="dim"):
        MemoryStore(path, dim=DIM * 2)
    with pytest.raises(ValueError, match="embedder"):
        MemoryStore(path, dim=DIM, embedder="other:2")
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(ValueError, match="schema_version"):
        MemoryStore(path)
    with pytest.raises(ValueError, match="directory"):
        MemoryStore(tmp_path)
