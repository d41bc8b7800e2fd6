"""Engine core: extractors, LLM client (recorded replies), resolvers, MemoryEngine add/search/pin/delete."""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from _embedders import HashNgramEmbedder, make_test_embedder

from widemem_bench.engine import (
    Confidence,
    EngineConfig,
    MemoryEngine,
    RetrievalMode,
    classify_ymyl,
    compute_recency,
    parse_slot,
)
from widemem_bench.engine.extractors import (
    Fact,
    RuleExtractor,
    VerbatimExtractor,
    make_extractor,
    parse_facts,
    rule_importance,
)
from widemem_bench.engine.llm import (
    ChatClient,
    LLMError,
    LLMReplyError,
    chat_completions_url,
    parse_json_object,
    urllib_transport,
)
from widemem_bench.engine.resolvers import (
    Action,
    AppendResolver,
    LLMResolver,
    OracleResolver,
    RuleResolver,
    make_resolver,
    parse_actions,
)
from widemem_bench.engine.store import Memory, content_hash
from widemem_bench.harness import build_engine

FIXTURES = Path(__file__).parent / "fixtures" / "llm"
T0 = dt.datetime(2024, 1, 1)


def _recorded(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


class FakeTransport:
    """Replays recorded response bodies in order and keeps every request."""

    def __init__(self, *names: str) -> None:
        self.replies = [_recorded(n) for n in names]
        self.requests: list[tuple[str, dict, dict, float]] = []

    def __call__(self, url, payload, headers, timeout):
        self.requests.append((url, dict(payload), dict(headers), timeout))
        return self.replies.pop(0)


def _mem(mid: str, content: str, user: str = "u", slot=None) -> Memory:
    return Memory(mid, user, content, 5.0, T0, T0, T0, None, slot, content_hash(content))


@pytest.fixture
def emb():
    return make_test_embedder()


# ------------------------------------------------------------------ extractors
def test_verbatim_extractor():
    assert VerbatimExtractor().extract("  I  live in Paris \n") == [Fact("I live in Paris", 5.0)]


@pytest.mark.parametrize(
    "text, facts",
    [
        ("I moved to Boston and I work at Acme.", ["moved to Boston", "work at Acme"]),
        ("My sister lives in Denver", ["sister lives in Denver"]),
        ("I'm allergic to peanuts! Where do I live? I love sushi.", ["allergic to peanuts", "love sushi"]),
        ("I've been vegan for years; my dog is called Rex", ["been vegan for years", "dog is called Rex"]),
        ("What is my name?", []),
        ("I live in Paris. I live in Paris.", ["live in Paris"]),
    ],
)
def test_rule_extractor(text, facts):
    assert [f.content for f in RuleExtractor().extract(text)] == facts


def test_rule_importance_heuristic():
    assert rule_importance("work at Acme") == 7.0
    assert rule_importance("love sushi") == 6.0
    assert rule_importance("went for a walk") == 5.0


def test_make_extractor_errors():
    with pytest.raises(ValueError, match="extractor: unknown"):
        make_extractor("magic")
    with pytest.raises(ValueError, match="llm_url"):
        make_extractor("llm")


# ---------------------------------------------------------------- llm client
@pytest.mark.parametrize(
    "url, full",
    [
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
        ("http://localhost:11434/v1/", "http://localhost:11434/v1/chat/completions"),
        ("https://x.org/v1/chat/completions", "https://x.org/v1/chat/completions"),
    ],
)
def test_chat_completions_url(url, full):
    assert chat_completions_url(url) == full


def test_client_rejects_bad_settings():
    with pytest.raises(ValueError, match="llm_url"):
        ChatClient("localhost:11434", "m")
    with pytest.raises(ValueError, match="llm_model"):
        ChatClient("http://h", " ")
    with pytest.raises(ValueError, match="llm_timeout"):
        ChatClient("http://h", "m", timeout=0)


def test_parse_json_object_tolerance():
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('sure!\n```json\n{"a": [1, 2]}\n```\nbye') == {"a": [1, 2]}
    assert parse_json_object('prefix {"a": {"b": 2}} suffix {"c": 3}') == {"a": {"b": 2}}
    with pytest.raises(LLMReplyError, match="no JSON object"):
        parse_json_object("[1, 2, 3]")
    with pytest.raises(LLMReplyError, match="empty"):
        parse_json_object("  ")


def test_llm_extractor_recorded_plain_reply():
    transport = FakeTransport("extract_plain.json")
    client = ChatClient("http://localhost:11434/v1", "llama3.1:8b", api_key="k", transport=transport)
    facts = make_extractor("llm", client).extract("I moved to Boston, I work at Acme")
    assert facts == [Fact("moved to Boston", 8.0), Fact("works at Acme", 7.0)]
    url, payload, headers, timeout = transport.requests[0]
    assert url == "http://localhost:11434/v1/chat/completions"
    assert payload["model"] == "llama3.1:8b" and payload["temperature"] == 0
    assert [m["role"] for m in payload["messages"]] == ["system", "user"]
    assert "I moved to Boston" in payload["messages"][1]["content"]
    assert headers["Authorization"] == "Bearer k" and timeout == 60.0


def test_llm_extractor_recorded_fenced_reply_skips_bad_items():
    client = ChatClient("http://h", "m", transport=FakeTransport("extract_fenced.json"))
    facts = make_extractor("llm", client).extract("x")
    assert facts == [Fact("allergic to peanuts", 9.0), Fact("likes jazz", 4.0)]


@pytest.mark.parametrize(
    "name, error, match",
    [
        ("extract_garbage.json", LLMReplyError, "no JSON object"),
        ("extract_no_facts_key.json", LLMReplyError, "'facts' list"),
        ("error_model_not_found.json", LLMError, "not found"),
    ],
)
def test_llm_extractor_recorded_errors(name, error, match):
    client = ChatClient("http://h", "m", transport=FakeTransport(name))
    with pytest.raises(error, match=match):
        make_extractor("llm", client).extract("x")


def test_parse_facts_clamps_importance():
    facts = parse_facts({"facts": [{"content": "a b", "importance": 42}, {"content": "c", "importance": "x"}, "d"]})
    assert [(f.content, f.importance) for f in facts] == [("a b", 10.0), ("c", 5.0), ("d", 5.0)]


def test_urllib_transport_unreachable_is_llm_error():
    # Port 9 (discard) is closed on test machines: a refused connection, no network needed.
    with pytest.raises(LLMError, match="unreachable"):
        urllib_transport("http://127.0.0.1:9/v1/chat/completions", {}, {}, 2.0)


# ------------------------------------------------------------------ resolvers
@pytest.mark.parametrize(
    "content, slot",
    [
        ("moved to Boston", ("user", "location", "boston")),
        ("live in San Francisco", ("user", "location", "san francisco")),
        ("work at Acme Corp since May", ("user", "employer", "acme corp")),
        ("work as a data engineer", ("user", "job", "data engineer")),
        ("sister lives in Denver", ("sister", "location", "denver")),
        ("My sister moved to Austin last week", ("sister", "location", "austin")),
        ("am vegan now", ("user", "diet", "vegan")),
        ("married to Sam", ("user", "partner", "sam")),
        ("no longer vegan", None),
        ("allergic to peanuts", None),
    ],
)
def test_parse_slot(content, slot):
    assert parse_slot(content) == slot


def test_rule_resolver_update_none_add():
    sf, acme, sis = _mem("m1", "live in San Francisco"), _mem("m2", "work at Acme"), _mem("m3", "sister lives in Denver")
    cands = [(sis, 0.7), (sf, 0.5), (acme, 0.2)]
    facts = [Fact("moved to Boston"), Fact("work at Acme"), Fact("works at Acme!"), Fact("likes tea"), Fact("sister moved to Austin")]
    actions = RuleResolver().decide(facts, [cands] * len(facts))
    assert actions == [
        Action("UPDATE", 0, "m1"),  # same subject+attribute, new value
        Action("NONE", 1, "m2"),  # identical content
        Action("NONE", 2, "m2"),  # same slot, same value
        Action("ADD", 3),  # no slot parsed
        Action("UPDATE", 4, "m3"),  # a relation's own slot
    ]


def test_oracle_and_append_resolvers():
    old = _mem("m1", "live in Paris", slot=("user", "home"))
    facts = [Fact("moved to Rome", slot=("user", "home")), Fact("live in Paris", slot=("user", "home")), Fact("x", slot=("user", "job"))]
    assert OracleResolver().decide(facts, [[(old, 0.3)]] * 3) == [
        Action("UPDATE", 0, "m1"), Action("NONE", 1, "m1"), Action("ADD", 2)
    ]
    assert AppendResolver().decide(facts, [[(old, 0.9)]] * 3) == [Action("ADD", i) for i in range(3)]
    with pytest.raises(ValueError, match="resolver: unknown"):
        make_resolver("psychic")


def test_llm_resolver_recorded_replies():
    a, b = _mem("ida", "live in Paris"), _mem("idb", "work at Acme")
    facts = [Fact("moved to Rome"), Fact("work at Acme")]
    transport = FakeTransport("resolve_update.json", "resolve_bad_targets.json")
    resolver = LLMResolver(ChatClient("http://h", "m", transport=transport))
    assert resolver.decide(facts, [[(a, 0.8), (b, 0.1)], [(b, 0.9)]]) == [
        Action("UPDATE", 0, "ida"), Action("NONE", 1, "idb")
    ]
    prompt = transport.requests[0][1]["messages"][1]["content"]
    assert "[0] live in Paris" in prompt and "[1] work at Acme" in prompt
    # target 7 does not exist, DELETE without target, index 5 out of range: all fall back to ADD
    assert resolver.decide(facts, [[(a, 0.8)], [(b, 0.9)]]) == [Action("ADD", 0), Action("ADD", 1)]


def test_llm_resolver_failure_adds_everything():
    def down(*args):
        raise LLMError("llm_url: down")

    resolver = LLMResolver(ChatClient("http://h", "m", transport=down))
    assert resolver.decide([Fact("a")], [[(_mem("x", "b"), 0.5)]]) == [Action("ADD", 0)]


def test_parse_actions_requires_list():
    with pytest.raises(LLMReplyError, match="actions"):
        parse_actions({"result": []}, 1, [])


# ---------------------------------------------------------------- engine: add
class SpyResolver:
    name = "spy"

    def __init__(self, inner=None):
        self.calls: list[list[list[tuple[Memory, float]]]] = []
        self.inner = inner or AppendResolver()

    def decide(self, facts, candidates):
        self.calls.append([list(c) for c in candidates])
        return self.inner.decide(facts, candidates)


def test_no_candidates_means_no_resolver_call(emb):
    eng = MemoryEngine(emb)
    eng.resolver = spy = SpyResolver()
    eng.add_fact("live in Paris", "u", at=T0)
    assert spy.calls == []
    eng.add_fact("work at Acme", "u", at=T0)
    assert len(spy.calls) == 1 and [m.content for m, _ in spy.calls[0][0]] == ["live in Paris"]


def test_candidates_are_same_user_nearest_first_and_floored(emb):
    eng = MemoryEngine(emb, EngineConfig(candidate_k=2))
    for i, text in enumerate(["live in Paris", "live in Parma", "live in Perth", "work at Acme"]):
        eng.add_fact(text, "u", at=T0 + dt.timedelta(days=i))
        eng.add_fact(text + " too", "other", at=T0)
    eng.resolver = spy = SpyResolver()
    eng.add_fact("live in Paris now", "u", at=T0)
    (cands,) = spy.calls[-1]
    assert len(cands) == 2 and all(m.user_id == "u" for m, _ in cands)
    assert cands[0][1] >= cands[1][1]
    floored = MemoryEngine(emb, EngineConfig(similarity_floor=0.99))
    floored.add_fact("live in Paris", "u")
    floored.resolver = spy2 = SpyResolver()
    floored.add_fact("work at Acme", "u")
    assert spy2.calls == []  # the only neighbour is below the floor


def test_identical_content_is_never_stored_twice_per_user(emb):
    eng = MemoryEngine(emb, EngineConfig(candidate_k=1))
    for _ in range(3):
        eng.add_fact("live in Paris", "u")
    for i in range(5):
        eng.add_fact(f"filler fact number {i}", "u")
    res = eng.add_fact("live in Paris", "u")  # no longer within the single candidate
    assert res.actions[0].kind == "NONE"
    eng.add_fact("live in Paris", "v")
    assert [m.content for m in eng.memories("u")].count("live in Paris") == 1
    assert [m.content for m in eng.memories("v")] == ["live in Paris"]


def test_update_keeps_created_at_and_logs_history(emb):
    eng = MemoryEngine(emb, EngineConfig(resolver="rule", extractor="rule"))
    first = eng.add("I live in San Francisco.", "u", at=T0).memories[0]
    later = T0 + dt.timedelta(days=40)
    res = eng.add("I moved to Boston!", "u", at=later)
    assert res.actions == [Action("UPDATE", 0, first.id)]
    mem = eng.get(first.id)
    assert mem.content == "moved to Boston" and mem.created_at == T0 and mem.updated_at == later
    eng.pin("I moved to Boston", "u", importance=9.5)  # identical: deduplicated, so not raised
    assert eng.get(first.id).importance == 7.0
    gone = T0 + dt.timedelta(days=90)
    assert eng.delete(first.id, at=gone) is True and eng.delete(first.id) is False
    hist = eng.history(first.id)
    assert [(h.action, h.old_content, h.new_content) for h in hist] == [
        ("ADD", None, "live in San Francisco"),
        ("UPDATE", "live in San Francisco", "moved to Boston"),
        ("DELETE", "moved to Boston", None),
    ]
    assert hist[1].at == later and hist[2].at == gone


def test_pin_raises_importance_and_logs_pin(emb):
    eng = MemoryEngine(emb, EngineConfig(extractor="rule"))
    res = eng.pin("I live in Lisbon. I like green tea.", "u", importance=9.0, at=T0)
    assert [m.importance for m in res.memories] == [9.0, 9.0]
    assert [h.action for h in eng.history(res.memories[0].id)] == ["ADD", "PIN"]
    assert all(m.importance == 9.0 for m in eng.memories("u"))
    high = eng.add_fact("blood type is O negative", "u", importance=10.0)
    eng.pin("blood type is 0 negative", "u", importance=9.0)
    assert eng.get(high.memories[0].id).importance == 10.0  # pin never lowers


def test_delete_checks_owner(emb):
    eng = MemoryEngine(emb)
    mid = eng.add_fact("live in Paris", "alice").memories[0].id
    assert eng.delete(mid, user_id="bob") is False
    assert eng.get(mid) is not None
    assert eng.delete(mid, user_id="alice") is True


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda e: e.add("   ", "u"), "text: must not be empty"),
        (lambda e: e.add(42, "u"), "text: expected a string"),
        (lambda e: e.add("x" * 101, "u"), "max_text_chars=100"),
        (lambda e: e.add("fine", ""), "user_id"),
        (lambda e: e.add_fact("fine", "u", importance=10.5), "importance: must be in 0-10"),
        (lambda e: e.add_fact("fine", "u", importance=-1), "importance: must be in 0-10"),
        (lambda e: e.add_fact("fine", "u", importance=True), "importance"),
        (lambda e: e.add_fact("fine", "u", at="2024-01-01"), "at: expected a datetime"),
        (lambda e: e.add_fact("fine", "u", slot=("user",)), "slot"),
        (lambda e: e.pin("fine", "u", importance=11), "importance"),
        (lambda e: e.search("where?", "u", mode="turbo"), "unknown mode"),
        (lambda e: e.search("", "u"), "query"),
        (lambda e: e.search("where?", "u", top_k=0), "top_k"),
    ],
)
def test_bad_input_is_a_clear_error_without_partial_write(emb, call, match):
    eng = MemoryEngine(emb, EngineConfig(max_text_chars=100))
    eng.add_fact("live in Paris", "u")
    with pytest.raises(ValueError, match=match):
        call(eng)
    assert [m.content for m in eng.memories("u")] == ["live in Paris"]
    assert eng.store.history_count == 1


