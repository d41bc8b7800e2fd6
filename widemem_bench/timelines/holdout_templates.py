"""The sealed holdout of world A: phrasings only holdout users ever see (generator v3+).

Issue 13: until generator v2 the holdout had its own question families but shared every
stored-fact template with train, and its question phrasings had leaked into method code
and tests. Since v3 a holdout user draws *everything* templated from here: utterances,
the stored facts (full and subject-stripped), frustration clauses, questions, and the
extractor's wording of the vocabulary-driven oblique facts. The holdout families of
``templates.QUESTIONS`` / ``templates.UTTERANCES`` (those ``family_split`` assigns to
"holdout") are retired: no user draws them any more, so train and validation stay
byte-identical to v2.

Keys and placeholders match ``templates.py`` (the generator fills the same fields).
No code or test outside ``widemem_bench/timelines/`` may contain these phrasings or fit
anything on holdout data; ``tests/test_sealed.py`` scans for them.
"""

from __future__ import annotations

UTTERANCES: dict[str, tuple[str, ...]] = {
    "name": (
        "The name on my passport is {name}.", "Friends know me as {name}.",
        "Pleased to meet you, I'm called {name}.",
    ),
    "city_first": (
        "My postcode puts me in {city}.", "I've made my home in {city}.",
        "These days I rent a flat in {city}.",
    ),
    "move": (
        "The removal truck dropped everything off in {city}.", "Changed my address to {city} this week.",
        "Goodbye {old_city}, my new home is {city}.",
    ),
    "move_oblique": (
        "Putting down roots {where} now.", "My new neighbours {where} brought cookies.",
        "Spent the weekend exploring {where}, it's home now.",
    ),
    "city_restate": (
        "The bus strike in {city} is annoying.", "Back home in {city} after the trip.",
        "Cycled along the river in {city} this morning.",
    ),
    "job_first": (
        "I earn my keep as {a_role} with {employer}.", "On payroll at {employer}, I'm {a_role}.",
        "My title at {employer}: {a_role}.",
    ),
    "job": (
        "Signed my contract with {employer}, I'm {a_role} there from today.",
        "Resigned from {old_employer}; {employer} brought me on as {a_role}.",
        "Onboarding at {employer} this week as {a_role}.",
    ),
    "job_restate": (
        "Quarterly review at {employer} went well.", "Stayed late at {employer} again.",
        "The canteen at {employer} has new menus.",
    ),
    "rel_city": (
        "My {rel} has an apartment in {city}.", "My {rel} settled down in {city}.",
        "Heading to {city} where my {rel} lives.",
    ),
    "rel_employer": (
        "My {rel} is on the staff at {employer}.", "{employer} took my {rel} on last spring.",
        "My {rel} clocks in at {employer} every day.",
    ),
    "rel_name": (
        "My {rel} answers to {rname}.", "Had coffee with my {rel}, {rname}.",
        "{rname} is the name of my {rel}.",
    ),
    "rel_allergy": (
        "My {rel} breaks out from {allergen}, keep it off the table.",
        "Careful when my {rel} eats: {allergen} is a no-go, allergic.",
        "My {rel} carries meds because of an {allergen} allergy.",
    ),
    "allergy": (
        "My allergist flagged {allergen}.", "{allergen} is off limits for me, allergic reaction.",
        "Note for the future: I react to {allergen}, it's an allergy.",
    ),
    "medication": (
        "My prescription is {med}, it manages my {cond}.", "Each morning I swallow a {med} for the {cond}.",
        "The clinic prescribed {med} to treat my {cond}.",
    ),
    "med_switch": (
        "The clinic replaced {old_med} with {med}.", "{old_med} is out, {med} is in.",
        "Moving off {old_med}; the new script is {med}.",
    ),
    "condition": (
        "The specialist confirmed {cond}.", "Managing {cond} is part of my life.",
        "Medical file says {cond}, that's me.",
    ),
    "doctor": (
        "{doc} handles my checkups.", "My regular physician: {doc}.",
        "Saw {doc} today, the doctor I always see.",
    ),
    "bank": (
        "My salary lands in {bank}.", "{bank} holds my current account.",
        "Set up online banking with {bank}, where my account is.",
    ),
    "insurance": (
        "{ins} pays my medical bills.", "Health coverage: {ins}.",
        "My medical insurer sent a letter, it's {ins}.",
    ),
    "diet_first": (
        "My meals are {diet}.", "Everything I eat is {diet}.",
        "I follow {diet} eating.",
    ),
    "diet_change": (
        "From this week on my meals are {diet}.", "Made the jump from {old_diet} to {diet}.",
        "I'm trying {diet} eating for good now.",
    ),
    "diet_restate": (
        "Meal-prepped {diet} dishes for the week.", "Still all {diet} in my kitchen.",
        "Cooked a {diet} feast for friends.",
    ),
    "drink_first": (
        "I tend to order {drink}.", "The barista knows me: {drink}.",
        "A cup of {drink} starts my day.",
    ),
    "drink_change": (
        "Dropped {old_drink}; {drink} is my order now.", "Now I reach for {drink} rather than {old_drink}.",
        "My cafe order changed to {drink}.",
    ),
    "exercise_first": (
        "I keep fit with {ex}.", "{ex} is how I stay in shape.",
        "Three mornings a week I'm out doing {ex}.",
    ),
    "exercise_change": (
        "Took up {ex}, left {old_ex} behind.", "Trading {old_ex} for {ex} these days.",
        "My coach moved me from {old_ex} to {ex}.",
    ),
    "lunch": (
        "Midday meal: {lunch}.", "Ate {lunch} at my desk.",
        "Noon today meant {lunch}.",
    ),
    "weather": (
        "The sky is {w} today.", "Outside it's {w}.",
        "Forecast was right, very {w}.",
    ),
    "film": (
        "Streamed {film} this weekend.", "Saw {film} at the cinema.",
        "Film club picked {film} tonight.",
    ),
    "book": (
        "On my nightstand: {book}.", "Deep into {book} at the moment.",
        "Borrowed {book}, reading it now.",
    ),
    "frustration_fact": (
        "Not again, {clause}!", "Please, {clause}, I went through this.",
        "I said so before: {clause}.",
    ),
    "frustration_vague": (
        "It's annoying that I have to keep repeating things.",
        "You dropped what I explained earlier.",
        "Why is nothing I share ever kept?",
    ),
}

