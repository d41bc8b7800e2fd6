"""Vocabulary and phrasings of world N (``world_n``): chat messages and CRM-style notes.

Written for issues 25 and 26, blind to the methods world N measures and to world B; no
template of world A or world C is reused. Placeholders: ``{v}`` the value, ``{old}`` the
value it replaces, ``{R}`` the subject as a note or a third-person chat names it
(``Cust.``, ``sister Grace``, ``my sister grace``), ``{n}`` a named person's name,
``{rel}`` a relation in a question (``my sister``, ``Grace``).

Statement pools per attribute and register: ``state`` (a plain statement of a value, no
change word; used for a first value and for restatements), ``plain`` (an update with an
ordinary change verb and the new value only: "we moved to bristol"), ``marked`` (an update
that names the old value or says it is over: "no longer at X, now Y") and ``oblique``
(no change word, the old value unnamed: "first payslip from monzo came through").
Registers: ``chat`` (the user, first person), ``rel`` (the user typing about another
person, third person) and ``note`` (an agent's CRM note, third person, about anyone).
"""

from __future__ import annotations

from dataclasses import dataclass, field

FEMALE: tuple[str, ...] = (
    "Aisha", "Bethan", "Chloe", "Dani", "Eilidh", "Fatima", "Gemma", "Hannah", "Imogen", "Jas",
    "Kirsty", "Leanne", "Megan", "Niamh", "Orla", "Priya", "Rhiannon", "Shona", "Tamsin", "Yasmin",
    "Zara", "Becky", "Sinead", "Lucy", "Ngozi", "Agnieszka", "Roisin", "Keeley",
)
MALE: tuple[str, ...] = (
    "Aaron", "Callum", "Dev", "Ewan", "Finlay", "Gareth", "Hamza", "Ibrahim", "Jamie", "Kieran",
    "Liam", "Marcus", "Nathan", "Owen", "Ravi", "Sean", "Tomasz", "Wes", "Yusuf", "Connor",
    "Dylan", "Rory", "Chidi", "Mateusz", "Barry", "Lewis", "Darren", "Sami",
)
# Names of other people (partners, relatives, colleagues, managers), by the relations they fit.
OTHER_F: tuple[str, ...] = (
    "Grace", "Ellie", "Nia", "Lottie", "Kemi", "Isla", "Marta", "Suki", "Amara", "Hollie", "Bea",
    "Tash", "Rosa", "Danielle", "Meera", "Lorna", "Jen", "Anya",
)
OTHER_M: tuple[str, ...] = (
    "Tom", "Raj", "Ben", "Harvey", "Joe", "Pete", "Dom", "Stu", "Femi", "Krish", "Olly", "Cal",
    "Vik", "Gav", "Kwame", "Tariq", "Ciaran", "Mo",
)
OTHER_ANY: tuple[str, ...] = ("Sam", "Jo", "Alex", "Frankie", "Charlie", "Robin")
OTHER_NAMES: tuple[str, ...] = (*OTHER_F, *OTHER_M, *OTHER_ANY)
FEMALE_RELATIONS: tuple[str, ...] = ("sister", "mum", "wife", "daughter", "nan")
MALE_RELATIONS: tuple[str, ...] = ("brother", "dad", "husband", "son", "uncle")
KID_NAMES: tuple[str, ...] = (
    "Maisie", "Alfie", "Freya", "Archie", "Poppy", "Teddy", "Ivy", "Reggie", "Esme", "Noah",
    "Ada", "Louie", "Rosie", "Arlo", "Mabel", "Otis", "Nell", "Jude", "Edie", "Kai",
)
PET_NAMES: tuple[str, ...] = (
    "Biscuit", "Pickle", "Mochi", "Bramble", "Nacho", "Pepper", "Luna", "Waffles", "Dexter",
    "Tilly", "Bean", "Ziggy", "Crumpet", "Hobbes", "Juniper", "Rolo", "Smudge", "Kiwi",
)
PET_KINDS: tuple[str, ...] = (
    "cocker spaniel", "rescue greyhound", "tabby", "cockapoo", "house rabbit", "bearded dragon",
    "staffie", "ginger cat", "border collie", "hamster", "whippet", "budgie",
)

# Relations the user talks about; the subject of their facts is the relation.
RELATIONS: tuple[str, ...] = (
    "sister", "brother", "mum", "dad", "wife", "husband", "partner", "son", "daughter",
    "colleague", "flatmate", "best mate", "cousin", "uncle", "nan", "neighbour",
)
# How a chat message names a relation (abbreviations people type).
REL_CHAT: dict[str, tuple[str, ...]] = {
    "sister": ("my sister", "my sis", "my little sister", "my big sis"),
    "brother": ("my brother", "my bro", "my older brother", "my lil bro"),
    "mum": ("my mum", "mum", "my mam"), "dad": ("my dad", "dad", "my old man"),
    "wife": ("my wife", "the wife", "my missus"), "husband": ("my husband", "my hubby", "the hubby"),
    "partner": ("my partner", "my other half", "my OH"), "son": ("my son", "my eldest", "our lad"),
    "daughter": ("my daughter", "my youngest", "our girl"),
    "colleague": ("my colleague", "someone at work", "my work pal", "a coworker"),
    "flatmate": ("my flatmate", "my housemate"), "best mate": ("my best mate", "my bestie", "my bff"),
    "cousin": ("my cousin",), "uncle": ("my uncle",), "nan": ("my nan", "nana"),
    "neighbour": ("my neighbour", "next door"),
}

