"""Issue 17: the store, the embedding cache and the run records never serve wrong data
silently. Each test injects one fault class from ``_faults.py`` and requires lost == 0.

Fast tier: about 30 s in all (the MiniLM folder is copied, never loaded).
"""

from __future__ import annotations

import dataclasses
import socket
import sqlite3

import numpy as np
import pytest
from _faults import (
    T0,
    bit_flips,
    build_store,
    cache_rows,
    edited_rows,
    engine,
    hash_embedder,
    model_copy,
    store_open_errors,
    tamper,
    tampered_model_files,
    threads,
    traversal_values,
    truncated_outputs,
    two_engines_one_process,
    two_writer_processes,
)


def _held(outcome):
    assert outcome.tried > 0
    assert outcome.lost == 0, f"{outcome.fault}: lost {outcome.lost} of {outcome.tried}: {outcome.notes}"


# --- 1. two writers ----------------------------------------------------------------------


def test_second_engine_on_a_store_is_refused_naming_the_holder(tmp_path):
    out = two_engines_one_process(tmp_path)
    _held(out)
    assert f"on host {socket.gethostname()}" in out.notes[0] if out.notes else True


def test_second_engine_opens_once_the_first_closes(tmp_path):
    path = tmp_path / "s.db"
    with engine(path) as a:
        a.add_fact("the user lives in Paris", "u", at=T0)
    with engine(path) as b:  # the lock went with close()
        assert [m.content for m in b.memories("u")] == ["the user lives in Paris"]


def test_two_processes_adding_the_same_texts_store_each_once(tmp_path):
    _held(two_writer_processes(tmp_path, n_texts=300))


# --- 2. the store checks itself ------------------------------------------------------------


def test_bit_flips_never_reach_a_search(tmp_path):
    _held(bit_flips(tmp_path, trials=300, seed=0))


def test_edited_rows_never_reach_a_search(tmp_path):
    """One changed user_id, a vector x1000, content, importance: each refused on open."""
    _held(edited_rows(tmp_path))


def test_quarantine_leaves_a_damaged_row_out_and_reports_it(tmp_path):
    from widemem_bench.engine.store import MemoryStore

    emb = hash_embedder()
    path = tmp_path / "s.db"
    build_store(path, emb)
    conn = sqlite3.connect(path)
    mid = conn.execute("SELECT id FROM memories WHERE user_id = 'user0' LIMIT 1").fetchone()[0]
    with conn:
        conn.execute("UPDATE memories SET user_id = 'user1' WHERE id = ?", (mid,))
    conn.close()
    with MemoryStore(path, dim=emb.dim, on_damage="quarantine") as store:
        assert len(store.damaged) == 1 and mid in store.damaged[0] and str(path) in store.damaged[0]
        assert store.get(mid) is None
        assert mid not in {m.id for u in store.users() for m in store.memories(u)}
        for user in store.users():
            q = np.ones(emb.dim, np.float32) / np.sqrt(emb.dim)
            assert mid not in {m.id for m, _ in store.search(user, q, 100)}


def test_schema_1_store_is_migrated_with_checksums(tmp_path):
    """A store written before the per-row checksums opens, gets them, and is then checked."""
    from widemem_bench.engine import store as store_mod

    emb = hash_embedder()
    path = tmp_path / "v1.db"
    build_store(path, emb)
    conn = sqlite3.connect(path)
    with conn:  # turn it back into a schema-1 file
        for table in ("memories", "history"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN checksum")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    with engine(path, emb) as eng:
        assert len(eng.memories("user0")) == 15
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        store_mod.SCHEMA_VERSION)
    with conn:
        conn.execute("UPDATE memories SET content = 'edited' WHERE seq = 2")
    conn.close()
    with pytest.raises(ValueError, match=r"damaged: memory row 2 .*checksum"):
        engine(path, emb)


def test_store_open_errors_say_what_is_wrong(tmp_path):
    _held(store_open_errors(tmp_path))


def test_history_is_scoped_by_user(tmp_path):
    with engine(tmp_path / "s.db") as eng:
        mid = eng.add_fact("the user lives in Paris", "alice", at=T0).memories[0].id
        assert [h.action for h in eng.history(mid, user_id="alice")] == ["ADD"]
        assert eng.history(mid, user_id="mallory") == []


# --- 3. model fingerprints -----------------------------------------------------------------


def test_tampered_pooling_config_is_refused(tmp_path):
    _held(tampered_model_files(tmp_path, ["1_Pooling/config.json"]))


def test_every_vector_shaping_model_file_is_checked(tmp_path):
    _held(tampered_model_files(tmp_path))


def test_fingerprint_covers_every_vector_shaping_file(tmp_path, monkeypatch):
    """Without a model_files list to refuse it, a tampered folder still gets its own
    fingerprint, so its vectors are cached apart from the untouched model's."""
    from widemem_bench.embedders.cache import text_key
    from widemem_bench.embedders.runtimes import fingerprint_of, model_folder_files

    monkeypatch.syspath_prepend(str(tmp_path))
    spec, folder = model_copy(tmp_path)
    genuine = fingerprint_of(spec, files=model_folder_files(folder))
    tamper(folder / "1_Pooling" / "config.json")
    changed = fingerprint_of(spec, files=model_folder_files(folder))
    assert changed != genuine
    assert text_key(spec.name, changed, "passage", "x") != text_key(spec.name, genuine, "passage", "x")
    prefixed = dataclasses.replace(spec, query_prefix="query: ")
    assert fingerprint_of(prefixed, files=model_folder_files(folder)) != changed


# --- 4. other gaps ---------------------------------------------------------------------------


def test_four_threads_never_miss_a_self_search():
    _held(threads(n_threads=4, per_thread=200))


def test_truncated_output_is_recomputed_on_resume(tmp_path, capsys):
    _held(truncated_outputs(tmp_path))
    assert "does not match the sha256 in its record" in capsys.readouterr().out


def test_traversal_value_is_refused(tmp_path):
    _held(traversal_values(tmp_path, run_cli=False))


@pytest.mark.timeout(300)
def test_traversal_value_is_refused_by_the_cli_before_any_folder_is_made(tmp_path):
    out = traversal_values(tmp_path, run_cli=True)
    _held(out)
    assert not (tmp_path / "escaped").exists()


def test_cache_rows_are_checked_and_stale_temps_removed(tmp_path):
    _held(cache_rows(tmp_path))


@pytest.mark.parametrize(
    ("err", "phrase"),
    [(13, "no permission to write in folder"), (30, "read-only file system")],  # EACCES, EROFS
)
def test_unwritable_folder_is_named(tmp_path, monkeypatch, err, phrase):
    """Tests run as root here, so the folder's mode cannot make it unwritable: the lock
    file's creation is made to fail the way the kernel fails it."""
    import os

    real_open = os.open

    def fake_open(path, flags, *args, **kwargs):
        if str(path).endswith(".lock"):
            raise OSError(err, os.strerror(err), str(path))
        return real_open(path, flags, *args, **kwargs)

    path = tmp_path / "s.db"
    engine(path).close()
    monkeypatch.setattr(os, "open", fake_open)
    with pytest.raises(ValueError, match=phrase) as info:
        engine(path)
    assert "\n" not in str(info.value) and str(tmp_path) in str(info.value)


def test_read_only_store_file_is_named(tmp_path, monkeypatch):
    import os

    path = tmp_path / "s.db"
    engine(path).close()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if (mode == os.W_OK and str(p) == str(path))
                        else real_access(p, mode, **kw))
    with pytest.raises(ValueError, match="read-only"):
        engine(path)
