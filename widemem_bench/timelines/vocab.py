"""Word lists the timeline generator draws from.

Everything here is a tuple (never a set or a dict iterated for sampling), so that
sampling with a seeded ``numpy.random.Generator`` gives the same result on every
run and every Python build.
"""

from __future__ import annotations

FIRST_NAMES: tuple[str, ...] = (
    "Alice", "Bob", "Carmen", "Dmitri", "Emma", "Farah", "Gabriel", "Hana", "Ibrahim",
    "Julia", "Kenji", "Lena", "Mateo", "Nadia", "Oliver", "Priya", "Quentin", "Rosa",
    "Samuel", "Tamar", "Umar", "Valentina", "Wei", "Ximena", "Yusuf", "Zoe", "Aaron",
    "Beatriz", "Chidi", "Daria", "Elif", "Felix", "Grace", "Hugo", "Ines", "Jonas",
    "Keisha", "Luca", "Maya", "Nikhil", "Olga", "Pedro", "Rania", "Stefan", "Thu",
    "Uma", "Victor", "Wanjiru", "Yara", "Zainab", "Marcus", "Sofia", "Declan", "Aiko",
    "Tomasz", "Leila", "Ravi", "Freya", "Omar", "Clara",
)

# (city, region phrases that never repeat the city's own words). The region phrases feed
# the oblique restatements: they share almost no tokens with the city, which is what makes
# "lives on the East Coast" vs "moved to Boston" hard for a similarity gate.
CITIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Boston", ("the East Coast", "New England")),
    ("San Francisco", ("the Bay Area", "the West Coast", "NorCal")),
    ("Denver", ("the Rockies", "the Mile High area")),
    ("Chicago", ("the Midwest", "the Windy City")),
    ("Austin", ("Texas", "the Hill Country")),
    ("Seattle", ("the Pacific Northwest", "the rainy northwest")),
    ("Miami", ("South Florida", "the Gulf-and-Atlantic tip of the peninsula")),
    ("Atlanta", ("the Deep South", "Georgia")),
    ("Portland", ("Oregon", "the Pacific Northwest")),
    ("New York", ("the Big Apple", "the East Coast")),
    ("Los Angeles", ("SoCal", "the West Coast")),
    ("Phoenix", ("the Valley of the Sun", "the desert southwest")),
    ("Minneapolis", ("the Twin Cities", "the upper Midwest")),
    ("Nashville", ("Music City", "Tennessee")),
    ("Philadelphia", ("Philly", "the Mid-Atlantic")),
    ("Toronto", ("Ontario", "north of the border")),
    ("Vancouver", ("British Columbia", "the Canadian west coast")),
    ("London", ("the UK", "England")),
    ("Berlin", ("Germany", "the German capital")),
    ("Lisbon", ("Portugal", "the Iberian coast")),
    ("Dublin", ("Ireland", "the Emerald Isle")),
    ("Amsterdam", ("the Netherlands", "Holland")),
    ("Sydney", ("Australia", "down under")),
    ("Salt Lake City", ("Utah", "the Wasatch Front")),
    ("Raleigh", ("the Research Triangle", "North Carolina")),
    ("San Diego", ("SoCal", "the border coast")),
    ("Pittsburgh", ("western Pennsylvania", "the Steel City")),
    ("Madison", ("Wisconsin", "the Midwest")),
)

EMPLOYERS: tuple[str, ...] = (
    "Stripe", "Kaiser Permanente", "Intel", "Pfizer", "Deloitte", "Patagonia", "Spotify",
    "the city library", "Boeing", "Target", "Mayo Clinic", "Shopify", "a small design studio",
    "Fidelity", "Duolingo", "the public school district", "Airbnb", "Siemens", "Whole Foods",
    "a law firm downtown", "NPR", "Moderna", "Etsy", "IKEA", "Nvidia", "the county hospital",
    "a biotech startup", "Lufthansa", "REI", "Adobe", "Accenture", "a local bakery",
    "the state university", "Zillow", "Bosch", "Salesforce", "Unilever", "a nonprofit food bank",
)

ROLES: tuple[str, ...] = (
    "data analyst", "nurse", "software engineer", "product manager", "accountant",
    "graphic designer", "teacher", "paralegal", "pharmacist", "marketing lead",
    "UX researcher", "sales rep", "project manager", "lab technician", "store manager",
    "copywriter", "mechanical engineer", "customer success manager", "barista", "recruiter",
)