CITIES: tuple[str, ...] = (
    "Bristol", "Leeds", "Sheffield", "Nottingham", "Cardiff", "Glasgow", "Edinburgh", "Norwich",
    "Exeter", "Bath", "York", "Brighton", "Manchester", "Liverpool", "Newcastle", "Derby",
    "Leicester", "Oxford", "Cambridge", "Reading", "Swansea", "Aberdeen", "Dundee", "Belfast",
    "Plymouth", "Southampton", "Portsmouth", "Hull", "Lancaster", "Durham", "Cork", "Galway",
    "Dublin", "Stockport", "Harrogate", "Cheltenham", "Inverness", "Wolverhampton", "Coventry",
    "Milton Keynes", "Stoke", "Bournemouth", "Ipswich", "Chester", "Wrexham", "Falmouth",
    "Lisbon", "Rotterdam", "Kraków", "Toronto",
)
EMPLOYERS: tuple[str, ...] = (
    "Deloitte", "KPMG", "Tesco", "Aldi", "Ocado", "Monzo", "Arup", "Network Rail", "the council",
    "the BBC", "Rolls-Royce", "Greggs", "Sainsbury's", "John Lewis", "Capita", "Atkins", "BT",
    "Vodafone", "Dyson", "Arm", "Sky", "Boots", "Lloyds", "HSBC", "Nationwide", "Admiral", "Aviva",
    "the uni", "Amazon", "Jaguar Land Rover", "Octopus Energy", "Lidl", "Costa", "the Co-op",
    "Bramble Digital", "Northgate Logistics", "Hollis & Pryce", "Alder Hey", "Screwfix", "Ikea",
)
JOBS: tuple[str, ...] = (
    "paediatric nurse", "data analyst", "quantity surveyor", "HGV driver", "sous chef",
    "primary teacher", "physio", "dental nurse", "solicitor", "site manager", "UX designer",
    "pharmacist", "plumber", "electrician", "payroll officer", "barista", "vet nurse",
    "social worker", "software engineer", "accountant", "estate agent", "paramedic", "librarian",
    "midwife", "graphic designer", "recruiter", "mechanic", "teaching assistant", "copywriter",
    "store manager", "civil engineer", "hairdresser", "bus driver", "lab technician",
)
CARS: tuple[str, ...] = (
    "Ford Fiesta", "Vauxhall Corsa", "VW Golf", "Skoda Octavia", "Tesla Model 3", "Toyota Yaris",
    "Nissan Qashqai", "Renault Clio", "VW Polo", "Mini Cooper", "Nissan Leaf", "Hyundai i30",
    "Honda Civic", "Honda Jazz", "Ford Kuga", "Kia Sportage", "Renault Zoe", "Mazda 3",
    "Fiat 500", "Peugeot 208", "Dacia Sandero", "Volvo XC40", "BMW 1 Series", "Kia Niro",
)
VISAS: tuple[str, ...] = (
    "student visa", "graduate visa", "skilled worker visa", "spouse visa", "pre-settled status",
    "settled status", "indefinite leave to remain", "British citizenship", "youth mobility visa",
)
BANKS: tuple[str, ...] = (
    "a credit union", "Monzo", "Starling", "Nationwide", "Barclays", "Santander", "Halifax",
    "NatWest", "First Direct", "Chase", "the Co-op bank", "Revolut", "TSB", "Metro Bank",
)
GP_SURGERIES: tuple[str, ...] = (
    "Cotham surgery", "the Riverside practice", "Elm Tree medical centre", "Parkview health centre",
    "the Old School surgery", "Westgate GP", "St Anne's practice", "Brunswick medical centre",
    "the Mill surgery", "Hillside health centre",
)
TRIP_PLACES: tuple[str, ...] = (
    "Lisbon", "Malaga", "Kraków", "Dubrovnik", "Reykjavik", "Naples", "Tenerife", "Porto",
    "Berlin", "Amsterdam", "Split", "Seville", "Budapest", "Copenhagen", "Marrakech", "Vienna",
    "Palma", "Nice", "Prague", "Athens",
)
MEDICATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sertraline", ("50mg", "100mg", "150mg")), ("ramipril", ("2.5mg", "5mg", "10mg")),
    ("metformin", ("500mg", "1000mg", "1500mg")), ("levothyroxine", ("50mcg", "75mcg", "100mcg")),
    ("propranolol", ("10mg", "40mg", "80mg")), ("amlodipine", ("5mg", "10mg")),
    ("citalopram", ("10mg", "20mg", "40mg")), ("atorvastatin", ("10mg", "20mg", "40mg")),
    ("lansoprazole", ("15mg", "30mg")), ("fluoxetine", ("20mg", "40mg")),
)
ALLERGIES: tuple[str, ...] = (
    "peanuts", "penicillin", "shellfish", "cats", "pollen", "latex", "sesame", "ibuprofen",
    "kiwi", "dust mites", "eggs", "wasp stings",
)
LANGUAGES: tuple[str, ...] = (
    "Welsh", "Spanish", "Polish", "Urdu", "Portuguese", "German", "Italian", "Gaelic", "Japanese",
    "French", "Punjabi", "Yoruba", "Mandarin", "BSL",
)
AIRLINES: tuple[str, ...] = ("easyJet", "Ryanair", "BA", "Jet2", "TAP", "Wizz", "KLM", "Aer Lingus")
NETWORKS: tuple[str, ...] = ("EE", "Three", "O2", "giffgaff", "Vodafone", "Lebara", "Tesco Mobile")
INSURERS: tuple[str, ...] = ("Admiral", "Direct Line", "LV", "Aviva", "Churchill", "Hastings")
PHARMACIES: tuple[str, ...] = ("Boots on the high street", "the Lloyds pharmacy by the station",
                               "the Superdrug pharmacy", "the chemist next to the GP")
