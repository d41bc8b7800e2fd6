"""Answerability v4: the cross-encoder's pairs and cache, its features (batched = single rows),
the v4 file, the engine's ``confidence="answerability_v4"`` switch, and the one-line errors.

Every text here is written for these tests (no generator, holdout, world-B or outside phrasing).
The trained cross-encoder itself is not loaded: a stand-in scores the pairs.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from widemem_bench.answerability import cross, cross_quant
from widemem_bench.answerability.trees import fit_trees
from widemem_bench.answerability.v2 import encoder_fn
from widemem_bench.answerability.v4 import (
    CROSS_TOP_K,
    FEATURES_V4,
    NO_PAIR,
    ScorerV4,
    cross_row,
    cross_rows,
    feature_rows_v4,
    load_scorer_v4,
    save_scorer_v4,
    set_scorer_v4,
)
from widemem_bench.embedders import load_embedder
from widemem_bench.engine import EngineConfig
from widemem_bench.harness import build_engine

KEY = "test-" + "0" * 59


class Overlap:
    """A stand-in cross-encoder: the logit is the shared-word count minus one; it counts its calls."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def scores(self, pairs):
        self.pairs += list(pairs)
        return np.array([len(set(q.lower().split()) & set(m.lower().split())) - 1.0 for q, m in pairs])


@pytest.fixture(scope="module")
def emb():
    return load_embedder("hash-test", cache=False)


@pytest.fixture()
def fake_cross():
    f = Overlap()
    cross._LOADED[KEY] = f  # type: ignore[assignment]
    yield f
    cross._LOADED.pop(KEY, None)


def _toy(embedder: str = "hash-test") -> ScorerV4:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, len(FEATURES_V4)))
    y = x[:, FEATURES_V4.index("cross_max")] + 0.3 * rng.normal(size=400) > 0
    return ScorerV4(embedder, fit_trees(x, y, FEATURES_V4, max_iter=8), (0.9, 0.5, 0.2), KEY)


def test_pairs_label_the_gold_memory_and_skip_stale() -> None:
    top = ["train leaves at 9pm", "used to take the 7am train", "aunt works at the library"]
    got = cross.question_pairs("answerable", top, {"train leaves at 9pm"}, {"used to take the 7am train"}, 3)
    assert got == [("train leaves at 9pm", 1), ("aunt works at the library", 0)]
    # the gold memory below the searched top still gives the positive pair
    assert cross.question_pairs("answerable", top[1:], {"train leaves at 9pm"}, set(), 2)[0] == \
        ("train leaves at 9pm", 1)
    assert cross.question_pairs("hard_negative", top, set(), {"used to take the 7am train"}, 3) == \
        [("train leaves at 9pm", 0)]
    assert cross.question_pairs("stale_probe", top, set(), set(), 3) == []
    assert cross.question_pairs("answerable", top, set(), set(), 3) == []


def test_hand_pairs_read_development_answer_sets_only(emb) -> None:
    from widemem_bench.timelines.handwritten import HANDWRITTEN, load_answers

    # the measuring outside sets (3 and up) never train it (DESIGN_LOG V8)
    assert all(f.startswith("handwritten/") or f in ("outside/answer_set1.jsonl", "outside/answer_set2.jsonl")
               for f in cross.HAND_FILES)
    assert cross.SETTINGS["hand_files"] == list(cross.HAND_FILES) and cross.SETTINGS["hand_repeat"] >= 1
    pairs = cross.hand_pairs("handwritten/answer_w1.jsonl", emb)
    users = load_answers(HANDWRITTEN / "answer_w1.jsonl")
    gold = {t for u in users for _, _, k, g in u.questions if k == "answerable" for i, t in u.facts if i in g}
    n_ans = sum(k == "answerable" for u in users for _, _, k, _ in u.questions)
    assert sum(p["label"] for p in pairs) == n_ans  # one positive per answerable question: its gold memory
    assert all(p["memory"] in gold for p in pairs if p["label"] == 1)
    assert {p["kind"] for p in pairs} == {"answerable", "hard_negative", "other_person", "never_mentioned"}
    assert all(p["label"] == 0 for p in pairs if p["kind"] != "answerable")


def test_cross_users_are_seeded_and_a_share() -> None:
    users = [f"w:u{i:04d}" for i in range(2000)]
    a = [cross.is_cross_user(u, 0) for u in users]
    assert a == [cross.is_cross_user(u, 0) for u in users]
    assert abs(np.mean(a) - cross.SETTINGS["share"]) < 0.05
    assert a != [cross.is_cross_user(u, 1) for u in users]


