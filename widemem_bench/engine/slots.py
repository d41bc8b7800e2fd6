"""Reading one stored fact for the ``rule`` resolver: whose fact, which single-valued slot, what change.

A fact is read into a :class:`Reading`:

- ``subject``: ``user`` (first person, "the user", a stripped fact), a relation
  word ("sister", "best friend"), a named person ("priya"), a named person's
  relation ("priya>sister"), or ``?`` for a bare pronoun ("she moved ...") that
  cannot be resolved. ``?`` never matches anything.
- ``slots``: the *single-valued* attributes the fact states, as
  ``{attribute: value}``: where someone lives, works, their job, their car,
  school, partner and relationship status, the user's own name, age, phone,
  a drug's dose, services one has one of ("my gym / dentist / GP is X",
  "switched to X as my GP"), and "usual / main / favourite X".
  One fact can state two (``works as a nurse at Mercy``: job and employer).
  Attributes that several values hold at once (pets, children, allergies,
  languages, hobbies, conditions, anything "has / owns / adopted") are never
  slots: a second one is added next to the first.
- ``old``: the value a fact says is gone, from explicit change markers of
  general English: "traded X for Y", "switched from X to Y", "replaced X with
  Y", "Y instead of X", "left X for Y", "no longer X", "used to X" (not of a
  possession: "used to have a dog" says nothing of today's), "quit X",
  "X is gone", "X is out, Y is in", "is off X". A wrapper noun around a named
  value is read past ("cancelled the Planet Fitness membership").

The patterns are general English (relation words, pronouns, functional verbs
like "lives in" / "works at" / "drives"), not the wording of the project's
generators. Limits: English only; one clause per fact; the first matching
pattern of an attribute wins; a name is the user's only when the fact says so
("my name is", "I'm called", "call me", "goes by"), never from "named X";
locations and employers must be proper nouns (capitalised), so "moved to the
night shift" is not a move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The reader's tables (slot_patterns) and the frame comparison (frames) live beside it;
# changed_value, frame_tokens and stems are re-exported (resolvers import them from here).
from widemem_bench.engine.frames import changed_value, frame_tokens
from widemem_bench.engine.slot_patterns import (
    _ADVERBS,
    _ARTICLES,
    _LIGHT_VERBS,
    _NEGATION,
    _NOT_JOBS,
    _NOT_NAMES,
    _NOT_ROLE_ADJ,
    _OTHER_NAME,
    _PRONOUNS,
    _REL,
    _REPLACED,
    _ROLE,
    _SLOTS,
    _STOP,
    _USER_NAME,
    _VALUE_CUT,
    _WRAPPERS,
    _article_led,
    _normalise_value,
    _proper,
    stems,
)

__all__ = [
    "NameEvidence", "Reading", "as_user", "changed_value", "direct_object", "frame_tokens",
    "main_verb", "mentions", "read", "read_old", "read_slots", "split_subject", "stems",
    "user_names", "values_agree",
]


@dataclass(frozen=True)
class Reading:
    """What the rule resolver reads from one fact (see the module docstring)."""

    subject: str
    slots: dict[str, str] = field(default_factory=dict)
    old: tuple[str, ...] = ()
    light_old: bool = False
    words: frozenset[str] = frozenset()
    verb: str = ""
    cease: bool = False  # the named old value is a practice given up ("quit padel", "gave up X")
    obj: tuple[str, ...] = ()  # stems of the main verb's direct object ("plays padel weekly" -> padel, weekly)


# Spellings of one relation (general English): "mum" and "mother" are one person.
_KIN_SAME = {"mom": "mother", "mum": "mother", "mommy": "mother", "mummy": "mother", "dad": "father",
             "daddy": "father", "grandma": "grandmother", "granny": "grandmother", "nan": "grandmother",
             "grandpa": "grandfather", "granddad": "grandfather", "hubby": "husband", "neighbour": "neighbor",
             "flatmate": "roommate", "housemate": "roommate", "fiancee": "fiance", "kid": "child"}


def split_subject(text: str) -> tuple[str, str]:
    """(subject, rest of the fact). ``user`` when the fact names nobody else; relation spellings unified."""
    subject, rest = _split_subject(text)
    parts = [">".join(_KIN_SAME.get(w, w) for w in part.split(">")) for part in subject.split(":", 1)]
    return ":".join(parts), rest


def _split_subject(text: str) -> tuple[str, str]:
    t = text.strip()
    m = re.match(r"^(?:the\s+)?user(?:'s)?\s+", t, re.IGNORECASE)
    if m:
        rest = t[m.end():]
        r = re.match(rf"^(?P<rel>{_REL})\b(?:'s)?\s*", rest, re.IGNORECASE)
        return (r.group("rel").lower(), rest[r.end():]) if r else ("user", rest)
    m = re.match(r"^(?:I|I'm|I’m|I've|I’ve|I'd|me|we|we're|we've)\b\s*", t)
    if m:
        word = m.group(0).strip().lower().replace("’", "'")
        prefix = {"i'm": "am ", "we're": "are ", "i've": "have ", "we've": "have "}.get(word, "")
        return "user", prefix + t[m.end():]
    m = re.match(rf"^(?:(?P<my>my|our)\s+)?(?P<rel>{_REL})\b(?P<poss>'s)?\s*", t, re.IGNORECASE)
    if m:
        rel, rest = m.group("rel").lower(), t[m.end():]
        # "sister Ana lives ..." names which sister.
        n = re.match(r"^(?P<name>[A-Z][\w'-]+)(?:,)?\s+(?=[a-z])", rest)
        if n and not m.group("poss") and n.group("name").lower() not in _NOT_NAMES:
            return f"{rel}:{n.group('name').lower()}", rest[n.end():]
        return rel, rest
    m = re.match(r"^(?:my|our)\s+", t, re.IGNORECASE)
    if m:  # "my car is a Tesla": the user's own thing
        return "user", t[m.end():]
    first = re.match(r"^(?P<w>[A-Za-z]+)\b", t)
    if first and first.group("w").lower() in _PRONOUNS:
        return "?", t[first.end():].strip()
    m = re.match(r"^(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)(?P<poss>'s|’s|')?\s+(?P<next>\S+)", t)
    if m and m.group("name").split()[0].lower() not in _NOT_NAMES:
        name = m.group("name").lower()
        nxt = m.group("next")
        if m.group("poss"):
            rest = t[m.end("poss"):].strip()
            r = re.match(rf"^(?P<rel>{_REL})\b(?:'s)?\s*", rest, re.IGNORECASE)
            if not r:
                return name, rest
            sub, rest = f"{name}>{r.group('rel').lower()}", rest[r.end():]
            n = re.match(r"^(?P<name>[A-Z][\w'-]+)(?:,)?\s+(?=[a-z])", rest)
            if n and n.group("name").lower() not in _NOT_NAMES:
                return f"{sub}:{n.group('name').lower()}", rest[n.end():]
            return sub, rest
        # "Priya moved ...": a name followed by a lower-case verb, not "Works at Acme".
        after = _strip_adverbs(t[m.end("name"):])
        nxt = after.split()[0] if after.split() else ""
        if nxt[:1].islower() and nxt.lower() not in _STOP - {"is", "has", "was", "had"}:
            return name, t[m.end("name"):].strip()
    return "user", t


def _strip_adverbs(rest: str) -> str:
    """Drop leading adverbs, also after an auxiliary ("is now based in" -> "is based in")."""
    out = re.sub(rf"^(?:{_ADVERBS}\s+)+", "", rest.strip(), flags=re.IGNORECASE)
    return re.sub(rf"^((?:is|am|are|was|were|has|have|had|'s|'m|'re)\s+)(?:{_ADVERBS}\s+)+", r"\1", out,
                  flags=re.IGNORECASE)


_VEHICLES = {"car", "truck", "pickup", "van", "minivan", "suv", "motorcycle", "motorbike", "scooter", "moped",
             "bike", "ev", "hatchback", "sedan", "convertible", "jeep", "wagon", "hybrid", "coupe", "camper"}


# "<noun> is <value>" ("gym is Pulse", "relationship status is engaged", "Ana's team is
# Valemont FC"): a possessor's singular noun names one thing at a time, so the noun is the
# slot. General English, no attribute list: the noun phrase itself is the key. Not a plural
# noun, not a name ("dog is called Rex" names one of possibly several), not "one of".
_KEY_IS = re.compile(
    r"^(?P<q>(?-i:[a-z])[a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})\s+(?:is|:)\s+(?:now\s+|still\s+)?"
    r"(?!(?:called|named|not|no|one|also|among|part|in\s+(?:a|the)\s+\w+\s+with)\b)(?P<v>.+)$",
    re.IGNORECASE,
)
# Head nouns that name a slot the patterns above already read: one key for both wordings
# ("home city is X" and "lives in X"; "office is at X" and "works at X").
_KEY_SLOTS = {"home": "location", "home city": "location", "city": "location", "address": "location",
              "home address": "location", "employer": "employer", "office": "employer",
              "workplace": "employer", "company": "employer", "title": "job", "job title": "job",
              "occupation": "job", "profession": "job", "car": "vehicle", "phone": "phone", "diet": "diet",
              "relationship status": "status", "marital status": "status"}
_KEY_NOT = _STOP | {"what", "who", "where", "which", "how", "why", "when", "one", "part", "name", "names",
                    "reason", "plan", "idea", "problem", "question", "thing", "news", "point", "goal"}
_PREP_LEAD = re.compile(r"^(?:at|with|for|in|on|to|by)\s+", re.IGNORECASE)
# Singular nouns of things people commonly hold several of at once: "my medication is X"
# then "my medication is Y" is most often a second drug, and losing the first is the
# costly mistake (the same reason pets, allergies and languages are never slots).
_KEY_MANY = frozenset({"medication", "medicine", "prescription", "drug", "allergy", "condition", "client",
                       "customer", "appointment", "meeting", "booking", "reservation", "flight", "club",
                       "project", "account", "card", "pet", "kid", "child", "hobby", "language", "friend",
                       "subscription", "class"})
# Mapped keys whose value may follow "at" / "with": the employer ("office is at Brightline").
# Any other preposition says where the thing is ("car is in the shop", "office is in Leeds").
_EMPLOYER_LEAD = re.compile(r"^(?:at|with)\s+", re.IGNORECASE)
_PLACE_LEAD = re.compile(r"^(?:in|at)\s+", re.IGNORECASE)
# A place whose last word is a street or area noun is a part of a town ("lives in Copperfield
# Row"): a slot of its own, so moving street never rewrites the city, nor the reverse.
_AREA_NOUNS = frozenset({
    # Only nouns that name a street or a part of a town; not "area", "park", "hills" or
    # "village" ("the Bay Area", "Beverly Hills" are regions and towns).
    "street", "st", "road", "rd", "lane", "avenue", "ave", "row", "district", "quarter", "rise", "square",
    "heights", "estate", "green", "gardens", "court", "close", "terrace", "crescent", "drive", "mews",
    "walk", "yard", "wharf", "docks", "neighbourhood", "neighborhood", "borough", "ward", "precinct", "block",
})


def _key_slot(pred: str) -> dict[str, str]:
    m = _KEY_IS.match(pred)
    if not m:
        return {}
    key = " ".join(m.group("q").lower().split())
    words = key.split()
    if words[0] in _KEY_NOT or words[-1] in _KEY_NOT or words[-1] in _KEY_MANY or (
            words[-1].endswith("s") and not words[-1].endswith(("ss", "us", "is"))):
        return {}
    raw = m.group("v")
    attribute = _KEY_SLOTS.get(key, f"key:{key}")
    if key == "job" and _PREP_LEAD.match(raw):  # "job is at Acme": the employer, not a title
        attribute = "employer"
    # "address is in Porto": a place's key may take "in" / "at" before the place's name.
    lead = _EMPLOYER_LEAD.match(raw) if attribute == "employer" else (
        _PLACE_LEAD.match(raw) if attribute == "location" else None)
    if _PREP_LEAD.match(raw) and not lead:
        return {}  # "car is in the shop", "office is in Leeds": where the thing is, not what it is
    raw = raw[lead.end():] if lead else raw
    # A name, a number or a thing ("is Pulse Studio", "is band 5", "is a Kestrel"), not a
    # state of the thing ("gym is closed this week", "phone is broken", "company is hiring").
    # A place is a name or a number ("home is a two-bed flat" says what, not where); a
    # relationship status is a state by nature ("relationship status is dating").
    numbered = raw[:1].isdigit() or re.search(r"\d", raw.split()[-1] if raw.split() else "")
    # An unmapped key takes an article-led value only when it names something ("is a
    # Brompton", "is an old ThinkPad"), not "is a gift from my dad".
    led = _article_led(raw) and (not attribute.startswith("key:") or any(w[:1].isupper() for w in raw.split()[1:]))
    if attribute != "status" and not (_proper(raw) or numbered or (led and attribute != "location")):
        return {}
    value = _normalise_value(raw)
    if not value:
        return {}
    return {attribute: value}


def _area(slots: dict[str, str]) -> dict[str, str]:
    v = slots.get("location")
    if v and v.split()[-1] in _AREA_NOUNS:
        slots = {("location:area" if k == "location" else k): x for k, x in slots.items()}
    return slots


def read_slots(subject: str, rest: str) -> dict[str, str]:
    """The single-valued slots a predicate states (empty when negated or none applies).

    When the whole predicate states none, each later "and"-clause is tried
    ("retrained and now works as a firefighter").
    """
    text = " ".join(rest.split()).rstrip(".!?")
    out = _read_clause(subject, text)
    if not out and text and not _NEGATION.search(text):
        for clause in re.split(r"\s*,?\s+and\s+", text)[1:]:
            out = _read_clause(subject, clause)
            if out:
                break
    return _area(out)


_DOCTOR_WORDS = {"doctor", "gp", "physician", "family doctor"}
# Time adverbials inside a predicate ("favourite food these days is ramen"): they say when,
# not what, so they are read past.
_WHEN = re.compile(r"\s+(?:these\s+days|nowadays|lately|at\s+the\s+moment|right\s+now|at\s+present)\b(?=\s+\w)",
                   re.IGNORECASE)


def _qualified(attribute: str, q: str) -> str:
    """``attribute:q`` ("fav:color"), or the attribute a service noun names ("own" + "gp" -> "doctor")."""
    q = re.sub(r"(?<=[a-z]{2})our\b", "or", _normalise_value(q))  # "colour" is "color"
    if attribute == "own":
        return "doctor" if q in _DOCTOR_WORDS else q
    return f"{attribute}:{q}"


def _read_clause(subject: str, text: str) -> dict[str, str]:
    if not text or _NEGATION.search(text):
        return {}
    pred = _strip_adverbs(_WHEN.sub("", text))
    if subject == "user":
        m = _USER_NAME.match(pred)
        if m:
            return {"name": _normalise_value(m.group("v"))}
    elif _OTHER_NAME.match(pred):
        return {}
    for attribute, pattern, proper in _SLOTS:
        hit = pattern.match(pred) or pattern.match(text)
        if not hit:
            continue
        groups = hit.groupdict()
        raw = groups.get("b") or groups.get("v") or ""
        if proper and not (_proper(raw) or (attribute == "employer" and _article_led(raw))):
            continue
        value = _normalise_value(raw, cut=not groups.get("b"))
        if not value:
            continue
        if attribute == "job" and (value.split()[-1] in _NOT_JOBS or value.split()[0] == "volunteer"):
            continue  # "became a grandmother", "is a volunteer firefighter at X": not a job change
        if attribute == "vehicle":
            # "drives the kids to school" is a routine, not a car.
            value = re.split(r"\s+(?:to|from|into|around|through|every|each)\b", value)[0]
            if not (_proper(raw) or _VEHICLES & set(value.split())):
                continue
        if attribute in ("doctor", "own"):
            value = re.sub(r"^dr\.?\s+", "", value)  # "Dr. Patel" and "Dr Patel" are one doctor
        if groups.get("q"):
            attribute = _qualified(attribute, groups["q"])
        if attribute.startswith("dose"):
            value = re.sub(r"(?<=\d)\s+(?=[a-zµ])", "", value)  # "50 mg" is "50mg"
        out = {attribute: value}
        employer = groups.get("e")
        if employer and (_proper(employer) or _article_led(employer)):
            out["employer"] = _normalise_value(employer)
        if groups.get("p"):  # "married Paul": who with (read first, as a partner fact) and the status
            out = {"partner": _normalise_value(groups["p"]), attribute: "dating" if value == "relationship" else value}
        return out
    m = _ROLE.match(pred)
    if m:
        words = _normalise_value(m.group("v")).split()
        if words and words[-1] not in _NOT_JOBS and words[0] not in _NOT_ROLE_ADJ:
            # "is a firefighter now": the change marker makes it an explicit job change.
            return {"job" if m.group("now") else "role": " ".join(words)}
    return _key_slot(pred)


_COPULAS = {"is", "am", "are", "was", "were", "be", "been"}
# Verbs that end a practice or a habit, whatever verb stated it ("does woodturning",
# "joined a padel club" -> "gave up woodturning", "quit padel").
_CEASE = re.compile(r"\b(?:quit|quits|quitting|gave\s+up|gives\s+up|given\s+up|giving\s+up|stopped|stops)\b",
                    re.IGNORECASE)


def read_old(text: str) -> tuple[tuple[str, ...], bool]:
    """(content words of the value the fact says is gone, whether its verb was a light verb)."""
    for pattern in _REPLACED:
        m = pattern.search(text)
        if not m:
            continue
        old = _VALUE_CUT.split(m.group("old").strip(), maxsplit=1)[0]
        old = _WRAPPERS.sub("", old) if any(w[:1].isupper() for w in old.split()) else old
        words = old.split()
        light = bool(words) and words[0].lower() in _LIGHT_VERBS
        if m.groupdict().get("past") and light and words[0].lower() not in _COPULAS:
            continue  # "used to have a dog (as a kid)" says nothing about the dog of today
        toks = tuple(stems(old))
        if light:
            toks = tuple(stems(" ".join(words[1:])))
        if toks:
            return toks, light
    return (), False


_AUX_LEAD = re.compile(r"^(?:(?:is|am|are|was|were|'s|'m|'re|has\s+been|have\s+been|had\s+been|been)\s+)+"
                       rf"(?!(?:{_ARTICLES}|\d)\b)", re.IGNORECASE)


def main_verb(rest: str) -> str:
    """The predicate's head word ("is allergic to X" -> "allergic"; "has a dog" -> "has")."""
    pred = _AUX_LEAD.sub("", _strip_adverbs(rest), count=1)
    m = re.match(r"[A-Za-z']+", pred)
    if not m:
        return ""
    word = m.group(0).lower()
    if word in _LIGHT_VERBS:
        return "has" if word in {"has", "have", "had", "own", "owns", "owned", "got", "get", "gets"} else "is"
    st = stems(word)
    return st[0] if st else word