SCHOOLS: tuple[str, ...] = ("Oakfield primary", "St Mary's", "Greenbank primary", "Meadow Lane infants",
                            "Hazel Grove academy", "the Steiner school")
VETS: tuple[str, ...] = ("Vets4Pets", "the Medivet on Park Rd", "Riverside vets", "the PDSA")
STREETS: tuple[str, ...] = ("Cromwell Road", "Victoria Street", "Mill Lane", "Station Road",
                            "Albert Terrace", "Church Walk", "Clarence Place", "Orchard Close")


@dataclass(frozen=True)
class Single:
    """A single-valued attribute: a new value retires the old (one slot per subject)."""

    kind: str
    importance: int
    values: tuple[str, ...]
    changes: tuple[float, ...]  # P(1 value), P(2 values), ...
    p_user: float
    p_rel: float
    chat: dict[str, tuple[str, ...]]
    rel: dict[str, tuple[str, ...]]
    note: dict[str, tuple[str, ...]]
    ask: tuple[str, ...]
    ask_other: tuple[str, ...] = ()
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Multi:
    """A multi-valued attribute: values coexist, one slot per value (``pet:Biscuit``).
    ``change`` pools re-state a value's detail (a dose), superseding it inside its slot."""

    importance: int
    p_user: float
    p_rel: float
    chat: dict[str, tuple[str, ...]]
    rel: dict[str, tuple[str, ...]]
    note: dict[str, tuple[str, ...]]
    ask: tuple[str, ...]
    ask_other: tuple[str, ...] = ()
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Detail:
    """A slot of an entity the user stated (the flight's time for a stored trip). Stored for
    some users; asked of the others as a "slot missing" hard negative."""

    entity: str
    p: float
    values: tuple[str, ...]
    chat: tuple[str, ...]
    note: tuple[str, ...]
    ask: tuple[str, ...]
    kw: dict[str, str] = field(default_factory=dict)


