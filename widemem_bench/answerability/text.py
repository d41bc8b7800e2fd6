"""Cheap text analysis for answerability v1's features: tokens, subject, topic and intent.

v1 only (``confidence="answerability_v1"``), kept unchanged for comparison: its topic
lists were written around the synthetic timelines' attributes, which is why v1 does
not transfer (see reports/transfer.md). v2 (`features_v2`, `subject`) uses none of them.

Everything here is plain string work over small fixed word lists, cached per text,
so a query's features cost microseconds. The lists are general English words for
personal facts (relatives; where / who / when / how much; the usual attributes of a
personal-assistant memory). They overlap the synthetic timelines' domain by design,
which makes holdout figures on the timelines optimistic for other domains; the
widemem fixture (different authors, different phrasing) is the out-of-domain check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Relatives and close contacts a user talks about ("my sister", "my best friend's job").
RELATIONS: dict[str, str] = {
    "sister": "sister", "sis": "sister", "brother": "brother", "bro": "brother",
    "mother": "mother", "mom": "mother", "mum": "mother", "mommy": "mother",
    "father": "father", "dad": "father", "daddy": "father",
    "son": "son", "daughter": "daughter", "kid": "child", "kids": "child", "child": "child",
    "children": "child", "parents": "parents", "sisters": "sister", "brothers": "brother",
    "uncle": "uncle", "aunt": "aunt", "auntie": "aunt", "cousin": "cousin",
    "niece": "niece", "nephew": "nephew",
    "grandmother": "grandmother", "grandma": "grandmother", "granny": "grandmother", "nana": "grandmother",
    "grandfather": "grandfather", "grandpa": "grandfather",
    "partner": "partner", "wife": "wife", "husband": "husband", "spouse": "partner",
    "boyfriend": "partner", "girlfriend": "partner", "fiance": "partner", "fiancee": "partner",
    "roommate": "roommate", "flatmate": "roommate", "housemate": "roommate",
    "friend": "friend", "boss": "boss", "manager": "boss", "coworker": "coworker",
    "colleague": "coworker", "neighbor": "neighbor", "neighbour": "neighbor",
}
# Two-word relations are matched first ("best friend" is not the same person as "friend").
RELATION_BIGRAMS: dict[tuple[str, str], str] = {("best", "friend"): "best friend"}

# Topic cues: a word (or word prefix, ending in '*') -> the kind of fact it points at.
# A query and a memory "fit" when they share a topic.
_TOPICS: dict[str, tuple[str, ...]] = {
    "place": ("live*", "living", "lived", "city", "town", "based", "reside*", "moved", "move",
              "settled", "locat*", "address", "home", "where"),
    "work": ("work*", "job", "jobs", "employ*", "company", "salary", "career", "office",
             "occupation", "profession", "boss", "hired"),
    "name": ("name*", "called", "named"),
    "diet": ("diet", "eat", "eats", "eating", "food", "vegan", "vegetarian", "keto", "meal*", "cook*"),
    "allergy": ("allerg*", "reaction", "food", "avoid", "cook*"),
    "medication": ("medic*", "meds", "pill*", "drug*", "take", "takes", "taking", "prescri*", "dose"),
    "condition": ("condition*", "illness*", "disease", "diagnos*", "health", "chronic", "sick",
                  "diabet*", "symptom*"),
    "doctor": ("doctor*", "physician", "gp", "dr", "clinic*"),
    "insurance": ("insur*", "coverage", "covers", "cover", "claim*", "plan"),
    "bank": ("bank*", "account*", "checking", "savings"),
    "legal": ("legal", "lawyer*", "attorney*", "court", "divorce", "will", "visa", "lawsuit",
              "paperwork", "immigration"),
    "book": ("book*", "read*", "novel*"),
    "film": ("film*", "movie*", "watch*", "cinema", "saw", "seen"),
    "drink": ("drink*", "coffee", "tea", "beverage*", "latte*", "chai", "espresso"),
    "exercise": ("exercis*", "workout*", "sport*", "gym", "training", "fitness", "run", "running"),
    "lunch": ("lunch*", "ate", "grab*", "breakfast", "dinner", "food"),
    "weather": ("weather", "rain*", "sunny", "snow*", "windy", "stormy", "humid", "cold", "hot"),
    "pet": ("pet", "pets", "dog*", "cat", "cats"),
    "age": ("age", "old", "born", "birthday"),
}
# Question words -> topics an answer to them could carry (used when the query names no topic).
INTENTS: dict[str, tuple[str, ...]] = {
    "where": ("place", "work"),
    "who": ("name", "work", "doctor", "bank", "insurance", "legal"),
    "when": ("age",),
    "how_much": (),
}
STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "from", "by", "about", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "have", "has", "had", "having", "i", "me", "my", "mine", "myself", "you", "your", "yours", "we", "our", "us", "it", "its", "it's", "this", "that", "these", "those", "there", "here", "what", "whats", "what's", "which", "who", "whom", "whose", "when", "where", "why", "how", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "any", "anything", "some", "something", "everything", "all", "again", "remind", "tell", "know", "recall", "remember", "please", "right", "now", "these", "days", "currently", "current", "still", "best", "there's", "is-it", "just", "really", "also", "up", "out", "into", "over", "than", "then", "so", "if", "not", "no", "yes", "ok", "okay"]
)
WEAK_CUES = frozenset({
    "live", "lives", "living", "lived", "home", "take", "takes", "taking", "saw", "seen", "ate",
    "run", "running", "plan", "cover", "covers", "will", "old", "hot", "cold", "where", "move",
    "moved", "food",
})
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _build_topic_index() -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    # A word may point at several topics ("food": diet, allergy, lunch).
    exact: dict[str, set[str]] = {}
    prefixes: list[tuple[str, str]] = []
    for topic, words in _TOPICS.items():
        for w in words:
            if w.endswith("*"):
                prefixes.append((w[:-1], topic))
            else:
                exact.setdefault(w, set()).add(topic)
    return exact, prefixes


_TOPIC_EXACT, _TOPIC_PREFIX = _build_topic_index()


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, possessive "'s" split off ("sister's" -> "sister")."""
    return [t[:-2] if t.endswith("'s") else t for t in _raw_tokens(text)]