def test_config_is_validated(emb):
    with pytest.raises(ValueError, match="weights"):
        MemoryEngine(emb, EngineConfig(weights=(0.5, 0.3, 0.3)))
    with pytest.raises(ValueError, match="thresholds"):
        EngineConfig(thresholds=(0.3, 0.5, 0.2))
    with pytest.raises(ValueError, match="llm_url"):
        MemoryEngine(emb, EngineConfig(extractor="llm"))


def test_llm_extractor_through_engine(emb):
    cfg = EngineConfig(extractor="llm", llm_url="http://localhost:11434", llm_model="llama3.1:8b")
    eng = MemoryEngine(emb, cfg, llm_transport=FakeTransport("extract_plain.json"))
    eng.add("I moved to Boston and I work at Acme", "u", at=T0)
    assert [(m.content, m.importance) for m in eng.memories("u")] == [("moved to Boston", 8.0), ("works at Acme", 7.0)]


# -------------------------------------------------------------- engine: search
def _engine_with(emb, cfg=None, n=0, user="u"):
    eng = build_engine(emb, cfg or EngineConfig())
    texts = ["live in San Francisco", "work as a data engineer", "allergic to peanuts", "sister lives in Denver"]
    texts += [f"note {i}: bought {i} apples at the market" for i in range(n)]
    for i, t in enumerate(texts):
        eng.add_fact(t, user, importance=float(1 + i % 9), at=T0 + dt.timedelta(days=i))
    return eng


