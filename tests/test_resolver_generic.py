"""The `rule` resolver on ordinary English it was not written against: changes and coexisting facts.

Every phrasing is hand-written for this file (generic English, not any generator's
templates). Each pair is replayed through the engine with the test embedder, with an
unrelated fact in between, so candidates come from a real nearest-neighbour search.

On main before this file, the resolver caught 21 of the 46 changes below (42 now);
every coexisting pair was kept before and is kept now.
"""

from __future__ import annotations

import datetime as dt

import pytest
from _rule_replay import replay_rule

from widemem_bench.engine.slots import read

T0 = dt.datetime(2025, 6, 1, 9)


def _replay(*facts: str) -> list[str]:
    return replay_rule(*facts, t0=T0)[0]


# Home, work, job, car, phone, diet, relationship, doctor, dose, gym, school, team, favourites, age.
CHANGES = [
    ('I live in Denver', 'I relocated to Austin last month'),
    ('lives in Portland', "no longer lives in Portland, she's in Seattle now"),
    ('lives in Boston', 'used to live in Boston but now lives in Providence'),
    ('I live in Glasgow', 'we packed up and moved down to Brighton'),
    ('Marco lives in Turin', 'Marco lived in Turin until March; he lives in Milan now'),
    ('lives in Phoenix', 'has been living in Tucson since March'),
    ('works at Google', 'quit Google and took a job at Stripe'),
    ('I work for Shell', 'I left Shell for BP'),
    ('works at Oracle', 'is now employed by SAP'),
    ('works at Walmart', 'started working at Target this week'),
    ('my husband works at Ford', 'my husband now works at GM'),
    ('works as a paralegal', 'is a lawyer now after passing the bar'),
    ('is a pharmacist', 'retrained and is a librarian these days'),
    ('works as a barista', 'got hired as a sous chef'),
    ('drives a Lada Niva', 'swapped the Niva for a Dacia Duster'),
    ('drives a Mazda 3', 'the Mazda is gone; she bought a Volvo XC40'),
    ('my car is a small hatchback', 'has upgraded to an electric van'),
    ('uses an iPhone 12', 'switched from the iPhone to a Pixel 8'),
    ('my phone is a Samsung Galaxy S21', 'my phone is now a Pixel 7'),
    ('has an iPhone 13', 'replaced the iPhone 13 with an iPhone 15'),
    ('is vegetarian', 'started eating meat again'),
    ('is vegan', 'switched to a pescatarian diet'),
    ('eats a keto diet', 'is off keto these days'),
    ('is single', 'is now in a relationship with Dana'),
    ('is engaged to Paul', 'married Paul in June'),
    ('my sister is married to Tom', 'my sister and Tom got divorced'),
    ('my doctor is Dr. Patel', 'switched to Dr. Nguyen as my GP'),
    ('sees Dr. Kim for her back', 'now sees Dr. Alvarez for her back'),
    ('takes 50 mg of sertraline daily', 'my sertraline dose went up to 100 mg daily'),
    ('takes 10mg of lisinopril', 'now takes 20mg of lisinopril'),
    ('my gym is Anytime Fitness', 'my gym is PureGym now'),
    ('my son attends Lincoln Elementary', 'my son transferred to Jefferson Elementary'),
    ('studies at Ohio State', 'dropped out of Ohio State and enrolled at Columbia'),
    ('plays for the Tigers', 'now plays for the Lions'),
    ('favourite food is sushi', 'my favorite food these days is ramen'),
    ('favourite color is blue', 'favourite colour changed to green'),
    ('commutes by car', 'commutes by bike since March'),
    ('banks with Chase', 'moved her account from Chase to Ally'),
    ('Hannah is a dentist', 'Hannah became an orthodontist'),
    ('my brother lives in Gdansk', 'my brother moved to Krakow'),
    ('is 34', 'is 35 now'),
    ('coffee order is a flat white', 'coffee order is an oat latte now'),
]
# Still missed, on purpose or for now: "joined X" is also said of clubs and gyms; "supports X"
# may hold for two teams; a several-valued verb ("goes to") is retired only when repeated;
# a capitalised value opening the fact reads as its subject.
LIMITS = [
    ('goes to Planet Fitness', 'cancelled the Planet Fitness membership and joined Equinox'),
    ('supports Arsenal', 'switched allegiance from Arsenal to Spurs'),
    ('favorite author is Stephen King', 'Stephen King is out, Ursula Le Guin is in as favourite author'),
    ('Priya works at Infosys', 'Priya joined Wipro in January'),
]
# Several values at once, other people, past trips, negations about other things, and
# phrasings near the new change readings (time off, a second device, a past possession).
COEXIST = [
    ('has a dog named Rex', 'got a cat named Luna'),
    ('has a son named Eli', 'had a baby girl named Ruth'),
    ('has a son named Eli', 'welcomed a daughter, June'),
    ('is allergic to peanuts', "found out she's allergic to shellfish"),
    ('is allergic to cats', 'has a latex allergy'),
    ('speaks French', 'picked up some Italian'),
    ('speaks Mandarin', 'now speaks Korean too'),
    ('plays guitar', 'started learning the piano'),
    ('enjoys hiking', 'took up knitting'),
    ('lives in Denver', 'visited Boston last week'),
    ('lives in Denver', 'went on a trip to Chicago'),
    ('lives in Denver', 'my friend lives in Austin'),
    ('lives in Denver', 'my sister moved to Austin'),
    ('works at Google', 'her brother works at Meta'),
    ('works at Google', 'my wife got a job at Amazon'),
    ('works as a nurse', 'my mom is a teacher'),
    ('drives a Toyota Corolla', 'her husband drives a Jeep'),
    ('is vegetarian', "doesn't like mushrooms"),
    ('is vegetarian', 'is not a fan of spicy food'),
    ('lives in Denver', 'has never been to Paris'),
    ('works at Google', "doesn't work weekends anymore"),
    ('takes metformin for diabetes', 'takes lisinopril for blood pressure'),
    ('has a dog named Rex', 'the dog Rex is now three'),
    ('has two cats', 'adopted another cat'),
    ('is learning Spanish', 'is also learning Portuguese'),
    ('collects vinyl records', 'started collecting comic books'),
    ('lives in Denver', 'grew up in Omaha'),
    ('favourite food is sushi', 'favourite drink is bourbon'),
    ('my doctor is Dr. Patel', 'my dentist is Dr. Moore'),
    ('drives a Toyota Corolla', 'bought a mountain bike'),
    ('works at Google', 'volunteers at a food bank'),
    ('has a sister named Ann', 'has a brother named Joe'),
    ('is allergic to penicillin', 'no longer drinks coffee'),
    ('lives in Denver', 'is flying to Boston tomorrow'),
    ('plays tennis', 'now plays padel as well'),
    ('works at Google', 'is off work this week with the flu'),
    ('my phone is a Pixel 7', 'bought an iPad for reading'),
    ('drives a Lada Niva', 'also rides a moped to the station'),
    ('takes 50 mg of sertraline daily', 'takes 500 mg of metformin daily'),
    ('is 34', 'son is 5'),
    ('is married to Paul', 'my sister got divorced'),
    ('is married to Paul', 'my brother is single'),
    ('lives in Denver', 'used to live in Boston'),
    ('lives in Denver', 'moved her account from Chase to Ally'),
    ('my sister is married to Tom', 'my brother and Kim got divorced'),
    ('speaks French', 'has spoken German since 2019'),
    ('favourite colour is blue', 'favourite food changed to ramen'),
    ('my gym is PureGym', 'joined a chess club'),
    ('is single', 'my best friend is in a relationship with Dana'),
    ("plays piano", "used to have a piano teacher"),
    ("has a dog named Rex", "used to have a dog as a kid"),
    ("drives a Honda Civic", "the car is out for repair this week"),
    ("works at Google", "is off work sick today"),
    ("works at Google", "got off the bus at Google's office"),
    ("my gym is PureGym", "gym is closed this week"),
    ("lives in Leeds", "moved up to Senior Engineer"),
    ("lives in Leeds", "moved over to Marketing"),
    ("is engaged to Paul", "got married"),
    ("drives a Honda Civic", "switched to a hybrid schedule"),
    ("drives a Honda Civic", "upgraded to a mini fridge"),
    ("uses an iPhone 12", "bought a Pixel for her son"),
    ("takes 50 mg of sertraline", "takes 10 mg of melatonin"),
    ("my dentist is Dr. Moore", "my doctor is Dr. Patel"),
    ("is 34", "is 34 weeks pregnant"),
    ("is 34", "my daughter is 4 now"),
    ("favourite color is blue", "favourite colour for the bedroom is green"),
    ("my sister is married to Tom", "my sister and Tom got a puppy"),
    ("plays tennis", "has played chess since 2010"),
    ("is vegetarian", "started eating fish again"),
    ("speaks French", "used to speak German"),
    ("lives in Denver", "used to visit Denver every summer"),
    ("is vegan", "tried a keto diet for a week in 2019"),
    ("is married to Paul", "is single-minded about running"),
    ("works at Google", "started working on a novel"),
]


