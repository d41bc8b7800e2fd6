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

import difflib
import re
from dataclasses import dataclass, field

# ---------------------------------------------------------------- closed classes
# Relations (general English kinship and social words): the subject of "my sister ...".
RELATIONS: tuple[str, ...] = (
    "best friend", "friend", "sister", "brother", "mother", "mom", "mum", "father", "dad",
    "wife", "husband", "partner", "spouse", "girlfriend", "boyfriend", "fiance", "fiancee",
    "son", "daughter", "kid", "child", "baby", "stepson", "stepdaughter", "stepmother", "stepfather",
    "grandmother", "grandfather", "grandma", "grandpa", "granny", "granddad", "grandson", "granddaughter",
    "hubby",
    "aunt", "uncle", "niece", "nephew", "cousin", "sibling", "parent", "in-law",
    "mother-in-law", "father-in-law", "sister-in-law", "brother-in-law",
    "boss", "manager", "coworker", "colleague", "roommate", "flatmate", "housemate",
    "neighbor", "neighbour", "landlord", "landlady", "dog", "cat", "pet",
)
_REL = "|".join(sorted((re.escape(r) for r in RELATIONS), key=len, reverse=True))
_PRONOUNS = {"he", "she", "they", "it", "him", "her", "them", "his", "their", "its", "hers", "theirs"}
# Capitalised words that open a sentence without being a name.
_NOT_NAMES = {
    "i", "im", "the", "a", "an", "my", "our", "your", "this", "that", "these", "those", "we", "you",
    "user", "is", "am", "are", "was", "were", "has", "have", "had", "just", "now", "still", "also",
    "recently", "finally", "currently", "today", "yesterday", "new", "no", "not", "never", "always",
    "usually", "after", "before", "since", "when", "then", "so", "and", "but", "or", "oh", "well",
    "there", "here", "every", "each", "some", "any", "all", "both", "last", "next", "one",
    *_PRONOUNS,
}
_ARTICLES = r"(?:the|a|an|my|our|his|her|their|your)"
_ADVERBS = (
    r"(?:now|just|recently|finally|officially|currently|still|also|already|actually|newly|"
    r"eventually|today|lately|again|really|happily|proudly|then|even)"
)
_STOP = {
    "a", "an", "the", "to", "in", "at", "for", "of", "on", "with", "from", "by", "and", "or", "as",
    "is", "am", "are", "was", "were", "be", "been", "being", "has", "have", "had", "do", "does", "did",
    "my", "our", "his", "her", "their", "your", "its", "i", "me", "we", "he", "she", "they", "it",
    "this", "that", "these", "those", "there", "here", "now", "then", "just", "still", "also", "back",
    "up", "out", "over", "into", "one", "some", "any", "all", "very", "really", "so", "too", "new", "old",
    "early", "late",
}
_LIGHT_VERBS = {"has", "have", "had", "own", "owns", "owned", "got", "get", "gets", "is", "am", "are",
                "was", "were", "be", "been", "keep", "keeps", "kept"}
# Nouns that follow "became a" without naming a job (family and membership roles).
_NOT_JOBS = {"member", "citizen", "fan", "regular", "parent", "mom", "mum", "dad", "mother", "father",
             "grandmother", "grandfather", "grandparent", "aunt", "uncle", "godmother", "godfather",
             "vegan", "vegetarian", "pescatarian", "widow", "widower", "resident", "homeowner",
             "volunteer", "guest", "patient", "customer", "client", "student", "visitor", "friend",
             "owner", "lover", "person", "enthusiast", "buff", "addict", "nerd", "geek", "junkie",
             "believer", "supporter", "native", "local", "twin", "kid", "child", "baby", "adult", "teenager",
             "wife", "husband", "partner", "sister", "brother", "son", "daughter", "cousin", "neighbor"}

