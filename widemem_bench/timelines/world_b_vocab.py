"""World B's word lists: people, places, employers, drugs and conditions of its own.

World B is evaluation-only (issue 13): nothing is fitted on it, and no word list or
constant in method code may come from here. Nothing in this file repeats world A's
vocabulary (``vocab.py``); ``tests/test_world_b.py`` checks that, and
``tests/test_sealed.py`` checks that the distinctive items never appear in method code.

Tuples only (never sets), so seeded sampling is the same on every run.
"""

from __future__ import annotations

# The people the notes are about (a user, or a client in an agent's notes).
PEOPLE: tuple[str, ...] = (
    "Oona", "Teodor", "Marisol", "Kwame", "Saoirse", "Henrik", "Yuki", "Anouk", "Ezra", "Fatou",
    "Rafael", "Ingrid", "Tariq", "Magnus", "Noor", "Bastian", "Aurelie", "Solveig", "Amara",
    "Joaquin", "Petra", "Idris", "Mireille", "Haruto", "Zeynep", "Callum", "Ottilie", "Santiago",
    "Yewande", "Linnea", "Anselm", "Rukmini", "Florin", "Thandiwe", "Evander", "Catalina",
    "Adaeze", "Lorenzo", "Sunniva", "Ilias", "Meera", "Casimir", "Wren", "Desmond", "Esperanza",
    "Jiho", "Agnieszka", "Bartek",
)

# Names of the people around them (partners, children, kin).
KIN_NAMES: tuple[str, ...] = (
    "Marguerite", "Tobias", "Elowen", "Radu", "Femi", "Astrid", "Dario", "Imogen", "Kaito",
    "Signe", "Lachlan", "Beatrix", "Olusegun", "Vesna", "Ambrose", "Talia", "Eero", "Paloma",
    "Cormac", "Liesel", "Anand", "Rosalind", "Mattias", "Ysolde",
)

# (city, how someone who lives there might refer to it without naming it)
CITIES: tuple[tuple[str, str], ...] = (
    ("Tromsø", "Arctic Norway"), ("Ljubljana", "Slovenia"),
    ("Valparaíso", "central Chile"), ("Hobart", "Tasmania"), ("Kraków", "southern Poland"),
    ("Oaxaca", "the Mexican highlands"), ("Wellington", "New Zealand's North Island"),
    ("Tallinn", "Estonia"), ("Halifax", "the Maritimes"), ("Marseille", "Provence"),
    ("Busan", "the south of Korea"), ("Cluj-Napoca", "Transylvania"),
    ("Bergen", "fjord country"), ("Tbilisi", "the Caucasus"), ("Medellín", "the Aburrá valley"),
    ("Galway", "the west of Ireland"), ("Kyoto", "Kansai"), ("Bologna", "Emilia-Romagna"),
    ("Reykjavík", "Iceland"), ("Asheville", "the Blue Ridge Mountains"),
    ("Duluth", "northern Minnesota"), ("Santa Fe", "New Mexico"),
)

# Fictional employers.
EMPLOYERS: tuple[str, ...] = (
    "Harbourline Ambulance Trust", "Coldwater Ferries", "Pemberton & Vos", "Kestrel Aerospace",
    "Ninefold Games", "the Saltmarsh Cooperative", "Orchard Lane Clinic", "Bluestem Credit Union",
    "Vantor Logistics", "Maple & Quill Press", "the Tidewater Aquarium", "Northlight Observatory",
    "Greybeck Hydro", "the Corvina Hotel", "Fennimore Veterinary Group", "Lumen Glassworks",
)

# (occupation, an oblique way to say you now do it)
OCCUPATIONS: tuple[tuple[str, str], ...] = (
    ("paramedic", "riding the ambulance now"),
    ("ferry engineer", "down in the engine room of a ferry these days"),
    ("luthier", "building violins for a living now"),
    ("sous-chef", "running the pass most nights now"),
    ("dental hygienist", "cleaning teeth all day now"),
    ("air traffic controller", "in the tower guiding planes down now"),
    ("court interpreter", "translating in courtrooms these days"),
    ("structural welder", "welding steel beams on building sites now"),
    ("radio producer", "putting together a radio show every morning now"),
    ("midwife", "delivering babies for a living now"),
    ("park ranger", "patrolling the national park now"),
    ("tattoo artist", "inking people full time now"),
    ("actuary", "pricing risk at an insurer now"),
    ("glassblower", "working the furnace at a glass studio now"),
    ("veterinary technician", "assisting at animal surgeries now"),
    ("locksmith", "cutting keys and opening jammed doors now"),
    ("cartographer", "drawing maps for a living now"),
    ("school counselor", "listening to teenagers' problems all day now"),
)

# (vehicle, how people refer to it once they own it)
VEHICLES: tuple[tuple[str, str], ...] = (
    ("Subaru Outback", "the Subaru"), ("Volvo 240 wagon", "the old Volvo"),
    ("Vespa scooter", "the Vespa"), ("Kia Niro EV", "the Kia"),
    ("Ford Transit camper van", "the camper van"), ("Toyota Hilux", "the Hilux"),
    ("Mini Cooper", "the Mini"), ("cargo e-bike", "the cargo bike"),
    ("Skoda Octavia", "the Skoda"), ("Nissan Leaf", "the Leaf"),
    ("Royal Enfield motorcycle", "the Enfield"), ("Fiat Panda", "the Panda"),
    ("Polestar 2", "the Polestar"), ("Mazda MX-5", "the roadster"),
)