@pytest.mark.parametrize(("before", "after"), CHANGES)
def test_a_change_in_plain_english_replaces_the_old_fact(before, after):
    stored = _replay(before, "likes long walks", after)
    assert before not in stored and after in stored, stored


@pytest.mark.parametrize(("before", "after"), LIMITS)
def test_known_limits_keep_both_facts(before, after):
    # A missed change leaves a stale fact next to the new one; it never loses the new one.
    stored = _replay(before, "likes long walks", after)
    assert after in stored


@pytest.mark.parametrize(("first", "second"), COEXIST)
def test_facts_that_both_hold_are_both_kept(first, second):
    stored = _replay(first, "likes long walks", second)
    assert first in stored and second in stored, stored


@pytest.mark.parametrize(("fact", "slots"), [
    ("is engaged to Paul", {"status": "engaged", "partner": "paul"}),
    ("married Paul in June", {"status": "married", "partner": "paul"}),
    ("is now in a relationship with Dana", {"status": "dating", "partner": "dana"}),
    ("is single", {"status": "single"}),
    ("got married", {}),  # no name: would drop the partner an engagement named
    ("is single-minded about running", {}),
    ("takes 50 mg of sertraline daily", {"dose:sertraline": "50mg"}),
    ("my sertraline dose went up to 100 mg", {"dose:sertraline": "100mg"}),
    ("uses an iPhone 12", {"phone": "iphone 12"}),
    ("switched to Dr. Nguyen as my GP", {"doctor": "nguyen"}),
    ("my doctor is Dr. Patel", {"doctor": "patel"}),
    ("my dentist is Dr. Moore", {"dentist": "moore"}),
    ("gym is closed this week", {}),  # a state of the gym, not another gym
    ("favourite colour changed to green", {"fav:color": "green"}),
    ("favorite food these days is ramen", {"fav:food": "ramen"}),
    ("upgraded to an electric van", {"vehicle": "electric van"}),
    ("upgraded to a mini fridge", {}),
    ("is 35 now", {"age": "35"}),
    ("is 34 weeks pregnant", {}),
    ("moved up to Senior Engineer", {}),  # a promotion, not a move
])
def test_readings(fact, slots):
    assert read(fact).slots == slots


@pytest.mark.parametrize(("fact", "old"), [
    ("used to live in Boston but now lives in Providence", ("liv", "boston")),
    ("used to have a dog as a kid", ()),  # a past possession says nothing of today's
    ("the Mazda is gone; she bought a Volvo", ("mazda",)),
    ("is off keto these days", ("keto",)),
    ("is off work sick today", ()),
    ("cancelled the Planet Fitness membership", ("planet", "fitness")),
    ("moved her account from Chase to Ally", ("chas",)),
    ("the car is out for repair", ()),
])
def test_change_markers_name_the_old_value(fact, old):
    assert read(fact).old == old
