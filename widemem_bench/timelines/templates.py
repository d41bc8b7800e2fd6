"""Phrasing templates: user utterances, stored facts and questions.

Each list entry is one *template family*. Families are assigned to a split
(train / validation / holdout) by :func:`family_split`, which depends only on the
group name and the position in the list, never on the seed, so a holdout phrasing is
holdout in every generated version. A user of a split only ever sees families of
that split, which is what lets a threshold tuned on train be judged on wording it
never saw.

Since generator v3 (issue 13) the holdout is sealed: holdout users draw every phrasing,
stored facts included, from ``holdout_templates.py``. The families below that
``family_split`` assigns to "holdout" are retired (they had leaked into method code and
tests); no user draws them. They stay in the lists so that every other family keeps its
index and split, and train / validation generation stays byte-identical.

Placeholders: {name} user's first name, {city}, {old_city}, {where} (a region with its
preposition, e.g. "on the East Coast"), {employer}, {old_employer}, {a_role} (role with
its article), {rel} (relative), {rname}, {allergen}, {med}, {old_med}, {cond}, {doc},
{bank}, {ins}, {diet}, {old_diet}, {drink}, {old_drink}, {ex}, {old_ex}, {lunch}, {w},
{film}, {book}, {clause} (a restated first-person fact).
"""

from __future__ import annotations

import hashlib

SPLITS: tuple[str, ...] = ("train", "validation", "holdout")

# Position pattern used after sorting a group's families by a stable digest. Seven
# families give 3 train / 2 validation / 2 holdout, so every split keeps at least two
# phrasings per question slot (quiet-frustration rephrases need two distinct ones).
_FAMILY_PATTERN: tuple[str, ...] = (
    "train", "holdout", "validation", "train", "train", "holdout", "validation",
    "train", "train", "holdout",
)


def family_split(group: str, n_families: int) -> tuple[str, ...]:
    """Split of each family of a group, indexed like the group's template list.

    Uses sha256 of "group/index" (not ``hash()``, which is salted per process) so the
    assignment is identical on every run and machine.
    """
    if n_families < 3:
        raise ValueError(f"group {group!r} needs >= 3 families to cover 3 splits, got {n_families}")
    order = sorted(
        range(n_families),
        key=lambda i: hashlib.sha256(f"{group}/{i}".encode()).hexdigest(),
    )
    out = [""] * n_families
    for pos, idx in enumerate(order):
        out[idx] = _FAMILY_PATTERN[pos % len(_FAMILY_PATTERN)]
    return tuple(out)