# Relatives and other people a user talks about: the subject of a relationship fact.
RELATIVES: tuple[str, ...] = (
    "sister", "brother", "mother", "father", "partner", "best friend", "son", "daughter",
    "grandmother", "cousin", "roommate", "uncle",
)

# Names by the relative's grammatical gender; "partner", "cousin" etc. draw from both.
FEMALE_RELATIVES: tuple[str, ...] = ("sister", "mother", "daughter", "grandmother")
MALE_RELATIVES: tuple[str, ...] = ("brother", "father", "son", "uncle")
FEMALE_NAMES: tuple[str, ...] = (
    "Mia", "Ava", "Isla", "Chloe", "Ruth", "Nora", "Iris", "Hazel", "Ada", "June", "Priya", "Lucia",
)
MALE_NAMES: tuple[str, ...] = (
    "Noah", "Liam", "Ethan", "Mason", "Theo", "Elijah", "Jack", "Leo", "Max", "Arjun", "Diego", "Kofi",
)
NEUTRAL_NAMES: tuple[str, ...] = ("Sam", "Alex", "Jordan", "Robin", "Kai", "Riley")

# (allergen, severe?) -- severe ones reach importance 10 (essential: an EpiPen case).
ALLERGENS: tuple[tuple[str, bool], ...] = (
    ("peanuts", True), ("shellfish", True), ("penicillin", True), ("bee stings", True),
    ("tree nuts", True), ("latex", False), ("cats", False), ("pollen", False),
    ("sulfa drugs", True), ("dairy", False), ("eggs", False), ("dust mites", False),
)

# Oblique allergy statements: describe the reaction without the word "allergic".
ALLERGY_OBLIQUE: tuple[tuple[str, str], ...] = (
    ("shellfish", "if I eat so much as one shrimp my throat starts closing up"),
    ("peanuts", "I carry an injector pen everywhere because of anything with peanuts"),
    ("cats", "I can't be in a room with a cat for ten minutes without my eyes swelling shut"),
    ("penicillin", "the last time a doctor gave me penicillin I broke out in hives all over"),
    ("bee stings", "one bee sting and I'm headed to the ER"),
    ("pollen", "spring is brutal, I sneeze nonstop from March to June"),
)

# (medication, condition it treats)
MEDICATIONS: tuple[tuple[str, str], ...] = (
    ("lisinopril", "high blood pressure"), ("losartan", "high blood pressure"),
    ("metformin", "type 2 diabetes"), ("sertraline", "anxiety"), ("levothyroxine", "hypothyroidism"),
    ("atorvastatin", "high cholesterol"), ("albuterol", "asthma"), ("omeprazole", "acid reflux"),
    ("sumatriptan", "migraines"), ("escitalopram", "depression"), ("insulin glargine", "type 1 diabetes"),
    ("adderall", "ADHD"), ("warfarin", "atrial fibrillation"), ("hydroxychloroquine", "lupus"),
    ("amlodipine", "high blood pressure"), ("sitagliptin", "type 2 diabetes"),
    ("fluoxetine", "anxiety"), ("rosuvastatin", "high cholesterol"), ("pantoprazole", "acid reflux"),
    ("rizatriptan", "migraines"), ("bupropion", "depression"), ("apixaban", "atrial fibrillation"),
    ("methylphenidate", "ADHD"), ("budesonide", "asthma"),
)

CONDITIONS: tuple[str, ...] = (
    "asthma", "type 2 diabetes", "high blood pressure", "celiac disease", "migraines",
    "anxiety", "hypothyroidism", "psoriasis", "epilepsy", "rheumatoid arthritis",
    "sleep apnea", "Crohn's disease",
)

# Oblique condition statements: (stored condition value, what the user says, what an
# extractor would store). Regex YMYL misses these; the gold category is still health.
CONDITION_OBLIQUE: tuple[tuple[str, str, str], ...] = (
    ("possible diabetes", "my sugar levels have been weird lately",
     "has had irregular blood sugar levels lately"),
    ("possible heart trouble", "my chest gets tight whenever I take the stairs",
     "gets chest tightness on stairs"),
    ("possible sleep apnea", "my partner says I stop breathing at night when I sleep",
     "stops breathing during sleep at night"),
    ("low iron", "I've been exhausted and pale for weeks, they want more bloodwork",
     "has been exhausted and pale, more bloodwork pending"),
    ("thyroid problems", "my neck has a lump and I'm cold all the time now",
     "has a lump in the neck and feels cold constantly"),
    ("possible migraines", "bright lights give me these splitting headaches that last all day",
     "gets day-long splitting headaches from bright lights"),
)

