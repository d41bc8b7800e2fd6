"""A text's vector depends on the text alone: not on its batch-mates, not on the cache.

Why: the committed frustration report moved on a fresh clone (rephrase threshold 0.537 ->
0.505) because MiniLM's fp32 vectors moved in the last bits with their batch, and the
cache froze whichever batch came first. bge-small (int8, activations quantised per batch)
is the model most sensitive to its batch, so it shows both sides: shared batches differ,
per-text vectors are byte-identical.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from widemem_bench.embedders import load_embedder
from widemem_bench.embedders.base import PER_TEXT_TAG
from widemem_bench.embedders.cache import text_key

TARGET = "where does my sister live these days?"
MATES_A = ["hi", "I moved to Lisbon in March and started a new job at the harbour office", "ok"]
MATES_B = ["what is my doctor's name?", "takes metformin for type 2 diabetes, twice a day with food"]


def _installed(name: str) -> Any:
    try:
        return load_embedder(name, cache=False)
    except ValueError as exc:  # ModelNotInstalledError and friends
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("name", ["bge-small", "minilm-l6-int8"])
def test_per_text_vectors_ignore_batch_mates_and_cache(name: str, tmp_path: Path) -> None:
    emb = _installed(name)
    assert emb.batching == "per-text"
    alone = emb.encode([TARGET])[0]
    in_a = emb.encode([*MATES_A, TARGET])[-1]
    in_b = emb.encode([TARGET, *MATES_B])[0]
    assert alone.tobytes() == in_a.tobytes() == in_b.tobytes()
    # through a cache that already holds other texts (and a second, cold cache)
    warm = load_embedder(name, cache_dir=tmp_path / "warm")
    warm.encode(MATES_A + MATES_B)
    cold = load_embedder(name, cache_dir=tmp_path / "cold")
    assert warm.encode([*MATES_B, TARGET])[-1].tobytes() == alone.tobytes()
    assert cold.encode([TARGET])[0].tobytes() == alone.tobytes()
    assert warm.stats.model_calls == len(MATES_A + MATES_B) + 1  # one call per text


def test_shared_batches_do_depend_on_batch_mates() -> None:
    """The check above can fail: with shared batches bge-small's vector moves."""
    emb = _installed("bge-small")
    shared = load_embedder("bge-small", cache=False, batching="shared")
    assert shared.encode([*MATES_A, TARGET])[-1].tobytes() != shared.encode([TARGET, *MATES_B])[0].tobytes()
    assert shared.encode([TARGET])[0].tobytes() == emb.encode([TARGET])[0].tobytes()  # a batch of one


def test_batching_scheme_is_part_of_the_cache_key(tmp_path: Path) -> None:
    per_text = load_embedder("hash-test", cache_dir=tmp_path)
    per_text.encode([TARGET])
    fp = per_text.fingerprint
    bucket = per_text.cache.bucket(per_text.name, fp, "passage", per_text.dim)  # type: ignore[union-attr]
    assert bucket.get(text_key(per_text.name, f"{fp}|batching={PER_TEXT_TAG}", "passage", TARGET)) is not None
    assert bucket.get(text_key(per_text.name, fp, "passage", TARGET)) is None  # old, untagged keys
    # rows of the older "per-text" tag may come from another thread count: never served
    assert bucket.get(text_key(per_text.name, f"{fp}|batching=per-text", "passage", TARGET)) is None


def test_per_text_vectors_ignore_the_process_thread_count(tmp_path: Path) -> None:
    """torch's thread count is process-wide: whatever another part of the process set (or
    the ``threads`` option), a per-text MiniLM vector is computed on one thread, so a cache
    filled by another command holds the bits a fresh encode gives. Why: a cache filled on 2
    threads (vectors moved by up to 2.1e-7) moved the pair scorer's threshold 0.962277 ->
    0.954681 (make resolver-pair)."""
    torch = pytest.importorskip("torch")
    alone = _installed("minilm-l6").encode([TARGET])[0]
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # as another model, a peer or a user's script may leave it
        unpinned = load_embedder("minilm-l6", cache=False, batching="shared", threads=2).encode([TARGET])[0]
        if unpinned.tobytes() == alone.tobytes():
            pytest.skip("this machine's kernels give the same bits on 1 and 2 threads: nothing to show")
        other = load_embedder("minilm-l6", cache_dir=tmp_path / "other", threads=2)
        assert other.model is not None  # loaded first: the load sets the count once
        torch.set_num_threads(2)
        filled = other.encode([*MATES_A, TARGET])[-1]  # another command fills the cache
        assert torch.get_num_threads() == 2  # the pin is restored after each call
        warm = load_embedder("minilm-l6", cache_dir=tmp_path / "other").encode([TARGET])
    finally:
        torch.set_num_threads(before)
    assert filled.tobytes() == alone.tobytes() == warm[0].tobytes()


def test_batching_option_is_checked() -> None:
    with pytest.raises(ValueError, match="batching='bogus'"):
        load_embedder("hash-test", cache=False, batching="bogus")
    spec_sorted = load_embedder("hash-test", cache=False, sort_by_length=True)
    assert spec_sorted.batching == "per-text"  # row-independent runtime: sorting only orders chunks


def test_sorting_needs_shared_batches_for_a_model() -> None:
    with pytest.raises(ValueError, match="sort_by_length=True needs batching='shared'"):
        load_embedder("minilm-l3", cache=False, sort_by_length=True, batching="per-text")
    assert load_embedder("minilm-l3", cache=False, sort_by_length=True).batching == "shared"


def test_row_independent_runtime_keeps_one_call_per_chunk() -> None:
    emb = load_embedder("hash-test", cache=False, batch_size=4)
    emb.encode([f"t{i}" for i in range(10)])
    assert emb.stats.model_calls == 3
    rows = np.stack([load_embedder("hash-test", cache=False).encode([f"t{i}"])[0] for i in range(10)])
    assert rows.tobytes() == emb.encode([f"t{i}" for i in range(10)]).tobytes()
