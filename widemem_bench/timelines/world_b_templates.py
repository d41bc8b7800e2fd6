"""World B's phrasings: what people say, what a memory stores, what gets asked.

Two voices. First person is someone talking to their assistant ("we adopted a ferret
last week"); third person is an agent's notes about a named person ("Oona moved to
Hobart in May"), where questions name that person too ("where is Oona based now?").
Every template here was written for world B; none derives from world A's. World B is
evaluation-only: nothing is fitted on it, and method code must not reuse any of it
(``tests/test_sealed.py`` scans for that).

Placeholders: {name} the person; {city}, {old_city}, {region}; {a_job}, {job}, {employer},
{job_phrase} (an oblique way to say the job); {a_vehicle}, {vehicle}, {old_short} (what
they called the previous vehicle); {school}, {course}; {dest}, {old_dest}, {month};
{a_pet_kind}, {pet_kind}, {pet}; {child}, {kid}, {age}; {lang}; {hobby}, {old_hobby};
{allergen}, {old_allergen}; {med}, {old_med}, {cond}; {rel} (partner or kin word),
{rname}; {dinner}, {podcast}; {clause}.
"""

from __future__ import annotations

# ---------------------------------------------------------------- utterances, first person
UTTERANCES_1: dict[str, tuple[str, ...]] = {
    "name": (
        "Quick intro: {name}, that's me.", "Everyone calls me {name}.",
        "Morning! {name} again, in case you lost track.", "Sign these with {name}, that's my name.",
    ),
    "city_first": (
        "Our flat is in {city}.", "I've got a tiny place in {city}.",
        "Greetings from {city}, where I've lived a while now.", "The view from my window in {city} is grey again.",
    ),
    "city_move": (
        "The van is unpacked, we're officially {city} people now.", "Moved out of {old_city}, new keys in {city}.",
        "Said goodbye to {old_city}; {city} is home now.", "First night sleeping in {city}, the move is done.",
    ),
    "city_move_oblique": (
        "Traded {old_city} for somewhere in {region}, the new flat has a balcony.",
        "We packed up {old_city} and headed to {region}.",
        "New chapter: {region}. {old_city} is behind us.",
        "Landed in {region} for good, {old_city} feels far away already.",
    ),
    "city_restate": (
        "The trams in {city} are on strike again.", "Rain, rain and more rain in {city}.",
        "Found a new bakery around the corner here in {city}.", "{city} in spring is lovely.",
    ),
    "job_first": (
        "I'm {a_job} over at {employer}.", "My days are spent as {a_job} for {employer}.",
        "{employer} employs me, I'm their {job}.", "Rota at {employer} came out; being {a_job} means nights again.",
    ),
    "job_change": (
        "Handed in my notice and took {a_job} role at {employer}.", "Retrained: I'm {a_job} now, at {employer}.",
        "Signed the contract with {employer} today, {a_job} position.", "My first shift as {a_job} at {employer} went fine.",
    ),
    "job_change_oblique": (
        "Big career swerve: I'm {job_phrase}.", "Left the old job behind, {job_phrase}.",
        "Who'd have thought, me {job_phrase}.", "Six months of retraining paid off, I'm {job_phrase}.",
    ),
    "vehicle_first": (
        "My {vehicle} needs new tyres.", "I get around in {a_vehicle}.",
        "Took the {vehicle} in for a service.", "Parked {a_vehicle} outside, it's the one I own.",
    ),
    "vehicle_change": (
        "Sold my old ride and bought {a_vehicle}.", "Just picked up {a_vehicle}, my new wheels.",
        "Registration papers for my new {vehicle} arrived.", "Test drove and then bought {a_vehicle}.",
    ),
    "vehicle_change_oblique": (
        "Finally traded {old_short} in, picked up {a_vehicle}.", "Said farewell to {old_short}; {a_vehicle} sits in the drive now.",
        "{old_short} is gone, replaced by {a_vehicle}.", "Swapped {old_short} for {a_vehicle} at the dealer.",
    ),
    "school_first": (
        "I've enrolled at {school} for {course}.", "Evenings are for {course} at {school}.",
        "Exam season at {school}, {course} is hard.", "Started {course} at {school} this term.",
    ),
    "school_change": (
        "Transferred to {school} to do {course} instead.", "Dropped my old course; it's {course} at {school} now.",
        "Got a place at {school} for {course}.", "New student card from {school}, I'm doing {course}.",
    ),
    "travel_plan": (
        "Booked flights to {dest} for {month}.", "Saving up for {dest} in {month}.",
        "We're off to {dest} in {month}, can't wait.", "Planning a trip to {dest}, aiming for {month}.",
    ),
    "travel_change": (
        "{old_dest} fell through, so it's {dest} in {month}.", "Changed plans: {dest} in {month}, not {old_dest}.",
        "Cancelled {old_dest}, rebooked for {dest} in {month}.", "Scrapped {old_dest}; {dest} it is, in {month}.",
    ),
    "pet_add": (
        "We adopted {a_pet_kind} called {pet}.", "Meet {pet}, my {pet_kind}.",
        "{pet} the {pet_kind} chewed my slippers.", "Brought home {a_pet_kind} from the shelter, named {pet}.",
    ),
    "pet_add_more": (
        "The household grew: {a_pet_kind} named {pet} joined us.", "Another one! {pet}, {a_pet_kind}, moved in too.",
        "Added {a_pet_kind} called {pet} to the family, the others are adjusting.",
        "{pet} is our newest, {a_pet_kind}; the rest are curious.",
    ),
    "child": (
        "My {child} {kid} turns {age} next week.", "{kid}, my {child}, is {age} now.",
        "Parents' evening for {kid}, my {age}-year-old {child}.", "Packed lunch for my {child} {kid}, who's {age}.",
    ),
    "language": (
        "I grew up speaking {lang}.", "My {lang} is fluent, I use it every day.",
        "Been taking {lang} lessons, I can hold a conversation now.", "I can chat in {lang} with no trouble.",
    ),
    "hobby_add": (
        "Weekends are for {hobby} these days.", "Got hooked on {hobby}.",
        "Signed up for the local {hobby} club.", "Spent all Saturday on {hobby}, bliss.",
    ),
    "hobby_swap": (
        "Gave up {old_hobby}, I'm into {hobby} now.", "No more {old_hobby} for me, switched to {hobby}.",
        "Sold my {old_hobby} gear and took up {hobby}.", "{old_hobby} is done; {hobby} replaced it.",
    ),
    "allergy": (
        "Turns out I react to {allergen}, the allergist confirmed it.", "Skin test says I'm allergic to {allergen}.",
        "Keep {allergen} away from me, allergy.", "Another allergy on the list: {allergen}.",
    ),
    "allergy_correction": (
        "The allergist retested me: it was never {old_allergen}, it's {allergen}.",
        "Correction on my allergy: {allergen}, not {old_allergen}.",
        "Good news, {old_allergen} is fine for me after all; the real culprit is {allergen}.",
        "Scratch {old_allergen} off the list, it's {allergen} I react to.",
    ),
    "medication": (
        "The specialist started me on {med} for {cond}.", "Collected my {med}, it's for the {cond}.",
        "I take {med} twice a day for {cond}.", "Went on {med} to manage my {cond}.",
    ),
    "med_switch": (
        "{old_med} wasn't working, the specialist moved me to {med}.", "Off {old_med}, onto {med} now.",
        "The pharmacist swapped my {old_med} for {med}.", "New script: {med}, replacing {old_med}.",
    ),
    "condition": (
        "The tests came back, it's {cond}.", "Diagnosis day: {cond}.",
        "I've been living with {cond} for years.", "My {cond} flares up when I'm stressed.",
    ),
    "partner_job": (
        "My {rel} is {a_job}.", "My {rel} works long hours as {a_job}.",
        "My {rel} qualified as {a_job} last year.", "Being {a_job} keeps my {rel} busy.",
    ),
    "partner_job_change": (
        "My {rel} quit and became {a_job}.", "My {rel} is retraining as {a_job}.",
        "Career change in the house: my {rel} is {a_job} now.", "My {rel} landed a job as {a_job}.",
    ),
    "rel_name": (
        "My {rel} {rname} says hello.", "{rname} (my {rel}) dropped by with cake.",
        "Cooking for {rname}, my {rel}, tonight.", "My {rel}, {rname}, phoned earlier.",
    ),
    "kin_city": (
        "My {rel} lives over in {city}.", "Visiting my {rel} in {city} next weekend.",
        "My {rel} just bought a flat in {city}.", "My {rel} has been in {city} for ages.",
    ),
    "dinner": (
        "Made {dinner} tonight.", "Dinner was {dinner}.", "Tried cooking {dinner}, not bad.",
        "Leftover {dinner} for dinner again.",
    ),
    "podcast": (
        "Listening to {podcast} on the bus.", "Binged three episodes of {podcast}.",
        "{podcast} had a great episode today.", "Discovered a podcast called {podcast}.",
    ),
    "frustration_fact": (
        "How many times do I have to say {clause}?", "I've said it before: {clause}.",
        "Seriously, {clause}, I mentioned it ages ago.", "Again: {clause}. Please keep it this time.",
    ),
    "frustration_vague": (
        "Why do I keep having to repeat myself?", "You've lost track of things I told you, again.",
        "Honestly, it's like talking to a wall.", "I explained all this before and you've dropped it.",
    ),
}