# First-person clauses a frustration message restates, per attribute.
FRUSTRATION_CLAUSES: dict[str, tuple[str, ...]] = {
    "city": ("my home is {city}", "I've been living in {city}"),
    "employer": ("my employer is {employer}", "I'm employed by {employer}"),
    "diet": ("my meals are {diet}", "I follow {diet} eating"),
    "allergy": ("{allergen} sets off my allergy", "I must avoid {allergen}"),
    "medication": ("my prescription is {med}", "I'm prescribed {med}"),
}

# (full sentence with the user's name, subject-stripped as an LLM extractor stores it)
FACTS: dict[str, tuple[str, str]] = {
    "name": ("{name} is what the user is called", "called {name}"),
    "city": ("{name}'s home is in {city}", "home is in {city}"),
    "city_oblique": ("{name} has made a home {where}", "made a home {where}"),
    "employer": ("{name} holds a position as {a_role} with {employer}",
                 "holds a position as {a_role} with {employer}"),
    "diet": ("{name} follows {diet} eating", "follows {diet} eating"),
    "drink": ("{name} tends to order {drink}", "tends to order {drink}"),
    "exercise": ("{name} keeps fit with {ex}", "keeps fit with {ex}"),
    "allergy": ("{name} must avoid {allergen} because of an allergy",
                "must avoid {allergen} because of an allergy"),
    "allergy_oblique": ("{name} reacts severely to {allergen}", "reacts severely to {allergen}"),
    "medication": ("{name} is being treated with {med} for {cond}", "treated with {med} for {cond}"),
    "condition": ("{name} lives with a diagnosis of {cond}", "lives with a diagnosis of {cond}"),
    "doctor": ("{name} is a patient of {doc}", "is a patient of {doc}"),
    "bank": ("{name} holds accounts at {bank}", "holds accounts at {bank}"),
    "insurance": ("{name} gets health cover from {ins}", "gets health cover from {ins}"),
    "lunch": ("{name} ate {lunch} at midday", "ate {lunch} at midday"),
    "weather": ("{name} described the day as {w}", "described the day as {w}"),
    "film": ("{name} saw the film {film}", "saw the film {film}"),
    "book": ("{name} is partway through the book {book}", "partway through the book {book}"),
    "rel_city": ("{name}'s {rel} resides in {city}", "{rel} resides in {city}"),
    "rel_employer": ("{name}'s {rel} is on the staff of {employer}", "{rel} is on the staff of {employer}"),
    "rel_name": ("{rname} is the name of {name}'s {rel}", "{rel} answers to {rname}"),
    "rel_allergy": ("{name}'s {rel} has to avoid {allergen}", "{rel} has to avoid {allergen}"),
}

