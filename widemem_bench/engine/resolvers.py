"""Conflict resolvers: per new fact, ADD / UPDATE(target) / DELETE(target) / NONE.

One interface: ``decide(facts, candidates) -> list[Action]`` where
``candidates[i]`` holds the nearest existing memories of the *same user* for
``facts[i]`` as ``(Memory, cosine)`` pairs, nearest first (the engine fetches
``candidate_k`` of them, optionally above ``similarity_floor``). The engine
never calls a resolver when no fact has a candidate, and it drops exact
duplicates (same content hash) itself, whatever the resolver says.

- ``append``: always ADD (no resolution at all).
- ``rule``: deterministic slot matching (see :func:`parse_slot`).
- ``oracle``: uses the gold ``slot`` given to ``add_fact``; an upper bound for
  what a resolver can do with the same candidates.
- ``llm``: one batched call to an OpenAI-compatible endpoint, as widemem does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .extractors import Fact
from .llm import ChatClient, LLMError, LLMReplyError
from .store import Memory, content_hash

log = logging.getLogger(__name__)

ActionKind = Literal["ADD", "UPDATE", "DELETE", "NONE"]
Candidates = Sequence[Sequence[tuple[Memory, float]]]


@dataclass(frozen=True)
class Action:
    """What to do with ``facts[fact_index]``; ``target_id`` names an existing memory."""

    kind: ActionKind
    fact_index: int
    target_id: str | None = None


class Resolver(Protocol):
    name: str

    def decide(self, facts: Sequence[Fact], candidates: Candidates) -> list[Action]: ...


class AppendResolver:
    """Never resolves: every fact is a new memory."""

    name = "append"

    def decide(self, facts: Sequence[Fact], candidates: Candidates) -> list[Action]:
        return [Action("ADD", i) for i in range(len(facts))]


# ---------------------------------------------------------------- rule resolver
_RELATIONS = (
    "sister", "brother", "mother", "mom", "mum", "father", "dad", "wife", "husband",
    "partner", "girlfriend", "boyfriend", "son", "daughter", "friend", "best friend",
    "boss", "manager", "roommate", "cousin", "aunt", "uncle", "grandmother", "grandfather",
    "grandma", "grandpa", "neighbor", "neighbour", "dog", "cat", "pet", "kid", "child",
)
_SUBJECT_RE = re.compile(
    r"^(?:the\s+user'?s?\s+|user'?s\s+|my\s+|our\s+)?(?P<rel>" + "|".join(
        sorted((re.escape(r) for r in _RELATIONS), key=len, reverse=True)
    ) + r")\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|no longer|never|don't|doesn't|didn't|isn't|aren't|wasn't|stopped|quit|left|"
    r"used to|anymore)\b",
    re.IGNORECASE,
)
# Order matters: "work as" (job) before "work at" (employer).
_ATTRIBUTES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (attr, re.compile(pattern, re.IGNORECASE))
    for attr, pattern in (
        ("job", r"\b(?:work|works|working|employed)\s+as\s+(?:an?\s+)?(?P<v>.+)"),
        ("job", r"\b(?:job|role|profession|occupation)\s+is\s+(?:an?\s+)?(?P<v>.+)"),
        ("employer", r"\b(?:work|works|working|employed|job)\s+(?:at|for|by|with)\s+(?P<v>.+)"),
        ("employer", r"\b(?:joined|hired by|started (?:a job )?at)\s+(?P<v>.+)"),
        # "settled in/on X" is left out on purpose: it mostly names an area ("settled
        # in NorCal"), and replacing a city with its region would lose the answer.
        ("location", r"\b(?:live|lives|living|reside|resides|residing|based)\s+"
                     r"(?:now\s+)?(?:in|at|near)\s+(?P<v>.+)"),
        ("location", r"\b(?:moved|moving|relocated|relocating|move)\s+(?:back\s+)?(?:to|into)\s+(?P<v>.+)"),
        ("location", r"\bhome\s+is\s+(?:in\s+)?(?P<v>.+)"),
        ("hometown", r"\b(?:born in|grew up in|(?:is|am|are|come|comes) from)\s+(?P<v>.+)"),
        # "eats a gluten-free and dairy-free diet": the whole phrase is the value, so a
        # change that extends the old diet is not read as the same value.
        ("diet", r"\beats?\s+(?:an?\s+)?(?P<b>[\w -]+?)\s+(?:diet|food)\b"),
        ("diet", r"\b(?P<v>vegetarian|vegan|pescatarian|keto|paleo|gluten[- ]free|carnivore|"
                 r"omnivore|omnivorous|low[- ]carb|halal|kosher)\b"),
        ("diet", r"\bdiet\s+is\s+(?:an?\s+)?(?P<v>.+)"),
        ("partner", r"\b(?:married to|dating|engaged to|partner is|wife is|husband is|"
                    r"girlfriend is|boyfriend is)\s+(?P<v>.+)"),
        ("name", r"\b(?:name is|named|called)\s+(?P<v>.+)"),
        ("age", r"\b(?P<v>\d{1,3})\s+years?\s+old\b"),
        ("drink", r"\b(?:usually\s+|mostly\s+)?drinks\s+(?P<v>.+)"),
        ("drink", r"\b(?:usual|go-to|favou?rite|morning)\s+drink\s+is\s+(?P<v>.+)"),
        ("exercise", r"\b(?:main\s+)?(?:workout|exercise|sport)\s+is\s+(?P<v>.+)"),
        # "takes metformin for type 2 diabetes": one slot per condition, since several
        # drugs for different conditions are all true at once.
        ("medication", r"\b(?:takes|taking|take|on)\s+(?P<v>[\w-]+)\s+for\s+(?P<q>[\w' -]+)"),
        ("doctor", r"\b(?:doctor|physician|gp)\s+is\s+(?P<b>(?:dr\.?\s+)?[\w'-]+)"),
        ("bank", r"\b(?:bank\s+account|checking\s+account|banks)\s+(?:is\s+)?(?:with|at)\s+(?P<v>.+)"),
        ("insurance", r"\b(?:health\s+)?insurance\s+(?:is\s+)?(?:through|with|from)\s+(?P<v>.+)"),
    )
)
_VALUE_CUT = re.compile(
    r"\s+(?:and|but|because|since|now|last|this|next|as|for|with|after|before|when|while|"
    r"recently|again|too|already)\b|[,;:.!?(]"
)


def _normalise_value(raw: str, cut: bool = True) -> str:
    # Values the pattern itself bounds (group "b") keep their connectives and dots.
    value = _VALUE_CUT.split(raw.strip(), maxsplit=1)[0] if cut else raw.strip()
    value = re.sub(r"^(?:the|a|an)\s+", "", value.strip().lower())
    return " ".join(value.replace("-", " ").split())


def parse_slot(content: str) -> tuple[str, str, str] | None:
    """(subject, attribute, value) of a fact, or None when no pattern applies.

    Subject is ``user`` unless the fact starts with a relation word
    ("sister lives in Denver" -> subject ``sister``). Attributes: job, employer,
    location, hometown, diet, partner, name, age, drink, exercise, doctor, bank,
    insurance, and ``medication:<condition>`` (one slot per treated condition).

    Limits: English only; one attribute per fact (the first pattern that
    matches); negated or past-tense facts ("no longer vegan", "left Acme",
    "used to live in Rome") are not parsed, because the new value is unknown,
    so they are ADDed; named relations ("Anna lives in Denver") have subject
    ``user``'s pattern only if a relation word is present; values are cut at
    the first connective, so "moved to New York City last week" gives
    ``new york city``; "settled in X" is not read (it usually names an area, see
    the pattern); allergies and conditions are never slots (several hold at once),
    so a cured allergy is never retired.
    """
    text = " ".join(content.split())
    if not text or _NEGATION.search(text):
        return None
    subject = "user"
    rest = text
    m = _SUBJECT_RE.match(text)
    if m:
        subject = m.group("rel").lower()
        rest = text[m.end():]
    for attribute, pattern in _ATTRIBUTES:
        hit = pattern.search(rest)
        if hit:
            groups = hit.groupdict()
            bounded = groups.get("b")
            value = _normalise_value(bounded, cut=False) if bounded else _normalise_value(groups["v"])
            if value:
                qualifier = hit.groupdict().get("q")
                if qualifier:
                    attribute = f"{attribute}:{_normalise_value(qualifier)}"
                return subject, attribute, value
    return None


class RuleResolver:
    """Deterministic: same subject + attribute with another value -> UPDATE the old memory.

    Same subject, attribute and value -> NONE (already known). Facts with no
    parsed slot, or whose slot no candidate shares, are ADDed. Only the
    engine's candidates are looked at, so a contradiction outside the
    ``candidate_k`` nearest memories survives (as it does in widemem).
    """

    name = "rule"

    def decide(self, facts: Sequence[Fact], candidates: Candidates) -> list[Action]:
        actions: list[Action] = []
        for i, fact in enumerate(facts):
            actions.append(self._decide_one(i, fact, candidates[i] if i < len(candidates) else ()))
        return actions

    @staticmethod
    def _decide_one(i: int, fact: Fact, cands: Sequence[tuple[Memory, float]]) -> Action:
        chash = content_hash(fact.content)
        for memory, _ in cands:
            if (memory.content_hash or content_hash(memory.content)) == chash:
                return Action("NONE", i, memory.id)
        slot = parse_slot(fact.content)
        if slot is None:
            return Action("ADD", i)
        for memory, _ in cands:
            other = parse_slot(memory.content)
            if other is None or other[:2] != slot[:2]:
                continue
            return Action("NONE" if other[2] == slot[2] else "UPDATE", i, memory.id)
        return Action("ADD", i)


class OracleResolver:
    """Gold slots: a candidate with the fact's ``slot`` is UPDATEd (NONE if identical)."""

    name = "oracle"

    def decide(self, facts: Sequence[Fact], candidates: Candidates) -> list[Action]:
        actions: list[Action] = []
        for i, fact in enumerate(facts):
            action = Action("ADD", i)
            cands = candidates[i] if i < len(candidates) else ()
            if fact.slot is not None:
                for memory, _ in cands:
                    if memory.slot is not None and tuple(memory.slot) == tuple(fact.slot):
                        same = memory.content == fact.content
                        action = Action("NONE" if same else "UPDATE", i, memory.id)
                        break
            actions.append(action)
        return actions