# ---------------------------------------------------------------- utterances
UTTERANCES: dict[str, tuple[str, ...]] = {
    "name": (
        "Hi, I'm {name}.", "My name's {name}, by the way.", "You can call me {name}.",
        "{name} here, nice to meet you.", "Hey! It's {name}.", "Just so you know, my name is {name}.",
        "I go by {name}.",
    ),
    "city_first": (
        "I live in {city}.", "I'm based in {city}.", "Home for me is {city}.",
        "I've been living in {city} for a few years.", "Writing to you from {city}, where I live.",
        "{name} here, I live in {city} right now.", "My place is in {city}.",
    ),
    "move": (
        "I just moved to {city}!", "Finally unpacked in {city}.", "We relocated to {city} last week.",
        "Big news: I'm living in {city} now.", "Signed a lease in {city}, moving day was Saturday.",
        "New apartment in {city}, still surrounded by boxes.", "So {name} officially lives in {city} now, ha.",
        "Left {old_city} for {city} this month.",
    ),
    "move_oblique": (
        "Settled {where} now.", "Loving life {where} so far.", "Still getting used to the weather {where}.",
        "Life {where} is treating me well.", "Everyone {where} is so friendly.",
        "Being {where} means a whole new commute.", "Feels good to finally be {where}.",
    ),
    "city_restate": (
        "Like I said, I'm in {city} now.", "Still in {city}, by the way.", "{city} is home these days.",
        "Yeah, I'm the one who lives in {city}.", "Reminder that I live in {city}.",
        "Anyway, back here in {city}, things are good.", "Walking around {city} today, love living here.",
    ),
    "job_first": (
        "I work as {a_role} at {employer}.", "I'm {a_role} with {employer}.", "My job: {a_role} at {employer}.",
        "Day job is {a_role} at {employer}.", "I pay the bills as {a_role} at {employer}.",
        "{employer} is where I work, I'm {a_role} there.", "Work-wise, I'm {a_role} at {employer}.",
    ),
    "job": (
        "I started a new job at {employer}!", "Just accepted an offer from {employer} as {a_role}.",
        "Left {old_employer}, I'm at {employer} now.", "First week at {employer} done.",
        "Switched jobs: now {a_role} at {employer}.", "Got hired at {employer}, starting Monday.",
        "New badge, new desk: I work for {employer} now.",
    ),
    "job_restate": (
        "Still at {employer}, as I mentioned.", "Like I said, I work for {employer}.",
        "{employer} keeps me busy these days.", "Work at {employer} was hectic today.",
        "My team at {employer} had an offsite.", "Another long day at {employer}.",
        "Payday at {employer}, finally.",
    ),
    "rel_city": (
        "My {rel} lives in {city}.", "My {rel} is out in {city}.", "My {rel} just got a place in {city}.",
        "Visiting my {rel} in {city} next month.", "My {rel}'s been living in {city} for years.",
        "My {rel} calls {city} home.", "Flying to {city} to see my {rel}, who lives there.",
    ),
    "rel_employer": (
        "My {rel} works at {employer}.", "My {rel} got a job at {employer}.",
        "My {rel} is at {employer} these days.", "My {rel} has been with {employer} forever.",
        "My {rel} just started at {employer}.", "My {rel} is employed by {employer}.",
        "{employer} hired my {rel}.",
    ),
    "rel_name": (
        "My {rel}'s name is {rname}.", "My {rel} {rname} says hi.", "{rname}, my {rel}, is visiting.",
        "Talked to {rname} today, that's my {rel}.", "My {rel} is called {rname}.",
        "{rname} (my {rel}) just had a birthday.", "Dinner with {rname}, my {rel}, tonight.",
    ),
    "rel_allergy": (
        "My {rel} is allergic to {allergen}.", "My {rel} can't have {allergen}, serious allergy.",
        "Have to be careful with {allergen} around my {rel}.", "My {rel} has a {allergen} allergy.",
        "Reminder for dinner: my {rel} is allergic to {allergen}.",
        "My {rel} reacts badly to {allergen}, it's an allergy.", "No {allergen} when my {rel} visits, allergy.",
    ),
    "allergy": (
        "I'm allergic to {allergen}.", "I have a {allergen} allergy.", "Heads up, {allergen} allergy here.",
        "Please remember I'm allergic to {allergen}.", "Found out I'm allergic to {allergen}.",
        "Allergy test came back: {allergen}.", "I can't have {allergen}, I'm allergic.",
    ),
    "medication": (
        "I take {med} for my {cond}.", "I'm on {med} for {cond}.", "My doctor put me on {med} for {cond}.",
        "Daily {med} for the {cond}.", "Started {med} this week for my {cond}.",
        "Prescription medication: {med}, for {cond}.", "Picked up my {med} refill, it's for {cond}.",
    ),
    "med_switch": (
        "My doctor switched me from {old_med} to {med}.", "No more {old_med}, I'm on {med} now.",
        "Changed meds: {med} instead of {old_med}.", "They took me off {old_med} and started {med}.",
        "Switched to {med}, {old_med} gave me side effects.", "New prescription: {med} replaces {old_med}.",
        "Goodbye {old_med}, hello {med}.",
    ),
    "condition": (
        "I have {cond}.", "I was diagnosed with {cond}.", "I live with {cond}.",
        "Just so you know, I've got {cond}.", "My {cond} has been acting up.", "Got the diagnosis: {cond}.",
        "Dealing with {cond} since I was a kid.",
    ),
    "doctor": (
        "My doctor is {doc}.", "I see {doc} for checkups.", "{doc} is my GP.",
        "My primary care doctor is {doc}.", "Appointment with {doc} tomorrow, my usual doctor.",
        "{doc} has been my physician for years.", "Booked my annual physical with {doc}.",
    ),
    "bank": (
        "I bank with {bank}.", "My bank account is at {bank}.", "I keep my savings at {bank}.",
        "Opened a checking account at {bank}.", "{bank} is my bank.", "All my money is with {bank}.",
        "My paycheck goes into my {bank} account.",
    ),
    "insurance": (
        "My health insurance is through {ins}.", "I'm covered by {ins}.", "Insurance card says {ins}.",
        "{ins} is my health insurer.", "My health insurance policy is with {ins}.",
        "Enrolled in an {ins} health plan.", "Got my new {ins} member card today.",
    ),
    "diet_first": (
        "I'm {diet}.", "I eat {diet} food, just so you know.", "I keep a {diet} diet.",
        "Food-wise, I'm {diet}.", "I've been {diet} for years.", "I stick to a {diet} diet.",
        "Cooking {diet} tonight, as always.",
    ),
    "diet_change": (
        "I went {diet}!", "Switching to {diet} starting today.", "I'm {diet} now, no longer {old_diet}.",
        "Decided to go {diet}.", "Update: {diet} from now on.",
        "After a month of thinking about it, I'm going {diet}.", "Not {old_diet} anymore: {diet}.",
    ),
    "diet_restate": (
        "Still {diet}, in case you wondered.", "Sticking with {diet} food.", "Yep, still eating {diet}.",
        "Being {diet} is going fine.", "Still keeping it {diet}.", "Found a great {diet} recipe.",
        "The {diet} thing is going well.",
    ),
    "drink_first": (
        "I usually drink {drink}.", "My go-to drink is {drink}.", "Every morning starts with {drink}.",
        "I can't function without my {drink}.", "{drink} is my thing.", "I'm a {drink} person.",
        "Ordered {drink}, as usual.",
    ),
    "drink_change": (
        "I've switched to {drink}.", "Gave up {old_drink} for {drink}.", "These days it's {drink} for me.",
        "New habit: {drink} instead of {old_drink}.", "I'm all about {drink} now.",
        "Trying {drink} now, done with {old_drink}.", "Swapped {old_drink} for {drink}.",
    ),
    "exercise_first": (
        "I do {ex} most days.", "My workout is {ex}.", "I'm really into {ex}.", "{ex} keeps me sane.",
        "I try to fit in {ex} three times a week.", "Exercise for me means {ex}.",
        "Did some {ex} again this morning, my usual workout.",
    ),
    "exercise_change": (
        "I've taken up {ex} instead of {old_ex}.", "Switched from {old_ex} to {ex}.",
        "{ex} is my new workout.", "Done with {old_ex}, it's {ex} now.", "Started {ex}, dropped {old_ex}.",
        "My knees said no to {old_ex}, so {ex} now.", "Replaced {old_ex} with {ex}.",
    ),
    "lunch": (
        "Had {lunch} for lunch.", "Lunch today was {lunch}.", "Grabbed {lunch} at noon.",
        "Just ate {lunch}, so good.", "{lunch} for lunch again.", "Quick lunch: {lunch}.",
        "Treated myself to {lunch} for lunch.",
    ),
    "weather": (
        "It's so {w} out today.", "Ugh, {w} weather all day.", "The weather here is {w}.",
        "Another {w} day.", "Pretty {w} today.", "Looked outside: {w}.", "Weather report: {w}.",
    ),
    "film": (
        "Watched {film} last night.", "Finally saw {film}.", "Movie night: {film}.",
        "Just finished watching {film}, wow.", "Caught {film} at the theater.",
        "Rewatched {film} with friends.", "{film} was on TV, watched the whole thing.",
    ),
    "book": (
        "I'm reading {book} right now.", "Started {book} yesterday.", "Halfway through {book}.",
        "Picked up {book} from the library.", "Can't put down {book}.", "My current book is {book}.",
        "Reading {book} before bed these days.",
    ),
    # Frustration: widemem's phrases around a restated first-person fact.
    "frustration_fact": (
        "I told you {clause}!", "I already said {clause}.", "You forgot {clause}?!",
        "I mentioned {clause}, remember?", "We talked about this: {clause}.",
        "I literally told you {clause}.", "Don't you remember {clause}?",
    ),
    # Frustration with nothing extractable: the gold action is to apologise and ask.
    "frustration_vague": (
        "I told you this already!", "We talked about this last week, come on.",
        "How could you forget what I said?", "You should remember this stuff.",
        "Don't you remember anything I tell you?", "I literally told you yesterday.",
        "I already said it, why do I have to repeat myself?",
    ),
}