def read(content: str, names: frozenset[str] = frozenset()) -> Reading:
    """Subject, single-valued slots, named old value and content words of one fact.

    ``names``: the names the user goes by (`user_names`); a fact whose subject is one of
    them is about the user ("Priya moved to Lisbon" in Priya's own store).
    """
    text = " ".join(content.replace("’", "'").replace("‘", "'").split())
    subject, rest = split_subject(text)
    subject = as_user(subject, names)
    old, light = read_old(rest)
    cease = bool(old) and not light and _CEASE.search(rest) is not None
    return Reading(subject, read_slots(subject, rest), old, light, frozenset(stems(text)), main_verb(rest), cease,
                   direct_object(rest))


# A preposition after the verb means the value is not what the verb does ("met my husband
# in the choir", "allergic to peanuts"); "goes to yoga" is the one motion verb let through.
_OBJ_PREP = re.compile(r"^(?:in|at|on|with|through|by|from|for|about|of|into|to)\b", re.IGNORECASE)
_GO = {"go", "goes", "going", "went"}


def direct_object(rest: str) -> tuple[str, ...]:
    """Stems of what directly follows the predicate's verb ("is learning the cello" -> cello),
    empty when a preposition comes first ("is allergic to peanuts")."""
    pred = _AUX_LEAD.sub("", _strip_adverbs(rest), count=1).split(maxsplit=1)
    if len(pred) < 2:
        return ()
    verb, obj = pred[0].lower(), pred[1]
    if verb in _GO:
        obj = re.sub(r"^to\s+", "", obj, flags=re.IGNORECASE)
    return () if _OBJ_PREP.match(obj) else tuple(stems(obj))