# ---------------------------------------------------------------- utterances, agent notes
UTTERANCES_3: dict[str, tuple[str, ...]] = {
    "city_first": (
        "{name} has an address in {city}.", "Note: {name} is based in {city}.",
        "{name} rents a place in {city}.", "Home address for {name} is in {city}.",
    ),
    "city_move": (
        "{name} moved to {city} this month.", "Update: {name} relocated from {old_city} to {city}.",
        "{name} left {old_city} and now lives in {city}.", "{name} has settled into a new home in {city}.",
    ),
    "city_move_oblique": (
        "{name} swapped {old_city} for {region}.", "{name} is no longer in {old_city}; now out in {region}.",
        "{name} packed up {old_city}, new life in {region}.", "{name} mentioned they now live in {region}, not {old_city}.",
    ),
    "city_restate": (
        "{name} complained about traffic in {city} again.", "{name} is still in {city}.",
        "Spoke with {name}; still happily in {city}.", "{name} says {city} is cold this week.",
    ),
    "job_first": (
        "{name} earns a salary from {employer} as {a_job}.", "{name}: {job}, employed by {employer}.",
        "{name} is {a_job} for {employer}.", "Occupation for {name}: {job} at {employer}.",
    ),
    "job_change": (
        "{name} started a new role as {a_job} at {employer}.", "{name} changed jobs, now {a_job} at {employer}.",
        "{name} accepted an offer from {employer} to be their {job}.", "{name} is now {a_job} with {employer}.",
    ),
    "job_change_oblique": (
        "{name} has made a career change, {job_phrase}.", "{name} says they're {job_phrase}.",
        "Career note: {name} is {job_phrase}.", "{name} left the old line of work and is {job_phrase}.",
    ),
    "vehicle_first": (
        "{name} drives {a_vehicle}.", "{name}'s vehicle: {a_vehicle}.",
        "{name} commutes in {a_vehicle}.", "{name} owns {a_vehicle}.",
    ),
    "vehicle_change": (
        "{name} bought {a_vehicle}.", "{name} has a new vehicle, {a_vehicle}.",
        "{name} replaced their car with {a_vehicle}.", "{name} now drives {a_vehicle}.",
    ),
    "vehicle_change_oblique": (
        "{name} finally traded {old_short} for {a_vehicle}.", "{name} got rid of {old_short}; now has {a_vehicle}.",
        "{name} swapped {old_short} for {a_vehicle}.", "{old_short} is gone; {name} picked up {a_vehicle}.",
    ),
    "school_first": (
        "{name} studies {course} at {school}.", "{name} is enrolled at {school} ({course}).",
        "{name} goes to {school} for {course}.", "Education: {name}, {course}, {school}.",
    ),
    "school_change": (
        "{name} transferred to {school} for {course}.", "{name} switched courses: now {course} at {school}.",
        "{name} started {course} at {school} instead.", "{name} got into {school} to study {course}.",
    ),
    "travel_plan": (
        "{name} is planning a trip to {dest} in {month}.", "{name} booked travel to {dest} for {month}.",
        "{name} hopes to visit {dest} in {month}.", "Upcoming: {name} goes to {dest} in {month}.",
    ),
    "travel_change": (
        "{name} cancelled {old_dest}; going to {dest} in {month} instead.",
        "{name}'s trip changed from {old_dest} to {dest} ({month}).",
        "{name} rebooked: {dest} in {month} rather than {old_dest}.",
        "{name} dropped the plan for {old_dest} in favour of {dest} in {month}.",
    ),
    "pet_add": (
        "{name} has {a_pet_kind} named {pet}.", "{name} adopted {a_pet_kind}, {pet}.",
        "{name}'s pet: {pet}, {a_pet_kind}.", "{name} got {a_pet_kind} called {pet}.",
    ),
    "pet_add_more": (
        "{name} adopted another pet, {a_pet_kind} called {pet}.", "{name} also has {a_pet_kind} now, named {pet}.",
        "New addition for {name}: {pet}, {a_pet_kind}.", "{name} took in {a_pet_kind} named {pet} as well.",
    ),
    "child": (
        "{name} has a {child}, {kid}, aged {age}.", "{name}'s {child} {kid} is {age}.",
        "{name} mentioned their {age}-year-old {child}, {kid}.", "Family: {name} has a {child} called {kid} ({age}).",
    ),
    "language": (
        "{name} speaks {lang}.", "{name} is fluent in {lang}.",
        "{name} learned {lang} and uses it daily.", "Languages for {name} include {lang}.",
    ),
    "hobby_add": (
        "{name} enjoys {hobby}.", "{name} took up {hobby}.",
        "{name} spends weekends on {hobby}.", "Hobby for {name}: {hobby}.",
    ),
    "hobby_swap": (
        "{name} gave up {old_hobby} and took up {hobby}.", "{name} stopped {old_hobby}; now does {hobby}.",
        "{name} replaced {old_hobby} with {hobby}.", "{name} is into {hobby} now, no longer {old_hobby}.",
    ),
    "allergy": (
        "{name} carries an allergy card listing {allergen}.", "Allergy on file for {name}: {allergen}.",
        "{name} reacts badly to {allergen}.", "{name} has a confirmed {allergen} allergy.",
    ),
    "allergy_correction": (
        "Correction: {name} is allergic to {allergen}, not {old_allergen}.",
        "{name}'s retest shows {allergen}, not {old_allergen}, is the allergen.",
        "{name} is fine with {old_allergen}; the allergy is actually {allergen}.",
        "Remove {old_allergen} for {name}; the real allergy is {allergen}.",
    ),
    "medication": (
        "{name} uses {med} to control {cond}.", "{name} was prescribed {med} for {cond}.",
        "Medication for {name}: {med} ({cond}).", "{name} is on {med} to treat {cond}.",
    ),
    "med_switch": (
        "{name} switched from {old_med} to {med}.", "{name}'s prescription changed: {med} replaces {old_med}.",
        "{name} stopped {old_med} and started {med}.", "{name} is now on {med} instead of {old_med}.",
    ),
    "condition": (
        "{name} manages {cond} day to day.", "{name} was diagnosed with {cond}.",
        "Medical history for {name}: {cond}.", "{name} lives with {cond}.",
    ),
    "partner_job": (
        "{name}'s {rel} is {a_job}.", "{name}'s {rel} works as {a_job}.",
        "{name} mentioned their {rel} is {a_job}.", "{name}'s {rel}: {job} by profession.",
    ),
    "partner_job_change": (
        "{name}'s {rel} became {a_job}.", "{name}'s {rel} changed careers and is now {a_job}.",
        "{name} says their {rel} now works as {a_job}.", "{name}'s {rel} retrained as {a_job}.",
    ),
    "rel_name": (
        "{name}'s {rel} is called {rname}.", "{name}'s {rel}: {rname}.",
        "{name} mentioned {rname}, their {rel}.", "{rname} is {name}'s {rel}.",
    ),
    "kin_city": (
        "{name}'s {rel} stays in {city}.", "{name}'s {rel} is based in {city}.",
        "{name} visits their {rel} in {city}.", "{name}'s {rel} moved to {city} years ago.",
    ),
    "dinner": (
        "{name} cooked {dinner}.", "{name} had {dinner} for dinner.",
        "{name} tried making {dinner}.", "{name} mentioned eating {dinner}.",
    ),
    "podcast": (
        "{name} listens to {podcast}.", "{name} recommended {podcast}.",
        "{name} has been playing {podcast} on commutes.", "{name} mentioned the podcast {podcast}.",
    ),
    "frustration_fact": (
        "The user repeats, annoyed: {clause}.", "User insists: {clause}, and says it was said before.",
        "User is irritated: {clause} was already noted.", "Complaint from the user: {clause}, told before.",
    ),
    "frustration_vague": (
        "User is annoyed that earlier notes on {name} were ignored.",
        "User complains about repeating {name}'s details.",
        "User says the file on {name} keeps losing things.",
        "User frustrated: the notes about {name} were already given.",
    ),
}

