"""The `structure` resolver on hand-written scenarios (phrasings written for this file).

Each scenario runs through the engine with the test embedder (a real nearest-neighbour
search over every earlier fact: k is large) and the real spaCy parse, so the frame table
fitted on development data decides the frames.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from _embedders import make_test_embedder

from widemem_bench.engine import EngineConfig, MemoryEngine
from widemem_bench.engine.structure import Claim, FrameTable, claims, load_table, supersedes
from widemem_bench.evaluation import outside
from widemem_bench.language import parse

T0 = dt.datetime(2025, 3, 1, 9)


def _replay(*facts: str, k: int = 10) -> tuple[list[str], list[str]]:
    eng = MemoryEngine(make_test_embedder(), EngineConfig(resolver="structure", candidate_k=k))
    kinds = []
    try:
        for day, fact in enumerate(facts):
            res = eng.add_fact(fact, "u", at=T0 + dt.timedelta(days=day))
            kinds.extend(a.kind for a in res.actions)
        return sorted(m.content for m in eng.memories("u")), kinds
    finally:
        eng.close()


# ------------------------------------------------------------------ plain updates
@pytest.mark.parametrize("old, new", [
    ("i rent a flat in leeds city centre, third floor, no lift", "we moved down to bristol last weekend, boxes everywhere"),
    ("I live in Manchester", "I moved to Glasgow in March"),
    ("my manager is Tomasz", "my manager is Aoife now"),
])
def test_a_plain_change_retires_the_old_fact(old: str, new: str) -> None:
    stored, kinds = _replay("my favourite band is Wet Leg", old, new)
    assert old not in stored and new in stored, kinds
    assert "my favourite band is Wet Leg" in stored
    assert kinds[-1] == "UPDATE"


def test_the_same_fact_twice_is_no_new_memory() -> None:
    stored, kinds = _replay("I live in Manchester", "I live in Manchester")
    assert stored == ["I live in Manchester"] and kinds[-1] == "NONE"


# ------------------------------------------------------------------ keeps
@pytest.mark.parametrize("facts", [
    ("I have a dog named Rex", "we got a second dog, a collie called Fern"),  # a second pet
    ("I live in Manchester", "my sister moved to Paris last month"),  # a relative's move
    ("I live in Manchester", "flying to Rome next week for a conference"),  # a trip
    ("I live in Manchester", "I also have a flat in Lisbon"),  # additive cue
    ("I speak Polish", "I speak Spanish too"),
])
def test_look_alikes_keep_every_true_fact(facts: tuple[str, ...]) -> None:
    stored, kinds = _replay(*facts)
    assert stored == sorted(facts), kinds
    assert "UPDATE" not in kinds


def test_never_across_subjects() -> None:
    stored, kinds = _replay("my brother works at Deloitte", "my wife works at Accenture", "I work at KPMG")
    assert len(stored) == 3 and "UPDATE" not in kinds
    new = claims(parse("my wife lives in Leeds"))
    old = claims(parse("I live in York"))
    assert new and old and {c.owner for c in new} == {"user"} and all(c.frame.startswith("wife:") for c in new)
    table = load_table()
    assert not any(supersedes(n, o, table) for n in new for o in old)


@pytest.mark.parametrize("text", ["", "   ", "😀😀", "Priya", "ok", "what city do I live in?"])
def test_an_unparseable_fact_is_stored_and_supersedes_nothing(text: str) -> None:
    assert claims(parse(text)) == ()
    stored, kinds = _replay("I live in Manchester", text) if text.strip() else _replay("I live in Manchester")
    assert "I live in Manchester" in stored
    assert "UPDATE" not in kinds
    if text.strip():
        assert text in stored


# ------------------------------------------------------------------ the four conditions
def _claim(owner: str = "user", frame: str = ":live in", value: str = "leeds", typ: str = "PLACE",
           additive: bool = False, negated: bool = False) -> Claim:
    from widemem_bench.engine.structure import value_words

    return Claim(owner, frame, value, value_words(value), typ, additive, negated)


def test_supersedes_needs_all_four_conditions() -> None:
    table = FrameTable(frozenset({(":live in", ":move to")}), frozenset({":speak"}), frozenset())
    old = _claim()
    assert supersedes(_claim(frame=":move to", value="bristol"), old, table)
    assert not supersedes(_claim(owner="user>sister", frame=":move to", value="bristol"), old, table)  # subject
    assert not supersedes(_claim(frame=":visit", value="bristol"), old, table)  # frame
    assert not supersedes(_claim(frame=":speak", value="welsh"), _claim(frame=":speak", value="polish"), table)  # multi
    assert not supersedes(_claim(frame=":move to", value="bristol", additive=True), old, table)  # additive
    assert not supersedes(_claim(frame=":move to", value="leeds"), old, table)  # same value
    assert supersedes(_claim(value="leeds", negated=True), old, table)  # "no longer lives in Leeds"


def test_the_frame_table_is_fitted_on_development_sets_only() -> None:
    table = load_table()
    assert table.sets and all(s.startswith(("timelines/train", "world_c/", "world_n/train")) for s in table.sets)
    assert table.multi and table.equiv


def test_a_missing_frame_table_is_a_one_line_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FileNotFoundError, match="make resolver-fit"):
        load_table(tmp_path / "none.json")


# ------------------------------------------------------------------ outside loader
def test_outside_loader_and_evaluator(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"id": "x1", "kind": "update", "person": "first", "oblique": False, "old": ["f1"], "new": "f2",
         "facts": [{"id": "f2", "text": "I moved to Glasgow in March", "day": 5},
                   {"id": "f1", "text": "I live in Manchester", "day": 1},
                   {"id": "f3", "text": "my favourite band is Wet Leg", "day": 2}]},
        {"id": "x2", "kind": "keep", "person": "first", "oblique": False, "old": [], "new": "f2",
         "facts": [{"id": "f1", "text": "I have a dog named Rex", "day": 1},
                   {"id": "f2", "text": "we got a second dog, a collie called Fern", "day": 3}]},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = outside.summary(outside.evaluate([path], ["append", "structure"], make_test_embedder(), 10))
    by = {r["resolver"]: r for r in got}
    assert by["append"]["updates right"] == 0 and by["structure"]["updates right"] == 1
    assert by["structure"]["true facts lost, keep"] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "y", "kind": "update", "facts": []}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1"):
        outside.load(bad)