SINGLE: dict[str, Single] = {
    "home_city": Single(
        "move", 7, CITIES, (0.45, 0.38, 0.17), 0.9, 0.55,
        chat={
            "state": ("we live in {v}", "been in {v} about 6 years now, love it", "im {v} based",
                      "the flat in {v} is tiny but its home", "born and bred {v} me",
                      "{v} is home for us", "live just outside {v} centre"),
            "plain": ("we moved down to {v} last weekend, boxes everywhere",
                      "finally moved to {v}!!", "relocated to {v} for good",
                      "we've moved up to {v}", "moving day done, {v} here we come",
                      "packed up and moved over to {v} on sat"),
            "marked": ("not in {old} anymore, we're in {v} now", "left {old} for {v} last month",
                       "swapped {old} for {v}, cheaper rent", "no longer living in {old}, {v} now",
                       "from {old} to {v} - still unpacking", "moved out of {old}, living in {v} now"),
            "oblique": ("signed the lease on a flat in {v} today", "council tax letter from {v} came",
                        "got my {v} library card lol", "registered w/ a GP in {v} this morning",
                        "the commute into {v} centre is only 10 min from ours",
                        "first night sleeping in the {v} house, so quiet"),
        },
        rel={
            "state": ("{R} lives in {v}", "{R}'s over in {v}", "{R} is {v} based", "{R} lives up in {v}"),
            "plain": ("{R} just moved to {v}", "{R} moved down to {v} w/ the kids",
                      "{R} relocated to {v} for work"),
            "marked": ("{R} left {old}, in {v} now", "{R} isn't in {old} anymore - {v} now",
                       "{R} swapped {old} for {v}"),
            "oblique": ("{R} got the keys to a place in {v}", "helped {R} carry boxes into the {v} flat"),
        },
        note={
            "state": ("{R} lives in {v}", "{R} - based {v}", "{R} resides {v}", "Addr: {v} ({R})",
                      "{R} {v}-based"),
            "plain": ("{R} moved to {v}", "{R} relocated to {v}", "{R} moved to {v} w/ partner"),
            "marked": ("{R} relocated {old} -> {v}", "{R} no longer in {old}; now {v}",
                       "Addr change: {R} {old} to {v}", "{R} moved from {old}, now {v}"),
            "oblique": ("{R} - new lease signed, {v}", "{R} registered w/ {v} GP",
                        "{R} requests post to {v} address"),
        },
        ask=("which city do i live in?", "where am i based these days?", "what town am i in rn",
             "remind me where we live?", "where's home for me at the moment?",
             "which part of the country am i in?"),
        ask_other=("where does {rel} live?", "which city is {rel} in?", "where's {rel} based now?",
                   "what town does {rel} live in?"),
        details=("postcode", "street"),
    ),
    "employer": Single(
        "job", 6, EMPLOYERS, (0.5, 0.35, 0.15), 0.8, 0.45,
        chat={
            "state": ("i work at {v}", "been at {v} 3 yrs", "im with {v}, it pays the bills",
                      "{v} is where i work", "on shift at {v} again tmrw ugh", "work for {v} tbh"),
            "plain": ("got the job at {v}!!! 🎉", "started at {v} on monday",
                      "accepted the offer from {v}", "joined {v} this week", "im going to {v} from march"),
            "marked": ("handed my notice in at {old}, starting at {v}", "no longer at {old}, now at {v}",
                       "left {old} for {v}", "quit {old} - {v} took me on",
                       "done with {old}, {v} from next week"),
            "oblique": ("first payslip from {v} came through 💸", "induction day at {v}, so many forms",
                        "got my {v} lanyard lol", "{v} IT finally sent my laptop",
                        "2nd week at {v} and still getting lost in the building"),
        },
        rel={
            "state": ("{R} works at {v}", "{R}'s at {v}", "{R} has been at {v} for ages"),
            "plain": ("{R} started at {v}", "{R} got a job at {v}", "{R} joined {v}"),
            "marked": ("{R} left {old} and went to {v}", "{R} isn't at {old} anymore, {v} now"),
            "oblique": ("{R} got the {v} staff discount already", "{R}'s {v} induction was today"),
        },
        note={
            "state": ("{R} employed at {v}", "{R} works {v}", "Employer: {v} ({R})", "{R} @ {v}"),
            "plain": ("{R} started at {v}", "{R} joined {v}"),
            "marked": ("{R} now @ {v} (prev. {old})", "{R} left {old}; now with {v}",
                       "Employer upd: {old} -> {v} ({R})"),
            "oblique": ("{R} on probation, {v}", "{R} payroll via {v} from this month"),
        },
        ask=("who do i work for?", "which company employs me?", "where do i work again",
             "who's my employer?", "what firm am i at?"),
        ask_other=("who does {rel} work for?", "where does {rel} work?", "which company is {rel} at?"),
        details=("salary", "start_time"),
    ),
    "job": Single(
        "job", 6, JOBS, (0.6, 0.3, 0.1), 0.8, 0.6,
        chat={
            "state": ("im a {v}", "i work as a {v}", "{v} by trade", "been a {v} since uni",
                      "day job is {v} stuff", "as a {v} i see this all the time"),
            "plain": ("qualified as a {v} today!!", "retrained as a {v}", "became a {v} this year",
                      "got promoted to {v} 🙌"),
            "marked": ("not a {old} anymore, im a {v} now", "went from {old} to {v}",
                       "gave up being a {old}, {v} now", "no longer a {old} - {v} these days"),
            "oblique": ("my {v} badge came today", "first week doing {v} work, feet hurt",
                        "passed the {v} course, start on the rota next week"),
        },
        rel={
            "state": ("{R} is a {v}", "{R} works as a {v}", "{R}'s a {v}"),
            "plain": ("{R} qualified as a {v}", "{R} retrained as a {v}"),
            "marked": ("{R} isn't a {old} anymore, {v} now", "{R} went from {old} to {v}"),
            "oblique": ("{R} did a first {v} shift today", "{R} got the {v} uniform"),
        },
        note={
            "state": ("{R} - {v}", "{R} occ. {v}", "Occupation: {v} ({R})", "{R}, {v} by profession"),
            "plain": ("{R} qualified {v}", "{R} retrained {v}"),
            "marked": ("{R} role change {old} -> {v}", "{R} no longer {old}; now {v}"),
            "oblique": ("{R} in {v} training", "{R} registered as {v}"),
        },
        ask=("what do i do for a living?", "what's my job?", "what's my line of work",
             "what do i do for work again?", "what's my profession?"),
        ask_other=("what does {rel} do for work?", "what's {rel}'s job?", "what does {rel} do for a living?"),
    ),
    "partner": Single(
        "relation", 6, OTHER_NAMES, (0.7, 0.25, 0.05), 0.5, 0.0,
        chat={
            "state": ("me and {v} are doing date night", "{v} and i have been together 4 yrs",
                      "my gf {v} says hi lol", "out for dinner w/ {v}, my other half",
                      "{v} (my partner) is cooking tonight"),
            "plain": ("started seeing someone, {v} 😊", "{v} asked me out and i said yes!!",
                      "officially going out w/ {v}"),
            "marked": ("me and {old} split up... seeing {v} now", "broke up w/ {old}, with {v} now",
                       "{old} is my ex now, im with {v}"),
            "oblique": ("{v} met my parents today, terrifying", "{v} left a toothbrush at mine 😂",
                        "3 month anniversary w/ {v}"),
        },
        rel={}, note={
            "state": ("{R} lives w/ partner {v}", "Partner: {v}", "{R} + partner {v}"),
            "plain": ("{R} in new relationship w/ {v}",),
            "marked": ("{R} sep. from {old}; partner now {v}", "Partner upd: {old} -> {v}"),
            "oblique": ("{R} mentions {v} at most calls now", "{R} adding {v} as 2nd contact"),
        },
        ask=("who am i going out with?", "what's my partner's name?", "who's my other half?",
             "who am i seeing at the moment?"),
        details=("partner_birthday",),
    ),
    "car": Single(
        "profile", 4, CARS, (0.55, 0.35, 0.1), 0.55, 0.35,
        chat={
            "state": ("i drive a {v}", "my {v} needs a wash lol", "the {v} did 50mpg on the motorway",
                      "got my {v} parked outside", "{v} driver here"),
            "plain": ("picked up a {v} today 🚗", "bought a {v}!!", "treated myself to a {v}"),
            "marked": ("sold the {old}, got a {v}", "traded the {old} in for a {v}",
                       "no more {old}, drive a {v} now"),
            "oblique": ("still figuring out the buttons in the {v}", "first tank of fuel in the {v}",
                        "insurance on the {v} is a joke"),
        },
        rel={
            "state": ("{R} drives a {v}", "{R}'s got a {v}"),
            "plain": ("{R} bought a {v}",),
            "marked": ("{R} sold the {old} and got a {v}",),
            "oblique": ("{R} drove me home in the {v}",),
        },
        note={
            "state": ("{R} drives {v}", "Vehicle: {v} ({R})"),
            "plain": ("{R} purchased {v}",),
            "marked": ("{R} vehicle {old} -> {v}", "{R} replaced {old} w/ {v}"),
            "oblique": ("{R} - {v} on policy from today",),
        },
        ask=("what car have i got?", "what do i drive?", "what's my motor?", "which car is mine?"),
        ask_other=("what car does {rel} drive?", "what's {rel} driving?"),
        details=("registration", "insurer"),
    ),
    "phone": Single(
        "profile", 5, tuple(f"07700 900{d:03d}" for d in range(10, 990, 23)),
        (0.6, 0.3, 0.1), 0.6, 0.3,
        chat={
            "state": ("my number's {v}", "text me on {v}", "u can reach me on {v}", "mob: {v}"),
            "plain": ("got a new sim, it's {v}", "ported to {v}"),
            "marked": ("dont use {old} anymore, number is {v}", "changed from {old} to {v}",
                       "{old} is dead, use {v}"),
            "oblique": ("if u need me ring {v} not the old one", "save {v} under my name"),
        },
        rel={
            "state": ("{R}'s number is {v}", "{R} is on {v}"),
            "plain": ("{R} got a new sim: {v}",),
            "marked": ("{R} changed from {old} to {v}",),
            "oblique": ("{R} said to ring {v} from now",),
        },
        note={
            "state": ("Tel: {v} ({R})", "{R} mob {v}", "Contact no. {v}"),
            "plain": ("{R} new mob {v}",),
            "marked": ("Tel upd: {old} -> {v}", "{R} no longer on {old}; now {v}"),
            "oblique": ("{R} asks we use {v} going fwd",),
        },
        ask=("what's my mobile number?", "which number do you have for me?", "how do people ring me?",
             "what's my phone no?"),
        ask_other=("what's {rel}'s number?", "how do i ring {rel}?"),
        details=("network",),
    ),
    "manager": Single(
        "job", 4, OTHER_NAMES, (0.55, 0.35, 0.1), 0.45, 0.0,
        chat={
            "state": ("my boss {v} is actually sound", "{v} (my manager) signed off my leave",
                      "1:1 with {v} tmrw, wish me luck", "i report to {v}"),
            "plain": ("got a new line manager, {v}", "{v} is taking over our team"),
            "marked": ("{old} left, so i report to {v} now", "no longer under {old}, {v} manages me now"),
            "oblique": ("{v} approved my holiday in like 5 min, unlike some", "first appraisal w/ {v}"),
        },
        rel={}, note={
            "state": ("{R} reports to {v}", "Line mgr: {v}"),
            "plain": ("{R} new line mgr {v}",),
            "marked": ("{R} mgr change {old} -> {v}",),
            "oblique": ("{R} escalation via {v}",),
        },
        ask=("who's my manager?", "who do i report to?", "who signs off my leave?", "who's my boss at work?"),
    ),
    "visa": Single(
        "profile", 7, VISAS, (0.55, 0.35, 0.1), 0.25, 0.15,
        chat={
            "state": ("im here on a {v}", "got my {v} sorted", "still on the {v}"),
            "plain": ("my {v} got approved!!! 🇬🇧", "granted {v} today"),
            "marked": ("switched from the {old} to a {v}", "not on the {old} anymore, {v} now"),
            "oblique": ("the {v} brp card arrived", "home office letter about the {v} came"),
        },
        rel={
            "state": ("{R} is on a {v}",),
            "plain": ("{R} got {v}",),
            "marked": ("{R} moved from the {old} to {v}",),
            "oblique": ("{R}'s {v} paperwork arrived",),
        },
        note={
            "state": ("{R} immigration status: {v}", "{R} holds {v}"),
            "plain": ("{R} granted {v}",),
            "marked": ("{R} status {old} -> {v}",),
            "oblique": ("{R} uploaded {v} docs",),
        },
        ask=("what's my immigration status?", "what visa am i on?", "what right to stay do i have?"),
        ask_other=("what visa is {rel} on?",),
        details=("visa_expiry",),
    ),
    "bank": Single(
        "profile", 4, BANKS, (0.75, 0.25), 0.5, 0.0,
        chat={
            "state": ("i bank with {v}", "my account's with {v}", "{v} app is down again 🙄",
                      "got my wages paid into {v}"),
            "plain": ("opened an account with {v}", "switched my current account to {v}"),
            "marked": ("closed my {old} account, {v} now", "left {old} for {v}"),
            "oblique": ("my {v} card arrived in the post", "set up the {v} app today"),
        },
        rel={}, note={
            "state": ("{R} banks w/ {v}", "Bank: {v}"),
            "plain": ("{R} opened acct {v}",),
            "marked": ("{R} bank {old} -> {v}",),
            "oblique": ("{R} DD mandate via {v}",),
        },
        ask=("who do i bank with?", "which bank am i with?", "where's my current account?"),
        details=("account_number", "sort_code"),
    ),
    "trip": Single(
        "profile", 3, TRIP_PLACES, (0.7, 0.3), 0.5, 0.0,
        chat={
            "state": ("booked a flight to {v} ✈️", "off to {v} in june!!", "got the {v} trip booked",
                      "counting down to {v} lol"),
            "plain": ("rebooked the holiday, going to {v}",),
            "marked": ("{old} trip's cancelled, going to {v} instead", "swapped {old} for {v}"),
            "oblique": ("found a cheap airbnb in {v} 🙌", "need a plug adapter for {v}"),
        },
        rel={}, note={
            "state": ("{R} travelling to {v}", "{R} - trip {v} booked"),
            "plain": ("{R} rebooked trip, {v}",),
            "marked": ("{R} trip {old} cancelled; {v} instead",),
            "oblique": ("{R} travel insurance for {v}",),
        },
        ask=("where am i flying to?", "where's my holiday this year?", "which place is my trip to?"),
        details=("flight_time", "airline", "return_date"),
    ),
    "gp": Single(
        "profile", 5, GP_SURGERIES, (0.75, 0.25), 0.4, 0.0,
        chat={
            "state": ("im registered at {v}", "my gp is at {v}", "{v} never pick up the phone 🙄"),
            "plain": ("signed up with {v}",),
            "marked": ("left {old}, registered at {v} now",),
            "oblique": ("the receptionist at {v} was lovely for once",),
        },
        rel={}, note={
            "state": ("{R} GP: {v}", "{R} registered {v}"),
            "plain": ("{R} registered {v}",),
            "marked": ("{R} GP change {old} -> {v}",),
            "oblique": ("{R} referral letter from {v}",),
        },
        ask=("which gp surgery am i registered with?", "where's my doctor's surgery?", "who's my gp practice?"),
        details=("appointment_time", "nhs_number"),
    ),
}

