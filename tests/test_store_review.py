"""Review of issue 17's store guarantees: cases beyond tests/test_faults.py.

A symlink to an open store, a forked child holding the parent's store, a dangling symlink,
a store path under a file, and a short non-SQLite file.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3

import pytest
from _faults import build_store, engine, hash_embedder

from widemem_bench.engine.store import StoreLockedError


def test_symlink_to_an_open_store_meets_its_lock(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    real = tmp_path / "a" / "s.db"
    emb = hash_embedder()
    first = engine(real, emb)
    (tmp_path / "b" / "link.db").symlink_to(real)
    with pytest.raises(StoreLockedError, match="open in another engine"):
        engine(tmp_path / "b" / "link.db", emb)
    first.close()
    engine(tmp_path / "b" / "link.db", emb).close()  # free once the first closes


def _child_writes(eng, queue):
    try:
        eng.add_fact("the child says the user moved to Rome", "u", importance=5)
        queue.put("wrote")
    except StoreLockedError as exc:
        queue.put(f"refused: {exc}")
    eng.close()  # must not free the parent's lock
    queue.put("closed")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_forked_child_neither_writes_nor_frees_the_parents_store(tmp_path):
    emb = hash_embedder()
    path = tmp_path / "f.db"
    eng = engine(path, emb)
    eng.add_fact("the user lives in Paris", "u", importance=5)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_writes, args=(eng, queue))
    child.start()
    child.join(60)
    first, second = queue.get(timeout=5), queue.get(timeout=5)
    assert first.startswith("refused: ") and "fork" in first and "\n" not in first, first
    assert second == "closed"
    with pytest.raises(StoreLockedError):  # the parent still holds its store
        engine(path, emb)
    eng.add_fact("the parent still writes", "u", importance=5)
    eng.close()
    reopened = engine(path, emb)
    assert [m.content for m in reopened.memories("u")] == [
        "the user lives in Paris", "the parent still writes"]
    reopened.close()


def test_dangling_symlink_is_refused_not_replaced(tmp_path):
    link = tmp_path / "s.db"
    link.symlink_to(tmp_path / "gone" / "s.db")
    with pytest.raises(ValueError, match=r"symlink to .*does not exist") as err:
        engine(link)
    assert "\n" not in str(err.value)
    assert link.is_symlink()


def test_store_path_under_a_file_says_so(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match=r"afile is a file, not a folder"):
        engine(tmp_path / "afile" / "s.db")


@pytest.mark.parametrize("content", [b"x", b"hello, not a database\n" * 40])
def test_short_or_text_file_is_not_a_sqlite_database(tmp_path, content):
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a valid store \\(not a SQLite database\\)"):
        engine(path)
    assert path.read_bytes() == content


def test_a_closed_store_refuses_writes_instead_of_losing_them(tmp_path):
    path = tmp_path / "c.db"
    eng = engine(path)
    eng.add_fact("first", "u", importance=5)
    eng.close()
    with pytest.raises(ValueError, match="is closed"):
        eng.add_fact("written after close", "u", importance=5)
    reopened = engine(path)
    assert [m.content for m in reopened.memories("u")] == ["first"]
    reopened.close()


def test_a_refused_open_leaves_a_schema_1_store_as_it_was(tmp_path):
    """Another embedder's open is refused before the migration writes anything."""
    path = tmp_path / "v1.db"
    build_store(path, hash_embedder())
    conn = sqlite3.connect(path)
    with conn:  # back to a schema-1 file, as main wrote them
        for table in ("memories", "history"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN checksum")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(ValueError, match="holds dim 64 vectors, embedder dim is 32"):
        engine(path, hash_embedder(32))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "1"
    conn.close()
    with engine(path, hash_embedder()) as eng:  # the right embedder still migrates it
        assert len(eng.memories("user0")) == 15


def _schema_1(path, binding=None):
    """Turn a store into a schema-1 file as the old main wrote it (no checksums; bound to
    ``binding``, the old ``name:weights_sha256`` recipe, when given)."""
    conn = sqlite3.connect(path)
    with conn:
        for table in ("memories", "history"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN checksum")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        if binding is not None:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (binding,))
    conn.close()


def _meta(path, key):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
    finally:
        conn.close()


def test_schema_1_store_bound_by_weights_sha256_is_migrated_and_rebound(tmp_path):
    """Old main bound a store to ``name:weights_sha256``; the same weights still open it."""
    emb = hash_embedder()
    emb.weights_sha256 = "ab" * 32  # as a verified-weights embedder exposes it
    path = tmp_path / "v1.db"
    build_store(path, emb)
    _schema_1(path, f"{emb.name}:{emb.weights_sha256}")
    with engine(path, emb) as eng:
        assert len(eng.memories("user0")) == 15
    assert _meta(path, "schema_version") == "3"  # 1 -> 2 -> 3 (issue 26) in one open
    assert _meta(path, "embedder") == f"{emb.name}:{emb.fingerprint}"
    with engine(path, emb) as eng:  # rebound: the new fingerprint opens it as schema 3
        assert len(eng.memories("user0")) == 15


def test_schema_1_store_of_other_weights_is_refused_saying_rebuild(tmp_path):
    emb = hash_embedder()
    emb.weights_sha256 = "ab" * 32
    path = tmp_path / "v1.db"
    build_store(path, emb)
    _schema_1(path, f"{emb.name}:{'cd' * 32}")
    with pytest.raises(ValueError, match="another model or an older fingerprint recipe; rebuild") as err:
        engine(path, emb)
    assert "\n" not in str(err.value)
    assert _meta(path, "schema_version") == "1"  # refused before anything was written
    assert _meta(path, "embedder") == f"{emb.name}:{'cd' * 32}"


def test_schema_2_store_never_accepts_the_legacy_binding(tmp_path):
    """The weights-only binding is accepted only while migrating a schema-1 store."""
    emb = hash_embedder()
    emb.weights_sha256 = "ab" * 32
    path = tmp_path / "s.db"
    build_store(path, emb)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (f"{emb.name}:{emb.weights_sha256}",))
    conn.close()
    with pytest.raises(ValueError, match="was written with embedder"):
        engine(path, emb)


@pytest.mark.slow
def test_schema_1_store_of_the_real_minilm_opens_after_migration(tmp_path):
    """A store the old main wrote with minilm-l6 (bound to its weights' sha256)."""
    from widemem_bench.embedders import load_embedder

    emb = load_embedder("minilm-l6", cache=False)
    path = tmp_path / "v1.db"
    build_store(path, emb)
    _schema_1(path, f"minilm-l6:{emb.weights_sha256}")
    with engine(path, emb) as eng:
        assert len(eng.memories("user0")) == 15
        hits = eng.search("where does the user live?", "user0", top_k=3)
        assert len(hits) == 3
    assert _meta(path, "embedder") == f"minilm-l6:{emb.fingerprint}"


def test_engine_opens_a_damaged_store_with_quarantine_as_the_error_says(tmp_path):
    """The damage error names MemoryEngine(..., on_damage='quarantine'); that open works,
    the damaged row never reaches a search and is listed."""
    from widemem_bench.engine import MemoryEngine

    emb = hash_embedder()
    path = tmp_path / "s.db"
    build_store(path, emb)
    conn = sqlite3.connect(path)
    mid, content = conn.execute("SELECT id, content FROM memories WHERE user_id = 'user0' LIMIT 1").fetchone()
    with conn:
        conn.execute("UPDATE memories SET importance = 9.5 WHERE id = ?", (mid,))
    conn.close()
    with pytest.raises(ValueError, match=r"MemoryEngine\(\.\.\., on_damage='quarantine'\)"):
        MemoryEngine(emb, store_path=path)
    with MemoryEngine(emb, store_path=path, on_damage="quarantine") as eng:
        assert len(eng.store.damaged) == 1 and mid in eng.store.damaged[0]
        assert eng.get(mid) is None and len(eng.memories("user0")) == 14
        hits = eng.search(content, "user0", top_k=50)
        assert mid not in {h.memory.id for h in hits} and len(hits) > 0
    with pytest.raises(ValueError, match="on_damage"):
        MemoryEngine(emb, store_path=path, on_damage="ignore")


def test_a_refused_open_leaves_no_lock_file_behind(tmp_path):
    """Beside someone else's SQLite file, a refused open removes the lock it created."""
    other = tmp_path / "theirs.db"
    conn = sqlite3.connect(other)
    with conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(ValueError, match="not a widemem_bench store"):
        engine(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.db"]
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(ValueError, match="0-byte"):
        engine(tmp_path / "empty.db")
    assert not (tmp_path / "empty.db.lock").exists()


def test_a_refused_open_never_removes_a_lock_another_engine_holds(tmp_path):
    path = tmp_path / "s.db"
    first = engine(path)
    with pytest.raises(StoreLockedError):
        engine(path)
    assert (tmp_path / "s.db.lock").exists()
    with pytest.raises(StoreLockedError):  # still held by the first engine
        engine(path)
    first.add_fact("the first engine still writes", "u", importance=5)
    first.close()
    with engine(path) as again:
        assert [m.content for m in again.memories("u")] == ["the first engine still writes"]


def test_a_lock_file_removed_under_a_waiting_open_is_not_trusted(tmp_path, monkeypatch):
    """An open that locked a lock file a refused open had just unlinked locks again."""
    from widemem_bench.engine import lock as lock_mod

    path = tmp_path / "s.db"
    engine(path).close()
    lock = tmp_path / "s.db.lock"
    real_open_file = lock_mod.WriterLock._open_file
    calls = []

    def open_then_replace(self, store):
        fd, created = real_open_file(self, store)
        if not calls:  # the file is unlinked and made anew between our open and flock
            lock.unlink()
            lock.write_text("")
        calls.append(fd)
        return fd, created

    monkeypatch.setattr(lock_mod.WriterLock, "_open_file", open_then_replace)
    with engine(path) as eng:
        assert len(calls) == 2
        assert os.path.samestat(os.fstat(eng.store._writer._fd), os.stat(lock))