# "is a nurse": a plain copula with an indefinite noun is most often an occupation, but
# not always ("is a runner"), so it is only ever *replaced* by an explicit job statement
# ("became a firefighter", "works as a firefighter"), never replaces anything itself.
_ROLE = re.compile(r"^(?:(?:is|am|are|'m|'s)\s+)?an?\s+(?P<v>[\w-]+(?:\s+[\w-]+){0,2}?)"
                   r"(?:(?P<now>\s+(?:now|these\s+days|nowadays))(?:,?\s+(?:after|since|that|following|because|having)\b.*)?)?"
                   r"\s*$", re.IGNORECASE)
# Evaluative or habitual adjectives that make "is a X" a trait, not a job ("is a keen climber").
_NOT_ROLE_ADJ = {"big", "huge", "keen", "avid", "great", "good", "bad", "early", "night", "morning", "proud",
                 "happy", "lifelong", "die", "serious", "casual", "amateur", "passionate", "regular", "total",
                 "real", "light", "heavy", "picky", "fussy", "social", "first", "massive", "little",
                 "bit", "natural", "true", "devoted", "loyal", "former", "retired", "part", "single", "new"}

_NEGATION = re.compile(
    r"\b(?:not|no longer|never|don't|doesn't|didn't|isn't|aren't|wasn't|stopped|quit|left|"
    r"used to|anymore|any more|no more|gave up|sold|ex|former|formerly)\b",
    re.IGNORECASE,
)
_MONTHS = (r"(?:january|february|march|april|may|june|july|august|september|october|november|"
           r"december|spring|summer|autumn|fall|winter|\d{4})")
_VALUE_CUT = re.compile(
    r"\s+(?:and|but|because|since|now|last|this|next|as|for|with|after|before|when|while|"
    r"recently|again|too|already|these days|nowadays|from now on|full[- ]time|part[- ]time|"
    rf"in\s+{_MONTHS}|in\s+(?:early|late|mid)[- ]?{_MONTHS}|on\s+\w+day)\b|[,;:.!?(]",
    re.IGNORECASE,
)


_TITLE_DOT = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St)\.", re.IGNORECASE)


def _normalise_value(raw: str, cut: bool = True) -> str:
    # Values the pattern itself bounds (group "b") keep their connectives and dots.
    raw = _TITLE_DOT.sub(r"\1", raw)  # "Dr. Moore": a title's dot does not end the value
    value = _VALUE_CUT.split(raw.strip(), maxsplit=1)[0] if cut else raw.strip()
    value = re.sub(rf"^(?:{_ARTICLES}\s+)+", "", value.strip().lower())
    return " ".join(value.replace("-", " ").split())


def _proper(raw: str) -> bool:
    """Whether a value opens with a proper noun ("Lisbon", "the Hague"), not "a new team"."""
    words = raw.strip().split()
    if words and words[0].lower() == "the":
        words = words[1:]
    return bool(words) and words[0][:1].isupper()


def _article_led(raw: str) -> bool:
    """A workplace named by a common noun ("the county hospital", "a small studio")."""
    return re.match(r"(?:the|a|an)\s+[a-z]", raw.strip(), re.IGNORECASE) is not None


# ---------------------------------------------------------------- single-valued slots
# (attribute, pattern, proper-noun value required). Patterns are anchored at the start
# of the predicate (after the subject and leading adverbs); "v" is cut at the first
# connective, "b" is bounded by the pattern, "e" is an employer riding on a job, "q"
# qualifies the attribute (medication per treated condition: several drugs for
# different conditions hold at once).
_JOB_END = (r"\s*$|\s*[,;]|\s+(?=(?:last|this|next|in|since|after|before|when|recently|now|too|again|"
            r"these\s+days|full[- ]time|part[- ]time)\b)")
_SCHOOL_NOUNS = (r"(?:school|elementary|primary|middle|high|college|university|academy|kindergarten|"
                 r"preschool|nursery|institute|polytechnic|gymnasium|lyceum)")