def test_search_scores_match_widemem_formula(emb):
    eng = _engine_with(emb)
    now = T0 + dt.timedelta(days=60)
    q = "tell me about my family"  # "other" query: configured weights, no two-pass
    res = eng.search(q, "u", now=now)
    assert res.weights == (0.5, 0.3, 0.2) and res.query_kind == "other"
    qv = emb.encode([q], kind="query")[0]
    for hit in res:
        cos = float(emb.encode([hit.memory.content])[0] @ qv)
        age = (now - hit.memory.created_at).total_seconds() / 86400
        expected = 0.5 * cos + 0.3 * hit.memory.importance / 10 + 0.2 * math.exp(-0.01 * age)
        assert hit.raw_similarity_score == pytest.approx(cos, abs=1e-6)
        assert hit.final_score == pytest.approx(expected, abs=1e-6)
    assert [h.final_score for h in res] == sorted((h.final_score for h in res), reverse=True)
    assert res.confidence == Confidence.NONE or res.has_relevant


def test_factual_query_weights_and_two_pass_boost(emb):
    on = _engine_with(emb, n=6)
    off = _engine_with(emb, EngineConfig(two_pass_boost=False), n=6)
    q = "where does my sister live?"
    a, b = on.search(q, "u", now=T0), off.search(q, "u", now=T0)
    assert a.weights == (0.75, 0.10, 0.15) and a.query_kind == "factual"
    base = {h.memory.id: h.final_score for h in b}
    top_final = max(base.values())
    top5 = sorted(b, key=lambda h: -h.raw_similarity_score)[:5]
    for h in a:
        bonus = top_final * 0.15 if h.memory.id in {t.memory.id for t in top5} else 0.0
        assert h.final_score == pytest.approx(base[h.memory.id] + bonus, abs=1e-9)
    fixed = _engine_with(emb, EngineConfig(adapt_weights=False), n=6).search(q, "u", now=T0)
    assert fixed.weights == (0.5, 0.3, 0.2)


