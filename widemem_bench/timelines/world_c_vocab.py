"""World C's vocabulary and phrasings (a development world; see ``world_c``).

Written for world C alone, without reading world B or world A's word lists.

Template mini-language (rendered by ``world_c.render``):
  {S} the subject ("I", "", "User", "the user", "Marisol", "my brother", ...)
  {P} its possessive ("my", "", "User's", "Marisol's", "my brother's", ...)
  [a|b] verb form: a for "I", b for every other subject
  {v} / {a_v} the value (with its article), {old} / {a_old} the value it replaces,
  {kind} a value's kind (a pet's species, a child's "son" / "daughter").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Single:
    """A single-valued attribute: a new value retires the old one."""

    values: tuple[str, ...]
    plain: tuple[str, ...]    # statements without a change word (first values, plain updates)
    marked: tuple[str, ...]   # updates that say it changed
    oblique: tuple[str, ...]  # updates that only imply the new value
    restate: tuple[str, ...]  # the current value again, in other words
    ask: tuple[str, ...]
    kind: str                 # event_kind of its facts
    importance: int
    p_user: float             # share of users who mention it
    changes: tuple[float, ...]  # P(0, 1, 2, ... changes) in the year


@dataclass(frozen=True)
class Multi:
    """A multi-valued attribute: values coexist; only an explicit ending retires one."""

    values: tuple[tuple[str, str], ...]  # (value, kind)
    add: tuple[str, ...]
    restate: tuple[str, ...]
    end: tuple[str, ...]
    ask: tuple[str, ...]
    importance: int
    p_user: float


FEMALE = ("Marisol", "Ingrid", "Noor", "Tamsin", "Oksana", "Beatriz", "Wren", "Linnea",
          "Yusra", "Calla", "Dagny", "Maelle", "Ottilie", "Rosalind", "Zainab", "Hedda")
MALE = ("Teodor", "Anselm", "Kwame", "Ruairi", "Bastien", "Eero", "Lorcan", "Matthias",
        "Idris", "Casimir", "Jonah", "Pavel", "Soren", "Thiago", "Ewan", "Florin")
# Manager, friend and partner names come from one pool: a manager called Priya and a
# friend called Priya are different facts.
PEOPLE = ("Priya", "Okonkwo", "Harriet", "Dmitri", "Saoirse", "Benedikt", "Amara", "Lucian",
          "Fenna", "Rashid", "Giulia", "Tobiah", "Mireille", "Arvid", "Chidi", "Solveig")

RELATIVES = ("brother", "sister", "mum", "dad", "cousin", "flatmate", "best friend",
             "partner")

CITIES = ("Ghent", "Porto", "Tampere", "Graz", "Bergen", "Utrecht", "Bilbao", "Trieste",
          "Aarhus", "Leipzig", "Brno", "Galway", "Nantes", "Halifax", "Dunedin", "Hobart")
# Look-alikes across attributes: a neighbourhood and an employer share "Larkhill", a gym
# and an employer "Granite", a trip and a city list overlap, a book names a city.
SINGLE: dict[str, Single] = {
    "home_city": Single(
        CITIES,
        ("{S} [live|lives] in {v}", "{P} home is in {v}", "{S} [am|is] based in {v}",
         "{S} [rent|rents] a flat in {v}", "{P} home city is {v}"),
        ("{S} moved from {old} to {v}", "{S} [live|lives] in {v} now",
         "{S} relocated to {v}", "{S} [am|is] no longer in {old}, {S} [live|lives] in {v} these days"),
        ("{S} packed the last boxes for the new place in {v}",
         "{S} finally got the keys to a flat in {v}",
         "{S} registered with the town hall in {v} after the move",
         "{S} signed the lease on an apartment in {v} and handed back the keys in {old}"),
        ("{S} [am|is] still {a_v} resident", "{P} address is in {v}",
         "{S} [call|calls] {v} home"),
        ("which city does {name} live in?", "where is home these days?"),
        "move", 8, 1.0, (0.3, 0.45, 0.2, 0.05)),
    "neighbourhood": Single(
        ("Larkhill", "the Tannery district", "Mill Quarter", "Saltmarsh", "Copperfield Row",
         "Eastwick Rise", "Northgate", "Old Harbour"),
        ("{S} [live|lives] in {v}", "{P} flat is in {v}", "{S} [am|is] local to {v}"),
        ("{S} moved across town to {v}", "{S} [live|lives] in {v} now, not {old}",
         "{S} switched neighbourhoods to {v}"),
        ("{S} [walk|walks] to the bakery on the corner in {v} every morning since the move",
         "{S} joined the residents' group for {v}",
         "{P} new street in {v} has far less traffic than {old}"),
        ("{P} part of town is {v}", "{S} [am|is] in {v}, same as before"),
        ("which neighbourhood is {name} in?",),
        "move", 5, 0.55, (0.5, 0.4, 0.1)),
    "employer": Single(
        ("Fenwick Labs", "Dovetail", "Marrow & Finch", "Quillwork", "Brightwater Logistics",
         "Larkhill Analytics", "Granite Works", "Porto Foods", "Sable Insurance", "Kettle & Pike",
         "Tern Robotics", "Oakhurst Council"),
        ("{S} [work|works] at {v}", "{S} [am|is] employed by {v}", "{P} office is at {v}",
         "{P} employer is {v}", "{S} [am|is] on the payroll at {v}"),
        ("{S} switched jobs to {v}", "{S} [work|works] for {v} now",
         "{S} left {old} and joined {v}", "{S} no longer [work|works] at {old}; {S} [am|is] with {v}"),
        ("{S} started {P} first week at {v}", "{S} got {P} badge and laptop from {v} on Monday",
         "{S} handed in {P} notice at {old} and signed the contract with {v}",
         "{S} had onboarding at {v} all day"),
        ("{S} [am|is] still with {v}", "{P} job is at {v}", "{S} [draw|draws] a salary from {v}"),
        ("where does {name} work?", "who is {name}'s employer?"),
        "job", 7, 0.9, (0.45, 0.4, 0.15)),
    "job_title": Single(
        ("data engineer", "line cook", "paralegal", "product designer", "site foreman",
         "pharmacist", "UX researcher", "account manager", "sous-chef", "lab technician"),
        ("{S} [work|works] as {a_v}", "{P} title is {v}", "{S} [am|is] {a_v}"),
        ("{S} got promoted to {v}", "{S} [am|is] {a_v} now",
         "{S} changed roles from {old} to {v}"),
        ("{S} passed the probation for the {v} post",
         "{P} new business cards say {v}",
         "{S} [spend|spends] the days doing {v} work since the reshuffle"),
        ("{S} [do|does] {v} work", "{P} role is {v}"),
        ("what does {name} do for a living?",),
        "job", 6, 0.7, (0.55, 0.35, 0.1)),
    "manager": Single(
        PEOPLE,
        ("{P} manager is {v}", "{S} [report|reports] to {v}", "{P} boss is {v}"),
        ("{S} [report|reports] to {v} now", "{P} manager changed from {old} to {v}",
         "{v} took over as {P} manager"),
        ("{S} had the first one-to-one with {v} today",
         "{v} signed off {P} holiday request this time instead of {old}",
         "{S} [send|sends] the weekly status report to {v} since the reorg"),
        ("{v} is still {P} line manager", "{S} [answer|answers] to {v}"),
        ("who is {name}'s manager?",),
        "job", 5, 0.5, (0.5, 0.4, 0.1)),
    "relationship": Single(
        ("single", "dating", "engaged", "married"),
        ("{S} [am|is] {v}", "{P} relationship status is {v}"),
        ("{S} [am|is] {v} now", "{S} [am|is] no longer {old}; {S} [am|is] {v}",
         "{P} status changed to {v}"),
        (),  # the status words are the value: no oblique phrasing that hides them
        ("{S} [am|is] {v}, as before",),
        ("is {name} seeing anyone?",),
        "profile", 6, 0.5, (0.5, 0.4, 0.1)),
    "car": Single(
        ("Kestrel", "Rook", "Ardent", "Solano", "Vireo", "Tamarin", "Corvid", "Halden"),
        ("{S} [drive|drives] {a_v}", "{P} car is {a_v}", "{S} [own|owns] {a_v}"),
        ("{S} swapped the {old} for {a_v}", "{S} [drive|drives] {a_v} now",
         "{S} traded in the {old}; {S} [have|has] {a_v} these days"),
        ("{S} finally sold the {old} and picked up {a_v}",
         "{S} collected {a_v} from the dealer on Friday",
         "{S} took the new {v} on its first motorway run"),
        ("{S} still [get|gets] around in the {v}", "{P} car is still the {v}"),
        ("what car does {name} drive?",),
        "profile", 4, 0.7, (0.55, 0.35, 0.1)),
    "phone": Single(
        ("Lumen 7", "Arc S2", "Nodo Fold", "Tessel Mini", "Orbis 12", "Fable X"),
        ("{S} [use|uses] {a_v}", "{P} phone is {a_v}", "{S} [carry|carries] {a_v}"),
        ("{S} upgraded from the {old} to {a_v}", "{S} [am|is] on {a_v} now",
         "{S} switched phones to {a_v}"),
        ("{S} moved all the photos across to the new {v}",
         "{S} cracked the screen of the {v} on day two"),
        ("{P} phone is still the {v}",),
        ("which phone does {name} have?",),
        "profile", 3, 0.5, (0.5, 0.4, 0.1)),
    "course": Single(
        ("evening bookkeeping", "Mandarin for beginners", "a landscape architecture MSc",
         "sign language level 2", "a pottery diploma", "a data science bootcamp"),
        ("{S} [study|studies] {v}", "{S} [am|is] enrolled in {v}", "{P} course is {v}"),
        ("{S} [am|is] doing {v} now", "{S} switched from {old} to {v}",
         "{S} dropped {old} and signed up for {v}"),
        ("{S} bought the set texts for {v}",
         "{S} handed in the first assignment for {v}"),
        ("{S} [am|is] still on {v}",),
        ("what is {name} studying?",),
        "profile", 5, 0.45, (0.55, 0.4, 0.05)),
    "gym": Single(
        ("Granite Climbing", "Ironbark Fitness", "the Lido Club", "Pulse Studio",
         "Northgate Leisure Centre"),
        ("{S} [train|trains] at {v}", "{P} gym is {v}", "{S} [have|has] a membership at {v}"),
        ("{S} [go|goes] to {v} now", "{S} cancelled {old} and joined {v}",
         "{S} switched gyms to {v}"),
        ("{S} did the induction session at {v}",
         "{S} [leave|leaves] a locker padlock at {v} since last week"),
        ("{S} still [work|works] out at {v}",),
        ("which gym does {name} use?",),
        "preference", 4, 0.5, (0.5, 0.45, 0.05)),
    "doctor": Single(
        ("Dr Okafor", "Dr Lindqvist", "Dr Haddad", "Dr Moreau", "Dr Castellanos", "Dr Ibsen"),
        ("{P} GP is {v}", "{S} [see|sees] {v} for check-ups", "{P} family doctor is {v}"),
        ("{P} GP is {v} now", "{S} changed doctors from {old} to {v}",
         "{S} [am|is] registered with {v} these days"),
        ("{S} had the new-patient appointment with {v}",
         "{S} got {P} repeat prescription signed by {v} for the first time"),
        ("{P} doctor is still {v}",),
        ("who is {name}'s doctor?",),
        "profile", 7, 0.5, (0.55, 0.4, 0.05)),
    "dentist": Single(
        ("Dr Brandt", "Dr Yusuf", "Dr Achterberg", "Dr Pellegrini", "Dr Nakamura"),
        ("{P} dentist is {v}", "{S} [go|goes] to {v} for {P} teeth"),
        ("{P} dentist is {v} now", "{S} moved dental practices to {v}"),
        ("{S} had the first scale and polish with {v}",
         "{v} did the filling this time, not {old}"),
        ("{S} still [see|sees] {v} about {P} teeth",),
        ("who is {name}'s dentist?",),
        "profile", 4, 0.35, (0.6, 0.4)),
    "diet": Single(
        ("vegetarian", "vegan", "pescatarian", "keto", "gluten-free"),
        ("{S} [eat|eats] {v}", "{S} [am|is] {v}", "{P} diet is {v}"),
        ("{S} went {v}", "{S} [am|is] {v} now", "{S} [am|is] no longer {old}, {S} [eat|eats] {v}"),
        ("{S} cleared the cupboards and restocked for {a_v} diet",
         "{S} [order|orders] the {v} menu every time since January"),
        ("{S} [keep|keeps] to {a_v} diet", "{S} [stick|sticks] to {v} food"),
        ("what does {name} eat?",),
        "preference", 6, 0.6, (0.5, 0.4, 0.1)),
    "team": Single(
        ("Harbour City Gulls", "Redmoor Rovers", "Valemont FC", "Saltmarsh Sharks",
         "Porto Comets"),
        ("{S} [support|supports] {v}", "{P} team is {v}", "{S} [am|is] a fan of {v}"),
        ("{S} [support|supports] {v} now", "{S} switched allegiance from {old} to {v}"),
        ("{S} bought {a_v} season ticket",
         "{S} [wear|wears] the {v} scarf to every match since the spring"),
        ("{S} still [cheer|cheers] for {v}",),
        ("which team does {name} follow?",),
        "preference", 3, 0.45, (0.7, 0.3)),
    "trip": Single(
        ("Lisbon", "Hokkaido", "Patagonia", "the Dolomites", "Marrakech", "Iceland", "Graz",
         "Bergen"),
        ("{P} next trip is to {v}", "{S} [am|is] going to {v} on holiday",
         "{S} [have|has] a trip to {v} coming up"),
        ("{S} changed the holiday plans to {v}", "{P} next trip is {v} now, not {old}",
         "{S} [am|is] off to {v} instead"),
        ("{S} booked flights and a guesthouse for {v}",
         "{S} [am|is] reading up on hiking routes in {v} for the summer"),
        ("{S} still [plan|plans] to visit {v} next",),
        ("where is {name} going on holiday?",),
        "trivial", 3, 0.6, (0.4, 0.45, 0.15)),
    "reading": Single(
        ("The Salt Orchard", "Nine Roads to Porto", "A Lantern in Winter", "The Glass Tannery",
         "Ledger of Small Hours", "The Quiet Ferryman"),
        ("{S} [am|is] reading {v}", "{P} current book is {v}"),
        ("{S} [am|is] on {v} now", "{S} finished {old} and started {v}"),
        ("{S} [have|has] {v} on the nightstand with a bookmark halfway in",
         "{S} borrowed {v} from the library this week"),
        ("{S} [am|is] still working through {v}",),
        ("what is {name} reading?",),
        "trivial", 2, 0.5, (0.35, 0.45, 0.2)),
    "show": Single(
        ("Harbourlight", "The Quiet Ledger", "Copper Lake", "Night Ferry", "Second Summit"),
        ("{S} [am|is] watching {v}", "{P} current show is {v}"),
        ("{S} [am|is] hooked on {v} now", "{S} gave up on {old} and started {v}"),
        ("{S} stayed up for three episodes of {v}",),
        ("{S} [am|is] still bingeing {v}",),
        ("what show is {name} watching?",),
        "trivial", 2, 0.45, (0.4, 0.45, 0.15)),
    "salary_band": Single(
        ("band 3", "band 4", "band 5", "band 6", "band 7"),
        ("{S} [am|is] paid at {v}", "{P} salary band is {v}"),
        ("{S} moved up to {v}", "{S} [am|is] on {v} now"),
        ("{S} got the letter confirming {v} pay from next month",),
        ("{P} pay grade is {v}",),
        ("what salary band is {name} on?",),
        "job", 5, 0.35, (0.6, 0.4)),
    "commute": Single(
        ("by bike", "by tram", "by car", "on foot", "by train", "by bus"),
        ("{S} [commute|commutes] {v}", "{S} [get|gets] to work {v}"),
        ("{S} [commute|commutes] {v} now", "{S} stopped going {old} and [go|goes] {v}"),
        ("{S} [have|has] been getting in {v} every day since the timetable change",),
        ("{S} still [travel|travels] {v}",),
        ("how does {name} get to work?",),
        "job", 3, 0.5, (0.5, 0.4, 0.1)),
    "name": Single(
        FEMALE + MALE,
        ("{P} name is {v}", "{S} [go|goes] by {v}"),
        (), (), ("{S} [sign|signs] messages as {v}",),
        ("what is the user's name?",),
        "profile", 8, 0.6, (1.0,)),
    "school": Single(
        ("Ostrava Polytechnic", "St Brendan's College", "the University of Lakemoor",
         "Halden Technical Institute"),
        ("{S} studied at {v}", "{P} alma mater is {v}", "{S} graduated from {v}"),
        (), (), ("{S} [have|has] a degree from {v}",),
        ("where did {name} go to university?",),
        "profile", 4, 0.4, (1.0,)),
}

MULTI: dict[str, Multi] = {
    "pet": Multi(
        (("Otto", "beagle"), ("Luna", "cat"), ("Pip", "parrot"), ("Biscuit", "rabbit"),
         ("Margot", "tortoise"), ("Juniper", "greyhound"), ("Miso", "cat"), ("Ferris", "ferret")),
        ("{S} [have|has] a {kind} named {v}", "{S} adopted a {kind} called {v}",
         "{S} [share|shares] the flat with {v} the {kind}", "{S} [look|looks] after a {kind}, {v}"),
        ("{P} {kind} {v} is doing well", "{S} took {v} the {kind} to the vet for a check-up"),
        ("{v} the {kind} passed away", "{S} rehomed {v} the {kind}"),
        ("what pets does {name} have?",), 5, 0.6),
    "child": Multi(
        (("Noor", "daughter"), ("Elio", "son"), ("Freya", "daughter"), ("Kit", "son"),
         ("Ada", "daughter"), ("Rafferty", "son")),
        ("{S} [have|has] a {kind} called {v}", "{P} {kind} is {v}",
         "{S} [am|is] a parent to {v}, {P} {kind}"),
        ("{P} {kind} {v} started nursery", "{P} {kind} {v} lost a first tooth"),
        (), ("does {name} have children?",), 7, 0.4),
    "allergy": Multi(
        (("penicillin", ""), ("peanuts", ""), ("shellfish", ""), ("birch pollen", ""),
         ("latex", ""), ("sesame", "")),
        ("{S} [am|is] allergic to {v}", "{S} [react|reacts] badly to {v}",
         "{P} allergies include {v}"),
        ("{S} [have|has] to avoid {v}",),
        ("{S} [am|is] no longer allergic to {v} after the desensitisation course",),
        ("what is {name} allergic to?",), 8, 0.45),
    "language": Multi(
        (("Portuguese", ""), ("Finnish", ""), ("Welsh", ""), ("Tagalog", ""), ("Dutch", ""),
         ("Swahili", ""), ("Mandarin", "")),
        ("{S} [speak|speaks] {v}", "{S} [am|is] fluent in {v}", "{S} can get by in {v}"),
        ("{S} [chat|chats] in {v} with the neighbours",),
        (), ("which languages does {name} speak?",), 4, 0.55),
    "hobby": Multi(
        (("bouldering", ""), ("birdwatching", ""), ("sourdough baking", ""), ("woodturning", ""),
         ("orienteering", ""), ("film photography", ""), ("knitting", "")),
        ("{S} [do|does] {v} in {P} spare time", "{S} [am|is] into {v}", "{S} picked up {v}"),
        ("{S} spent the weekend on {v} again",),
        ("{S} gave up {v}",),
        ("what are {name}'s hobbies?",), 3, 0.7),
    "instrument": Multi(
        (("cello", ""), ("banjo", ""), ("piano", ""), ("trumpet", ""), ("ukulele", "")),
        ("{S} [play|plays] the {v}", "{S} [have|has] lessons on the {v}"),
        ("{S} practised the {v} for an hour",),
        ("{S} sold the {v} and stopped playing",),
        ("which instruments does {name} play?",), 3, 0.4),
    "medication": Multi(
        (("sertraline", ""), ("levothyroxine", ""), ("ibuprofen", ""), ("an inhaler", ""),
         ("vitamin D", ""), ("metoprolol", "")),
        ("{S} [take|takes] {v}", "{S} [am|is] on {v}", "{P} prescription includes {v}"),
        ("{S} [keep|keeps] {v} in the bathroom cabinet",),
        ("{S} stopped taking {v}", "{S} came off {v} on the doctor's advice"),
        ("what medication is {name} on?",), 8, 0.45),
    "friend": Multi(
        tuple((p, "") for p in PEOPLE[:10]),
        ("{S} [am|is] good friends with {v}", "{S} [count|counts] {v} as a close friend",
         "{S} met {v} at a wedding and they hit it off"),
        ("{S} had dinner with {v} again",),
        (), ("who are {name}'s friends?",), 3, 0.6),
    "cuisine": Multi(
        (("Georgian", ""), ("Sichuan", ""), ("Ethiopian", ""), ("Peruvian", ""),
         ("Lebanese", ""), ("Korean", "")),
        ("{S} [love|loves] {v} food", "{P} favourite cuisines include {v}",
         "{S} can't get enough {v} cooking"),
        ("{S} [cook|cooks] {v} at home a lot",),
        (), ("which cuisines does {name} like?",), 2, 0.55),
    "sport": Multi(
        (("five-a-side football", ""), ("padel", ""), ("water polo", ""), ("netball", ""),
         ("fencing", "")),
        ("{S} [play|plays] {v}", "{S} joined {a_v} club"),
        ("{S} had {v} practice on Thursday",),
        ("{S} quit {v} after the knee injury",),
        ("which sports does {name} play?",), 3, 0.5),
    "visited": Multi(
        (("Vietnam", ""), ("Chile", ""), ("Iceland", ""), ("Morocco", ""), ("Japan", ""),
         ("Canada", ""), ("Lisbon", "")),
        ("{S} [have|has] been to {v}", "{S} visited {v}", "{S} travelled around {v}"),
        ("{S} still [talk|talks] about the time in {v}",),
        (), ("which countries has {name} visited?",), 2, 0.6),
}

# Attributes relatives and friends get (a subset of the user's, so the same attribute
# shows up for another subject), with the share of relations that mention each.
RELATIVE_ATTRS: tuple[tuple[str, float], ...] = (
    ("home_city", 0.7), ("employer", 0.4), ("job_title", 0.35), ("car", 0.25),
    ("diet", 0.25), ("pet", 0.3),
)

CHAT_OPENERS = ("", "", "btw ", "quick update: ", "so ", "fyi ", "oh and ", "news: ")
CHAT_CLOSERS = ("", "", "", " :)", "!", ", just so you know", " haha", ".")