# World knowledge of general English: car makes, phone lines, dose units, and services one
# has one of at a time (a second doctor is a specialist, named by "dentist", "therapist").
_MAKES = (r"toyota|honda|ford|chevy|chevrolet|nissan|mazda|subaru|hyundai|kia|tesla|bmw|audi|mercedes|volkswagen|vw|"
          r"volvo|jeep|dodge|gmc|buick|cadillac|lexus|acura|infiniti|porsche|fiat|renault|peugeot|citroen|skoda|"
          r"seat|opel|vauxhall|mini|jaguar|land\s+rover|range\s+rover|lincoln|rivian|polestar|byd|suzuki|"
          r"mitsubishi|alfa\s+romeo|prius|corolla|civic|camry|golf|model\s+[3sxy]")
_VEHICLE_NOUNS = ("car", "truck", "pickup", "van", "minivan", "suv", "motorcycle", "motorbike", "hatchback",
                  "sedan", "convertible", "ev", "electric car")
_PHONES = r"iphone|pixel|galaxy\s+[sazn]\d*|samsung\s+galaxy|oneplus|motorola|moto\s+g|xiaomi|nokia|android\s+phone|flip\s+phone"
_DOSE = r"\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|ml|units?|iu|milligrams?|micrograms?)\b"
_ONE_OF = (r"phone|gym|dentist|therapist|barber|hairdresser|hair\s+stylist|vet|pharmacy|mechanic|"
           r"personal\s+trainer|trainer|accountant|lawyer|broker|bank|mobile\s+(?:carrier|provider|network)|"
           r"(?:internet|broadband|phone|energy|electricity)\s+(?:provider|company|supplier)|carrier|"
           r"gp|doctor|physician|family\s+doctor")