def test_fetch_k_and_top_k(emb):
    eng = _engine_with(emb, n=60)
    q = "apples"  # "other" query: fetch_k = top_k * 3
    res = eng.search(q, "u", mode="fast", now=T0)
    assert len(res) == 10 and res.mode == RetrievalMode.FAST
    pool = {m.id for m, _ in eng.store.search("u", emb.encode([q], kind="query")[0], 30)}
    assert {h.memory.id for h in res} <= pool
    assert len(eng.search(q, "u", top_k=3, now=T0)) == 3
    assert len(eng.search(q, "u", now=T0)) == 25  # balanced preset
    assert len(eng.search(q, "u", mode="deep", now=T0)) == 50
    assert eng.search(q, "nobody").confidence == Confidence.NONE


def test_age_from_clock_vs_insert(emb):
    clock = _engine_with(emb, EngineConfig(decay_function="step"))
    insert = _engine_with(emb, EngineConfig(decay_function="step", age_from="insert"))
    now = T0 + dt.timedelta(days=200)
    assert {h.recency_score for h in clock.search("family", "u", now=now)} == {0.1}
    assert {h.recency_score for h in insert.search("family", "u", now=now)} == {1.0}


def test_thresholds_tuple_and_env_override(emb, monkeypatch):
    eng = _engine_with(emb)
    res = eng.search("live in San Francisco", "u", now=T0)
    top = res[0].raw_similarity_score
    assert res.thresholds == (0.6, 0.5, 0.3)  # not MiniLM: widemem's default table
    assert res.confidence == (Confidence.HIGH if top >= 0.6 else res.confidence)
    low = MemoryEngine(emb, EngineConfig(thresholds=(0.99, 0.98, 0.97)))
    low.add_fact("live in Paris", "u")
    assert low.search("tell me about cooking pasta", "u").confidence == Confidence.NONE
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_HIGH", "0.0")
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_MODERATE", "0.0")
    monkeypatch.setenv("WIDEMEM_CONFIDENCE_LOW", "0.0")
    assert eng.search("tell me about cooking pasta", "u").confidence == Confidence.HIGH