# ----------------------------------------------------------------- llm resolver
RESOLUTION_SYSTEM = (
    "You keep a user's long-term memory consistent. You get new facts, numbered [i], and "
    "existing memories of the same user, numbered [n]. For each new fact choose one action: "
    "ADD (new information), UPDATE (it replaces existing memory n, e.g. the user moved or "
    "changed jobs), DELETE (it says existing memory n is no longer true and nothing replaces "
    "it), NONE (existing memory n already says this). Answer with JSON only: "
    '{"actions": [{"fact_index": 0, "action": "UPDATE", "target_id": 2}]}'
)


def resolution_prompt(facts: Sequence[Fact], numbered: Sequence[Memory]) -> str:
    new = "\n".join(f"[{i}] {f.content} (importance: {f.importance:g})" for i, f in enumerate(facts))
    old = "\n".join(f"[{n}] {m.content}" for n, m in enumerate(numbered))
    return f"New facts:\n{new}\n\nExisting memories:\n{old}"


def parse_actions(reply: dict[str, object], n_facts: int, numbered: Sequence[Memory]) -> list[Action]:
    """Actions from a decoded ``{"actions": [{"fact_index","action","target_id"}]}`` reply.

    Robust to what models get wrong, the way widemem is: the first action per
    fact wins; an unknown action reads ADD; UPDATE / DELETE / NONE without a
    valid target (an index outside the numbered candidates, so never another
    user's memory) fall back to ADD; facts with no action are ADDed.
    """
    items = reply.get("actions")
    if not isinstance(items, list):
        raise LLMReplyError("llm reply: expected an 'actions' list")
    by_fact: dict[int, Action] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        idx = item.get("fact_index")
        if isinstance(idx, str) and idx.strip().isdigit():
            idx = int(idx)
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < n_facts or idx in by_fact:
            continue
        kind = str(item.get("action", "ADD")).strip().upper()
        if kind not in ("ADD", "UPDATE", "DELETE", "NONE"):
            kind = "ADD"
        target: str | None = None
        raw = item.get("target_id")
        try:
            n = int(raw) if raw is not None and not isinstance(raw, bool) else -1  # type: ignore[call-overload]
        except (TypeError, ValueError):
            n = -1
        if 0 <= n < len(numbered):
            target = numbered[n].id
        if kind != "ADD" and target is None:
            kind = "ADD"
        by_fact[idx] = Action(kind, idx, target if kind != "ADD" else None)  # type: ignore[arg-type]
    return [by_fact.get(i, Action("ADD", i)) for i in range(n_facts)]


