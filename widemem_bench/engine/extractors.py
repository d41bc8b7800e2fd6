"""Fact extractors: turn one user message into short facts with an importance 0-10.

- ``verbatim``: the whole text is one fact (importance 5 unless given).
- ``rule``: a deterministic sentence splitter and subject stripper that mimics
  what widemem's local LLM produces ("I moved to Boston" -> "moved to Boston").
- ``llm``: an OpenAI-compatible chat endpoint (see :mod:`.llm`).

The rule extractor's limits, on purpose kept simple and predictable:
- it splits on ``. ! ? ;`` and on ", and"/"and"/"but" only when a first-person
  clause follows ("... and I work at Acme", "... but my sister ...");
- it strips a leading first-person subject (I, I'm, I am, I've, I have, me,
  my); "My sister lives in Denver" becomes "sister lives in Denver";
- questions and fragments under 3 characters are dropped;
- it does not resolve pronouns ("she", "it"), does not split lists
  ("I like tea, coffee and cake" stays one fact) and does not understand
  negation or tense: "I no longer live in Boston" is kept as
  "no longer live in Boston".

Importance heuristic (widemem's rubric: 7-9 core identity, 4-6 context):
7 for home, work, family, health and diet facts; 6 for stated preferences
(like / love / prefer / hate / favourite); 5 otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .llm import ChatClient, LLMReplyError


@dataclass(frozen=True)
class Fact:
    """One extracted fact. ``slot`` is the gold (subject, attribute), used only by the oracle resolver."""

    content: str
    importance: float = 5.0
    slot: tuple[str, str] | None = None


class Extractor(Protocol):
    name: str

    def extract(self, text: str) -> list[Fact]: ...


class VerbatimExtractor:
    """The whole (stripped) text is one fact."""

    name = "verbatim"

    def __init__(self, importance: float = 5.0) -> None:
        self.importance = importance

    def extract(self, text: str) -> list[Fact]:
        content = " ".join(text.split())
        return [Fact(content, self.importance)] if content else []


_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_FIRST_PERSON = r"(?:I|I'm|I’m|I've|I’ve|I'd|I’d|my|My|me)\b"
# Split inside a sentence only where a new first-person clause starts.
_CLAUSE = re.compile(rf",?\s+(?:and|but|so|also)\s+(?={_FIRST_PERSON})|,\s+(?=I\s)")
_SUBJECT = re.compile(
    r"^(?:(?:and|but|so|also|well|oh|actually|btw|by the way)[,\s]+)*"
    r"(?:I\s+am|I'm|I’m|I\s+have|I've|I’ve|I'd|I’d|I|my|me)\b\s*",
    re.IGNORECASE,
)
_CORE = re.compile(
    r"\b(?:live|lives|living|moved|moving|relocated|based|home|born|from|work|works|working|job|"
    r"employ\w*|engineer|doctor|teacher|name|married|wife|husband|partner|sister|brother|"
    r"mother|mom|father|dad|son|daughter|child|children|kids?|allerg\w*|diabet\w*|"
    r"vegetarian|vegan|pescatarian|gluten|diet|medication|condition)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(r"\b(?:like|likes|love|loves|prefer|prefers|hate|hates|favou?rite|enjoy)\b", re.I)


def rule_importance(fact: str) -> float:
    """The rule extractor's importance for one fact (7 core, 6 preference, 5 other)."""
    if _CORE.search(fact):
        return 7.0
    if _PREFERENCE.search(fact):
        return 6.0
    return 5.0


def strip_subject(clause: str) -> str:
    """Drop a leading first-person subject and trailing punctuation."""
    out = _SUBJECT.sub("", clause.strip(), count=1)
    return out.strip().rstrip(".!;,").strip()


def split_clauses(text: str) -> list[str]:
    """Sentences, then first-person clauses inside them; questions are dropped."""
    clauses: list[str] = []
    for sentence in _SENTENCE.split(text.strip()):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        clauses.extend(part for part in _CLAUSE.split(sentence) if part.strip())
    return clauses


class RuleExtractor:
    """Deterministic splitter + subject stripper (see the module docstring for its limits)."""

    name = "rule"

    def extract(self, text: str) -> list[Fact]:
        facts: list[Fact] = []
        seen: set[str] = set()
        for clause in split_clauses(text):
            content = strip_subject(clause)
            if len(content) < 3 or content.lower() in seen:
                continue
            seen.add(content.lower())
            facts.append(Fact(content, rule_importance(content)))
        return facts


EXTRACTION_SYSTEM = (
    "You turn one message from a user into short standalone facts about that user, "
    "for a long-term memory. Drop the subject when it is the user (write 'lives in Paris', "
    "not 'The user lives in Paris'); keep other people explicit ('sister lives in Denver'). "
    "Skip greetings, questions and small talk. Rate each fact's importance from 1 to 10: "
    "1-3 trivial, 4-6 useful context, 7-9 core identity or a strong preference, 10 essential "
    "(health, safety). Answer with JSON only: "
    '{"facts": [{"content": "...", "importance": 7}]}'
)


def parse_facts(reply: dict[str, object]) -> list[Fact]:
    """Facts from a decoded ``{"facts": [{"content", "importance"}]}`` reply.

    Items without a string ``content`` are skipped; a missing or non-numeric
    importance reads 5; importances are clamped to 0-10.
    """
    items = reply.get("facts")
    if not isinstance(items, list):
        raise LLMReplyError("llm reply: expected a 'facts' list")
    facts: list[Fact] = []
    for item in items:
        if isinstance(item, str):
            item = {"content": item}
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            continue
        raw = item.get("importance", 5.0)
        try:
            importance = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            importance = 5.0
        if importance != importance:  # NaN
            importance = 5.0
        facts.append(Fact(" ".join(content.split()), min(max(importance, 0.0), 10.0)))
    return facts


class LLMExtractor:
    """Fact extraction through an OpenAI-compatible chat endpoint."""

    name = "llm"

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def extract(self, text: str) -> list[Fact]:
        reply = self.client.chat_json(EXTRACTION_SYSTEM, f"Message:\n{text}")
        return parse_facts(reply)


EXTRACTORS: Sequence[str] = ("verbatim", "rule", "llm")


def make_extractor(name: str, client: ChatClient | None = None) -> Extractor:
    """Build an extractor by name; ``llm`` needs a ``client``."""
    if name == "verbatim":
        return VerbatimExtractor()
    if name == "rule":
        return RuleExtractor()
    if name == "llm":
        if client is None:
            raise ValueError("extractor: 'llm' needs llm_url and llm_model to be set")
        return LLMExtractor(client)
    raise ValueError(f"extractor: unknown {name!r}, expected one of {', '.join(EXTRACTORS)}")