def test_calibrated_thresholds_come_from_the_calibration_file(emb, monkeypatch):
    calls = []

    def load_calibration(name):
        calls.append(name)
        return types.SimpleNamespace(thresholds=(0.0, 0.0, 0.0))

    stub = types.ModuleType("stub")
    stub.load_calibration = load_calibration  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "widemem_bench.calibration", stub)
    eng = _engine_with(emb, EngineConfig(thresholds="calibrated"))
    res = eng.search("tell me about cooking pasta", "u")
    eng.search("where do I live?", "u")
    assert res.thresholds == (0.0, 0.0, 0.0) and res.confidence == Confidence.HIGH
    assert calls == [emb.name]  # read once per engine

    def missing(name):
        raise FileNotFoundError(f"no calibration file for embedder {name!r}")

    stub.load_calibration = missing  # type: ignore[attr-defined]
    with pytest.raises(FileNotFoundError, match="no calibration file"):
        _engine_with(emb, EngineConfig(thresholds="calibrated")).search("where?", "u")
    bare = MemoryEngine(emb, EngineConfig(thresholds="calibrated"))  # nothing handed: one line
    with pytest.raises(ValueError, match=r"calibrated.*build_engine"):
        bare.search("where?", "u")


def test_topic_weights_multiply(emb):
    plain = _engine_with(emb)
    topical = _engine_with(emb, EngineConfig(topic_weights=(("peanut", 2.0),)))
    q = "tell me everything"
    base = {h.memory.content: h.final_score for h in plain.search(q, "u", now=T0)}
    for h in topical.search(q, "u", now=T0):
        factor = 2.0 if "peanut" in h.memory.content else 1.0
        assert h.final_score == pytest.approx(base[h.memory.content] * factor, abs=1e-9)


