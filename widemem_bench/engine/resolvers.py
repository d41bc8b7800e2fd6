"""Conflict resolvers: per new fact, ADD / UPDATE(target) / DELETE(target) / NONE.

One interface: ``decide(facts, candidates) -> list[Action]`` where
``candidates[i]`` holds the nearest existing memories of the *same user* for
``facts[i]`` as ``(Memory, cosine)`` pairs, nearest first (the engine fetches
``candidate_k`` of them, optionally above ``similarity_floor``). The engine
never calls a resolver when no fact has a candidate, and it drops exact
duplicates (same content hash) itself, whatever the resolver says.

- ``append``: always ADD (no resolution at all).
- ``rule``: deterministic reading of subject, single-valued slots and explicit
  change markers (see :mod:`.slots` and :class:`RuleResolver`); never DELETEs.
- ``structure`` (version 3.2, DESIGN_LOG R20): reads each fact as (subject, predicate frame, value) triples
  from the language layer's spaCy parse; a gate refuses additive cues, explicitly different
  owners and frames known to hold several values, the scorer refuses pairs across subjects
  (its subject-role head, the parse's user against a name or possessed noun), and a learned
  pair scorer (trees over cached MiniLM vectors and the parse, ``make resolver-pair``, its
  threshold chosen out of fold by user) decides the rest (see
  :mod:`.structure`, :mod:`.pair_model` and :class:`StructureResolver`); never DELETEs.
- ``oracle``: uses the gold ``slot`` given to ``add_fact``; an upper bound for
  what a resolver can do with the same candidates.
- ``llm``: one batched call to an OpenAI-compatible endpoint, as widemem does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from widemem_bench.language import Parser, default_parser

from .extractors import Fact
from .llm import ChatClient, LLMError, LLMReplyError
from .slots import Reading, changed_value, mentions, split_subject, stems, values_agree
from .slots import read as read_fact
from .store import Memory, content_hash
from .structure import MODEL, Claim, FrameTable, additive_uses, load_table, pair_gate
from .structure import claims as structure_claims
from .structure import gate as structure_gate
from .structure import parses as structure_parses

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
def parse_slot(content: str) -> tuple[str, str, str] | None:
    """(subject, attribute, value) of a fact's first single-valued slot, or None.

    See :mod:`.slots` for how a fact is read. None when the fact is negated
    ("no longer vegan"), states only attributes that hold several values at
    once ("allergic to peanuts", "has a dog named Rex"), or no pattern applies.
    """
    reading = read_fact(content)
    if not reading.slots or reading.subject == "?":
        return None
    attribute, value = next(iter(reading.slots.items()))
    return reading.subject, attribute, value


# Attributes that never change for a person: a fact naming an old value never retires them.
_PERMANENT = frozenset({"hometown"})


class RuleResolver:
    """Deterministic, and keeps a fact whenever it is not sure the fact became false.

    Per new fact, candidates are read nearest first (see :mod:`.slots`); the
    first decisive one wins:

    - another subject (the user vs "my sister" vs "Priya") is never touched; a
      name is the user only when the store states it ("my name is Priya",
      "goes by Priya"), never by guess;
    - same single-valued attribute (lives in, works at, job, car, school, the
      user's own name, a possessor's "<noun> is <value>", ...) with another
      value -> UPDATE; with the same value
      -> NONE when the new fact says nothing the old one does not, UPDATE when
      the new one says strictly more, else ADD;
    - an explicit change marker naming the old value ("traded the Civic for",
      "switched from X to", "no longer X", "X instead of Y", "left X for")
      -> UPDATE a memory that holds that value, unless their attributes
      disagree, the memory is permanent (hometown), or it states a
      several-valued fact (allergic, speaks, ...) whose verb the marker does
      not repeat, unless the marker ends a practice ("quit padel", "gave up X");
    - otherwise ADD. Never DELETE: the retired memory is overwritten by the
      fact that retires it, so the store still says what changed.

    Only the engine's candidates are looked at, so a contradiction outside the
    ``candidate_k`` nearest memories survives (as it does in widemem).
    """

    name = "rule"
    # The engine passes the names the user goes by (`slots.user_names` over the store):
    # notes that name the user ("Priya moved to Lisbon") are about the user.
    reads_user_names = True

    def decide(self, facts: Sequence[Fact], candidates: Candidates,
               user_names: frozenset[str] = frozenset()) -> list[Action]:
        actions: list[Action] = []
        for i, fact in enumerate(facts):
            actions.append(self._decide_one(i, fact, candidates[i] if i < len(candidates) else (), user_names))
        return actions

    @staticmethod
    def _decide_one(i: int, fact: Fact, cands: Sequence[tuple[Memory, float]],
                    names: frozenset[str] = frozenset()) -> Action:
        chash = content_hash(fact.content)
        for memory, _ in cands:
            if (memory.content_hash or content_hash(memory.content)) == chash:
                return Action("NONE", i, memory.id)
        new = read_fact(fact.content, names)
        if new.subject == "?":
            return Action("ADD", i)
        for memory, _ in cands:
            old = read_fact(memory.content, names)
            if old.subject != new.subject:
                continue
            shared = new.slots.keys() & old.slots.keys()
            if "job" in new.slots and "role" in old.slots and not values_agree(new.slots["job"], old.slots["role"]):
                return Action("UPDATE", i, memory.id)  # "is a nurse" -> "became a firefighter"
            if shared == {"role"} and new.slots["role"] != old.slots["role"]:
                continue  # "is a nurse", "is a runner": both may hold
            if shared:
                if any(not values_agree(new.slots[a], old.slots[a]) for a in shared):
                    return Action("UPDATE", i, memory.id)
                if new.words <= old.words:
                    return Action("NONE", i, memory.id)
                if old.words <= new.words and old.slots.keys() <= new.slots.keys():
                    return Action("UPDATE", i, memory.id)  # the same value, said with more
                continue
            if _retires(new, old):
                return Action("UPDATE", i, memory.id)
        # Neither fact states a slot the patterns know: the same frame with another value,
        # said to be a change ("now", "switched to"), replaces the nearest such memory.
        if not new.slots:
            _, new_rest = split_subject(_plain(fact.content))
            for memory, _ in cands:
                old = read_fact(memory.content, names)
                if old.subject != new.subject or old.slots:
                    continue
                _, old_rest = split_subject(_plain(memory.content))
                if changed_value(new_rest, old_rest):
                    return Action("UPDATE", i, memory.id)
        return Action("ADD", i)


def _plain(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").split())


def _retires(new: Reading, old: Reading) -> bool:
    """Whether ``new`` names ``old``'s value as gone, with nothing saying they are about different things."""
    if not mentions(old.words, new.old) or _PERMANENT & old.slots.keys():
        return False
    if new.slots and old.slots:
        return bool(new.slots.keys() & old.slots.keys())
    if old.slots:
        # The marker must name a stated value by its first or last word ("sold the Civic"
        # for a Honda Civic, "left the bakery"), not a word inside it ("gave up coffee" is
        # no change of employer at Brew Coffee Roasters).
        return any(h in new.old for v in old.slots.values() for h in _heads(v))
    # A several-valued fact ("is allergic to X", "speaks X") is retired only when the
    # marker repeats its verb ("no longer allergic to X"); possession ("has a X") by
    # any marker naming X ("sold the X", "no longer has the X").
    # A practice given up ("quit padel") retires what does it ("plays padel on Sundays"),
    # not every fact that names it ("met my husband in the choir", "allergic to peanuts").
    practice = new.cease and old.obj[:len(new.old)] == new.old
    return old.verb in ("has", "is") or old.verb in new.old or practice