MULTI: dict[str, Multi] = {
    "pet": Multi(
        3, 0.45, 0.35,
        chat={
            "add": ("we got a {kind}, called her {v} 🐶", "meet {v}, our {kind}!!", "adopted a {kind} called {v}",
                    "{v} the {kind} chewed my charger again", "my {kind} {v} is snoring next to me"),
            "restate": ("{v} says hi lol", "took {v} to the park, soaked"),
            "end": ("had to say goodbye to {v} today 💔",),
        },
        rel={
            "add": ("{R} got a {kind} called {v}", "{R}'s {kind} {v} is so cute"),
            "restate": ("{R}'s {v} jumped on me again",),
            "end": ("{R} lost {v} this week",),
        },
        note={
            "add": ("{R} - pet {kind} ({v})", "{R} has {kind} named {v}"),
            "restate": ("{R} pet {v} mentioned",),
            "end": ("{R} pet {v} deceased",),
        },
        ask=("what pets have i got?", "do i have any animals?", "what are my pets called?"),
        ask_other=("does {rel} have any pets?", "what's {rel}'s dog called?"),
        details=("vet", "pet_age"),
    ),
    "child": Multi(
        6, 0.35, 0.0,
        chat={
            "add": ("{v} started reception this week, cried (me not her)", "our little {v} is teething 😩",
                    "{v} turned 4 on sunday", "mine are a handful, esp {v}", "picking {v} up from nursery"),
            "restate": ("{v} drew me a picture lol",),
            "end": (),
        },
        rel={}, note={
            "add": ("{R} has child {v}", "Dependant: {v}", "{R} - kid {v}"),
            "restate": ("{R} mentioned child {v}",),
            "end": (),
        },
        ask=("what are my kids called?", "how many children do i have?", "what are my children's names?"),
        details=("school", "child_age"),
    ),
    "allergy": Multi(
        8, 0.4, 0.25,
        chat={
            "add": ("i cant have {v}, swell right up", "allergic to {v} btw", "{v} makes me come out in hives",
                    "reminder to self: no {v}. ever.", "reacted to {v} again 🤧"),
            "restate": ("had to check the label for {v} again",),
            "end": (),
        },
        rel={
            "add": ("{R} is allergic to {v}", "{R} can't go near {v}"),
            "restate": (), "end": (),
        },
        note={
            "add": ("{R} allergy: {v}", "{R} - allergic {v}", "ALLERGY {v} ({R})"),
            "restate": ("{R} allergy {v} reconfirmed",),
            "end": (),
        },
        ask=("what am i allergic to?", "any allergies i should flag?", "what can't i eat or take?"),
        ask_other=("is {rel} allergic to anything?", "what allergies does {rel} have?"),
    ),
    "medication": Multi(
        8, 0.35, 0.2,
        chat={
            "add": ("gp put me on {v}", "started {v} this week, bit dizzy", "taking {v} every morning now",
                    "on {v} for the foreseeable"),
            "restate": ("forgot my {v} this morning oops",),
            "plain": ("doc upped my {med} to {dose}", "{med} going up to {dose} from monday"),
            "marked": ("not on {old} anymore, {v} now", "they changed my {med} from {odose} to {dose}"),
            "oblique": ("the new {med} tablets are {dose}, tiny little things",),
            "end": ("came off the {med} finally",),
        },
        rel={
            "add": ("{R} is on {v}", "{R} takes {v} daily"),
            "restate": (), "end": (),
        },
        note={
            "add": ("{R} meds: {v}", "{R} Rx {v}", "{R} - {v} daily"),
            "restate": ("{R} meds reviewed, {v} unchanged",),
            "plain": ("{R} {med} increased to {dose}",),
            "marked": ("{R} {med} {odose} -> {dose}",),
            "oblique": ("{R} repeat Rx {med} {dose} issued",),
            "end": ("{R} {med} discontinued",),
        },
        ask=("what meds am i on?", "which tablets do i take?", "what's my current medication?",
             "what dose am i on?"),
        ask_other=("what medication is {rel} on?",),
        details=("pharmacy",),
    ),
    "language": Multi(
        3, 0.35, 0.25,
        chat={
            "add": ("i speak {v} fluently", "grew up speaking {v} at home", "doing {v} on duolingo, 200 day streak",
                    "can get by in {v} lol"),
            "restate": ("got to use my {v} at work today",),
            "end": (),
        },
        rel={
            "add": ("{R} speaks {v}", "{R} is fluent in {v}"),
            "restate": (), "end": (),
        },
        note={
            "add": ("{R} speaks {v}", "{R} lang: {v}", "{R} - {v} speaker"),
            "restate": (), "end": (),
        },
        ask=("what languages do i speak?", "which languages can i get by in?"),
        ask_other=("what languages does {rel} speak?",),
    ),
}