# First-person clauses a frustration message restates, per attribute.
FRUSTRATION_CLAUSES: dict[str, tuple[str, ...]] = {
    "city": ("I moved to {city}", "I live in {city}", "I'm in {city} now"),
    "employer": ("I work at {employer}", "I'm at {employer} now"),
    "diet": ("I'm {diet}", "I eat {diet} food"),
    "allergy": ("I'm allergic to {allergen}", "I have a {allergen} allergy"),
    "medication": ("I take {med}", "I'm on {med}"),
}

# ---------------------------------------------------------------- stored facts
# (full sentence with the user's name, subject-stripped as an LLM extractor stores it)
FACTS: dict[str, tuple[str, str]] = {
    "name": ("The user's name is {name}", "name is {name}"),
    "city": ("{name} lives in {city}", "lives in {city}"),
    "city_oblique": ("{name} lives {where}", "settled {where}"),
    "employer": ("{name} works at {employer} as {a_role}", "works as {a_role} at {employer}"),
    "diet": ("{name} eats a {diet} diet", "eats a {diet} diet"),
    "drink": ("{name}'s usual drink is {drink}", "usually drinks {drink}"),
    "exercise": ("{name}'s main workout is {ex}", "main workout is {ex}"),
    "allergy": ("{name} is allergic to {allergen}", "allergic to {allergen}"),
    "allergy_oblique": ("{name} gets a serious reaction from {allergen}",
                        "gets a serious reaction from {allergen}"),
    "medication": ("{name} takes {med} for {cond}", "takes {med} for {cond}"),
    "condition": ("{name} has {cond}", "has {cond}"),
    "doctor": ("{name}'s doctor is {doc}", "doctor is {doc}"),
    "bank": ("{name} banks with {bank}", "has a bank account with {bank}"),
    "insurance": ("{name}'s health insurance is with {ins}", "has health insurance through {ins}"),
    "lunch": ("{name} had {lunch} for lunch", "had {lunch} for lunch"),
    "weather": ("{name} said the weather was {w}", "weather was {w}"),
    "film": ("{name} watched {film}", "watched {film}"),
    "book": ("{name} is reading {book}", "is reading {book}"),
    "rel_city": ("{name}'s {rel} lives in {city}", "{rel} lives in {city}"),
    "rel_employer": ("{name}'s {rel} works at {employer}", "{rel} works at {employer}"),
    "rel_name": ("{name}'s {rel} is named {rname}", "{rel}'s name is {rname}"),
    "rel_allergy": ("{name}'s {rel} is allergic to {allergen}", "{rel} is allergic to {allergen}"),
}