_AUX = r"(?:(?:is|am|are|was|has\s+been|have\s+been|had\s+been|has|have|had|'s|'re|'m)\s+)?"
_SLOT_PATTERNS: tuple[tuple[str, str, bool], ...] = (
    ("job", r"(?:works?|worked|working|employed)\s+as\s+(?:an?\s+)?(?P<v>[\w' -]+?)"
            r"(?:\s+(?:at|for|with)\s+(?P<e>.+)|\s*$|\s*[,;]|\s+(?=(?:last|this|next|in|since|after|before|"
            r"when|recently|now|too|again|these\s+days|full[- ]time|part[- ]time)\b))", False),
    # "got hired as", "took a job as", "started working as": a new job named by how it began.
    ("job", r"(?:(?:got|was|been|just)\s+)?(?:hired|taken\s+on|brought\s+on|signed\s+on)\s+as\s+(?:an?\s+)?"
            rf"(?P<v>[\w' -]+?)(?:\s+(?:at|for|with|by)\s+(?P<e>.+)|{_JOB_END})", False),
    ("job", r"(?:took|takes|got|gets|landed|accepted|started|found)\s+(?:a|an|the)\s+(?:new\s+)?(?:job|position|role|post)\s+"
            rf"as\s+(?:an?\s+)?(?P<v>[\w' -]+?)(?:\s+(?:at|for|with)\s+(?P<e>.+)|{_JOB_END})", False),
    ("employer", r"(?:job|role|position)\s+is\s+(?:at|with)\s+(?P<v>.+)", True),
    ("job", r"(?:job|role|profession|occupation|position|title)\s+(?:is|as)\s+(?:an?\s+)?(?P<v>.+)", False),
    ("job", r"(?:works?|worked|working)\s+in\s+(?P<v>(?-i:[a-z])[\w -]*?)"
            rf"(?:\s+(?:at|for)\s+(?P<e>.+)|{_JOB_END})", False),
    ("job", r"(?:makes?\s+a\s+living|earns?\s+a\s+living|has\s+a\s+career|career\s+is)\s+(?:as|in)\s+(?:an?\s+)?"
            rf"(?P<v>[\w' -]+?)(?:\s+(?:at|for)\s+(?P<e>.+)|{_JOB_END})", False),
    ("job", r"(?:is|am|are|'m|'s)\s+an?\s+(?P<v>[\w-]+(?:\s+[\w-]+)?)\s+by\s+(?:profession|trade)\b", False),
    ("job", r"joined\s+(?P<e>[A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*)*)\s+as\s+(?:an?\s+)?(?P<v>.+)", False),
    ("job", r"(?:got\s+|was\s+|been\s+)?promoted\s+to\s+(?:an?\s+)?(?P<v>[\w' -]+?)"
            rf"(?:\s+(?:at|for|with)\s+(?P<e>.+)|{_JOB_END})", False),
    ("job", r"(?:became|become|becoming|retrained\s+as|trained\s+as|qualified\s+as|"
            r"(?:(?:is|am|are|'s|'m)\s+)?now)\s+(?:an?\s+)(?P<v>[\w-]+(?:\s+[\w-]+)??)"
            r"(?:\s+(?:at|for|with)\s+(?P<e>.+)|\s*$|\s*[,;]|\s+(?=(?:last|this|next|in|since|after|before|"
            r"when|recently|now|too|again)\b))", False),
    ("school", r"(?:is|am|are|'m|'s)\s+(?:now\s+)?(?:an?\s+)?(?:[\w-]+\s+)?(?:freshman|sophomore|junior|senior|"
               r"first[- ]year|second[- ]year|third[- ]year|final[- ]year|student|pupil|undergrad|undergraduate|"
               r"postgrad|postgraduate)\s+(?:at|in)\s+(?P<v>.+)", True),
    ("school", rf"(?:is|am|are|'m|'s)\s+(?:now\s+)?at\s+(?P<v>(?:the\s+)?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)*\s+"
               rf"{_SCHOOL_NOUNS}\b.*)", True),
    ("job", r"(?:is|am|are|'m|'s)\s+an?\s+(?P<v>[\w-]+(?:\s+[\w-]+)??)\s+(?:at|for)\s+(?P<e>.+)", False),
    ("school", rf"(?:goes\s+to|go\s+to|going\s+to|started\s+at|starts\s+at|attends|attending|"
               rf"transferred\s+to|transfers\s+to|moved\s+to|switched\s+to|changed\s+to)\s+"
               rf"(?P<v>(?:the\s+)?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)*\s+{_SCHOOL_NOUNS}\b.*)", True),
    ("employer", r"(?:(?:started|starts|began|begins)\s+)?(?:works?|worked|working|employed|job|teaches|teaching)\s+(?:at|for|by)\s+(?P<v>.+)", True),
    ("employer", r"(?:took|accepted|landed|got|started|signed)\s+(?:a|an|the)\s+(?:new\s+)?(?:full[- ]time\s+|part[- ]time\s+)?"
                 r"(?:job|position|role|post|offer|contract)\s+(?:at|with|from)\s+(?P<v>.+)", True),
    # Not "joined X": clubs, teams and gyms are joined too.
    ("employer", r"(?:(?:got\s+|was\s+|been\s+)?hired\s+(?:by|at)|started\s+(?:a\s+(?:new\s+)?job\s+)?at)\s+(?P<v>.+)", True),
    # "settled in/on X" is left out on purpose: it mostly names an area ("settled in
    # NorCal"), and replacing a city with its region would lose the answer.
    ("location", r"(?:lives?|lived|living|reside|resides|residing|based)\s+(?:now\s+)?(?:in|at|near|out\s+of)\s+(?P<v>.+)",
     True),
    ("location", r"(?:moved|moving|relocated|relocating|move)\s+(?:(?:back|down|out|away)\s+)?(?:to|into)\s+(?P<v>.+)", True),
    ("location", r"home\s+is\s+(?:in\s+)?(?P<v>.+)", True),
    ("location", r"(?:calls?|calling)\s+(?P<v>.+?)\s+home\b", True),
    ("hometown", r"(?:born\s+in|grew\s+up\s+in|(?:is|am|are|comes?)\s+(?:originally\s+)?from)\s+(?P<v>.+)", True),
    # "eats a gluten-free and dairy-free diet": the whole phrase is the value, so a
    # change that extends the old diet is not read as the same value.
    ("diet", r"(?:eats?|eating|follows?|following|(?:switched|changed|moved|went)\s+(?:over\s+)?to|started|"
             r"starting|began|(?:is|am|are|'s|'m)\s+(?:on|doing)|on)\s+(?:an?\s+|the\s+)?"
             r"(?:strict\s+)?(?P<b>[\w -]+?)\s+(?:diet|food)\b", False),
    # Eating meat (again) ends a vegetarian or vegan diet; "eats fish" does not end every diet.
    ("diet", r"(?:(?:started|starts|began|is|am|'s|'m)\s+)?(?:eats?|eating)\s+(?P<v>meat)\b", False),
    ("diet", r"(?:(?:is|am|are|'m|went|gone|going|became|eats?|eating|follows?|keeps?|on)\s+)?(?:an?\s+)?"
             r"(?:strict\s+)?(?P<v>vegetarian|vegan|pescatarian|keto|paleo|gluten[- ]free|carnivore|"
             r"omnivore|omnivorous|low[- ]carb|halal|kosher)\b", False),
    ("diet", r"diet\s+is\s+(?:an?\s+)?(?P<v>.+)", False),
    # Relationship status: one at a time (single, dating, engaged, married, divorced, ...).
    ("status", r"(?:got\s+)?(?P<v>married|engaged|dating)\s+(?:to\s+)?(?P<p>(?-i:[A-Z])[\w'-]*)", False),
    ("status", r"(?:is|am|are|'s|'m|got|became|has\s+been)\s+(?:now\s+)?(?P<v>single|divorced|separated|widowed)(?![\w-])", False),
    ("status", r"(?:is|am|are|'s|'m)\s+(?:now\s+)?(?:in\s+a\s+)?(?P<v>relationship)\s+with\s+(?P<p>.+)", False),
    # "is engaged" with nobody named: the status alone.
    ("status", r"(?:is|am|are|'s|'m)\s+(?:now\s+)?(?P<v>married|engaged|dating)\s*$", False),
    # Whom one reports to: one line manager at a time ("reports to Fenna").
    # Not "reports to the Board": an article leads a body, not a line manager.
    ("manager", r"(?:reports?|reporting|answers?|answering)\s+(?:directly\s+)?to\s+(?!(?:the|a|an)\s)(?P<v>.+)", True),
    ("partner", r"(?:married\s+to|dating|engaged\s+to|(?:partner|wife|husband|spouse|girlfriend|boyfriend)"
                r"(?:'s\s+name)?\s+is)\s+(?P<v>.+)", False),
    ("vehicle", r"(?:drives|drive|driving)\s+(?:an?|the|his|her|their|my)\s+(?P<v>.+)", False),
    ("vehicle", r"(?:new\s+)?car\s+is\s+(?:now\s+)?(?:an?\s+)(?P<v>.+)", False),
    # "upgraded to a Hyundai Ioniq": a change verb whose object is a car (by make or by noun).
    ("vehicle", r"(?:upgraded|downgraded|switched|changed|traded\s+up|traded\s+down)\s+to\s+(?:an?|the)\s+"
                rf"(?:new\s+)?(?P<v>(?:{_MAKES})\b.*|(?:[\w-]+\s+){{0,2}}(?:{'|'.join(_VEHICLE_NOUNS)})\b.*)", False),
    # The phone: "uses an iPhone 12", "phone is a Pixel 7", "upgraded to a Galaxy S24".
    ("phone", r"(?:(?:uses|use|using|upgraded\s+to|switched\s+to|changed\s+to)\s+(?:an?|the)\s+"
              rf"(?:new\s+)?|(?:new\s+)?phone\s+is\s+(?:now\s+)?(?:an?\s+)?)(?P<v>(?:{_PHONES})\b.*)", False),
    ("school", r"(?:(?:studies|study|studying|(?:an?\s+)?student|enrolled)\s+at|attends|attending)\s+(?P<v>.+)", True),
    ("age", r"(?:turned\s+|turns\s+)?(?P<v>\d{1,3})\s+years?\s+old\b", False),
    ("age", r"(?:turned|turns|just\s+turned)\s+(?P<v>\d{1,3})\b", False),
    ("age", r"(?:(?:is|am|'s|'m)\s+|age\s+(?:is\s+)?|age:\s*)(?P<v>\d{1,3})(?:\s+now)?\s*$", False),
    ("drink", r"(?:usually|mostly|normally|always)\s+drinks?\s+(?P<v>.+)", False),
    ("drink", r"(?:usual|go-to|favou?rite|morning)\s+drink\s+is\s+(?P<v>.+)", False),
    ("exercise", r"(?:main\s+)?(?:workout|exercise|sport)\s+is\s+(?P<v>.+)", False),
    # A dose per drug: "takes 50 mg of sertraline", "sertraline dose went up to 100 mg".
    ("dose", rf"(?:takes|taking|take|on)\s+(?P<v>{_DOSE})\s+(?:of\s+)?(?P<q>[\w-]+)", False),
    ("dose", r"(?P<q>[\w-]+)\s+(?:dose|dosage)\s+(?:is|was|has\s+been|(?:was\s+|got\s+|has\s+been\s+)?(?:went|gone|"
             r"raised|increased|upped|bumped|lowered|reduced|cut|dropped|decreased|changed|adjusted)"
             rf"(?:\s+(?:up|down))?\s+to)\s+(?P<v>{_DOSE})", False),
    ("medication", r"(?:takes|taking|take|on)\s+(?P<v>[\w-]+)\s+for\s+(?P<q>[\w' -]+)", False),
    ("doctor", r"(?:new\s+)?(?:family\s+)?(?:doctor|physician|gp)\s+is\s+(?:now\s+)?(?P<b>(?:dr\.?\s+)?[\w'-]+)", False),
    # "<noun> is X" and "X as my <noun>" for services one has one of at a time.
    ("own", rf"(?:new\s+)?(?P<q>{_ONE_OF})\s+(?:is|:)\s+(?:now\s+)?(?P<v>.+)", True),
    ("own", r"(?:switched|changed|moved|went)\s+(?:over\s+)?to\s+(?P<b>(?:dr\.?\s+)?(?-i:[A-Z])[\w'.&-]*"
            r"(?:\s+(?-i:[A-Z])[\w'.&-]*)*)\s+(?:as|for)\s+(?:my|his|her|their|our|a|the)\s+(?:new\s+)?"
            rf"(?P<q>{_ONE_OF})\b", True),
    ("bank", r"(?:has\s+an?\s+)?(?:bank\s+account|checking\s+account|banks)\s+(?:is\s+)?(?:with|at)\s+(?P<v>.+)",
     False),
    ("insurance", r"(?:has\s+)?(?:health\s+)?insurance\s+(?:is\s+)?(?:through|with|from)\s+(?P<v>.+)", False),
    # "usual / main / favourite <noun> is X": the qualifier makes it one value at a time.
    ("fav", r"(?:usual|main|favou?rite|go-to|preferred|primary|current|next|upcoming)\s+(?P<q>[\w-]+(?:\s+[\w-]+)?)\s+"
            r"(?:is|are|(?:has\s+|have\s+)?(?:changed|switched|moved)\s+to|(?:has\s+|have\s+)?become|became)\s+(?:(?:to|in|at)\s+)?(?P<v>.+)", False),
)
_SLOTS = tuple(
    (attr, re.compile(rf"^{_AUX}{pat}", re.IGNORECASE), proper) for attr, pat, proper in _SLOT_PATTERNS
)
# The user's own name, only when the fact says the name is the user's. Not "I'm X": that is
# as often a nationality or a faith ("I'm Brazilian", "I'm Catholic"), and reading it as a
# name would overwrite the stated one.
_USER_NAME = re.compile(
    r"^(?:name\s+is|name's|(?:am|'m)\s+called|call\s+me|(?:goes|go)\s+by)\s*"
    r"(?P<v>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)",
)
# Another person's name ("sister's name is Ana", "sister is called Ana"): an identifier,
# never a value that changes, so two differing ones are two people (both kept).
_OTHER_NAME = re.compile(r"^(?:name\s+is|is\s+(?:called|named))\s+(?P<v>[A-Z][\w'-]*)")

