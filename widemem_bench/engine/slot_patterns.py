"""The rule resolver's word lists and patterns: closed word classes of general English
(relations, pronouns, articles, light verbs), the single-valued slot patterns, the user's
and another person's name, and the change markers that name an old value.

Tables and a few value helpers shared by the reader (``slots.py``) and the frame
comparison (``frames.py``); private to those two, hence the leading underscores.
"""

from __future__ import annotations

import re

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