# What an extractor stores for the vocabulary-driven oblique facts (``vocab.CONDITION_OBLIQUE``
# and ``vocab.LEGAL``), reworded for the holdout: train's stored text -> holdout's.
STORED_TEXTS: dict[str, str] = {
    "has had irregular blood sugar levels lately": "blood sugar readings have been erratic recently",
    "gets chest tightness on stairs": "feels a tight chest climbing stairs",
    "stops breathing during sleep at night": "partner notices pauses in breathing overnight",
    "has been exhausted and pale, more bloodwork pending":
        "weeks of fatigue and pallor, awaiting further blood tests",
    "has a lump in the neck and feels cold constantly": "noticed a neck lump and constant chills",
    "gets day-long splitting headaches from bright lights":
        "bright light triggers headaches lasting the whole day",
    "has a child custody hearing coming up": "faces an upcoming hearing over child custody",
    "going back before a judge with their ex over the kids":
        "heading back to court with an ex about the children",
    "is going through a divorce with a lawyer": "divorce underway, represented by counsel",
    "is splitting up and buried in paperwork": "separating, with heavy paperwork",
    "holds power of attorney for their mother": "was granted power of attorney for their mother",
    "signs things on their mom's behalf now": "now signs documents for their mother",
    "is suing their landlord in small claims court over the deposit":
        "bringing a small-claims case against the landlord over a deposit",
    "will face their old landlord before a judge about the deposit":
        "expects a court date with a former landlord over a deposit",
    "had a lawyer draft their will": "had a will drawn up by a lawyer",
    "signed the document saying who gets what": "has signed papers deciding who inherits what",
    "has a green card interview scheduled with an attorney":
        "preparing with an attorney for a green card interview",
    "has a residency paperwork interview coming up": "awaiting an interview about residency papers",
}

# What a holdout user says for the vocabulary-driven oblique and legal lines
# (``vocab.ALLERGY_OBLIQUE``, ``vocab.CONDITION_OBLIQUE``, ``vocab.LEGAL``): train's
# utterance -> holdout's, so no holdout utterance repeats a train or validation one.
# Oblique lines stay oblique (the reaction, the symptom, not the usual word).
SAID_TEXTS: dict[str, str] = {
    # allergies, said through the reaction
    "if I eat so much as one shrimp my throat starts closing up":
        "a single prawn is enough to make my airway swell shut",
    "I carry an injector pen everywhere because of anything with peanuts":
        "anything with peanuts in it and I'm reaching for the epinephrine pen I keep in my bag",
    "I can't be in a room with a cat for ten minutes without my eyes swelling shut":
        "ten minutes near a cat and my eyes puff up until I can barely see",
    "the last time a doctor gave me penicillin I broke out in hives all over":
        "the one time I was prescribed penicillin I came out in welts from head to toe",
    "one bee sting and I'm headed to the ER": "if a bee gets me it's straight to the emergency room",
    "spring is brutal, I sneeze nonstop from March to June":
        "from March to June the pollen has me sneezing all day long",
    # conditions, said through the symptom
    "my sugar levels have been weird lately": "my glucose readings keep jumping around these days",
    "my chest gets tight whenever I take the stairs":
        "climbing a flight of steps leaves my chest feeling squeezed",
    "my partner says I stop breathing at night when I sleep":
        "apparently my breathing pauses for a while in my sleep, my partner keeps noticing",
    "I've been exhausted and pale for weeks, they want more bloodwork":
        "for weeks I've been wiped out and washed-out looking, and the clinic wants another blood draw",
    "my neck has a lump and I'm cold all the time now":
        "there's a swelling on my neck and I can never get warm lately",
    "bright lights give me these splitting headaches that last all day":
        "glaring light sets off a pounding headache that doesn't quit until night",
    # legal matters, plain then oblique
    "I have a child custody hearing coming up": "my child custody case has a court hearing soon",
    "I'm in the middle of a divorce and working with a lawyer":
        "my lawyer is handling my divorce, which is still in progress",
    "I just got power of attorney for my mom": "I was recently granted power of attorney over my mother's affairs",
    "I'm taking my landlord to small claims court over the deposit":
        "I've filed a small claims case against my landlord to get my deposit back",
    "I finally had a lawyer draft my will": "my will is finally written up, an attorney drafted it",
    "my green card interview is scheduled and my attorney is prepping me":
        "I've got a date for my green card interview and my immigration lawyer is getting me ready",
    "my ex and I are going back in front of a judge over the kids":
        "my ex and I have to let a judge decide about the children again",
    "we're splitting up and the paperwork is brutal": "my marriage is ending and the forms never stop",
    "I'm the one signing things for my mom now": "these days I put my signature on things for my mother",
    "my old landlord kept the deposit so we'll see each other in front of a judge":
        "my former landlord never returned the deposit, so it's going before a judge",
    "I finally got my affairs in order, the document about who gets what is signed":
        "the papers saying who inherits my things are signed at last",
    "my residency paperwork interview is coming up and I'm nervous":
        "I'm anxious about the interview for my residency papers next month",
}

