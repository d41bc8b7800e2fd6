"""The ``pair`` resolver: the structure resolver's gate, its pairs scored by a cross-encoder.

The trained cross-encoder is not loaded here (it is built by ``make resolver-cross``, outside
git): a stand-in scores the pairs, or a fake onnxruntime session; the committed record, its
pin and the one-line refusals are real. Every text is written for these tests.
"""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from _embedders import make_test_embedder

from widemem_bench.engine import EngineConfig, MemoryEngine, pair_cross
from widemem_bench.engine.resolvers import RESOLVERS, PairResolver, make_resolver

T0 = dt.datetime(2025, 3, 1, 9)


class _Pair:
    """A stand-in scorer: 0.99 for the (old, new) pairs in ``yes`` (every pair for "*"), else 0.01."""

    threshold = 0.95

    def __init__(self, *yes: tuple[str, str] | str) -> None:
        self.yes = set(yes)
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, pairs, groups, read):  # type: ignore[no-untyped-def]
        self.calls.append(list(pairs))
        return [0.99 if "*" in self.yes or p in self.yes else 0.01 for p in pairs]


def _replay(monkeypatch, *facts: str, pair: _Pair) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pair_cross, "load_pair_scorer", lambda *a, **k: pair)
    eng = MemoryEngine(make_test_embedder(), EngineConfig(resolver="pair", candidate_k=5))
    assert isinstance(eng.resolver, PairResolver) and eng.resolver.pair is pair
    kinds = []
    try:
        for day, fact in enumerate(facts):
            kinds.extend(a.kind for a in eng.add_fact(fact, "u", at=T0 + dt.timedelta(days=day)).actions)
        return sorted(m.content for m in eng.memories("u")), kinds
    finally:
        eng.close()


def test_pair_is_a_resolver_name_and_an_engine_setting() -> None:
    assert "pair" in RESOLVERS
    assert EngineConfig(resolver="pair").resolver == "pair"