# Restated facts inside frustration messages, per attribute (every placeholder is the value).
CLAUSES_1: dict[str, tuple[str, ...]] = {
    "city": ("my address is in {city}", "home is {city}"),
    "occupation": ("my job is {job}", "I earn my living in the role of {job}"),
    "vehicle": ("I get around in a {vehicle}", "my vehicle is a {vehicle}"),
    "allergy": ("{allergen} gives me a reaction", "{allergen} is on my allergy list"),
    "medication": ("{med} is part of my daily routine", "my pills are {med}"),
}
CLAUSES_3: dict[str, tuple[str, ...]] = {
    "city": ("they live in {city}", "they are based in {city}"),
    "occupation": ("they work in the role of {job}", "their job is {job}"),
    "vehicle": ("they drive a {vehicle}", "their vehicle is a {vehicle}"),
    "allergy": ("they are allergic to {allergen}", "{allergen} causes them a reaction"),
    "medication": ("they take {med}", "they are on {med}"),
}

# ---------------------------------------------------------------- stored facts
# (full note with the person's name, the subject-stripped form an extractor stores)
FACTS: dict[str, tuple[str, str]] = {
    "name": ("The person goes by {name}", "goes by {name}"),
    "city": ("{name} is based in {city}", "based in {city}"),
    "city_region": ("{name} now lives in {region}", "now lives in {region}"),
    "occupation": ("{name} is {a_job} at {employer}", "job: {job} at {employer}"),
    "occupation_oblique": ("{name} is {job_phrase}", "is {job_phrase}"),
    "vehicle": ("{name}'s main vehicle is {a_vehicle}", "main vehicle is {a_vehicle}"),
    "school": ("{name} studies {course} at {school}", "studying {course} at {school}"),
    "travel": ("{name} plans to travel to {dest} in {month}", "trip planned to {dest} in {month}"),
    "pet": ("{name} has {a_pet_kind} called {pet}", "has {a_pet_kind} called {pet}"),
    "child": ("{name} has a {child} named {kid}, aged {age}", "has a {child} named {kid}, aged {age}"),
    "language": ("{name} speaks {lang}", "speaks {lang}"),
    "hobby": ("{name}'s hobby is {hobby}", "hobby: {hobby}"),
    "allergy": ("{name} has an allergy to {allergen}", "allergy to {allergen}"),
    "medication": ("{name} is prescribed {med} for {cond}", "prescribed {med} for {cond}"),
    "condition": ("{name} was diagnosed with {cond}", "diagnosed with {cond}"),
    "partner_job": ("{name}'s {rel} is employed as {a_job}", "{rel} is employed as {a_job}"),
    "rel_name": ("{name}'s {rel} is called {rname}", "{rel} is called {rname}"),
    "kin_city": ("{name}'s {rel} is based in {city}", "{rel} is based in {city}"),
    "dinner": ("{name} cooked {dinner} for dinner", "cooked {dinner} for dinner"),
    "podcast": ("{name} listened to the podcast {podcast}", "listened to the podcast {podcast}"),
}