# ---------------------------------------------------------------- change markers
# old value named by the fact: "traded X for Y", "switched from X to Y", "Y instead of X".
_REPLACED = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:traded|trading|swapped|swapping|exchanged|ditched|dropped|gave\s+up|left|leaving|sold|quit)\s+"
    r"(?:in\s+)?(?P<old>.+?)\s+(?:for|in\s+favou?r\s+of)\s+\S",
    r"\b(?:switched|switching|changed|changing|moved|moving|went|upgraded|downgraded|transferred|"
    r"converted|relocated|traded|swapped)\s+(?:[\w']+\s+){0,3}?from\s+(?P<old>.+?)\s+(?:to|for)\s+\S",
    r"\b(?:replaced|replacing|substituted)\s+(?P<old>.+?)\s+(?:with|by)\s+\S",
    r"^(?P<old>.+?)\s+(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:replaced|swapped|traded)\s+(?:by|with|for)\s+\S",
    r"\b(?:upgraded|downgraded|changed|switched|converted)\s+(?P<old>.+?)\s+(?:to|into)\s+\S",
    r"\S\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<old>.+)",
    r"\b(?:no\s+longer|no\s+more|quit|stopped|gave\s+up|sold|got\s+rid\s+of|left|outgrew|outgrown|"
    r"moved\s+on\s+from|done\s+with|retired\s+from|stepped\s+down\s+(?:as|from)|cancell?ed|called\s+off|"
    r"broke\s+up\s+with|divorced|moved\s+out\s+of|moved\s+away\s+from)\s+(?P<old>.+)",
    r"\b(?:not|doesn't|don't|isn't|aren't)\s+(?P<old>.+?)\s+(?:anymore|any\s+more)\b",
    # "used to live in Boston (but now ...)": the habit or state is over.
    r"\b(?P<past>used\s+to|formerly|previously)\s+(?P<old>.+)",
    # "the Mazda is gone", "keto is out", "the old job is history".
    r"^(?P<old>.+?)\s+(?:is|are|was|were|'s)\s+(?:(?:long|now|all)\s+)?(?:gone|history|over|finished|"
    r"a\s+thing\s+of\s+the\s+past)\b",
    # "X is out, Y is in": the idiom, not "the car is out for repair".
    r"^(?P<old>.+?)\s+(?:is|are|'s)\s+out\s*[,;]?\s+(?:and\s+)?.+?\s+(?:is|are|'s)\s+in\b",
    # "is off keto", "came off sertraline" (not "off work", "off sick": a day away, not a change).
    r"\b(?:is|am|are|'s|'m|went|gone|came|come|got|been|stays?|stayed)\s+off\s+(?:of\s+)?"
    r"(?!(?:work|duty|sick|today|tomorrow|school|for|on|to)\b)(?P<old>.+)",
    # "and Tom got divorced", "and Sam split up": the partner named after the subject.
    r"^(?:and|&)\s+(?P<old>[A-Z][\w'-]*)\s+(?:got\s+divorced|divorced|split\s+up|broke\s+up|separated)\b",
))
# Nouns that only wrap the old value ("the Planet Fitness membership", "my Google job"):
# the value is what is named inside them.
_WRAPPERS = re.compile(r"\s+(?:membership|subscription|account|plan|contract|lease|policy|job|position|role|gig|"
                       r"deal|card|habit|phase|routine)s?\s*$", re.IGNORECASE)

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _stem(tok: str) -> str:
    """A crude suffix stripper: "takes", "taking", "take" -> "tak"; "works" -> "work"."""
    if tok.isdigit() or len(tok) <= 3:
        return tok
    for suffix in ("ing", "ed", "es", "s"):
        if tok.endswith(suffix) and len(tok) - len(suffix) >= 3 and not tok.endswith("ss"):
            tok = tok[: -len(suffix)]
            break
    return tok[:-1] if tok.endswith("e") and len(tok) > 3 else tok