def test_the_scorer_decides_what_the_gate_leaves_and_the_update_can_be_undone(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    old, new = "i rent a flat in leeds, third floor, no lift", "got the keys to our place in bristol today"
    stored, kinds = _replay(monkeypatch, "my favourite band is Wet Leg", old, new, pair=_Pair((old, new)))
    assert stored == sorted(["my favourite band is Wet Leg", new]) and kinds[-1] == "UPDATE"
    stored, kinds = _replay(monkeypatch, "my favourite band is Wet Leg", old, new, pair=_Pair())
    assert old in stored and "UPDATE" not in kinds


@pytest.mark.parametrize("facts", [
    ("my brother works at Deloitte", "my wife works at Accenture"),  # two possessed nouns: two people
    ("I speak Polish", "I speak Spanish too"),  # an additive cue
    ("I live in Manchester", "😀😀"),  # no triple: supersedes nothing
    ("Priya lives in Leeds", "Tom moved to Hull"),  # two names
])
def test_the_gate_holds_whatever_the_cross_encoder_says(monkeypatch, facts: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    stored, kinds = _replay(monkeypatch, *facts, pair=_Pair("*"))
    assert stored == sorted(facts) and "UPDATE" not in kinds


class _Session:
    """A fake onnxruntime session: the logit is the number of tokens of the batch's one row, minus 20."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def run(self, _names, feeds):  # type: ignore[no-untyped-def]
        ids = feeds["input_ids"]
        self.batches.append(int(ids.shape[0]))
        return [np.array([[float(ids.shape[1]) - 20.0]])]


def _tok(olds, news, **kw):  # type: ignore[no-untyped-def]
    n = len(olds[0].split()) + len(news[0].split())
    return {"input_ids": np.ones((len(olds), n), dtype=np.int64), "attention_mask": np.ones((len(olds), n)),
            "token_type_ids": np.zeros((len(olds), n))}


def test_the_scorer_scores_one_pair_per_call_and_remembers_it() -> None:
    rec = {"threshold": 0.95, "max_length": 96}
    s = pair_cross.PairCrossScorer(rec, sess := _Session(), _tok)
    pairs = [("a b c", "d e"), ("a", "b"), ("a b c", "d e")]
    got = s.score(pairs, [0, 0, 1], {})
    assert sess.batches == [1, 1]  # int8 activations are scaled per call: each pair alone, once
    want = [1 / (1 + np.exp(-(5 - 20))), 1 / (1 + np.exp(-(2 - 20)))]
    np.testing.assert_allclose(got, [want[0], want[1], want[0]])
    assert s.threshold == 0.95


def test_a_missing_or_damaged_build_is_refused_in_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rec = {"key": "pair-" + "a" * 64, "onnx_folder": "onnx-int8-" + "b" * 64, "onnx_int8_weights_sha256": "c" * 64,
           "threshold": 0.95, "max_length": 96}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec))

    def refusal(**kw) -> str:  # type: ignore[no-untyped-def]
        with pytest.raises(ValueError) as e:
            pair_cross.load_pair_scorer(**kw)
        assert "\n" not in str(e.value) and "make resolver-cross" in str(e.value)
        return str(e.value)

    assert "not built" in refusal(path=path, cache_root=tmp_path)
    onnx = tmp_path / "cross" / rec["onnx_folder"]
    onnx.mkdir(parents=True)
    (onnx / "model.int8.onnx").write_bytes(b"not the recorded weights")
    assert f"not the {'c' * 12}" in refusal(path=path, cache_root=tmp_path)
    assert "no record" in refusal(path=tmp_path / "absent.json", cache_root=tmp_path)
    path.write_text(json.dumps({**rec, "threshold": 1.5}))
    with pytest.raises(ValueError, match="threshold"):
        pair_cross.load_pair_scorer(path=path, cache_root=tmp_path)


def test_make_resolver_pair_without_its_build_is_one_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("WIDEMEM_BENCH_CACHE", str(tmp_path))
    pair_cross._LOADED.clear()
    with pytest.raises(ValueError, match=r"make resolver-cross") as e:
        make_resolver("pair")
    assert "\n" not in str(e.value)


def test_the_committed_record_is_pinned_and_names_development_data_only() -> None:
    rec = pair_cross.read_record()
    assert 0.5 <= rec["threshold"] < 1.0 and rec["onnx_folder"].startswith("onnx-int8-")
    from widemem_bench.answerability.pair_cross import HAND_FILES, WORLD_SETS

    assert all(f.startswith("handwritten/") or f in ("outside/updates_set1.jsonl", "outside/updates_set2.jsonl")
               for f in rec["settings"]["hand_files"]) and list(HAND_FILES) == rec["settings"]["hand_files"]
    assert dict(WORLD_SETS) == {"timelines": ("train", "validation"), "world_c": (), "world_n": ("train",)}


def test_hand_written_pairs_label_only_an_updates_old_facts_against_its_new_one() -> None:
    from widemem_bench.answerability.pair_cross import hand_pairs
    from widemem_bench.provenance import REPO_ROOT
    from widemem_bench.timelines.handwritten import load

    rel = "handwritten/updates_w1.jsonl"
    pairs = hand_pairs(rel)
    scenarios = load(REPO_ROOT / "datasets" / rel)
    assert sum(p["label"] for p in pairs) == sum(len(s.old) for s in scenarios if s.kind == "update")
    assert len(pairs) == sum(len(s.facts) * (len(s.facts) - 1) // 2 for s in scenarios)


def test_world_n_fresh_5_is_a_measuring_split_with_a_seed_never_used() -> None:
    from widemem_bench import sealed
    from widemem_bench.experiments.resolver_transfer import FRESH

    assert sealed.SETS["world N fresh 5"] == "measuring" and "world N fresh 5" in sealed.measuring_splits()
    assert FRESH["world_n_fresh5"] == "world N fresh 5" and sealed.FRESH_SPLIT5 == "fresh5"
    used = (0, 23, *(g["seed"] for g in (sealed.FRESH_N, sealed.FRESH_N2, sealed.FRESH_N3, sealed.FRESH_N4)))
    assert sealed.FRESH_N5["seed"] not in used
    assert {k: v for k, v in sealed.FRESH_N5.items() if k != "seed"} == \
        {k: v for k, v in sealed.FRESH_N.items() if k != "seed"}


def test_world_n_fresh_6_is_a_measuring_split_with_a_seed_never_used() -> None:
    from widemem_bench import sealed
    from widemem_bench.experiments.resolver_transfer import FRESH

    assert sealed.SETS["world N fresh 6"] == "measuring" and "world N fresh 6" in sealed.measuring_splits()
    assert FRESH["world_n_fresh6"] == "world N fresh 6" and sealed.FRESH_SPLIT6 == "fresh6"
    used = (0, 23, *(g["seed"] for g in (sealed.FRESH_N, sealed.FRESH_N2, sealed.FRESH_N3, sealed.FRESH_N4,
                                          sealed.FRESH_N5)))
    assert sealed.FRESH_N6["seed"] not in used
    assert {k: v for k, v in sealed.FRESH_N6.items() if k != "seed"} == \
        {k: v for k, v in sealed.FRESH_N.items() if k != "seed"}


def test_world_n_fresh_7_is_a_measuring_split_with_a_seed_never_used() -> None:
    from widemem_bench import sealed
    from widemem_bench.experiments.resolver_transfer import FRESH

    assert sealed.SETS["world N fresh 7"] == "measuring" and "world N fresh 7" in sealed.measuring_splits()
    assert FRESH["world_n_fresh7"] == "world N fresh 7" and sealed.FRESH_SPLIT7 == "fresh7"
    used = (0, 23, *(g["seed"] for g in (sealed.FRESH_N, sealed.FRESH_N2, sealed.FRESH_N3, sealed.FRESH_N4,
                                          sealed.FRESH_N5, sealed.FRESH_N6)))
    assert sealed.FRESH_N7["seed"] not in used
    assert {k: v for k, v in sealed.FRESH_N7.items() if k != "seed"} == \
        {k: v for k, v in sealed.FRESH_N.items() if k != "seed"}


def test_world_n_fresh_8_is_a_measuring_split_with_a_seed_never_used() -> None:
    from widemem_bench import sealed
    from widemem_bench.experiments.resolver_transfer import FRESH

    assert sealed.SETS["world N fresh 8"] == "measuring" and "world N fresh 8" in sealed.measuring_splits()
    assert FRESH["world_n_fresh8"] == "world N fresh 8" and sealed.FRESH_SPLIT8 == "fresh8"
    used = (0, 23, *(g["seed"] for g in (sealed.FRESH_N, sealed.FRESH_N2, sealed.FRESH_N3, sealed.FRESH_N4,
                                          sealed.FRESH_N5, sealed.FRESH_N6, sealed.FRESH_N7)))
    assert sealed.FRESH_N8["seed"] not in used
    assert {k: v for k, v in sealed.FRESH_N8.items() if k != "seed"} == \
        {k: v for k, v in sealed.FRESH_N.items() if k != "seed"}


def test_world_n_fresh_9_is_a_measuring_split_with_a_seed_never_used() -> None:
    from widemem_bench import sealed
    from widemem_bench.experiments.resolver_transfer import FRESH

    assert sealed.SETS["world N fresh 9"] == "measuring" and "world N fresh 9" in sealed.measuring_splits()
    assert FRESH["world_n_fresh9"] == "world N fresh 9" and sealed.FRESH_SPLIT9 == "fresh9"
    used = (0, 23, *(g["seed"] for g in (sealed.FRESH_N, sealed.FRESH_N2, sealed.FRESH_N3, sealed.FRESH_N4,
                                          sealed.FRESH_N5, sealed.FRESH_N6, sealed.FRESH_N7, sealed.FRESH_N8)))
    assert sealed.FRESH_N9["seed"] not in used
    assert {k: v for k, v in sealed.FRESH_N9.items() if k != "seed"} == \
        {k: v for k, v in sealed.FRESH_N.items() if k != "seed"}


def test_version_3_gate_lets_a_coordinated_change_reach_the_scorer(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # version 2's gate read the coordination as additive and refused; no additive word here
    old = "im driving a 2011 civic with 210k miles on it"
    new = "finally switched cars traded the civic in for a 2022 rav4 hybrid its so quiet i love it"
    stored, kinds = _replay(monkeypatch, old, new, pair=_Pair((old, new)))
    assert stored == [new] and kinds[-1] == "UPDATE"
    stored, kinds = _replay(monkeypatch, old, new + " and i also kept the civic", pair=_Pair("*"))
    assert old in stored and "UPDATE" not in kinds


def test_version_3_1_reads_a_degree_too_as_no_additive_cue(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # version 3 refused "barclays charged me too much" as if "too" added a second account (R40)
    old = "my salary goes into my barclays current account"
    new = "moved my salary account to monzo, barclays charges were too much"
    stored, kinds = _replay(monkeypatch, old, new, pair=_Pair((old, new)))
    assert stored == [new] and kinds[-1] == "UPDATE"
    # an additive "too" (modifying the verb) still refuses, whatever the scorer says
    stored, kinds = _replay(monkeypatch, old, "i opened a monzo account too", pair=_Pair("*"))
    assert old in stored and "UPDATE" not in kinds


def test_additive_uses_reads_too_by_its_head() -> None:
    from widemem_bench.engine.structure import additive_uses
    from widemem_bench.language import default_parser

    p = default_parser()
    assert additive_uses(p.parse_many(["it was too expensive so i left"])[0].tokens) == []
    assert additive_uses(p.parse_many(["i do yoga too"])[0].tokens) == ["too"]
    assert additive_uses(p.parse_many(["i also have a cat"])[0].tokens) == ["also"]


def test_other_stays_an_additive_cue_whatever_the_scorer_says(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # version 3.2 read "the other X" as the replaced one; a stranger's keep scenarios then lost the
    # sister's city (R46), so "other" refuses in every use, as before
    old = "my sister lives in boston"
    stored, kinds = _replay(monkeypatch, old, "the other sister lives in denver", pair=_Pair("*"))
    assert old in stored and "UPDATE" not in kinds
    from widemem_bench.engine.structure import additive_uses
    from widemem_bench.language import default_parser

    p = default_parser()
    for text in ("the other sim died", "i have one other car", "every other weekend"):
        assert additive_uses(p.parse_many([text])[0].tokens) == ["other"], text


def test_the_backend_tokenizes_a_pair_as_the_tokenizers_own_call() -> None:
    """The scorer feeds the tokenizer's Rust backend directly (for speed); its ids, mask and types
    must be the tokenizer's own call's, truncation of long pairs included (longest first)."""
    from transformers import AutoTokenizer

    from widemem_bench.answerability.cross import base_dir

    tok = AutoTokenizer.from_pretrained(str(base_dir()))
    s = pair_cross.PairCrossScorer({"threshold": 0.95, "max_length": 24}, _Session(), tok)
    assert s.fast is not None
    long = "rent is £1,150 pcm, paid on the 1st, landlord is slow with repairs " * 3
    for old, new in [("i rent a flat in leeds", "we moved down to bristol 🎉📦"), ("", ""), ("a", long),
                     (long, "moved"), (long, long[::-1]), ("Client Harpreet Sandhu: HbA1c 7.9%", "…?!")]:
        want = tok([old], [new], truncation=True, max_length=24, padding=True, return_tensors="np")
        got = s._feeds(old, new)
        for k in pair_cross.INPUTS:
            np.testing.assert_array_equal(got[k], np.asarray(want[k], dtype=np.int64), err_msg=f"{k}: {old!r}")


def test_an_ad_hoc_read_of_a_fresh_world_leaves_one_ledger_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import json

    from widemem_bench import sealed
    from widemem_bench.experiments.resolver_transfer import load_set

    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(ledger))
    monkeypatch.setenv(sealed.PURPOSE_ENV, sealed.MEASURE)  # make bench: a measuring read, no line
    tl, _ = load_set("world_n_fresh9", {})
    assert len(tl.events) and not ledger.exists()
    monkeypatch.setenv(sealed.PURPOSE_ENV, "a look at pair's misses")  # anything else: one line naming the set
    load_set("world_n_fresh9", {})
    lines = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [(x["set"], x["purpose"]) for x in lines] == [("world N fresh 9", "a look at pair's misses")]