def _heads(value: str) -> set[str]:
    """Stems that can name a value alone: its first word and its last word that is not a
    number ("honda civic" -> honda, civic; "iphone 12" -> iphone; "bakery on main street")."""
    st = stems(value)
    words = [w for w in st if not w.isdigit()]
    return {st[0], words[-1]} if st and words else set(st[:1])


# ------------------------------------------------------------ structure resolver
class PairModel(Protocol):
    """What the structure resolver asks of its pair scorer (:class:`.pair_model.PairScorer`)."""

    threshold: float

    def score(self, pairs: Sequence[tuple[str, str]], groups: Sequence[int],
              read: Mapping[str, tuple[Claim, ...]]) -> list[float]: ...


class StructureResolver:
    """Version 3.2 (R20): a grammar-safe gate on the parse, a learned pair scorer for the rest.

    Per new fact, each candidate goes through the gate (:func:`.structure.gate`, on the
    claims of the cached spaCy parse), which refuses only what grammar makes safe: an
    additive cue (also, another, second, a coordinated argument); owners explicitly
    different (two names, two possessed nouns: never across subjects); a fact stating only
    frames the frame table (``make resolver-fit``) knows hold several values. The scorer
    then refuses pairs across subjects (:func:`.pair_model.cross_subject`: its subject-role
    head reads two roles with confidence, or the parse reads the user against a name or a
    possessed noun and neither the head nor the frame table says one subject). Every other
    candidate is scored by the pair scorer (gradient-boosted trees over the resolver's own
    MiniLM vectors and the parse's structure, fitted on development pairs:
    ``make resolver-pair``, :mod:`.pair_model`); the highest score above its threshold is
    UPDATEd (the old memory superseded, never deleted). All pairs of one ``decide`` call
    are scored in one array call. A fact that does not parse (empty, emoji, a bare name, a
    question: :func:`.structure.parses`) is ADDed and supersedes nothing. An identical fact
    is NONE. Without the scorer's file the resolver is refused in one line naming
    ``make resolver-pair``. (Version 2, a cross-encoder behind a stricter gate, is commit
    b70990b; version 3, without the cross-subject refusal and with its threshold chosen on
    world N validation, is d8a5766.)
    """

    name = "structure"
    reads_user_names = True

    def __init__(self, table: FrameTable | None = None, parser: Parser | None = None,
                 pair: PairModel | None = None) -> None:
        self.table = table if table is not None else load_table()
        if pair is None:
            from .pair_model import load_scorer

            pair = load_scorer(table=self.table)
        self.pair = pair
        self._parser = parser

    @property
    def parser(self) -> Parser:
        if self._parser is None:
            self._parser = default_parser()
        return self._parser

    def share_embedder(self, embedder: Any) -> None:
        """The engine's embedder, which the scorer uses when it is the scorer's own MiniLM
        weights (any runtime): then no text is encoded twice."""
        share = getattr(self.pair, "share_embedder", None)
        if share is not None:
            share(embedder)

    def decide(self, facts: Sequence[Fact], candidates: Candidates,
               user_names: frozenset[str] = frozenset()) -> list[Action]:
        texts = [f.content for f in facts] + [m.content for cands in candidates for m, _ in cands]
        parsed = dict(zip(texts, self.parser.parse_many(texts), strict=True))
        read: dict[str, tuple[Claim, ...]] = {}
        user_names = user_names | self.table.user_aliases

        def claims_of(text: str) -> tuple[Claim, ...]:
            if text not in read:
                read[text] = structure_claims(parsed[text], user_names, self.table.user_nouns)
            return read[text]

        actions: list[Action | None] = []
        asks: list[tuple[int, str, str, str]] = []  # (fact index, memory id, old, new)
        for i, fact in enumerate(facts):
            cands = candidates[i] if i < len(candidates) else ()
            action, ask = self._gate_one(i, fact, cands, parsed[fact.content], claims_of)
            actions.append(action)
            asks.extend(ask)
        scores = self.pair.score([(old, new) for _, _, old, new in asks], [i for i, *_ in asks], read) if asks else []
        best: dict[int, tuple[float, str]] = {}
        for (i, mid, _, _), s in zip(asks, scores, strict=True):
            if s > self.pair.threshold and s > best.get(i, (-1.0, ""))[0]:
                best[i] = (s, mid)
        return [a if a is not None else (Action("UPDATE", i, best[i][1]) if i in best else Action("ADD", i))
                for i, a in enumerate(actions)]

    def _gate_one(self, i: int, fact: Fact, cands: Sequence[tuple[Memory, float]], p: Any,
                  claims_of: Any) -> tuple[Action | None, list[tuple[int, str, str, str]]]:
        """(the action when no score is needed, else None; the pairs the scorer must score)."""
        chash = content_hash(fact.content)
        for memory, _ in cands:
            if (memory.content_hash or content_hash(memory.content)) == chash:
                return Action("NONE", i, memory.id), []
        if not structure_parses(p):
            return Action("ADD", i), []
        new = claims_of(fact.content)
        ask = [(i, memory.id, memory.content, fact.content) for memory, _ in cands
               if self._gate(new, claims_of(memory.content), p) == MODEL]
        return (None, ask) if ask else (Action("ADD", i), [])

    def _gate(self, new: tuple[Claim, ...], old: tuple[Claim, ...], p: Any) -> str:
        return structure_gate(new, old, self.table)