DETAILS: dict[str, Detail] = {
    "postcode": Detail("home_city", 0.2, ("BS3 1QE", "LS6 2AB", "S11 8YU", "NG7 1FT", "CF24 4HQ", "G12 8DR"),
                       ("postcode is {v} if ur sending anything",), ("Postcode {v}",),
                       ("what's my postcode?", "what's the postcode of our place in {e}?", "which {e} postcode am i at?")),
    "street": Detail("home_city", 0.2, STREETS, ("we're on {v}, the one with the red door",), ("Addr: {v}",),
                     ("what street do i live on in {e}?", "what's my home address?", "what road is our {e} flat on?")),
    "salary": Detail("employer", 0.2, ("£28k", "£34,500", "£41k", "£52k", "£23.5k"),
                     ("offer came in at {v} 🤑",), ("{R} salary {v}",),
                     ("how much does {e} pay me?", "what's my salary at {e}?", "what do i get paid?")),
    "start_time": Detail("employer", 0.2, ("7am", "8:30", "6am", "9am"), ("have to be in for {v} every day 😴",),
                         ("{R} shift start {v}",), ("what time do i start at {e}?", "when do i have to be in at {e}?", "what time do i start work?")),
    "partner_birthday": Detail("partner", 0.25, ("3rd March", "12 July", "29th Oct", "Boxing Day"),
                               ("{n}'s birthday is {v}, DONT let me forget",), ("Partner DOB {v}",),
                               ("when's {e}'s birthday?", "what date is {e}'s birthday?", "when's my partner's birthday?")),
    "registration": Detail("car", 0.2, ("WK19 XHT", "BD68 PLO", "YX21 MNR", "LF70 ZZK"),
                           ("reg is {v} if u need it for the permit",), ("VRM {v}",),
                           ("what's the number plate on my {e}?", "what's the reg on the {e}?", "what's my number plate?")),
    "insurer": Detail("car", 0.2, INSURERS, ("renewed the car insurance w/ {v}",), ("Motor ins. {v}",),
                      ("who's my {e} insured with?", "which insurer covers the {e}?")),
    "network": Detail("phone", 0.25, NETWORKS, ("im on {v}, signal is rubbish",), ("Network {v}",),
                      ("which network is my mobile on?", "who's my phone contract with?", "which network am i on?")),
    "visa_expiry": Detail("visa", 0.25, ("Aug 2026", "31 Jan 2027", "next March", "May 2028"),
                          ("visa runs out {v} 😬",), ("{R} leave expires {v}",),
                          ("when does my {e} run out?", "what's the expiry date on my {e}?")),
    "account_number": Detail("bank", 0.15, ("41552907", "20938810", "73310042"),
                             ("acct no. is {v} for the rent transfer",), ("Acct {v}",),
                             ("what's my account number?", "what's my {e} account no?", "what's the account number for {e}?")),
    "sort_code": Detail("bank", 0.15, ("20-45-77", "30-91-12", "08-92-99"),
                        ("sort code {v} if anyone asks",), ("SC {v}",),
                        ("what's my sort code?", "what's the sort code for my {e} account?")),
    "flight_time": Detail("trip", 0.25, ("6:40am", "13:15", "7pm", "silly o'clock (5:55)"),
                          ("flight's at {v}, ugh",), ("{R} dep. {v}",),
                          ("what time does my flight leave?", "what time is my flight to {e}?", "when do i fly out to {e}?")),
    "airline": Detail("trip", 0.25, AIRLINES, ("flying {v} so no legroom lol",), ("{R} carrier {v}",),
                      ("which airline am i flying to {e} with?", "who am i flying with to {e}?")),
    "return_date": Detail("trip", 0.2, ("the 21st", "sunday 14th", "2 weeks later", "bank hol monday"),
                          ("back home {v}",), ("{R} return {v}",),
                          ("when do i fly back from {e}?", "what date am i back from {e}?")),
    "appointment_time": Detail("gp", 0.25, ("tues 9:10", "thurs 3:40pm", "fri morning 8:20"),
                               ("got a gp appt {v} finally",), ("{R} appt {v}",),
                               ("when's my appointment at {e}?", "what time am i seeing the gp at {e}?", "when's my doctor's appointment?")),
    "nhs_number": Detail("gp", 0.15, ("485 777 3456", "943 476 5919", "401 023 2137"),
                         ("nhs number {v}, saving it here",), ("NHS no. {v}",),
                         ("what's my nhs number?", "what nhs number does {e} have for me?")),
    "vet": Detail("pet", 0.2, VETS, ("{n} is registered at {v}",), ("{n} vet: {v}",),
                  ("which vet is {n} with?", "who's {n}'s vet?", "where do we take {n} to the vet?")),
    "pet_age": Detail("pet", 0.2, ("2", "7", "11", "6 months"), ("{n} is {v} now, where does the time go",),
                      ("{n} age {v}",), ("how old is {n}?", "what age is {n} now?")),
    "school": Detail("child", 0.25, SCHOOLS, ("{n} got into {v} 🎒",), ("{n} attends {v}",),
                     ("which school does {n} go to?", "where's {n} at school?")),
    "child_age": Detail("child", 0.2, ("3", "5", "8", "13"), ("cant believe {n} is {v}",), ("{n} age {v}",),
                        ("how old is {n}?", "what age is {n} now?")),
    "pharmacy": Detail("medication", 0.2, PHARMACIES, ("pick up my {n} from {v}",), ("Rx {n} via {v}",),
                       ("where do i collect my {n}?", "which pharmacy has my {n}?", "where do i pick up my {n} prescription?")),
}