def stems(text: str) -> list[str]:
    """Lower-case content words, crudely stemmed ("works" -> "work", "taking" -> "tak")."""
    out = []
    for tok in _TOKEN.findall(text.lower().replace("-", " ")):
        tok = tok.removesuffix("'s")
        if tok in _STOP:
            continue
        out.append(_stem(tok))
    return out


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


# ---------------------------------------------------------------- same frame, new value
# A fact that says its predicate changed, in general English: a temporal-change adverb
# ("now", "these days") or a verb of change ("switched to", "became"). Without one, two
# facts in the same frame may both hold ("plays chess", "plays the cello").
_CHANGE = re.compile(
    r"\b(?:now|nowadays|these\s+days|currently|at\s+the\s+moment|at\s+present|from\s+now\s+on|"
    r"instead|switched\s+to|changed\s+to|moved\s+on\s+to|became|has\s+become|"
    rf"have\s+become|since\s+(?:{_MONTHS}|last\s+\w+|(?:early|late|mid)[- ]?{_MONTHS}|the\s+move|then))\b",
    re.IGNORECASE,
)
# Words that add a value next to the old one ("now also", "a second", "two more").
_ADDITIVE = re.compile(
    r"\b(?:also|too|another|as\s+well|second|third|more|both|plus|in\s+addition|additionally|extra|"
    r"two|three|four|several|again|newly)\b",
    re.IGNORECASE,
)
_FRAME_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|:")