# Keyed like templates.QUESTIONS: "attribute.self" (about the user), "attribute.other" ({rel}).
QUESTIONS: dict[str, tuple[str, ...]] = {
    "name.self": (
        "what am I called?", "which name do I answer to?", "what's the name you have on file for me?",
    ),
    "city.self": (
        "which town is my home at the moment?", "what's my current place of residence?",
        "in which city did I say my flat is?",
    ),
    "employer.self": (
        "which organisation employs me?", "who signs my paychecks now?", "what's the name of my workplace?",
    ),
    "diet.self": (
        "how would you describe my eating habits?", "are there foods I skip for my diet?",
        "what way of eating do I follow?",
    ),
    "drink.self": (
        "what's my usual order at a coffee shop?", "which beverage do I usually reach for?",
        "what drink do I start the day with?",
    ),
    "exercise.self": (
        "how do I keep in shape?", "what's my fitness routine?", "which physical activity do I do regularly?",
    ),
    "allergy.self": (
        "which substances give me a reaction?", "what must I avoid because of an allergy?",
        "what allergen is on my record?",
    ),
    "medication.self": (
        "what drug was I prescribed?", "which tablets do I take regularly?",
        "what's on my prescription list?",
    ),
    "condition.self": (
        "what diagnosis did the doctor give me?", "which illness did I say I have?",
        "what health problem am I managing?",
    ),
    "doctor.self": (
        "which doctor handles my care?", "who is my regular physician?", "what's my GP called?",
    ),
    "bank.self": (
        "which bank holds my account?", "where is my salary paid into?", "who do I do my banking with?",
    ),
    "insurance.self": (
        "who provides my health cover?", "which company insures my health?",
        "who pays out on my medical claims?",
    ),
    "legal.self": (
        "what court matter am I caught up in?", "is there a lawsuit or legal process in my life?",
        "what legal proceedings did I mention?",
    ),
    "lunch.self": (
        "what was my midday meal?", "which dish did I eat at noon?", "what did I say I had for lunch?",
    ),
    "weather.self": (
        "what did I say the sky was like?", "how did I describe the day's weather?",
        "was it warm or cold that day, by my account?",
    ),
    "film.self": (
        "which movie did I see?", "what film came up when we chatted?", "what did I stream the other night?",
    ),
    "book.self": (
        "which book is on my nightstand?", "what title am I reading at the moment?",
        "what's the book I'm partway through?",
    ),
    "city.other": (
        "in which town does my {rel} reside?", "where has my {rel} settled?", "what's my {rel}'s home city?",
    ),
    "employer.other": (
        "which firm employs my {rel}?", "where is my {rel} on the payroll?", "what organisation is my {rel} with?",
    ),
    "name.other": (
        "what does my {rel} answer to?", "which name does my {rel} have?", "my {rel} is called what, again?",
    ),
    "allergy.other": (
        "which allergen does my {rel} have to avoid?", "what does my {rel} react badly to?",
        "what must stay off the menu when my {rel} eats with us?",
    ),
    # Attributes the generator never produces for anyone: the right answer is "nothing stored".
    "never_mentioned": (
        "how tall am I?", "what's my middle name?", "which sports team do I coach?",
        "what was my first pet called?", "which season do I like best?", "what phone do I use?",
        "what's my go-to karaoke song?", "which hospital was I born in?",
    ),
    "broad": (
        "what's my story so far, as you have it?", "run me through my details you've kept",
        "compile what you've learned about me",
    ),
    # Prefixes of frustration questions (the follow-up question comes after them).
    "frustration": (
        "Not this again.", "I've been over this with you.", "You keep losing track of this.",
    ),
}