# Questions about things no one in the world ever states (unrelated to every stored fact).
UNRELATED: tuple[str, ...] = (
    "what's my blood type?", "what's my favourite film?", "what's my shoe size?",
    "which football team do i support?", "when's my wedding anniversary?", "what's my star sign?",
    "what was my first car?", "what's my wifi password?", "how tall am i?",
    "what's my mum's maiden name?", "what instrument did i learn as a kid?", "what's my gym called?",
    "what's my national insurance number?", "which uni did i go to?", "what's my dentist called?",
    "do i prefer tea or coffee?", "what's my go-to takeaway order?", "what's my dream job?",
)

# Register noise. Small talk around a chat fact; abbreviations; emoji; note headers.
CHAT_BEFORE: tuple[str, ...] = (
    "", "", "", "", "omg ", "ok so ", "lol ", "update: ", "sorry random but ", "btw ", "hiya! ",
    "morning ☕ ", "right, ", "ngl ", "so yeah ", "quick one - ", "anyway ", "haha ", "ugh ",
    "not sure if i said but ", "fyi ",
)
CHAT_AFTER: tuple[str, ...] = (
    "", "", "", "", " lol", " 😅", " 🙃", " tbh", " x", " haha", "!!", " anyway how r u",
    ", long week", ", need a holiday", ", weather's grim", " 😂", ", cant complain",
    " - anyway whats new w/ u", ", will tell u more later", " 🙏", ". kettle's on",
)
NOTE_BEFORE: tuple[str, ...] = (
    "", "", "", "Call notes: ", "[chat] ", "Upd - ", "NB: ", "Per call: ", "FYI ", "Inbound: ",
    "Follow-up: ", "KYC - ",
)
NOTE_AFTER: tuple[str, ...] = (
    "", "", "", ".", " - no action", " (verified)", "; call back req.", " - pls update CRM",
    ". Cust. happy", " - see prev. notes", " (conf. by phone)",
)
# How a note names the user: the first is filled with the user's name.
NOTE_USER: tuple[str, ...] = ("{name}", "Cust.", "Client", "Caller", "User", "C.", "Cust", "{name} (cust.)")
# How a note names another person (relation, name).
NOTE_OTHER: tuple[str, ...] = ("{rel} {n}", "Cust.'s {rel} {n}", "{n} ({rel})", "{rel} ({n})", "{rel}")
REL_CHAT_FORMS: tuple[str, ...] = ("{r} {n}", "{r}", "{n} ({r_bare})", "{r}")
# Question forms of another person: the relation, the name, or both.
ASK_OTHER_FORMS: tuple[str, ...] = ("my {rel}", "{n}", "my {rel} {n}")
# Question openers: people ask as they type too.
ASK_BEFORE: tuple[str, ...] = (
    "", "", "", "", "", "quick q - ", "hey, ", "can u remind me ", "sorry, ", "wait ", "um ",
    "random but ", "do you remember ",
)