def test_ymyl_floor_immunity_and_contradiction_check(emb):
    off = MemoryEngine(emb)
    assert off.add_fact("allergic to peanuts", "u", importance=3, at=T0).memories[0].importance == 3.0
    cfg = EngineConfig(ymyl_enabled=True, ymyl_contradiction_threshold=-1.0)
    eng = MemoryEngine(emb, cfg)
    mem = eng.add_fact("allergic to peanuts", "u", importance=3, at=T0).memories[0]
    assert mem.importance == 8.0
    assert mem.ymyl_category == classify_ymyl("allergic to peanuts").category is not None
    weak = eng.add_fact("saw the doctor", "u", importance=3, at=T0).memories[0]
    assert weak.importance == 3.0 and weak.ymyl_category is None  # weak: unchanged, as in 2.0.2
    res = eng.add_fact("severe allergic reaction to shellfish", "u", at=T0)
    assert {c.memory_id for c in res.conflicts} == {mem.id, weak.id}
    hits = {h.memory.id: h for h in eng.search("allergies", "u", now=T0 + dt.timedelta(days=400))}
    assert hits[mem.id].recency_score == 1.0
    assert hits[weak.id].recency_score == pytest.approx(compute_recency(400.0, "exponential"))
    gated = MemoryEngine(emb, EngineConfig(ymyl_enabled=True))
    gated.add_fact("work at Acme", "u")
    assert gated.add_fact("allergic to peanuts", "u").conflicts == []  # below the 0.6 gate