# ---------------------------------------------------------------- questions
# "attribute.self" asks about the person, "attribute.other" about {rel}.
QUESTIONS_1: dict[str, tuple[str, ...]] = {
    "name.self": (
        "what name am I using with you?", "which name did I sign off with?", "who am I, name-wise?",
        "how did I introduce myself?", "did I ever tell you my name?",
    ),
    "city.self": (
        "which town is my flat in?", "where have I been living lately?", "where is home for me at the moment?",
        "what's my current city?", "which city would my post go to now?",
    ),
    "occupation.self": (
        "what do I do for a living?", "what's my line of work?", "what job am I doing these days?",
        "how do I earn my money now?", "what's my profession at the moment?",
    ),
    "vehicle.self": (
        "what am I driving these days?", "what's parked in my driveway?", "which vehicle do I own now?",
        "what do I get around in?", "what are my current wheels?",
    ),
    "school.self": (
        "where am I studying?", "what course am I enrolled in?", "which college do I attend?",
        "what am I learning at school these days?", "where do I take my classes?",
    ),
    "travel.self": (
        "where's my next trip?", "which destination am I travelling to?", "what holiday have I got planned?",
        "where am I flying off to?", "what's my upcoming travel plan?",
    ),
    "pet.self": (
        "what animals do I have at home?", "what are my pets called?", "which pets live with me?",
        "who's in my menagerie?", "do I have any pets, and what are they?",
    ),
    "child.self": (
        "what are my kids' names?", "how many children do I have and who are they?", "tell me about my children",
        "who are my sons and daughters?", "what do I call my kids?",
    ),
    "language.self": (
        "which languages can I speak?", "what languages am I fluent in?", "besides English, what do I speak?",
        "in what languages can I hold a conversation?", "what tongues do I know?",
    ),
    "hobby.self": (
        "what do I do in my spare time?", "what are my hobbies these days?", "how do I spend my weekends?",
        "what pastimes have I got?", "what am I into outside work?",
    ),
    "allergy.self": (
        "which things am I allergic to?", "list my allergies", "what should a chef keep away from me?",
        "what gives me allergic reactions?", "any allergens I need to avoid?",
    ),
    "medication.self": (
        "which drug am I on?", "what's in my pill organiser?", "what prescription do I take now?",
        "what medicine was I put on?", "what am I taking for my health these days?",
    ),
    "condition.self": (
        "what illness was I diagnosed with?", "what's my medical condition?", "what health problem do I have?",
        "what did the tests find?", "what diagnosis am I living with?",
    ),
    "dinner.self": (
        "what did I cook for dinner that night?", "what was on my plate for dinner?",
        "which dish did I make for supper?", "what did I have for my evening meal?",
    ),
    "podcast.self": (
        "which podcast was I listening to?", "what podcast did I bring up?",
        "what show was in my headphones?", "name the podcast I mentioned",
    ),
    "occupation.other": (
        "what does my {rel} do for work?", "what's my {rel}'s job?", "how does my {rel} earn a living?",
        "what profession is my {rel} in?", "what line of work is my {rel} in now?",
    ),
    "name.other": (
        "which name belongs to my {rel}?", "how is my {rel}'s first name spelled?", "who's my {rel}, by name?",
        "what name does my {rel} go by?", "what did I say my {rel}'s name was?",
    ),
    "city.other": (
        "which city does my {rel} live in?", "where's my {rel} living?", "where is my {rel} based?",
        "which town would I drive to, to see my {rel}?", "where would I visit my {rel}?",
    ),
    "never_mentioned": (
        "what's my blood type?", "which political party do I vote for?", "what's my passport number?",
        "what did I name my sailboat?", "what's my favourite constellation?",
        "which choir do I sing in?", "what's my shirt size?", "who was my childhood best friend?",
        "what's my grandmother's maiden name?", "which chess opening do I prefer?",
    ),
    "broad": (
        "what do you have on me?", "sum up everything you know about me",
        "give me my profile as you have it", "what's the full picture of me in your memory?",
        "run through what you remember about my life",
    ),
    "frustration": (
        "Come on, I've mentioned this.", "Seriously, I went over this with you.",
        "This is the third time I'm asking.", "You had this, I know you did.", "Ugh, again?",
    ),
}