# (school, what they study there)
SCHOOLS: tuple[tuple[str, str], ...] = (
    ("Larchmont Polytechnic", "a part-time engineering degree"),
    ("St Brendan's College", "an evening nursing course"),
    ("the Open Conservatory", "music theory"),
    ("Haverford Night School", "payroll accounting"),
    ("the Kestrel Flight Academy", "a private pilot licence"),
    ("Ashgrove Community College", "welding certification"),
    ("the Institute of Applied Linguistics", "a translation diploma"),
    ("Riverside Culinary School", "pastry arts"),
    ("the Northfield School of Design", "typography"),
    ("Ballard Technical Institute", "electrician training"),
)

# Trip destinations (travel plans).
DESTINATIONS: tuple[str, ...] = (
    "the Faroe Islands", "Patagonia", "Zanzibar", "Hokkaido", "the Azores", "Sri Lanka",
    "Lapland", "Cappadocia", "Montenegro", "the Galápagos", "Mongolia", "Svalbard",
    "Madagascar", "Bhutan", "the Dolomites", "Oman",
)
MONTHS: tuple[str, ...] = (
    "February", "March", "April", "June", "August", "September", "October", "November",
)

# Pets: a species and a name, drawn independently.
PET_KINDS: tuple[str, ...] = (
    "beagle", "tabby cat", "bearded dragon", "cockatiel", "rescue greyhound", "corn snake",
    "border collie", "ragdoll cat", "tortoise", "dachshund", "ferret", "lop-eared rabbit",
)
PET_NAMES: tuple[str, ...] = (
    "Pimento", "Mango", "Tapioca", "Waffles", "Juniper", "Pudding", "Socks", "Nacho", "Clementine",
    "Ziggy", "Bramble", "Tofu", "Pretzel", "Marzipan", "Parsnip", "Gherkin",
)

# A child is a son or a daughter with a name from KIN_NAMES and an age.
CHILD_KINDS: tuple[str, ...] = ("daughter", "son")

LANGUAGES: tuple[str, ...] = (
    "Portuguese", "Swahili", "Mandarin", "Welsh", "Tagalog", "Farsi", "Icelandic", "Amharic",
    "Hebrew", "Catalan", "Korean", "Polish", "Basque", "Yoruba", "Finnish", "Scottish Gaelic",
)

HOBBIES: tuple[str, ...] = (
    "pottery", "bouldering", "birdwatching", "cold-water dipping", "woodturning", "Lindy hop",
    "competitive chess", "sourdough baking", "fencing", "astrophotography", "crochet",
    "orienteering", "archery", "sea kayaking", "calligraphy", "model railways",
)

# (allergen, severe?) -- several can hold at once.
ALLERGENS: tuple[tuple[str, bool], ...] = (
    ("sesame", True), ("kiwi fruit", False), ("ibuprofen", True), ("wasp stings", True),
    ("mustard", False), ("lupin flour", True), ("celery", False), ("codeine", True),
    ("nickel", False), ("mango skin", False), ("horse hair", False), ("aspirin", True),
)

# (drug, what it treats); a switch stays within a condition.
MEDICATIONS: tuple[tuple[str, str], ...] = (
    ("lamotrigine", "bipolar disorder"), ("valproate", "bipolar disorder"),
    ("allopurinol", "gout"), ("febuxostat", "gout"), ("colchicine", "gout"),
    ("propranolol", "essential tremor"), ("primidone", "essential tremor"),
    ("mesalamine", "ulcerative colitis"), ("tamsulosin", "an enlarged prostate"),
    ("methotrexate", "psoriatic arthritis"), ("gabapentin", "nerve pain"),
    ("pregabalin", "nerve pain"), ("ferrous sulfate", "anaemia"), ("spironolactone", "PCOS"),
    ("carbimazole", "an overactive thyroid"), ("timolol drops", "glaucoma"),
    ("latanoprost drops", "glaucoma"),
)

CONDITIONS: tuple[str, ...] = (
    "endometriosis", "tinnitus", "Ménière's disease", "fibromyalgia", "Raynaud's syndrome",
    "sarcoidosis", "vitiligo", "osteoporosis", "long COVID", "Hashimoto's thyroiditis",
    "scoliosis", "narcolepsy",
)

# People around the subject. Partners get an occupation (partners' jobs), kin a city.
PARTNERS: tuple[str, ...] = ("wife", "husband", "fiancée", "boyfriend", "girlfriend")
KIN: tuple[str, ...] = ("aunt", "stepdad", "niece", "nephew", "godmother", "twin sister",
                        "flatmate", "brother-in-law")

# Trivia: what was cooked, which podcast played.
DINNERS: tuple[str, ...] = (
    "shakshuka", "bibimbap", "pierogi", "jollof rice", "moussaka", "a mushroom risotto",
    "laksa", "a lentil dal", "tamales", "okonomiyaki",
)
PODCASTS: tuple[str, ...] = (
    "The Slow Tide", "Bone Orchard Radio", "Half-Light Stories", "The Compost Hour",
    "Quiet Engines", "Lantern Street",
)