def values_agree(a: str, b: str) -> bool:
    """Same value, or one a word-prefix of the other ("new york" / "new york city")."""
    ta, tb = a.split(), b.split()
    n = min(len(ta), len(tb))
    return n > 0 and ta[:n] == tb[:n]


def mentions(words: frozenset[str], old: tuple[str, ...]) -> bool:
    """Whether a memory's content words hold every content word of a named old value."""
    return bool(old) and all(w in words for w in old)


def as_user(subject: str, names: frozenset[str]) -> str:
    """``subject`` with the user's own name read as the user ("priya>sister" -> "sister")."""
    if not names:
        return subject
    head, sep, tail = subject.partition(">")
    if head in names:
        return tail if sep else "user"
    return subject


def user_names(content: str) -> frozenset[str]:
    """The name a fact says the user goes by ("my name is Priya Shah" -> priya shah, priya)."""
    r = read(content)
    v = r.slots.get("name") if r.subject == "user" else None
    return frozenset({v, v.split()[0]}) if v else frozenset()


@dataclass
class NameEvidence:
    """The names a user's store says the user goes by (see `self_names`)."""

    stated: set[str] = field(default_factory=set)   # "my name is Priya", "goes by Priya"

    def add(self, content: str) -> None:
        self.stated |= user_names(content)

    def self_names(self) -> frozenset[str]:
        """The names that mean the user: only the ones the store states. A bare name alone
        ("Keiko lives in York") may be a friend's, and reading it as the user would
        overwrite a true fact, so it is never guessed."""
        return frozenset(self.stated)