QUESTIONS_3: dict[str, tuple[str, ...]] = {
    "city.self": (
        "where is {name} based now?", "which city does {name} live in?", "where's {name} living at the moment?",
        "what's {name}'s home city?", "where would I find {name} these days?",
    ),
    "occupation.self": (
        "what does {name} do for work?", "what is {name}'s job?", "what's {name}'s profession now?",
        "how does {name} make a living?", "what role does {name} have at work?",
    ),
    "vehicle.self": (
        "what does {name} drive?", "which vehicle does {name} own now?", "what car is {name} using?",
        "how does {name} get around?", "what's {name}'s current vehicle?",
    ),
    "school.self": (
        "where does {name} study?", "what course is {name} taking?", "which school is {name} enrolled at?",
        "what is {name} studying?", "where does {name} go for classes?",
    ),
    "travel.self": (
        "where is {name} travelling next?", "what trip has {name} planned?", "where is {name} going on holiday?",
        "which destination is {name} visiting?", "what are {name}'s travel plans?",
    ),
    "pet.self": (
        "what pets does {name} have?", "what are {name}'s pets called?", "which animals live with {name}?",
        "does {name} have any pets?", "list {name}'s pets",
    ),
    "child.self": (
        "what are {name}'s children called?", "does {name} have kids?", "who are {name}'s children?",
        "how many kids does {name} have?", "what are the names of {name}'s kids?",
    ),
    "language.self": (
        "which languages does {name} speak?", "what languages is {name} fluent in?", "does {name} speak anything besides English?",
        "what can {name} converse in?", "list {name}'s languages",
    ),
    "hobby.self": (
        "what are {name}'s hobbies?", "what does {name} do for fun?", "how does {name} spend free time?",
        "what is {name} into outside work?", "what pastimes does {name} have?",
    ),
    "allergy.self": (
        "what is {name} allergic to?", "does {name} have allergies?", "which allergens should {name} avoid?",
        "list {name}'s allergies", "what causes {name} allergic reactions?",
    ),
    "medication.self": (
        "what medication is {name} on?", "which drug does {name} take?", "what is {name} prescribed?",
        "what pills does {name} take?", "what's {name}'s current prescription?",
    ),
    "condition.self": (
        "what condition does {name} have?", "what did {name}'s doctors diagnose?", "what's {name}'s diagnosis?",
        "does {name} have a medical condition?", "what health issue does {name} live with?",
    ),
    "dinner.self": (
        "what did {name} cook for dinner?", "what was {name}'s dinner that evening?",
        "which dish did {name} make for supper?", "what did {name} eat in the evening?",
    ),
    "podcast.self": (
        "which podcast does {name} listen to?", "what podcast did {name} mention?",
        "what show has {name} been playing?", "name the podcast {name} brought up",
    ),
    "occupation.other": (
        "what does {name}'s {rel} do?", "what's the job of {name}'s {rel}?", "how does {name}'s {rel} earn a living?",
        "what is {name}'s {rel}'s profession?", "where in the workforce is {name}'s {rel}?",
    ),
    "name.other": (
        "what's {name}'s {rel} called?", "what is the name of {name}'s {rel}?", "who is {name}'s {rel}?",
        "what name does {name}'s {rel} go by?", "do we know {name}'s {rel}'s name?",
    ),
    "city.other": (
        "where does {name}'s {rel} live?", "which city is {name}'s {rel} in?", "where is {name}'s {rel} based?",
        "what town does {name}'s {rel} live in?", "where would {name} visit their {rel}?",
    ),
    "never_mentioned": (
        "what's {name}'s blood type?", "which party does {name} vote for?", "what is {name}'s passport number?",
        "what's the name of {name}'s sailboat?", "what is {name}'s favourite constellation?",
        "which choir does {name} sing in?", "what's {name}'s shirt size?", "who was {name}'s childhood best friend?",
        "what is {name}'s grandmother's maiden name?", "which chess opening does {name} prefer?",
    ),
    "broad": (
        "what do we know about {name}?", "summarise {name}'s file", "give me a rundown of {name}",
        "what's on record for {name}?", "pull together everything noted about {name}",
    ),
    "frustration": (
        "I already logged this for {name}.", "This is in my notes on {name} already.",
        "I've told you this about {name} before.", "We covered this for {name}.", "Again, about {name}:",
    ),
}