def frame_tokens(rest: str) -> list[str]:
    """Stemmed lower-case tokens of a predicate, change markers taken out ("now works as X" -> work as x)."""
    toks = [t.lower() for t in _FRAME_TOKEN.findall(_CHANGE.sub(" ", rest.replace("’", "'")))]
    return [t if t in _STOP or t == ":" else _stem(t) for t in toks]


def changed_value(new_rest: str, old_rest: str) -> bool:
    """Whether ``new_rest`` says its frame now holds another value than ``old_rest``.

    Both are predicates of the same subject (the subject cut off). True only when
    the new one carries a change marker, no word that adds a value, and no
    negation, and the two differ in exactly one span: the same frame ("works in
    _", "occupation: _") around it, at least half as long as the span on either side,
    a content word on each side of the span.
    Knows no attribute or value: only the frame's shape.
    """
    if not _CHANGE.search(new_rest) or _ADDITIVE.search(new_rest) or _NEGATION.search(new_rest):
        return False
    if _NEGATION.search(old_rest):
        return False
    a, b = frame_tokens(old_rest), frame_tokens(new_rest)
    if not a or not b:
        return False
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = ops[0]
    frame = a[:i1] + a[i2:]

    def content(toks: list[str]) -> bool:
        return any(t not in _STOP and t != ":" for t in toks)

    # The frame must say something ("works in", "occupation :"), not just "is a", and the
    # value must be at most twice the frame: "gets a serious reaction from X" and
    # "gets chest tightness on stairs" share one light verb, not a frame.
    small = 2 * len(frame) >= max(i2 - i1, j2 - j1)
    return small and content(a[i1:i2]) and content(b[j1:j2]) and (content(frame) or ":" in frame)


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
