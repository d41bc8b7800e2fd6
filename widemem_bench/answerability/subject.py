"""Whom a text is about, and the text with its subject masked out (answerability v2).

Only general English closed classes live here: pronouns, kinship and close-contact
words, question words, auxiliaries, articles and prepositions. Nothing names a topic
or an attribute, so the same rules apply to any domain's memories and questions.
Names are found by shape, not by list: a capitalised word that is no closed-class
word, or a lower-case query word that a returned memory spells capitalised as its
subject ("does frank have any pets?" against "Frank moved to Denver").

Subjects are small tuples: ``("self", "")`` (the user: "I", "my", or a memory with no
subject, as extractors store "lives in Boston"), ``("rel", "sister")``,
``("name", "priya")``, ``("addressee", "priya")`` (a line Priya says to someone
else in the second person) and ``("none", "")`` (a query with no subject word at all).
"""

from __future__ import annotations

import re
from functools import lru_cache

Subject = tuple[str, str]

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
OTHER_PRONOUNS = frozenset({
    "you", "your", "yours", "yourself", "he", "him", "his", "himself", "she", "her", "hers", "herself",
    "they", "them", "their", "theirs", "themselves", "it", "its", "itself", "user", "users",
})
PRONOUNS = FIRST_PERSON | OTHER_PRONOUNS
# Kinship and close-contact words (a closed class of English), folded to one form.
RELATIONS: dict[str, str] = {
    "sister": "sister", "sisters": "sister", "sis": "sister",
    "brother": "brother", "brothers": "brother", "bro": "brother",
    "mother": "mother", "mom": "mother", "mum": "mother", "mommy": "mother", "mama": "mother",
    "father": "father", "dad": "father", "daddy": "father", "papa": "father",
    "parent": "parents", "parents": "parents",
    "son": "son", "sons": "son", "daughter": "daughter", "daughters": "daughter",
    "kid": "child", "kids": "child", "child": "child", "children": "child", "baby": "child",
    "uncle": "uncle", "aunt": "aunt", "auntie": "aunt", "cousin": "cousin", "cousins": "cousin",
    "niece": "niece", "nephew": "nephew",
    "grandmother": "grandmother", "grandma": "grandmother", "granny": "grandmother", "nana": "grandmother",
    "grandfather": "grandfather", "grandpa": "grandfather", "grandparents": "grandparents",
    "grandson": "grandchild", "granddaughter": "grandchild", "grandchildren": "grandchild",
    "wife": "spouse", "husband": "spouse", "spouse": "spouse", "partner": "spouse",
    "boyfriend": "spouse", "girlfriend": "spouse", "fiance": "spouse", "fiancee": "spouse",
    "stepmother": "stepparent", "stepfather": "stepparent", "stepson": "stepchild", "stepdaughter": "stepchild",
    "roommate": "roommate", "flatmate": "roommate", "housemate": "roommate",
    "friend": "friend", "friends": "friend", "boss": "boss", "manager": "boss",
    "coworker": "coworker", "colleague": "coworker", "neighbor": "neighbor", "neighbour": "neighbor",
    "in-law": "in-law", "in-laws": "in-law",
}
# Function words that are never a name, even when capitalised at a sentence start.
QUESTION_WORDS = frozenset({"what", "whats", "where", "wheres", "who", "whos", "whom", "whose", "when", "which",
                            "why", "how", "hows"})