class LLMResolver:
    """One batched chat call per ``add``; on an unreachable or garbled endpoint every fact is ADDed."""

    name = "llm"

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def decide(self, facts: Sequence[Fact], candidates: Candidates) -> list[Action]:
        numbered: list[Memory] = []
        seen: set[str] = set()
        for cands in candidates:
            for memory, _ in cands:
                if memory.id not in seen:
                    seen.add(memory.id)
                    numbered.append(memory)
        if not numbered:
            return [Action("ADD", i) for i in range(len(facts))]
        try:
            reply = self.client.chat_json(RESOLUTION_SYSTEM, resolution_prompt(facts, numbered))
            return parse_actions(reply, len(facts), numbered)
        except (LLMError, LLMReplyError) as exc:
            # widemem does the same: a failed resolution keeps the facts (ADD, dedup by hash).
            log.warning("llm resolver failed (%s); adding every fact", exc)
            return [Action("ADD", i) for i in range(len(facts))]


RESOLVERS: Sequence[str] = ("append", "rule", "oracle", "llm")


def make_resolver(name: str, client: ChatClient | None = None) -> Resolver:
    """Build a resolver by name; ``llm`` needs a ``client``."""
    if name == "append":
        return AppendResolver()
    if name == "rule":
        return RuleResolver()
    if name == "oracle":
        return OracleResolver()
    if name == "llm":
        if client is None:
            raise ValueError("resolver: 'llm' needs llm_url and llm_model to be set")
        return LLMResolver(client)
    raise ValueError(f"resolver: unknown {name!r}, expected one of {', '.join(RESOLVERS)}")
