"""Facts read on structure for the ``structure`` resolver: (subject, frame, value) triples.

A fact is read from the language layer's ``Parse`` (one spaCy parse per text, cached).
Each triple becomes a ``Claim``:

- ``owner``: whose fact it is, canonical: "user" for I / my / we, a fact with no subject
  (the extractor's bare "works at Google"), "the user" and a name the user goes by; else
  the possessor path ("user>sister") or the person's name. Possessed *things* and
  relatives read alike in grammar, so the last possessed noun moves into the frame
  ("my flat is in Leeds" -> owner "user", frame "flat:be in"; "my sister moved to Paris" ->
  owner "user", frame "sister:move to"): a relative's frame never equals the user's own.
- ``frame``: (possessed noun, verb lemma, last preposition) as "noun:verb prep".
- ``value``: the argument's words, lowercased; its type from NER or token shape.

Which frames supersede one another and which hold several values at once is learned
from development data (``FrameTable``, fitted by :mod:`.structure_fit`): pairs of a fact
and the fact that superseded it give frame equivalences; frames stated with several
coexisting values by one subject are multi-valued. The additive cues are closed word
classes the parse marks (``Triple.additive``: also, too, another, second, coordination).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from widemem_bench.language import Parse, Subject
from widemem_bench.language.parse import ADDITIVE

FILES = Path(__file__).parent / "files"
TABLE_PATH = FILES / "structure_frames.json"

# Types that may stand for one another when NER reads lowercase chat erratically.
_LOOSE = {"PERSON": {"NAME", "ORG", "PLACE"}, "ORG": {"NAME", "PLACE", "PERSON"},
          "PLACE": {"NAME", "ORG", "PERSON"}, "NAME": {"PERSON", "ORG", "PLACE"},
          "DATE": {"TIME"}, "TIME": {"DATE"}, "MONEY": {"NUMBER"}, "NUMBER": {"MONEY"}}
# Closed class: determiners and possessives carry no part of a value ("a flat" = "flat").
_DET = frozenset({"a", "an", "the", "my", "our", "his", "her", "their", "its", "your", "this", "that",
                  "these", "those", "some", "new", "current", "old"})
_WORD = re.compile(r"[a-z0-9]+")
# The generic noun a memory layer names its user by ("User lives in ...", mem0's style).
_USER_NOUN = "user"
# Pair counts are kept for frame pairs seen at least MIN_SEEN times (for inspection).
MIN_SEEN = 4


@dataclass(frozen=True)
class Claim:
    owner: str
    frame: str  # "noun:verb prep" (noun "" when the subject is the owner itself)
    value: str
    words: frozenset[str]
    type: str
    additive: bool
    negated: bool
    # False when the owner is a "name" NER reads as no person (an organisation, a place: chat's
    # "ngl joined aviva"): the gate then scopes the claim to the store's user (:func:`gate`)
    owner_read: bool = True
    # how the owner was read: "self" (the user), "name" (a named person), "rel" (a possessed
    # noun: "my wife", "my flat"), "noun" (a bare noun or one-word subject: "hubby", "mum"),
    # "unread" (a "name" NER reads as no person)
    who: str = "self"


def _core(frame: str) -> str:
    """"move down to" -> "move to" (a particle is no part of the frame); "drive" -> "drive";
    a copula keeps its complement ("be nurse at", "be life in": the noun is the predicate)."""
    w = frame.split()
    if not w:
        return ""
    if w[0] == "be":
        return frame
    return w[0] if len(w) == 1 else f"{w[0]} {w[-1]}"


def value_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _DET)


def claims(p: Parse, names: frozenset[str] = frozenset(),
           nouns: frozenset[str] = frozenset()) -> tuple[Claim, ...]:
    """The claims of a statement; () for a question, an empty text, or one with no triple.
    A triple whose owner the parse leaves unknown is no claim: it never supersedes."""
    if p.is_question or p.empty:
        return ()
    out = []
    for t in p.triples:
        words = value_words(t.value)
        if not words or not t.frame:
            continue
        c = p.clauses[t.clause]
        owner, noun = _owner(p, c.subject, c.verb, names, nouns)
        if not owner:
            continue
        s = c.subject
        read = not (s.kind == "person" and not s.chain and _not_a_person(p.tokens[:c.verb], s.name))
        who = ("unread" if not read else "rel" if noun else "self" if owner == "user"
               else "name" if s.kind == "person" else "noun")
        out.append(Claim(owner, f"{noun}:{_core(t.frame)}", t.value, words, t.value_type,
                         t.additive or (s.plural and s.kind not in ("user", "none")), t.negated, read, who))
    return tuple(out)


_SKIP_POS = frozenset({"PUNCT", "INTJ", "ADV", "SPACE", "CCONJ", "SCONJ", "PART", "AUX", "SYM", "X"})


def _opens_with_verb(p: Parse, verb: int) -> bool:
    """The clause's predicate is the statement's first content word (the extractor's bare
    "works at Google", chat's "moved to bristol"): nothing before it could be a subject."""
    for i, tok in enumerate(p.tokens):
        if tok.pos not in _SKIP_POS:
            return i >= verb
    return False


def _owner(p: Parse, s: Subject, verb: int, names: frozenset[str],
           nouns: frozenset[str] = frozenset()) -> tuple[str, str]:
    """(canonical owner, possessed noun moved into the frame); owner "" when unknown.
    ``nouns``: nouns development data saw the user possess ("my manager"): a bare "manager"
    in the user's store is theirs ("Manager: Priya" = "my manager is Priya")."""
    kind, owner, chain, name = s.kind, s.owner, s.chain, s.name
    if kind == "user":
        return "user", ""
    if kind == "none" or _opens_with_verb(p, verb):
        # a name after the verb is no subject ("lives in Madison" read as Madison's)
        # a statement with no subject is the user's only when nothing stands before its verb
        return ("user", "") if _opens_with_verb(p, verb) else ("", "")
    before = p.tokens[:verb]
    if chain:
        if not owner:
            if chain[0] == _USER_NOUN:  # "the user's ...", "User lives in" (mem0's style)
                chain, owner = chain[1:], "user"
            elif any(t.tag == "POS" or t.dep == "poss" for t in before):
                return "", ""  # a possessor the parse did not link: whose it is is unknown
            elif len(chain) == 1:
                if chain[0] in nouns:
                    return "user", chain[0]
                return ("user" if chain[0] in names else chain[0]), ""  # "Priya has", "mum drives"
            else:
                return "", ""
        if owner in names:
            owner = "user"
        if not chain:
            return "user", ""
        return ">".join((owner, *chain[:-1])), chain[-1]
    if name:
        return ("user" if name in names else name), ""
    return "", ""  # a bare noun or pronoun: whose it is is unknown


def _not_a_person(before: Iterable[Any], name: str) -> bool:
    """The subject's name tokens carry an entity label, and none of them PERSON."""
    words = set(name.split())
    ents = [t.ent for t in before if t.text.lower() in words and t.ent]
    return bool(ents) and not any(e.endswith("PERSON") for e in ents)


@dataclass(frozen=True)
class FrameTable:
    """What development data says about frames.

    ``equiv``: unordered frame pairs seen superseding one another; frames linked by
    them form one class (a frame is always its own). ``multi``: frames one subject stated
    with several coexisting values; ``single``: frames seen superseded, never multi-valued.
    """

    equiv: frozenset[tuple[str, str]]
    multi: frozenset[str]
    single: frozenset[str]
    sets: tuple[str, ...] = ()
    sha256: str = ""
    # subject words that name the user in development data (a note's "Cust.", chat's
    # misparsed openers): read as the user, as a name the user goes by is
    user_aliases: frozenset[str] = frozenset()
    user_nouns: frozenset[str] = frozenset()  # nouns the user possesses in development data
    # (frame, frame) -> (times superseded, times coexisting) in development data
    pairs: Mapping[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x

        for a, b in sorted(self.equiv):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        object.__setattr__(self, "_cls", {f: find(f) for f in list(parent)})

    def frame_class(self, frame: str) -> str:
        return self._cls.get(frame, frame)  # type: ignore[attr-defined, no-any-return]

    def same_frame(self, a: str, b: str) -> bool:
        """One frame class. (A town and a part of it, "moved to Porto" / "rents in Larkhill",
        coexist in world C under frames that supersede elsewhere: the table keeps the pair
        counts, ``pairs``, but the class decides; see DESIGN_LOG R11.)"""
        return a == b or self.frame_class(a) == self.frame_class(b)

    def single_valued(self, frame: str) -> bool:
        """A frame development data saw superseded (``single``, or linked to another by
        ``equiv``) and never holding several values. A frame the table has never seen counts
        as several-valued (DESIGN_LOG R12: one unseen light-verb frame pair,
        a job and a bank account, was world A holdout's every false update): the rule leaves
        it alone, and the pair model decides (:func:`gate`)."""
        return frame not in self.multi and (frame in self.single or frame in self._cls)  # type: ignore[attr-defined]

    def to_json(self) -> str:
        body = {"sets": list(self.sets), "equiv": sorted(sorted(p) for p in self.equiv),
                "multi": sorted(self.multi), "single": sorted(self.single),
                "pairs": sorted([a, b, n[0], n[1]] for (a, b), n in self.pairs.items()),
                "user_aliases": sorted(self.user_aliases), "user_nouns": sorted(self.user_nouns)}
        return json.dumps(body, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> FrameTable:
        d = json.loads(text)
        return cls(frozenset((str(a), str(b)) for a, b in d["equiv"]), frozenset(d["multi"]),
                   frozenset(d["single"]), tuple(d.get("sets", ())),
                   hashlib.sha256(text.encode("utf-8")).hexdigest(),
                   pairs={(str(a), str(b)): (int(n), int(m)) for a, b, n, m in d.get("pairs", ())},
                   user_aliases=frozenset(d.get("user_aliases", ())),
                   user_nouns=frozenset(d.get("user_nouns", ())))


def load_table(path: Path | None = None) -> FrameTable:
    """The frame table; the committed one (no ``path``) only when its sha256 is the pinned one
    (:mod:`.pins`)."""
    from .pins import read_pinned

    committed, path = path is None, path or TABLE_PATH
    if not path.is_file():
        raise FileNotFoundError(f"resolver structure: no frame table at {path}; build it with `make resolver-fit`")
    return FrameTable.from_json(read_pinned(path) if committed else path.read_text("utf-8"))


def types_agree(a: str, b: str) -> bool:
    return a == b or b in _LOOSE.get(a, set()) or "OTHER" in (a, b)


def supersedes(new: Claim, old: Claim, table: FrameTable) -> bool:
    """The four conditions: same owner, same frame, one value at a time, another value."""
    if new.owner != old.owner or new.additive or old.additive:
        return False
    if not table.same_frame(new.frame, old.frame):
        return False
    if new.frame != old.frame and "OTHER" in (new.type, old.type):
        return False  # two frames of one class name one slot only when both values are typed entities
    if not (table.single_valued(new.frame) and table.single_valued(old.frame)):
        return False
    if not types_agree(new.type, old.type):
        return False
    if new.negated and not old.negated:
        return bool(new.words & old.words)  # "no longer at Acme" retires "works at Acme"
    if new.negated or old.negated:
        return False
    return not (new.words <= old.words or old.words <= new.words)


def first_superseded(new: Iterable[Claim], old: Iterable[Claim], table: FrameTable) -> bool:
    olds = tuple(old)
    return any(supersedes(n, o, table) for n in new for o in olds)


REFUSE, MODEL = "refuse", "model"
# How the owners of two claims relate (:func:`relation`), in the order the pair scorer's
# one-hot features name them. "different" is the gate's refusal: both owners read and
# explicitly two people (two names, two possessed nouns: "my wife" / "my brother").
RELATIONS = ("same", "self_name", "self_rel", "self_noun", "name_rel", "noun", "unread", "different")
_EXPLICIT = frozenset({"name", "rel"})


def relation(a: Claim, b: Claim) -> str:
    """How the owners of ``a`` and ``b`` relate. Only grammar decides "different": two
    names, or two possessed nouns (of any possessors), that differ. The user against a name
    or a possessed noun is left to the pair scorer (a note names its customer; "my flat" is
    the user's), as is an owner the parse could not read."""
    if "unread" in (a.who, b.who):
        return "unread"
    ka, kb = (a.owner, a.frame.split(":")[0]), (b.owner, b.frame.split(":")[0])
    if ka == kb:
        return "same"
    pair = {a.who, b.who}
    if pair <= _EXPLICIT and len(pair) == 1:
        return "different"
    if "self" in pair:
        return {"name": "self_name", "rel": "self_rel"}.get((pair - {"self"}).pop(), "self_noun")
    return "name_rel" if pair == _EXPLICIT else "noun"


def parses(p: Parse) -> bool:
    """Whether a statement says anything a resolver can read: not empty, not a question, and
    a triple or at least two content words (an emoji, "ok", a bare name do not)."""
    if p.empty or p.is_question:
        return False
    return bool(p.triples) or sum(t.pos not in _SKIP_POS and any(ch.isalnum() for ch in t.text)
                                  for t in p.tokens) >= 2


def gate(new: tuple[Claim, ...], old: tuple[Claim, ...], table: FrameTable) -> str:
    """REFUSE (nothing may supersede) or MODEL (the pair scorer decides); grammar-safe
    refusals only (version 3):

    - the new fact says it adds (also, another, second, a coordinated argument);
    - the owners are explicitly different: every pair of claims is two names or two
      possessed nouns that differ (never across subjects);
    - either fact states only frames the table KNOWS hold several values at once (a second
      pet, a second medication: never across multi-valued frames).

    An owner the parse cannot read, or a fact with no claim, is no refusal: the scorer
    weighs it (:mod:`.pair_model`)."""
    if any(c.additive for c in new):
        return REFUSE
    if new and old and all(relation(n, o) == "different" for n in new for o in old):
        return REFUSE
    for side in (new, old):
        if side and all(c.frame in table.multi for c in side):
            return REFUSE
    return MODEL


def same_name(a: str, b: str) -> bool:
    """Two names of one person: one's words inside the other's ("harpreet" and "client
    harpreet sandhu", "abernathy" and "glenn abernathy")."""
    wa, wb = set(a.split()), set(b.split())
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def _named(side: tuple[Claim, ...]) -> set[str]:
    """The words that can name a claim's value: not a number, and not a unit after one ("mg" in
    "500 mg" names no medication)."""
    out: set[str] = set()
    for c in side:
        ws = _WORD.findall(c.value.lower())
        units = {b for a, b in pairwise(ws) if any(ch.isdigit() for ch in a)}
        out |= {w for w in c.words if not w.isdigit() and w not in units}
    return out


def additive_uses(tokens: Iterable[Any]) -> list[str]:
    """The words of a parse's tokens (``Parse.tokens``) that are closed-class additive words in an
    additive use. "too" whose head is an adjective or an adverb is a degree word ("charged me too
    much", "it's too hot"), not addition ("yoga too"): ``pair`` 3.1 reads it so, by the parse, because
    version 3 refused 5 of its 10 gate refusals of hand-written development updates on it (R40).
    "other" stays additive in every use: version 3.2 read "the other sim's dead" as pointing back at
    the replaced value and was withdrawn, because "the other sister lives in denver" then retired the
    sister's city (R44, R46)."""
    toks = list(tokens)
    out = []
    for i, t in enumerate(toks):
        w = t.text.lower()
        if w not in ADDITIVE:
            continue
        head = toks[t.head] if 0 <= t.head < len(toks) and t.head != i else None
        if w == "too" and head is not None and head.pos in ("ADJ", "ADV"):
            continue
        out.append(t.text)
    return out


def pair_gate(new: tuple[Claim, ...], old: tuple[Claim, ...], table: FrameTable, words: Iterable[str]) -> str:
    """The ``pair`` resolver's gate (version 3.1): :func:`gate` with three refusals narrowed,
    because on hand-written development updates they refused writers' plain changes
    (DESIGN_LOG R32: 36 of the 75 updates version 2 missed):

    - additive: only a closed-class additive word in the new fact in an additive use (``words``:
      :func:`additive_uses` of its tokens since 3.1, so no degree "too"; also, too, another, second,
      ...), not coordination or a plural subject, which chat's
      run-on sentences produce ("traded the civic in for a rav4 ... i love it");
    - owners: two names are one person when one's words are inside the other's;
    - several-valued frames: a pair is no longer refused when the new fact names a word of
      the old fact's value, not a number or the unit after one (the same medication at a new
      dose, "sold the city"): coexisting values are different values. Two different values in
      such a frame are still refused.
    """
    if any(w.lower() in ADDITIVE for w in words):
        return REFUSE
    if new and old and all(relation(n, o) == "different" and not (n.who == o.who == "name"
                                                                  and same_name(n.owner, o.owner))
                           for n in new for o in old):
        return REFUSE
    shared = _named(new) & _named(old) if new and old else set()
    for side in (new, old):
        if side and all(c.frame in table.multi for c in side) and not shared:
            return REFUSE
    return MODEL