def test_answerability_confidence_is_handed_to_the_engine(emb, monkeypatch):
    # The engine does not import a scorer: without a handed confidence_fn it refuses the
    # setting in one line; harness.build_engine hands it answerability's.
    with pytest.raises(ValueError, match=r"scored outside the engine.*build_engine"):
        MemoryEngine(emb, EngineConfig(confidence="answerability"))
    with pytest.raises(ValueError, match="confidence_fn"):
        MemoryEngine(emb, confidence_fn=lambda q, r, t: "low")
    monkeypatch.setitem(sys.modules, "widemem_bench.answerability", types.ModuleType("stub"))
    with pytest.raises(ValueError, match="answerability"):
        _engine_with(emb, EngineConfig(confidence="answerability"))
    stub = types.ModuleType("stub")
    seen = []
    stub.assess_confidence = lambda query, results, **kw: seen.append(kw["version"]) or "low"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "widemem_bench.answerability", stub)
    eng = _engine_with(emb, EngineConfig(confidence="answerability"))
    assert eng.search("where do I live?", "u").confidence == Confidence.LOW and seen == ["answerability"]
    handed = MemoryEngine(emb, EngineConfig(confidence="answerability_v1"),
                          confidence_fn=lambda q, r, t: "moderate")
    handed.add_fact("live in Paris", "u")
    assert handed.search("where do I live?", "u").confidence == Confidence.MODERATE


def test_users_are_isolated_in_search(emb):
    eng = _engine_with(emb, user="alice", n=5)
    eng.add_fact("live in San Francisco", "bob")
    for q in ("where do I live?", "apples", "live in San Francisco"):
        assert {h.memory.user_id for h in eng.search(q, "bob")} == {"bob"}
        assert {h.memory.user_id for h in eng.search(q, "alice")} == {"alice"}


def test_sqlite_engine_survives_restart(emb, tmp_path):
    path = tmp_path / "mem.db"
    with MemoryEngine(emb, EngineConfig(resolver="rule"), store_path=path) as eng:
        for i, t in enumerate(["live in Paris", "work at Acme", "moved to Rome"]):
            eng.add_fact(t, "u", at=T0 + dt.timedelta(days=i))
        before = [(h.memory, h.final_score) for h in eng.search("where do I live?", "u", now=T0)]
    with MemoryEngine(emb, EngineConfig(resolver="rule"), store_path=path) as again:
        after = [(h.memory, h.final_score) for h in again.search("where do I live?", "u", now=T0)]
        assert after == before and len(again.memories("u")) == 2
    with pytest.raises(ValueError, match="embedder"):
        MemoryEngine(HashNgramEmbedder(dim=emb.dim, n=4), store_path=path)


def test_search_result_is_a_sequence(emb):
    res = _engine_with(emb).search("where do I live?", "u", now=T0)
    assert len(res) == 4 and res[0] is next(iter(res)) and len(res[:2]) == 2
    assert isinstance(res.confidence, Confidence) and np.isfinite(res[0].final_score)