class PairResolver(StructureResolver):
    """Version 3.1 (DESIGN_LOG R40; 3: R32; 2: R27; 1: R24): a gate on the parse, its pairs scored by a cross-encoder.

    The structure resolver's gate narrowed where it refused writers' plain changes
    (:func:`.structure.pair_gate`: an additive cue is a closed-class word, not coordination; a
    name inside another name is one person; a several-valued frame is refused unless the new fact
    names the old value). It still never updates across two explicit owners or between two
    different values of a frame the table knows holds several; an unparsable fact supersedes
    nothing, an identical fact is NONE. What the gate leaves is scored by a cross-encoder over (old fact, new fact)
    fine-tuned on development pairs, hand-written ones among them (:mod:`.pair_cross`, ``make
    resolver-cross``), and the highest p(superseded) above its threshold is UPDATEd: the
    old memory superseded, never deleted (``unsupersede`` restores it). It drops 3.2's
    cross-subject refusal, whose subject-role classes are the generators' relation labels and
    which refused most hand-written updates (R22). Without the built cross-encoder it is refused
    in one line naming ``make resolver-cross``. Version 2 changed only the model: 10,000 world
    pairs instead of 4,000 (version 1 underfit world N: 73 % survival on its own training users);
    version 3 changes only the gate (version 2 is commit 30274a8); version 3.1 reads a degree "too"
    ("too much") as no additive cue (:func:`.structure.additive_uses`; version 3 is commit 327e2f9).
    Version 3.2 (e0fced5, R44), which read "the other one" as the replaced one, was withdrawn (R46).
    """

    name = "pair"

    def __init__(self, table: FrameTable | None = None, parser: Parser | None = None,
                 pair: PairModel | None = None) -> None:
        if pair is None:
            from . import pair_cross

            pair = pair_cross.load_pair_scorer()
        super().__init__(table, parser, pair)

    def _gate(self, new: tuple[Claim, ...], old: tuple[Claim, ...], p: Any) -> str:
        return pair_gate(new, old, self.table, additive_uses(p.tokens))


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


RESOLVERS: Sequence[str] = ("append", "rule", "structure", "pair", "oracle", "llm")


def make_resolver(name: str, client: ChatClient | None = None) -> Resolver:
    """Build a resolver by name; ``llm`` needs a ``client``."""
    if name == "append":
        return AppendResolver()
    if name == "rule":
        return RuleResolver()
    if name == "structure":
        return StructureResolver()
    if name == "pair":
        return PairResolver()
    if name == "oracle":
        return OracleResolver()
    if name == "llm":
        if client is None:
            raise ValueError("resolver: 'llm' needs llm_url and llm_model to be set")
        return LLMResolver(client)
    raise ValueError(f"resolver: unknown {name!r}, expected one of {', '.join(RESOLVERS)}")