def test_cache_key_moves_with_data_and_seed() -> None:
    p = [{"query": "where does my aunt work?", "memory": "aunt works at the library", "label": 1}]
    k = cross.cache_key(p, 0)
    assert k == cross.cache_key(p, 0) and len(k) == 64
    assert k != cross.cache_key(p, 1)
    assert k != cross.cache_key([{**p[0], "label": 0}], 0)
    sel = type("S", (), {"frame": {"query": ["where does my aunt work?"], "kind": ["answerable"]},
                         "contents": [["aunt works at the library"]]})()
    assert k != cross.cache_key(p, 0, sel) == cross.cache_key(p, 0, sel)  # the epoch-choosing searches count


def test_missing_model_is_one_line_naming_the_target(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WIDEMEM_BENCH_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match="make answer-cross"):
        cross.load_cross("f" * 64)
    d = tmp_path / "cross" / ("e" * 64)
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"weights_sha256": "0" * 64, "settings": {"max_length": 64}}))
    (d / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(ValueError, match="damaged"):
        cross.load_cross("e" * 64)


def test_tampered_base_weights_are_refused(monkeypatch) -> None:
    monkeypatch.setattr(cross, "_VERIFIED", {})
    monkeypatch.setattr(cross, "BASE_SHA256", "1" * 64)
    with pytest.raises(ValueError, match="sha256"):
        cross.base_dir()


def test_cross_features() -> None:
    assert cross_row([], []).tolist() == [NO_PAIR, NO_PAIR, 0.0]
    assert cross_row([0.5, 2.0, 1.0], [0.7, 0.4, 0.3]).tolist() == [0.5, 2.0, 0.4]


def test_batched_rows_equal_single_rows(emb, fake_cross) -> None:
    s = _toy()
    queries = ["what time does my train leave?", "where does my aunt work?", ""]
    contents = [["train leaves at 9pm", "aunt works at the library", "a", "b"], ["aunt works at the library"], []]
    cosines = [[0.5, 0.1, 0.05, 0.01], [0.7], []]
    batch = feature_rows_v4(queries, contents, cosines, emb, fake_cross)
    assert batch.shape == (3, len(FEATURES_V4))
    # only the first CROSS_TOP_K memories of a search are scored
    assert len(fake_cross.pairs) == min(4, CROSS_TOP_K) + 1
    for i, q in enumerate(queries):
        np.testing.assert_allclose(batch[i], s.features(q, contents[i], cosines[i], encoder_fn(emb)), atol=1e-6)
    np.testing.assert_allclose(cross_rows(queries, contents, cosines, fake_cross), batch[:, -3:])


def test_file_round_trip_and_bad_files(tmp_path) -> None:
    s = _toy()
    path = save_scorer_v4(s, tmp_path / "hash-test.v4.json")
    back = load_scorer_v4("hash-test", tmp_path)
    assert back.cutoffs == s.cutoffs and back.cross_key == KEY
    x = np.random.default_rng(0).normal(size=(5, len(FEATURES_V4)))
    np.testing.assert_allclose(back.model.predict_proba(x), s.model.predict_proba(x))
    bad = json.loads(path.read_text())
    bad["model"]["features"] = [*bad["model"]["features"][:-3], "a", "b", "c"]
    (tmp_path / "b.v4.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="features"):
        load_scorer_v4("b", tmp_path)
    with pytest.raises(ValueError, match="make fit-v4"):
        load_scorer_v4("nothing", tmp_path)


def test_engine_switch_v4_by_name(emb, fake_cross) -> None:
    set_scorer_v4(_toy())
    try:
        eng = build_engine(emb, EngineConfig(confidence="answerability_v4"))
        eng.add_fact("train leaves at 9pm", "u1")
        eng.add_fact("aunt works at the library", "u1")
        q = "when does my train leave?"
        res = eng.search(q, "u1")
        scorer = load_scorer_v4("hash-test")
        p = scorer.probability(q, [r.memory.content for r in res], [r.raw_similarity_score for r in res],
                               encoder_fn(emb))
        assert res.confidence.value == scorer.band(p)
        assert (q, res[0].memory.content) in fake_cross.pairs
        assert eng.search("what?", "empty-user").confidence.value in ("high", "moderate", "low", "none")
    finally:
        set_scorer_v4(None)


def test_committed_v4_file_loads() -> None:
    s = load_scorer_v4("minilm-l6")
    assert s.model.features == FEATURES_V4 and len(s.cross_key) == 64
    assert s.cutoffs[0] >= s.cutoffs[1] >= s.cutoffs[2]
    assert s.meta["answerable_at_none"]["upper_bound"] <= 0.05
    # the weights it was fitted on, so a loader can tell other weights (a build on another kind of CPU)
    assert set(s.cross_weights) == {"fp32", s.quant} and all(len(v) == 64 for v in s.cross_weights.values())
    assert s.meta["cross_encoder"]["machine"]["torch_cpu_capability"]


def _fake_build(root, key: str, weights: bytes = b"fp32 weights", int8: bytes | None = None) -> dict[str, str]:
    """A cache folder that looks built (files and manifests agree); returns its sha256 per quant."""
    d = root / "cross" / key
    d.mkdir(parents=True)
    (d / "model.safetensors").write_bytes(weights)
    shas = {"fp32": cross._sha256(d / "model.safetensors")}
    machine = {"cpu": "Test CPU", "cpu_id": "6/1/1", "torch_cpu_capability": "AVX2"}
    (d / "manifest.json").write_text(json.dumps({"weights_sha256": shas["fp32"], "settings": {"max_length": 64},
                                                 "machine": machine}))
    if int8 is not None:
        q = cross_quant.int8_dir(key)
        q.mkdir(parents=True)
        (q / cross_quant.INT8_FILE).write_bytes(int8)
        shas["int8"] = cross._sha256(q / cross_quant.INT8_FILE)
        (q / "manifest.json").write_text(json.dumps({"weights_sha256": shas["int8"]}))
    return shas


def test_other_weights_than_the_files_are_refused_in_one_line(tmp_path, monkeypatch) -> None:
    """The same key builds other weights on another kind of CPU: a v4 file's cut-offs are certified for
    the weights it was fitted on, so others are refused in one line, before any model loads."""
    monkeypatch.setenv("WIDEMEM_BENCH_CACHE", str(tmp_path))
    key = "e" * 64
    here = _fake_build(tmp_path, key, int8=b"int8 weights")
    other = {"weights_sha256": "a" * 64, "int8_weights_sha256": "b" * 64, "machine": {"cpu": "Other CPU"}}

    def refusal(fn) -> str:
        with pytest.raises(ValueError) as e:
            fn()
        msg = str(e.value)
        assert "\n" not in msg and "make answer-cross" in msg and "make fit-v4" in msg
        return msg

    msg = refusal(lambda: cross.load_cross(key, "fp32", expect=other))
    assert f"sha256 {here['fp32'][:12]}... (trained on Test CPU 6/1/1, torch CPU code AVX2), not the " \
           f"{'a' * 12}... it was fitted on (trained on Other CPU" in msg
    msg = refusal(lambda: cross.load_cross(key, "int8", expect={**other, "weights_sha256": here["fp32"]}))
    assert f"int8 weights here are sha256 {here['int8'][:12]}" in msg
    assert "names no sha256" in refusal(lambda: cross.load_cross(key, "fp32", expect={}))  # a file that recorded none
    record = {"weights_sha256": here["fp32"], "int8_weights_sha256": here["int8"]}
    cross.check_weights(key, "int8", here, record, "v4 file")  # the recorded weights pass
    # the scorer passes its file's record to the loader
    v4 = ScorerV4("hash-test", _toy().model, (0.9, 0.5, 0.2), key,
                  {"cross_quant": "int8", "cross_encoder": {"weights_sha256": here["fp32"], "int8_weights_sha256": "b" * 64}})
    assert v4.cross_weights == {"fp32": here["fp32"], "int8": "b" * 64}
    assert "answerability v4 file of hash-test" in refusal(v4.cross)
    # a model already loaded in this process is checked too
    cross._LOADED[key] = cross.CrossScorer(key, None, None, 64, {}, "fp32", {"fp32": here["fp32"]})
    try:
        refusal(lambda: cross.load_cross(key, "fp32", expect=other))
        assert cross.load_cross(key, "fp32", expect=record) is cross._LOADED[key]
    finally:
        cross._LOADED.pop(key, None)


def test_cross_train_code_is_pinned() -> None:
    """cross_train.py's bytes are in the cross-encoder's cache key: an edit moves the key (a retrain)."""
    import hashlib
    from pathlib import Path

    got = hashlib.sha256((Path(cross.__file__).parent / "cross_train.py").read_bytes()).hexdigest()
    assert got == cross.TRAIN_CODE_SHA256, "cross_train.py changed: the cross-encoder's cache key moves"


def test_top_k_and_quant_come_from_the_file(tmp_path, emb, fake_cross) -> None:
    s = _toy()
    one = ScorerV4(s.embedder, s.model, s.cutoffs, KEY, {"cross_top_k": 1, "cross_quant": "fp32"})
    assert (s.top_k, s.quant, one.top_k) == (CROSS_TOP_K, "fp32", 1)  # no keys: version 1 (fp32, top 3)
    row = one.features("where does my aunt work?", ["aunt works at the library", "train leaves at 9pm"],
                       [0.6, 0.2], encoder_fn(emb))
    assert len(fake_cross.pairs) == 1 and row[-3:].tolist() == [row[-3], row[-3], 0.6]
    save_scorer_v4(one, tmp_path / "hash-test.v4.json")
    back = load_scorer_v4("hash-test", tmp_path)
    assert (back.top_k, back.quant) == (1, "fp32")
    set_scorer_v4(None)
    for bad, match in (({"cross_top_k": 0}, "cross_top_k"), ({"cross_top_k": "2"}, "cross_top_k"),
                       ({"cross_quant": "fp16"}, "cross_quant")):
        d = json.loads((tmp_path / "hash-test.v4.json").read_text())
        (tmp_path / "b.v4.json").write_text(json.dumps({**d, **bad}))
        with pytest.raises(ValueError, match=match):
            ScorerV4.from_dict(json.loads((tmp_path / "b.v4.json").read_text()))


@pytest.mark.parametrize("quant", ["int8", "onnx-int8"])
def test_int8_scores_one_pair_per_call(quant: str) -> None:
    """int8 activations are scaled per call: each pair is scored alone, so its score never depends on a batch."""
    import torch

    calls: list[int] = []

    def tok(qs, ms, **kw):
        calls.append(len(qs))
        return {"x": torch.tensor([[float(len(q) + len(m))] for q, m in zip(qs, ms, strict=True)])}

    class Model:
        def __call__(self, x):
            return type("Out", (), {"logits": x / 10})()

    pairs = [("a?", "bb"), ("ccc?", "d"), ("a?", "bb")]
    got = cross.CrossScorer("k", Model(), tok, 64, {}, quant).scores(pairs)
    assert calls == [1, 1]
    np.testing.assert_allclose(got, [0.4, 0.5, 0.4], rtol=1e-6)
    calls.clear()
    cross.CrossScorer("k", Model(), tok, 64, {}).scores(pairs)
    assert calls == [2]  # fp32 batches


@pytest.mark.parametrize("quant", ["int8", "onnx-int8"])
def test_int8_missing_or_unknown_is_one_line(tmp_path, monkeypatch, quant: str) -> None:
    monkeypatch.setenv("WIDEMEM_BENCH_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match="not one of"):
        cross.load_cross("f" * 64, "fp16")
    d = tmp_path / "cross" / ("e" * 64)
    d.mkdir(parents=True)
    (d / "model.safetensors").write_bytes(b"weights")
    sha = cross._sha256(d / "model.safetensors")
    (d / "manifest.json").write_text(json.dumps({"weights_sha256": sha, "settings": {"max_length": 64}}))
    with pytest.raises(ValueError, match=r"int8 cross-encoder .* not built .* make answer-cross"):
        cross.load_cross("e" * 64, quant)
    where, file, _ = cross_quant.COPIES[quant]
    q = where("e" * 64)
    q.mkdir(parents=True)
    (q / "manifest.json").write_text(json.dumps({"weights_sha256": "0" * 64}))
    (q / file).write_bytes(b"tampered")
    with pytest.raises(ValueError, match="damaged"):
        cross.load_cross("e" * 64, quant)
    with pytest.raises(ValueError, match="missing or damaged"):
        cross.weights_record("e" * 64, quant)


def _tiny_build(root, key: str) -> None:
    """A real (tiny, random) BERT cross-encoder saved as a build would be, with a made-up vocabulary."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    d = root / "cross" / key
    d.mkdir(parents=True)
    words = ["what", "which", "when", "is", "my", "the", "a", "name", "time", "city", "doctor", "lives", "in", "moved", "to", "on", "at", "dr", "she", "he"]
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, "?", ","]) + "\n")
    BertTokenizerFast(str(d / "vocab.txt")).save_pretrained(str(d))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(words) + 7, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, num_labels=1)
    BertForSequenceClassification(cfg).eval().save_pretrained(str(d))
    (d / "manifest.json").write_text(json.dumps({"weights_sha256": cross._sha256(d / "model.safetensors"),
                                                 "settings": {"max_length": 32}}))


def test_onnx_int8_copy_is_built_checked_and_read(tmp_path, monkeypatch) -> None:
    """The onnxruntime int8 copy: exported from the fp32 weights and checked against torch, quantized,
    sha256-recorded, and read back one pair per call close to the fp32 model; built once."""
    monkeypatch.setenv("WIDEMEM_BENCH_CACHE", str(tmp_path))
    key = "d" * 64
    _tiny_build(tmp_path, key)
    out = cross_quant.build_onnx_int8(key, log=lambda _: None)
    meta = json.loads((out / "manifest.json").read_text())
    assert meta["export_max_logit_gap"] <= cross_quant.ONNX_CHECK_TOL
    assert meta["weights_sha256"] == cross._sha256(out / cross_quant.ONNX_INT8_FILE)
    assert not (out / "model.fp32.onnx").exists()
    said: list[str] = []
    assert cross_quant.build_onnx_int8(key, log=said.append) == out and "already built" in said[0]
    pairs = [("what is my doctor's name?", "dr she lives in the city"), ("which city?", "moved to a city on time"),
             ("when", "")]
    try:
        q = cross.load_cross(key, "onnx-int8")
        fp = cross.load_cross(key, "fp32")
        got, want = q.scores(pairs), fp.scores(pairs)
        assert np.abs(got - want).max() < 0.1 * max(1.0, float(np.abs(want).max()))
        alone = [cross.CrossScorer(key, q.model, q.tokenizer, 32, {}, "onnx-int8").scores([p])[0] for p in pairs]
        assert got.tolist() == alone  # a pair's score never depends on the others scored with it
        assert cross.weights_record(key, "onnx-int8")["onnx_int8_weights_sha256"] == meta["weights_sha256"]
    finally:
        cross._LOADED.pop(key, None)
        cross._LOADED.pop(f"{key}:onnx-int8", None)


def test_fit_v4_from_given_rows_names_its_version() -> None:
    """fit_v4's machinery end to end on made-up rows (its imports resolve; the file says which reading it fits)."""
    import pandas as pd

    from widemem_bench.answerability.fit_v3 import FitOptions
    from widemem_bench.answerability.fit_v4 import VERSION, fit_v4

    rng = np.random.default_rng(0)
    n = 4000
    kinds = rng.choice(["answerable", "hard_negative", "other_person", "never_mentioned"], n, p=[.5, .2, .15, .15])
    x = rng.normal(size=(n, len(FEATURES_V4)))
    x[:, FEATURES_V4.index("cross_max")] += 6 * (kinds == "answerable")
    f = pd.DataFrame({"world": "timelines", "kind": kinds, "group": [f"u{i % 200}" for i in range(n)],
                      "top1": rng.uniform(size=n), "cross_max": x[:, FEATURES_V4.index("cross_max")]})
    info = {"key": KEY, "folder": "-", "quant": VERSION["cross_quant"], "top_k": VERSION["cross_top_k"],
            "users_dropped": 0, "questions_dropped": 0}
    s, frame = fit_v4("hash-test", FitOptions(worlds=("timelines",)), rows=(None, f, x, [], info))
    assert (s.quant, s.top_k, s.meta["version"]) == (VERSION["cross_quant"], VERSION["cross_top_k"], VERSION["version"])
    assert s.cutoffs[0] >= s.cutoffs[1] >= s.cutoffs[2]
    assert s.meta["figures_certifying_users"]["timelines"]["auroc_v4"] > 0.8 and len(frame) == n


def test_the_committed_file_is_pinned_and_a_hand_edit_is_refused_in_one_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil
    from pathlib import Path

    from widemem_bench.answerability import v4
    from widemem_bench.answerability.v2 import FILES_DIR
    from widemem_bench.engine.pins import pins, sha256

    committed = Path(FILES_DIR) / "minilm-l6.v4.json"
    assert pins(Path(FILES_DIR) / "pins.json")["minilm-l6.v4.json"] == sha256(committed.read_bytes())
    folder = tmp_path / "files"
    folder.mkdir()
    shutil.copy(committed, folder / committed.name)
    shutil.copy(Path(FILES_DIR) / "pins.json", folder / "pins.json")
    monkeypatch.setattr(v4, "FILES_DIR", folder)
    v4.set_scorer_v4(None)
    assert v4.load_scorer_v4("minilm-l6").cutoffs[0] > 0  # the pinned bytes load
    v4.set_scorer_v4(None)
    text = (folder / committed.name).read_text("utf-8")
    high = str(json.loads(text)["cutoffs"][0])
    (folder / committed.name).write_text(text.replace(high, high[:-1] + ("1" if high[-1] != "1" else "2"), 1), "utf-8")
    with pytest.raises(ValueError, match=r"answerability v4: .*`make fit-v4`") as err:
        v4.load_scorer_v4("minilm-l6")
    assert "\n" not in str(err.value)
    v4.set_scorer_v4(None)