DOCTORS: tuple[str, ...] = (
    "Dr. Patel", "Dr. Nguyen", "Dr. Okafor", "Dr. Lindqvist", "Dr. Haddad", "Dr. Romero",
    "Dr. Cohen", "Dr. Tanaka", "Dr. Morales", "Dr. Schultz",
)

BANKS: tuple[str, ...] = (
    "Chase", "Wells Fargo", "Bank of America", "a local credit union", "Ally", "Capital One",
    "Charles Schwab", "Citibank", "PNC", "US Bank", "Monzo", "ING",
)

INSURERS: tuple[str, ...] = (
    "Blue Cross", "Aetna", "Cigna", "UnitedHealthcare", "Kaiser", "Humana", "Oscar",
    "Anthem", "Molina", "Ambetter",
)

# (legal matter value, plain statement, stored plain fact, oblique statement, stored oblique fact)
LEGAL: tuple[tuple[str, str, str, str, str], ...] = (
    ("custody hearing", "I have a child custody hearing coming up",
     "has a child custody hearing coming up",
     "my ex and I are going back in front of a judge over the kids",
     "going back before a judge with their ex over the kids"),
    ("divorce", "I'm in the middle of a divorce and working with a lawyer",
     "is going through a divorce with a lawyer",
     "we're splitting up and the paperwork is brutal",
     "is splitting up and buried in paperwork"),
    ("power of attorney for mother", "I just got power of attorney for my mom",
     "holds power of attorney for their mother",
     "I'm the one signing things for my mom now",
     "signs things on their mom's behalf now"),
    ("landlord dispute", "I'm taking my landlord to small claims court over the deposit",
     "is suing their landlord in small claims court over the deposit",
     "my old landlord kept the deposit so we'll see each other in front of a judge",
     "will face their old landlord before a judge about the deposit"),
    ("will drafted", "I finally had a lawyer draft my will",
     "had a lawyer draft their will",
     "I finally got my affairs in order, the document about who gets what is signed",
     "signed the document saying who gets what"),
    ("immigration case", "my green card interview is scheduled and my attorney is prepping me",
     "has a green card interview scheduled with an attorney",
     "my residency paperwork interview is coming up and I'm nervous",
     "has a residency paperwork interview coming up"),
)

# Preference chains: each user walks a prefix of one chain (a change supersedes the last).
DIET_CHAINS: tuple[tuple[str, ...], ...] = (
    ("vegetarian", "vegan"),
    ("pescatarian", "vegetarian"),
    ("keto", "low-carb"),
    ("gluten-free", "gluten-free and dairy-free"),
    ("omnivorous", "vegetarian"),
    ("vegan", "vegetarian"),
    ("vegetarian", "pescatarian"),
)

DRINK_CHAINS: tuple[tuple[str, ...], ...] = (
    ("oat milk lattes", "black coffee"),
    ("green tea", "matcha"),
    ("espresso", "decaf"),
    ("cold brew", "herbal tea"),
    ("chai", "oat milk lattes"),
)

EXERCISE_CHAINS: tuple[tuple[str, ...], ...] = (
    ("running", "cycling"),
    ("yoga", "pilates"),
    ("swimming", "rock climbing"),
    ("lifting weights", "running"),
    ("hiking", "tennis"),
)

LUNCHES: tuple[str, ...] = (
    "ramen", "a turkey sandwich", "leftover pizza", "a burrito bowl", "pho", "a Caesar salad",
    "sushi", "a falafel wrap", "mac and cheese", "a bagel", "chicken tikka", "tomato soup",
    "a poke bowl", "dumplings", "a grilled cheese",
)

WEATHER: tuple[str, ...] = (
    "rainy", "freezing", "sunny and warm", "foggy", "windy", "snowy", "humid", "stormy",
)

FILMS: tuple[str, ...] = (
    "Dune", "Oppenheimer", "Past Lives", "Spirited Away", "The Godfather", "Barbie",
    "Everything Everywhere All at Once", "Paddington 2", "Arrival", "Jaws", "Amelie",
    "Parasite", "Inside Out 2", "The Grand Budapest Hotel", "Alien",
)

BOOKS: tuple[str, ...] = (
    "Project Hail Mary", "Pachinko", "The Overstory", "Circe", "Educated", "Klara and the Sun",
    "The Three-Body Problem", "Middlemarch", "Tomorrow, and Tomorrow, and Tomorrow", "Dune",
)