# ---------------------------------------------------------------- questions
# Keyed by "attribute.self" (about the user) or "attribute.other" (about {rel}).
QUESTIONS: dict[str, tuple[str, ...]] = {
    "name.self": (
        "what's my name?", "do you remember my name?", "what do I go by?",
        "what name did I give you?", "remind me what you call me",
        "you know my name, right? what is it?", "how should you address me, what's my name?",
    ),
    "city.self": (
        "where do I live?", "where am I living these days?", "what city am I in right now?",
        "remind me where I'm based", "which city do I call home?",
        "if you had to mail me something, what city would it go to?", "do you know where I live now?",
    ),
    "employer.self": (
        "where do I work?", "who am I working for these days?", "what company do I work at?",
        "remind me who my employer is", "where's my job right now?",
        "which company pays my salary at the moment?", "do you remember where I'm employed?",
    ),
    "diet.self": (
        "what's my diet?", "do I eat meat?", "what kind of diet am I on these days?",
        "any dietary restrictions I follow?", "remind me how I eat: vegetarian, vegan, something else?",
        "if you were picking a restaurant for me, what should you keep in mind about my diet?",
        "what am I eating these days, diet-wise?",
    ),
    "drink.self": (
        "what do I usually drink?", "what's my go-to drink?", "coffee or tea for me these days?",
        "what should you order me at a cafe?", "what's my morning drink lately?",
        "remind me of my usual drink order", "what do I like to drink?",
    ),
    "exercise.self": (
        "what exercise do I do?", "what's my workout these days?", "how do I stay active?",
        "what sport am I into right now?", "remind me what I do for exercise",
        "which workout did I take up?", "what do I do to keep fit?",
    ),
    "allergy.self": (
        "what am I allergic to?", "remind me what I'm allergic to", "do I have any allergies?",
        "is there anything I react badly to?", "any allergies I should warn a restaurant about?",
        "what's my allergy again?", "if a doctor asked about my allergies, what would you say?",
    ),
    "medication.self": (
        "what medication do I take?", "which meds am I on right now?", "remind me of my prescription",
        "what pills am I taking these days?", "what's my current medication?",
        "what do I take every day for my health?", "if I ended up in the ER, what drugs am I on?",
    ),
    "condition.self": (
        "what health conditions do I have?", "do I have any medical conditions?",
        "what was I diagnosed with?", "what chronic illness do I have?",
        "what's my diagnosis again?", "remind me what medical condition I told you about",
        "is there a chronic condition I live with?",
    ),
    "doctor.self": (
        "what's my doctor's name?", "who is my doctor?", "who's my GP?",
        "remind me who I see for checkups", "which physician do I go to?",
        "what's the name of my primary care doctor?", "who should I call to book a checkup?",
    ),
    "bank.self": (
        "what bank do I use?", "where do I keep my money?", "which bank is my account with?",
        "remind me who I bank with", "where's my checking account?", "what's my bank?",
        "which bank did I say I use?",
    ),
    "insurance.self": (
        "who is my health insurance with?", "what's my insurance provider?", "which health plan am I on?",
        "who covers me for medical stuff?", "remind me of my insurer",
        "what insurance company do I have?", "who do I call about a medical claim?",
    ),
    "legal.self": (
        "what legal stuff am I dealing with?", "do I have any legal matters going on?",
        "what's happening with my legal situation?", "remind me about my court thing",
        "am I involved in any legal case?", "what did I tell you about lawyers and paperwork?",
        "any legal issues on my plate?",
    ),
    "lunch.self": (
        "what did I have for lunch?", "what did I eat for lunch that day?", "remind me what my lunch was",
        "what was lunch the other day?", "did I tell you what I ate at noon?",
        "what food did I grab for lunch?", "what was my lunch?",
    ),
    "weather.self": (
        "what was the weather like when I told you?", "how was the weather that day?",
        "did I mention the weather?", "what was it like outside that day?",
        "was it nice out when we talked?", "what did I say about the weather?",
        "how was the weather where I am?",
    ),
    "film.self": (
        "what movie did I watch?", "which film did I see recently?", "what was the last movie I mentioned?",
        "remind me what I watched", "what did I see at the movies?", "which film did I tell you about?",
        "what did I watch on movie night?",
    ),
    "book.self": (
        "what am I reading?", "what book am I on right now?", "remind me of my current book",
        "which book did I start?", "what's on my nightstand, reading-wise?", "what novel did I mention?",
        "what am I reading these days?",
    ),
    "city.other": (
        "where does my {rel} live?", "what city is my {rel} in?", "where's my {rel} based these days?",
        "remind me where my {rel} lives", "if I visit my {rel}, where am I going?",
        "which city does my {rel} call home?", "do you know where my {rel} lives?",
    ),
    "employer.other": (
        "where does my {rel} work?", "who does my {rel} work for?", "what company is my {rel} at?",
        "remind me of my {rel}'s employer", "where's my {rel}'s job?", "which company hired my {rel}?",
        "what does my {rel} do for work, and where?",
    ),
    "name.other": (
        "what's my {rel}'s name?", "what is my {rel} called?", "remind me of my {rel}'s name",
        "what's the name of my {rel}?", "how do I refer to my {rel}, what's their name?",
        "I blanked, who is my {rel} again, name-wise?", "do you remember my {rel}'s name?",
    ),
    "allergy.other": (
        "what is my {rel} allergic to?", "does my {rel} have any allergies?",
        "what should I avoid cooking for my {rel}?", "remind me of my {rel}'s allergy",
        "is my {rel} allergic to anything?", "any food my {rel} can't have?", "what's my {rel}'s allergy?",
    ),
    # Attributes the generator never produces for anyone: the right answer is "nothing stored".
    "never_mentioned": (
        "what's my dog's name?", "what car do I drive?", "when is my anniversary?",
        "what's my favorite board game?", "which gym am I a member of?", "what instrument do I play?",
        "what's my shoe size?", "what did I name my houseplant?", "which football team do I support?",
        "where did I go to high school?", "what's my wifi password?", "what languages do I speak?",
        "what's my star sign?", "what color is my front door?", "what's my favorite ice cream flavor?",
        "where did I go on my honeymoon?", "how many kids do I want someday?",
        "what's my license plate number?",
    ),
    "broad": (
        "tell me everything about me", "what do you know about me?", "give me a summary of my profile",
        "what have I told you about myself so far?", "can you give me an overview of my life as you know it?",
        "summarize everything you remember about me", "paint me a picture of who I am from what you know",
        "what's my background, according to you?", "list all the things you know about me",
    ),
    # Prefixes of frustration questions (the follow-up question comes after them).
    "frustration": (
        "I told you this already!", "Ugh, we talked about this.", "How could you forget?",
        "I literally told you last week.", "You should know this by now.", "Don't you remember?",
        "I already said this.", "We discussed this before!",
    ),
}

SELF_ATTRIBUTES: tuple[str, ...] = tuple(
    k.split(".")[0] for k in QUESTIONS if k.endswith(".self")
)
OTHER_ATTRIBUTES: tuple[str, ...] = tuple(
    k.split(".")[0] for k in QUESTIONS if k.endswith(".other")
)