def _raw_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))


def _possessor_after_my(text: str) -> str | None:
    """"what's my dog's name?" -> "dog": the owner named right after "my", if any."""
    raw = _raw_tokens(text)
    for i, w in enumerate(raw[:-1]):
        if w in ("my", "our"):
            for t in raw[i + 1 : i + 4]:
                if t.endswith("'s"):
                    return t[:-2]
    return None


_SUFFIXES = ("ing", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A crude stem: one common suffix off, then the first 6 letters (live / lives / living -> liv)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:6]


@lru_cache(maxsize=65536)
def _topics_of_word(w: str) -> frozenset[str]:
    exact = _TOPIC_EXACT.get(w)
    if exact is not None:
        return frozenset(exact)
    return frozenset(topic for prefix, topic in _TOPIC_PREFIX if w.startswith(prefix))


def word_topics(words: list[str]) -> frozenset[str]:
    found: set[str] = set()
    for w in words:
        found |= _topics_of_word(w)
    return frozenset(found)


def _relation_at(words: list[str], i: int) -> str | None:
    if i + 1 < len(words) and (words[i], words[i + 1]) in RELATION_BIGRAMS:
        return RELATION_BIGRAMS[(words[i], words[i + 1])]
    return RELATIONS.get(words[i])


def subject_of(words: list[str], *, query: bool) -> str:
    """Whom a text is about: a relation ("sister", "best friend"), "user", or "other".

    Memories as an extractor stores them start with their subject ("sister lives in
    Denver", "Alice's father lives in Atlanta") or have none ("lives in Boston": the
    user). A relation word later in a memory ("works at her father's firm") is not its
    subject, so only the first three words count there.

    A query names its subject after "my": "where does my sister live?" (a relation),
    "what's my go-to drink?" (an attribute of the user), "what colour is my
    bicycle?" (a thing that is neither: "other", which no memory matches).
    """
    if not query:
        for i in range(min(3, len(words))):
            rel = _relation_at(words, i)
            if rel is not None:
                return rel
        return "user"
    for i, w in enumerate(words):
        if w not in ("my", "our"):
            continue
        # The noun phrase after "my": up to three words, until a relation or a topic word.
        for j in range(i + 1, min(i + 4, len(words))):
            rel = _relation_at(words, j)
            if rel is not None:
                return rel
            if word_topics([words[j]]):
                return "user"
        return "other"
    return "user"


def intent_of(words: list[str]) -> str:
    """The question word that says what kind of answer is wanted ("other" when none)."""
    for i, w in enumerate(words):
        if w in ("where", "who", "whom", "whose", "when"):
            return "who" if w in ("whom", "whose") else w
        if w == "how" and i + 1 < len(words) and words[i + 1] in ("much", "many", "long", "old"):
            return "how_much"
    return "other"


@dataclass(frozen=True)
class TextInfo:
    """What the features need from one text (computed once per distinct text)."""

    content: frozenset[str]   # stems of content words (stopwords dropped)
    subject: str              # "user" or a relation
    topics: frozenset[str]    # topic cues present
    intent: str               # where / who / when / how_much / other (queries)
    has_number: bool          # a digit (amounts, dates)


@lru_cache(maxsize=65536)
def analyse(text: str, query: bool = False) -> TextInfo:
    words = tokens(text)
    # Relation words are left out of the content: the subject features handle them, and
    # "my mother" overlapping "mother lives in Lyon" says nothing about the attribute.
    content = frozenset(stem(w) for w in words if w not in STOPWORDS and w not in RELATIONS and len(w) > 1)
    topics = word_topics(words)
    if query:
        # Generic verbs ("live", "take") name a topic only when nothing more specific
        # does: "which illness do I live with?" asks about a condition.
        strong = word_topics([w for w in words if w not in WEAK_CUES])
        if strong:
            topics = strong
    intent = intent_of(words) if query else "other"
    subject = subject_of(words, query=query)
    if query and subject == "user":
        owner = _possessor_after_my(text)
        if owner is not None and owner not in RELATIONS:
            subject = "other"  # "my dog's name" is not the user's name
    if query and not topics and intent in INTENTS:
        # No topic word: the question word alone says what kind of fact would answer it.
        topics = frozenset(INTENTS[intent])
    return TextInfo(content, subject, topics, intent, any(c.isdigit() for c in text))