FUNCTION_WORDS = QUESTION_WORDS | frozenset({
    "a", "an", "the", "and", "or", "but", "if", "so", "of", "to", "in", "on", "at", "for", "with", "from",
    "by", "about", "as", "into", "over", "after", "before", "since", "during", "than", "then", "that",
    "this", "these", "those", "there", "here", "is", "are", "was", "were", "be", "been", "being", "am",
    "do", "does", "did", "have", "has", "had", "can", "could", "would", "should", "will", "shall", "may",
    "might", "must", "not", "no", "yes", "any", "some", "all", "every", "each", "also", "just", "still",
    "now", "ok", "okay", "hey", "hi", "hello", "please", "thanks", "remind", "tell", "recall", "remember",
    "know", "again", "well", "oh", "actually", "anyway", "btw",
})
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*(?:'[A-Za-z]+)?|:")


def _split(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("\u2019", "'"))


def _bare(token: str) -> str:
    """Lower case, possessive "'s" / "'" off: "Priya's" -> "priya"."""
    t = token.lower()
    return t[:-2] if t.endswith("'s") else t.rstrip("'")


def _is_name_shape(token: str) -> bool:
    """Capitalised, not all caps beyond 4 letters, and no closed-class word."""
    if not token[:1].isupper() or token == ":":
        return False
    b = _bare(token)
    return b not in FUNCTION_WORDS and b not in PRONOUNS and b not in RELATIONS and not b.isdigit()


def _relation_in(words: list[str]) -> str | None:
    for w in words:
        rel = RELATIONS.get(_bare(w))
        if rel is not None:
            return rel
    return None


@lru_cache(maxsize=65536)
def memory_subject(text: str) -> Subject:
    """Whom a stored memory is about, read from its first words.

    "sister lives in Denver", "Alice's father ..." -> relation; "Frank moved to ...",
    "Caroline: I went ..." -> that name; "I ...", "lives in Boston" -> the user.
    A relation later in the memory ("works at her father's firm") is not its subject.
    """
    words = _split(text)
    if not words:
        return ("self", "")
    rel = _relation_in(words[:3])
    if rel is not None:
        return ("rel", rel)
    first = words[0]
    if len(words) > 2 and words[1] == ":" and _is_name_shape(first):
        # A transcript line "Name: text": a first-person text is about its speaker, a
        # second-person one ("you adopted a puppy!") about the one spoken to.
        for w in words[2:]:
            b = _bare(w)
            if b in FIRST_PERSON:
                return ("name", _bare(first))
            if b in ("you", "your", "yours", "yourself"):
                return ("addressee", _bare(first))
        return ("name", _bare(first))
    # A sentence-initial capital is only a name when something marks it as one: a
    # possessive, a speaker colon, or a second capitalised word ("Mary Ann"), or a
    # verb-like lower-case word after it and no function word ("Frank moved ...").
    if _is_name_shape(first):
        nxt = words[1] if len(words) > 1 else ""
        if first.endswith("'s") or nxt == ":" or (nxt[:1].isupper() and _is_name_shape(nxt)):
            return ("name", _bare(first))
        if nxt and nxt[:1].islower() and nxt.lower() not in FUNCTION_WORDS:
            return ("name", _bare(first))
    return ("self", "")


def names_in(text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """Names in a text: capitalised non-initial words, and any word in ``known`` (lower case)."""
    out: list[str] = []
    for i, w in enumerate(_split(text)):
        b = _bare(w)
        if (b in known or (i > 0 and _is_name_shape(w))) and b not in out:
            out.append(b)
    return out


def query_subject(text: str, known: frozenset[str] = frozenset()) -> Subject:
    """Whom a question asks about: a relation, else a name, else the user ("I", "my"), else none.

    ``known``: names the returned memories use as their subject (lower case), so that a
    lower-case question ("where does frank live?") still finds its name.
    """
    words = _split(text)
    rel = _relation_in(words)
    if rel is not None:
        return ("rel", rel)
    names = names_in(text, known)
    if names:
        # Prefer a name some memory is about; else the first one.
        for n in names:
            if n in known:
                return ("name", n)
        return ("name", names[0])
    if any(_bare(w) in FIRST_PERSON for w in words):
        return ("self", "")
    return ("none", "")


def agreement(q: Subject, m: Subject) -> float:
    """1 the memory is about the question's subject, 0 about someone else, 0.5 cannot tell.

    A named question against a memory with no subject is 0.5: agent notes are often
    about the user by name, while an extractor drops the name.
    """
    qk, qv = q
    mk, mv = m
    if qk == "none":
        return 0.5
    if qk == "rel":
        return 1.0 if (mk == "rel" and mv == qv) else 0.0
    if mk == "rel":
        return 0.0
    if mk == "addressee":
        # spoken to by mv: not mv, maybe the question's subject
        return 0.0 if (qk == "name" and qv == mv) else 0.5
    if qk == "self":
        return 1.0 if mk == "self" else 0.5
    # a named question
    if mk == "name":
        return 1.0 if mv == qv else 0.0
    return 0.5


def mask_subject(text: str, names: frozenset[str] = frozenset()) -> str:
    """The text without its subject: pronouns, relation words, speaker colons and names dropped.

    What is left says which attribute the text is about ("where does live", "lives in
    Denver"), so two texts about the same person but different attributes no longer
    share the words that name the person. An all-subject text is returned unchanged.
    """
    words = _split(text)
    kept: list[str] = []
    for i, w in enumerate(words):
        b = _bare(w)
        if w == ":" or b in PRONOUNS or b in RELATIONS or b in names:
            continue
        if _is_name_shape(w) and (i > 0 or w.endswith("'s") or memory_subject(text)[0] == "name"):
            continue
        kept.append(w.lower() if i == 0 else w)
    out = " ".join(kept)
    return out if out else text
