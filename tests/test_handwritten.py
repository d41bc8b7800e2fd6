"""The hand-written development files (datasets/handwritten) load and hold what their README says."""

from __future__ import annotations

from collections import Counter

import pytest

from widemem_bench.timelines.handwritten import ANSWER_KINDS, HANDWRITTEN, load, load_answers

WRITERS = tuple(f"w{i}" for i in range(1, 14))
FACTS = {"w1": 102, "w2": 105, "w3": 101, "w4": 104, "w5": 106, "w6": 104, "w7": 104, "w8": 104, "w9": 105, "w10": 104,
         "w11": 104, "w12": 104, "w13": 104}


@pytest.mark.parametrize("w", WRITERS)
def test_answer_files_hold_24_questions_per_kind_with_gold_only_for_answerable(w: str) -> None:
    users = load_answers(HANDWRITTEN / f"answer_{w}.jsonl")
    assert len(users) == 8 and sum(len(u.facts) for u in users) == FACTS[w]
    kinds = Counter(k for u in users for _, _, k, _ in u.questions)
    assert kinds == {k: 24 for k in ANSWER_KINDS}
    for u in users:
        ids = {f for f, _ in u.facts}
        for _, _, kind, gold in u.questions:
            assert (kind == "answerable") == bool(gold) and set(gold) <= ids


@pytest.mark.parametrize("w", WRITERS)
def test_update_files_hold_20_updates_and_20_keeps_old_before_new(w: str) -> None:
    scs = load(HANDWRITTEN / f"updates_{w}.jsonl")
    assert Counter(s.kind for s in scs) == {"update": 20, "keep": 20}
    assert Counter(s.person for s in scs if s.kind == "update") == {"first": 10, "third": 10}
    assert sum(s.oblique for s in scs if s.kind == "update") == 9
    for s in scs:
        day = {f: d for f, _, d in s.facts}
        assert (s.kind == "update") == bool(s.old) and all(day[o] < day[s.new] for o in s.old)


def test_a_missing_or_bad_file_is_one_line(tmp_path) -> None:
    with pytest.raises(ValueError, match="not found"):
        load_answers(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"user_id": "u", "facts": [], "questions": [{"id": "q", "text": "x", "kind": "odd"}]}\n')
    with pytest.raises(ValueError, match="unknown question kinds"):
        load_answers(bad)
