"""What one text says, read from a spaCy parse: a compact, serialisable ``Parse``.

General grammar only. The word sets below are English closed classes (pronouns,
wh-words, additive and negating adverbs) plus the few nouns that name a value *type* in
a wh-phrase ("what time", "what's the name of", "how much"): the type vocabulary of the
NER labels, not any topic. Whose fact it is comes from the dependency parse: a
first-person pronoun is the user; a proper noun (or a PERSON entity) is a named person;
a noun with a possessor ("my mum", "my wife's sister", "Marcus's wife") is a relation of
that possessor, followed link by link. Which possessed nouns are people ("my wife")
and which are things ("my flight") grammar does not say: both are ``relation`` subjects,
``named`` says when a name stands beside the noun, and a model fitted on development data
weighs the heads.

Chat register: a clause with no subject in a statement ("booked a flight to Lisbon",
"moved to bristol") is the user's (``implicit``); small talk around the fact is kept as
its own clauses and the fact clause is the one with the most content; a note with no verb
("Cust. wife Grace - nurse @ Alder Hey") reads its root noun as the attribute.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "im", "i'm"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "u", "ur"})
THIRD_PERSON = frozenset({
    "he", "him", "his", "himself", "she", "her", "hers", "herself", "they", "them", "their",
    "theirs", "themselves", "it", "its", "itself",
})
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "whats", "what's"})
ADDITIVE = frozenset({"also", "too", "another", "both", "either", "additionally", "second", "other"})
SUBJ_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})
CLAUSE_DEPS = frozenset({"ROOT", "conj", "ccomp", "advcl", "parataxis", "xcomp"})
ARG_DEPS = frozenset({"dobj", "attr", "acomp", "oprd", "dative", "obj"})

# The value types a memory can hold and a question can ask for.
TYPES = ("PERSON", "ORG", "PLACE", "DATE", "TIME", "MONEY", "NUMBER", "NAME", "OTHER")
NER_TYPE = {
    "PERSON": "PERSON", "ORG": "ORG", "GPE": "PLACE", "LOC": "PLACE", "FAC": "PLACE",
    "DATE": "DATE", "TIME": "TIME", "MONEY": "MONEY", "CARDINAL": "NUMBER", "QUANTITY": "NUMBER",
    "PERCENT": "NUMBER", "ORDINAL": "NUMBER", "NORP": "NAME", "PRODUCT": "NAME",
    "WORK_OF_ART": "NAME", "EVENT": "NAME", "LANGUAGE": "NAME", "LAW": "NAME",
}
# wh-phrase heads that name a value type (the NER label vocabulary), and "how <adj>".
TYPE_NOUNS: dict[str, tuple[str, ...]] = {
    "time": ("TIME",), "hour": ("TIME",),
    "day": ("DATE",), "date": ("DATE",), "year": ("DATE",), "month": ("DATE",), "birthday": ("DATE",),
    "name": ("PERSON", "ORG", "PLACE", "NAME"), "number": ("NUMBER",), "age": ("NUMBER",),
    "price": ("MONEY",), "cost": ("MONEY",), "amount": ("MONEY", "NUMBER"),
    "person": ("PERSON",), "company": ("ORG",), "organisation": ("ORG",), "organization": ("ORG",),
    "place": ("PLACE",), "city": ("PLACE",), "town": ("PLACE",), "country": ("PLACE",), "address": ("PLACE",),
}
NAMING_VERBS = frozenset({"call", "name"})  # "what is she called?" asks for a name
HOW_TYPES: dict[str, tuple[str, ...]] = {
    "much": ("MONEY", "NUMBER"), "many": ("NUMBER",), "old": ("NUMBER", "DATE"),
    "long": ("DATE", "TIME", "NUMBER"), "far": ("NUMBER",), "often": ("DATE", "NUMBER"),
}
WH_TYPES: dict[str, tuple[str, ...]] = {
    "who": ("PERSON",), "whom": ("PERSON",), "whose": ("PERSON",), "where": ("PLACE", "ORG"),
    "when": ("DATE", "TIME"),
}
# Token shapes the NER misses in chat: 7:45am, 7pm, 19:30; £1,200, $50; 07700 900123.
TIME_RE = re.compile(r"^(\d{1,2}([:.]\d{2})?\s?([ap]\.?m\.?)|\d{1,2}:\d{2})$", re.I)
MONEY_RE = re.compile(r"^[£$€¥][\d,.]+[km]?$|^[\d,.]+(k|p)$", re.I)
NUMBER_RE = re.compile(r"^\+?\d[\d\s\-/.,]*\d$|^\d$")


@dataclass(frozen=True)
class Tok:
    """One token, enough to read the parse again without spaCy."""

    text: str
    lemma: str
    pos: str
    tag: str
    dep: str
    head: int
    ent: str


@dataclass(frozen=True)
class Subject:
    """Whose fact a clause states.

    kind: "user" (I, my, we), "person" (a name), "relation" (a possessed noun: "my mum"),
    "other" (a noun or third-person pronoun with no possessor), "none".
    owner: who the possession chain starts from: "user", a lowercased name, or "".
    chain: the possessed nouns from the owner on, lemmas ("wife", "sister").
    name: the subject's own name ("grace" in "Marcus's wife Grace"), lowercased, or "".
    """

    kind: str = "none"
    owner: str = ""
    chain: tuple[str, ...] = ()
    name: str = ""
    text: str = ""
    implicit: bool = False
    plural: bool = False

    @property
    def keys(self) -> tuple[str, ...]:
        """Identities this subject can be matched by: its name, and its possession path."""
        out = []
        if self.kind == "user":
            out.append("user")
        if self.name:
            out.append(self.name)
        if self.chain:
            out.append(">".join((self.owner or "?", *self.chain)))
        return tuple(out)

    @property
    def key(self) -> str:
        """One canonical identity ("user", "user>mum", "marcus>wife", "grace"); "" for none."""
        if self.kind == "user":
            return "user"
        if self.name:
            return self.name
        if self.chain:
            return ">".join((self.owner or "?", *self.chain))
        return (self.text.lower() if self.kind == "other" else "")


@dataclass(frozen=True)
class Value:
    """A typed value a text holds: a named entity, or a number or time by token shape."""

    text: str
    type: str  # one of TYPES
    label: str  # spaCy's NER label, "SHAPE" (token shape) or "PROPN" (a proper noun NER missed)
    start: int  # token offsets [start, end)
    end: int


@dataclass(frozen=True)
class Slot:
    """What a question asks for: the wh-word with its head ("which school", "how much")."""

    wh: str
    head: str = ""  # the head noun or adjective lemma ("school", "much", "name"), or ""
    text: str = ""
    expects: tuple[str, ...] = ("OTHER",)  # value types that answer it, best first
    frame: str = ""  # the predicate frame the wh-phrase fills ("go to", "live in", "drive")


@dataclass(frozen=True)
class Triple:
    """(subject, predicate frame, value) for one argument of one clause; the full Subject
    is ``Parse.clauses[clause].subject`` (match subjects with ``subject_match``)."""

    subject: str  # Subject.key
    frame: str  # "move to", "be nurse at", "drive"
    value: str  # the argument's text, lowercased
    value_type: str  # one of TYPES
    clause: int  # index into Parse.clauses
    additive: bool = False  # "also", "too", "another", a coordinated argument: a frame holding several
    negated: bool = False
    past: bool = False


@dataclass(frozen=True)
class Clause:
    subject: Subject
    predicate: str
    verb: int  # token index of the predicate's head
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Parse:
    """Everything downstream code needs from one text; never a spaCy object.

    ``subject`` / ``predicate`` are those of the fact clause (for a question: the main
    clause, with the wh-phrase moved to ``slot``). ``values`` are the typed values in the
    whole text, ``nouns`` the common-noun lemmas it mentions, ``names`` the proper names.
    An empty text has no tokens, no subject (kind "none") and no slot.
    """

    text: str
    is_question: bool = False
    subject: Subject = field(default_factory=Subject)
    predicate: str = ""
    slot: Slot | None = None
    values: tuple[Value, ...] = ()
    nouns: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    clauses: tuple[Clause, ...] = ()
    triples: tuple[Triple, ...] = ()
    tokens: tuple[Tok, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.tokens

    def value_types(self) -> frozenset[str]:
        return frozenset(v.type for v in self.values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Parse:
        slot = d.get("slot")
        clauses = tuple(
            Clause(_subject(c["subject"]), c["predicate"], c["verb"], tuple(c["args"])) for c in d["clauses"]
        )
        return cls(
            text=d["text"], is_question=d["is_question"], subject=_subject(d["subject"]),
            predicate=d["predicate"],
            slot=None if slot is None else Slot(slot["wh"], slot["head"], slot["text"], tuple(slot["expects"]),
                                                slot["frame"]),
            values=tuple(Value(**v) for v in d["values"]), nouns=tuple(d["nouns"]),
            names=tuple(d["names"]), clauses=clauses, triples=tuple(Triple(**t) for t in d["triples"]),
            tokens=tuple(Tok(**t) for t in d["tokens"]),
        )


def _subject(d: dict[str, Any]) -> Subject:
    return Subject(d["kind"], d["owner"], tuple(d["chain"]), d["name"], d["text"], d["implicit"], d["plural"])


def empty_parse(text: str) -> Parse:
    return Parse(text=text)
