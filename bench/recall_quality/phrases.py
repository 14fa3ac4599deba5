"""What the corpus's people say: names, slot values, statement and question templates.

Every template is written by hand for this benchmark. A statement template says a fact the
way people chat (lower case, everyday words); its question templates ask for the same fact in
other words (a paraphrase, never the statement's wording), and the gold answer is the slot
value, so questions and answers come from the structured record, never from parsing text.

Slots: ``{v}`` the value, ``{a}`` its article ("a"/"an"), ``{S}`` the subject's name in a
question, ``{n}`` a vocative (the listener's name or nickname), ``{when}`` a time expression
(:mod:`bench.recall_quality.when`), ``{rel}`` / ``{P}`` a third party's relation and name,
``{animal}``, ``{wd}`` a weekday, ``{old}`` the value being corrected, ``{city}``, ``{band}``.
This module must never import the engine's text functions: it is what they are graded on.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- people ---------------------------------------------------------------------------------

SPEAKERS: tuple[tuple[str, str], ...] = (
    ("Melanie", "Mel"),
    ("Caroline", "Caro"),
    ("Jonathan", "Jon"),
    ("Deborah", "Deb"),
    ("Samuel", "Sam"),
    ("Joanna", "Jo"),
    ("Nathaniel", "Nate"),
    ("Audrey", "Audrey"),
    ("Gina", "Gina"),
    ("Evan", "Evan"),
    ("Priyanka", "Priya"),
    ("Tobias", "Toby"),
    ("Rebecca", "Becca"),
    ("Andrew", "Andy"),
    ("Natalie", "Nat"),
    ("Oliver", "Ollie"),
    ("Victoria", "Vicky"),
    ("Daniel", "Dan"),
    ("Fatima", "Fati"),
    ("Marcus", "Marc"),
)
THIRD_PARTIES = tuple(
    [
        "Jack",
        "Ana",
        "Tom",
        "Lucy",
        "Omar",
        "Rosa",
        "Ben",
        "Nina",
        "Leo",
        "Hana",
        "Ravi",
        "Chloe",
        "Marco",
        "Ivy",
        "Felix",
        "Zoe",
        "Theo",
        "Maya",
        "Sofia",
        "Kai",
        "Elena",
        "Dev",
        "Iris",
        "Hugo",
        "Greta",
        "Malik",
        "Lena",
        "Pablo",
        "Yuki",
        "Noor",
    ]
)
RELATIONS = (
    "sister",
    "brother",
    "cousin",
    "friend",
    "best friend",
    "neighbour",
    "coworker",
    "aunt",
    "uncle",
    "old roommate",
)
CITIES = tuple(
    [
        "Leeds",
        "Bristol",
        "Porto",
        "Lisbon",
        "Denver",
        "Austin",
        "Toronto",
        "Dublin",
        "Glasgow",
        "Seattle",
        "Lyon",
        "Valencia",
        "Melbourne",
        "Portland",
        "Boston",
        "Edinburgh",
        "Madrid",
        "Oslo",
        "Kyoto",
        "Montreal",
        "Cardiff",
        "Nantes",
        "Bologna",
        "Vancouver",
        "Galway",
        "Seville",
        "Utrecht",
        "Ghent",
    ]
)
WEEKDAYS_PLAIN = ("monday", "tuesday", "wednesday", "thursday", "friday")
ANIMALS = ("dog", "cat", "rabbit", "parrot", "hamster", "tortoise", "guinea pig", "ferret")
PET_NAMES = tuple(
    [
        "Biscuit",
        "Luna",
        "Pepper",
        "Milo",
        "Olive",
        "Mochi",
        "Ziggy",
        "Bean",
        "Nugget",
        "Pickle",
        "Waffles",
        "Juniper",
        "Pretzel",
        "Clementine",
        "Rocket",
        "Tofu",
        "Maple",
        "Bramble",
    ]
)
BANDS = (
    "Velvet Harbour",
    "Copper Fox",
    "Midnight Orchard",
    "The Low Tides",
    "Silver Maple",
    "Lemon Parade",
    "The Quiet Hours",
    "Blue Static",
    "Paper Satellites",
    "The Hollow Pines",
    "Neon Meadow",
    "Saltwater Choir",
    "Amber Kites",
    "The Tin Lanterns",
)
JOBS = (
    "nurse",
    "dental hygienist",
    "primary school teacher",
    "software developer",
    "paramedic",
    "graphic designer",
    "pharmacist",
    "chef",
    "accountant",
    "librarian",
    "electrician",
    "physiotherapist",
    "vet",
    "architect",
    "social worker",
    "carpenter",
    "florist",
    "translator",
)
CARS = (
    "Fiat Panda",
    "Honda Civic",
    "Toyota Yaris",
    "VW Golf",
    "Ford Fiesta",
    "Subaru Outback",
    "Skoda Octavia",
    "Kia Niro",
    "Volvo estate",
    "Nissan Leaf",
    "Renault Clio",
    "Mini Cooper",
)
STANDUP_TIMES = ("8:30", "9", "9:15", "9:30", "10", "10:15", "10:30", "8:45")


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


# --- facts asked about once (single-hop) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Topic:
    """A kind of fact: its values, how people state it, how a question asks for it, and
    (optionally) how the other speaker asks for it in the conversation."""

    name: str
    values: tuple[str, ...]
    statements: tuple[str, ...]
    questions: tuple[str, ...]
    asks: tuple[str, ...] = ()
    pair_questions: tuple[str, ...] = ()  # asking for two values stated in two sessions


TOPICS: dict[str, Topic] = {
    topic.name: topic
    for topic in (
        Topic(
            "class",
            (
                "pottery",
                "salsa",
                "watercolour",
                "climbing",
                "yoga",
                "pilates",
                "boxing",
                "improv",
                "woodworking",
                "calligraphy",
                "archery",
                "fencing",
                "tap dance",
                "sign language",
                "life drawing",
                "aerial silks",
            ),
            (
                "i've been going to a {v} class on {wd}s, honestly the best part of my week",
                "i signed up for {v} lessons at the community centre and the first one was so fun",
                "so i finally tried {v}, there's a little group that meets every {wd} evening",
            ),
            (
                "What has {S} been learning in their spare time?",
                "Which hobby did {S} recently take up?",
            ),
            (
                "Are you doing anything fun outside of work these days, {n}?",
                "Got any new hobbies, {n}?",
            ),
            (
                "Which two hobbies has {S} taken up?",
                "Name the two pastimes {S} started doing.",
            ),
        ),
        Topic(
            "job",
            JOBS,
            (
                "i work as {a} {v} now, long days but i really like it",
                "being {a} {v} is exhausting some weeks, twelve hour shifts again",
                "honestly i love being {a} {v}, no two days are the same",
            ),
            (
                "What does {S} do for a living?",
                "What is {S}'s profession?",
                "What line of work is {S} in?",
            ),
            ("What are you doing for work these days, {n}?",),
        ),
        Topic(
            "pet",
            PET_NAMES,
            (
                "we adopted {a} {animal} from the shelter, we named her {v}",
                "i got {a} {animal} called {v}, she's a little troublemaker",
                "{v}, my {animal}, chewed through my phone charger again lol",
            ),
            (
                "What did {S} name their {animal}?",
                "What is the name of {S}'s {animal}?",
            ),
            (),
            ("What are the names of {S}'s two pets?",),
        ),
        Topic(
            "book",
            (
                "The Salt Road",
                "Winter Orchard",
                "A Map of Small Things",
                "The Glass Harbour",
                "Nine Quiet Rooms",
                "Paper Lanterns",
                "The Last Lighthouse",
                "Under the Linden",
                "River of Ash",
                "The Clockmaker's Daughter",
                "Seven Northern Winds",
                "The Orange Grove",
                "Letters from Aldmoor",
                "The Quiet Engine",
            ),
            (
                "i'm halfway through {v} and i can't put it down",
                "just finished {v}, the ending wrecked me",
                "i've been reading {v} on the bus every morning, so good",
            ),
            (
                "Which novel has {S} been reading?",
                "What book is {S} hooked on?",
            ),
            ("Read anything good lately, {n}?",),
            ("Which two novels has {S} mentioned reading?",),
        ),
        Topic(
            "dish",
            (
                "lentil soup",
                "pad thai",
                "banana bread",
                "mushroom risotto",
                "chicken curry",
                "homemade pizza",
                "sourdough",
                "dumplings",
                "paella",
                "shakshuka",
                "lasagne",
                "fish tacos",
                "apple crumble",
                "gnocchi",
            ),
            (
                "i made {v} for dinner and even the kids ate it",
                "i've been perfecting my {v} recipe, third attempt this week",
                "cooked {v} for my in-laws at the weekend, went down really well",
            ),
            (
                "What dish has {S} been cooking lately?",
                "What meal did {S} prepare that was a hit?",
            ),
            ("Cooked anything nice recently, {n}?",),
        ),
        Topic(
            "band",
            BANDS,
            (
                "i've had {v} on repeat all week, their new album is great",
                "been listening to a lot of {v} while i work",
            ),
            (
                "Which band does {S} keep listening to?",
                "What group's music has {S} been playing nonstop?",
            ),
            ("What music are you into at the moment, {n}?",),
        ),
        Topic(
            "instrument",
            (
                "cello",
                "piano",
                "ukulele",
                "violin",
                "drums",
                "flute",
                "saxophone",
                "banjo",
                "harp",
                "trumpet",
                "clarinet",
                "accordion",
            ),
            (
                "i picked up the {v} again after like ten years, my fingers hurt lol",
                "i've started practising the {v} every evening, the neighbours must love me",
            ),
            (
                "Which instrument has {S} gone back to?",
                "What does {S} play in the evenings?",
            ),
        ),
        Topic(
            "show",
            (
                "Harbour Street",
                "The Long Night Shift",
                "Kitchen Wars",
                "Northbound",
                "Small Town Detectives",
                "Deep Field",
                "The Lantern Keepers",
                "Salt and Stone",
                "Hidden Valley Vets",
                "Midnight Ferry",
            ),
            (
                "we're binge-watching {v}, we're already on season two",
                "have you seen {v}? i'm obsessed, we watch an episode every night",
            ),
            (
                "Which TV series has {S} been watching?",
                "What show has {S} been glued to?",
            ),
            ("Watching anything good, {n}?",),
        ),
        Topic(
            "language",
            (
                "Portuguese",
                "Korean",
                "Italian",
                "German",
                "Mandarin",
                "Greek",
                "Dutch",
                "Turkish",
                "Swedish",
                "Welsh",
                "Arabic",
                "Polish",
            ),
            (
                "i'm learning {v} on an app every morning before work",
                "my {v} is coming along, i can order food now haha",
            ),
            (
                "Which language is {S} studying?",
                "What language has {S} been practising?",
            ),
        ),
        Topic(
            "volunteering",
            (
                "animal shelter",
                "food bank",
                "community garden",
                "charity shop",
                "youth club",
                "soup kitchen",
                "local hospice",
                "refugee centre",
                "city farm",
            ),
            (
                "i help out at the {v} on saturday mornings now",
                "been volunteering at the {v}, it's really rewarding",
            ),
            (
                "Where does {S} volunteer?",
                "Where does {S} give their time for free?",
            ),
        ),
        Topic(
            "allergy",
            (
                "peanuts",
                "shellfish",
                "penicillin",
                "kiwi",
                "pollen",
                "sesame",
                "latex",
                "eggs",
                "mustard",
                "hazelnuts",
            ),
            (
                "turns out i'm allergic to {v}, found out the hard way",
                "the doctor said i'm allergic to {v}, so that's fun",
            ),
            (
                "What does {S} have to avoid because of an allergy?",
                "What did {S} learn they react badly to?",
            ),
        ),
        Topic(
            "garden",
            (
                "tomatoes",
                "sunflowers",
                "chillies",
                "strawberries",
                "lavender",
                "basil",
                "dahlias",
                "courgettes",
                "sweet peas",
                "blueberries",
            ),
            (
                "the {v} on my balcony are finally doing well",
                "i'm growing {v} in the back garden this year",
            ),
            (
                "What is {S} growing at home?",
                "Which plants has {S} been tending?",
            ),
        ),
        Topic(
            "team",
            (
                "Harbour City FC",
                "Northgate Foxes",
                "Riverside Rovers",
                "Eastport Owls",
                "Millbrook United",
                "Valley Hawks",
                "Kingsway Comets",
                "Southbank Herons",
            ),
            (
                "we went to watch the {v} play, they lost again lol",
                "i've had a season ticket for the {v} since i was a kid",
            ),
            (
                "Which team does {S} support?",
                "What club is {S} a fan of?",
            ),
        ),
        Topic(
            "car",
            CARS,
            (
                "my old {v} needs new brakes again, typical",
                "i drive {a} {v}, it's not fancy but it never lets me down",
            ),
            (
                "What car does {S} drive?",
                "What vehicle does {S} own?",
            ),
        ),
        Topic(
            "relative_city",
            CITIES,
            (
                "my {rel} {P} lives in {v}, i visit when i can",
                "i'm missing my {rel} {P}, {v} is so far away",
            ),
            (
                "In which city is {S}'s {rel} based?",
                "Where is {S}'s {rel} based?",
            ),
        ),
    )
}
SINGLE_TOPICS = tuple(TOPICS)
PAIR_TOPICS = tuple(name for name, topic in TOPICS.items() if topic.pair_questions)

# --- third parties met in one session, heard of in another (multi-hop) ----------------------

INTRODUCTIONS = (
    "my {rel} {P} is staying with us for a few days, the house is chaos",
    "my {rel} {P} came over for dinner, we laughed all night",
    "i had coffee with my {rel} {P}, we hadn't caught up in ages",
)
THIRD_PARTY_JOB = (
    "{P} just got a job as {a} {v}, so proud",
    "big news from {P}, starting as {a} {v} after all that studying",
)
THIRD_PARTY_JOB_QUESTIONS = (
    "What position did {S}'s {rel} land?",
    "What does {S}'s {rel} do for a living now?",
)
THIRD_PARTY_MOVE = (
    "{P} just moved to {v} for work, i'm going to miss having them around",
    "{P} packed everything up and relocated to {v}, wild",
)
THIRD_PARTY_MOVE_QUESTIONS = (
    "Which city did {S}'s {rel} relocate to?",
    "Where has {S}'s {rel} gone to live?",
)

# --- dated events (temporal questions) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened (or will) on a day the speaker says relative to today."""

    statement: str
    question: str
    future: bool = False
    long_ago: bool = False  # may be months back: "last summer", "last year"
    slot: str | None = None  # "city" or "band": a value drawn for the event
    mood: str = "good"


EVENTS: tuple[Event, ...] = (
    Event(
        "i went to a support group meeting {when}, it really helped",
        "When did {S} attend a support group?",
    ),
    Event("i ran my first 5k {when}!! my legs are dead", "When did {S} complete a 5 km race?"),
    Event(
        "my daughter started at a new school {when}, she's nervous but ok",
        "When did {S}'s daughter begin at her new school?",
    ),
    Event(
        "i had my wisdom teeth out {when}, still a bit swollen",
        "When did {S} have dental surgery?",
        mood="bad",
    ),
    Event(
        "we took the kids to the aquarium {when}, they loved the sharks",
        "When did {S}'s family visit the aquarium?",
    ),
    Event(
        "my car broke down on the way to work {when}, so annoying",
        "When did {S}'s car stop working on the commute?",
        mood="bad",
    ),
    Event(
        "i gave a talk at the local library {when}, i was so nervous",
        "When did {S} present at the library?",
    ),
    Event(
        "i volunteered at a charity fun run {when}, handed out water all morning",
        "When did {S} help out at the charity race?",
    ),
    Event(
        "we went to see {band} live {when}, amazing show",
        "When did {S} go to the {band} concert?",
        slot="band",
    ),
    Event("i passed my driving test {when}!!", "When did {S} get their driving licence?"),
    Event(
        "i got promoted at work {when}, still can't believe it",
        "When did {S} receive a promotion?",
    ),
    Event(
        "my brother got engaged {when}, we're all so happy",
        "When did {S}'s brother announce his engagement?",
    ),
    Event(
        "we had a picnic by the river {when}, perfect weather",
        "When did {S} have a riverside picnic?",
    ),
    Event(
        "i went hiking up in the hills {when}, my legs still hurt",
        "When did {S} go on a hike?",
    ),
    Event(
        "i painted the whole living room {when}, it's green now",
        "When did {S} redecorate the lounge?",
    ),
    Event(
        "we took a trip to {city} {when}, the food was amazing",
        "When did {S} travel to {city}?",
        long_ago=True,
        slot="city",
    ),
    Event(
        "i went to my high school reunion {when}, so weird seeing everyone",
        "When did {S} attend a school reunion?",
    ),
    Event(
        "i finally got my first tattoo {when}, a tiny fern on my wrist",
        "When did {S} get inked?",
    ),
    Event(
        "i broke my wrist falling off my bike {when}, ugh",
        "When did {S} injure their arm in a cycling accident?",
        mood="bad",
    ),
    Event(
        "my parents celebrated their 40th anniversary {when}, big family dinner",
        "When was the anniversary party of {S}'s parents?",
    ),
    Event(
        "i went to a music festival in {city} {when}, three days of mud",
        "When did {S} attend a festival in {city}?",
        long_ago=True,
        slot="city",
    ),
    Event(
        "we're going camping by the lake {when}, can't wait",
        "When is {S}'s lakeside camping trip?",
        future=True,
    ),
    Event(
        "i'm flying out to see my parents {when}",
        "When will {S} visit their mum and dad?",
        future=True,
    ),
    Event(
        "we're throwing a housewarming party {when}, you should come!",
        "When is {S}'s party to show off the new place?",
        future=True,
    ),
    Event(
        "i have a big job interview {when}, wish me luck",
        "When is {S}'s interview for a new position?",
        future=True,
    ),
    Event(
        "my mum is having hip surgery {when}, i'm a bit worried",
        "When is the operation of {S}'s mother?",
        future=True,
        mood="bad",
    ),
    Event(
        "i'm running a bake sale at the school {when}",
        "When is {S} holding the bake sale?",
        future=True,
    ),
    Event(
        "we're going to a wedding in {city} {when}",
        "When is the wedding {S} is attending in {city}?",
        future=True,
        slot="city",
    ),
    Event(
        "i'm doing a charity swim {when}, been training for weeks",
        "When is {S}'s sponsored swim?",
        future=True,
    ),
)

# --- facts corrected later (update questions) -----------------------------------------------


@dataclass(frozen=True, slots=True)
class Update:
    """A fact stated once and corrected sessions later, the way people correct things."""

    name: str
    firsts: tuple[str, ...]
    updates: tuple[str, ...]
    questions: tuple[str, ...]
    pair_questions: tuple[str, ...] = ()  # both values (multi-hop)


UPDATES: dict[str, Update] = {
    update.name: update
    for update in (
        Update(
            "home",
            (
                "we've been renting a flat in {v} for a few years now",
                "life in {v} is so expensive but i love our street",
            ),
            (
                "big news, we moved! we're in {v} now",
                "Update: we finally moved to {v}, boxes everywhere",
                "we moved; we're in {v} now",
            ),
            ("Which city does {S} call home at the moment?", "Where is {S} based these days?"),
            ("Which two cities has {S} lived in?",),
        ),
        Update(
            "job",
            TOPICS["job"].statements,
            (
                "Update: i left my old job, i'm working as {a} {v} now",
                "big change, i switched careers, i'm {a} {v} these days",
            ),
            ("What is {S}'s current occupation?", "What does {S} work as now?"),
        ),
        Update(
            "lead",
            (
                "our team lead {v} keeps scheduling meetings at 5pm",
                "{v} is leading our team now and honestly they're great",
            ),
            (
                "{v} took over as team lead, big shake-up",
                "Update: {v} is our team lead now",
            ),
            ("Who is in charge of {S}'s team now?", "Who runs {S}'s team at the moment?"),
        ),
        Update(
            "club",
            (
                "our book club meets on {v}s at my place",
                "book club is every {v}, we're reading something awful this month lol",
            ),
            (
                "Correction: book club is on {v}s now",
                "Update: we moved book club to {v}s",
            ),
            (
                "Which day does {S}'s reading group get together now?",
                "On what day of the week does {S}'s reading circle gather these days?",
            ),
        ),
        Update(
            "launch",
            (
                "our app launch is set for {v}, fingers crossed",
                "we're launching the new app on {v}, the whole office is stressed",
            ),
            (
                "the launch slipped to {v}",
                "Update: the launch got pushed back to {v}",
            ),
            (
                "When is the release of {S}'s app planned now?",
                "For what date is {S}'s product release scheduled now?",
            ),
        ),
        Update(
            "standup",
            (
                "standup is at {v} every morning, way too early for me",
                "we have standup at {v} sharp, the manager is strict about it",
            ),
            (
                "Correction: standup is at {v} now",
                "Update: standup moved to {v}",
            ),
            (
                "What time does {S}'s daily team meeting start now?",
                "When does {S}'s morning team check-in begin these days?",
            ),
        ),
        Update(
            "car",
            TOPICS["car"].statements,
            (
                "Update: we sold the {old}, we drive {a} {v} now",
                "finally got rid of the {old}! we bought {a} {v}",
            ),
            ("What car does {S} have now?", "What is {S}'s current vehicle?"),
        ),
    )
}

# --- content nobody asks about (distractors) ------------------------------------------------

CHATTER: tuple[tuple[str, str], ...] = (
    ("work has been crazy busy, we have a big deadline at the end of the month", "bad"),
    ("the weather here has been awful, rain every single day", "bad"),
    ("i tried the new noodle place near the station {when}, it was just ok", "good"),
    ("been sleeping badly lately, too much coffee probably", "bad"),
    ("my neighbour's dog barks at 6am every day, i'm losing my mind", "bad"),
    ("the kids have a school play coming up, they're so excited about it", "good"),
    ("i finally cleaned out the garage, found so much junk in there", "good"),
    ("my phone screen cracked {when}, so annoying", "bad"),
    ("been trying to walk more, doing about 8000 steps a day", "good"),
    ("we repainted the fence {when}, it looks so much better", "good"),
    ("the train was delayed again this morning, forty minutes", "bad"),
    ("i've been trying to cut down on sugar, it's hard", "good"),
    ("my back has been sore from carrying shopping up the stairs", "bad"),
    ("we watched a documentary about octopuses {when}, wild stuff", "good"),
    ("traffic on the ring road is a nightmare with all the roadworks", "bad"),
    ("i bought a new mattress and i sleep so much better", "good"),
    ("the heating broke {when} so we were freezing all night", "bad"),
    ("i've been meal prepping on sundays to save money", "good"),
    ("we had friends over for board games {when}, i lost every round", "good"),
    ("i'm thinking about getting a fringe but i'm scared", "good"),
    ("our fridge is making a weird humming noise", "bad"),
    ("i finally sorted out my taxes, what a relief", "good"),
    ("i signed up for a newsletter about birds, i'm officially old lol", "good"),
    ("the supermarket near us closed down, now it's a 20 minute walk", "bad"),
    ("i've been journaling before bed and it actually helps", "good"),
    ("our internet was out {when}, i had to work from a cafe", "bad"),
    ("i found an old photo album at my parents' place, so many bad haircuts", "good"),
    ("work got me a new laptop, it's so fast", "good"),
    ("i've been doing a puzzle with 2000 pieces, it's taking forever", "good"),
    ("we got a new sofa {when}, the old one was falling apart", "good"),
    ("i went to the dentist {when}, no fillings needed!", "good"),
    ("my houseplants keep dying no matter what i do", "bad"),
    ("i've been trying to read more instead of scrolling", "good"),
    ("the neighbours are renovating and the drilling starts at 8", "bad"),
    ("i got caught in the rain {when} without an umbrella", "bad"),
    ("we tried a new brunch spot {when}, the pancakes were huge", "good"),
    ("i lost my keys again, found them in the fridge somehow", "good"),
    ("my commute is shorter now that the new bridge is open", "good"),
    ("i've been getting up at 6 to go for a run before work", "good"),
    ("we're trying to save up for a bigger place", "good"),
)

# --- phatic talk: greetings, thanks, backchannel, compliments, exclamations, questions -------

GREETINGS = (
    "Hey {n}! Long time no chat, how have you been?",
    "Hi {n}! How's your week going?",
    "Hey {n}, good to hear from you!",
    "{n}! It's been a while, what's new with you?",
    "Morning {n}! Hope you slept well.",
    "Hiya {n}! How are things?",
)
GREETING_REPLIES = (
    "Hey {n}! I'm good, thanks for asking. You?",
    "Hi! Doing alright, just a bit tired. How about you?",
    "Hey! All good here, busy as always.",
    "Hi {n}! So nice to hear from you.",
    "Heyy! Not bad at all, thanks!",
)
CLOSINGS = (
    "Anyway, I should get going. Talk soon, {n}!",
    "Gotta run, take care!",
    "Okay, bye for now {n}!",
    "I have to go make dinner, catch you later!",
    "Right, I'm off. Speak soon!",
)
CLOSING_REPLIES = (
    "Bye {n}! Chat soon.",
    "Take care!",
    "Talk soon!",
    "Bye! Have a good one, {n}.",
    "See ya!",
)
BACKCHANNEL = (
    "Haha yeah",
    "haha yeah totally",
    "Yeah, I know what you mean.",
    "Mhm, same here.",
    "Right?!",
    "lol yes",
    "Oh yeah?",
    "Ha, fair enough.",
)
COMPLIMENTS = (
    "That's so cool!",
    "That's amazing, {n}!",
    "Love that for you!",
    "So proud of you!",
    "That sounds lovely.",
    "Wow, good for you!",
    "Aww that's great!",
    "No way, that's awesome!",
)
SYMPATHY = (
    "Oh no, that's rough.",
    "Ugh, sorry to hear that.",
    "That sounds stressful, hang in there.",
    "Oh {n}, that's awful.",
    "Yikes, that's no fun.",
)
EXCLAMATIONS = ("Wow, {n}!", "Aww, {n}!", "Oh {n}!", "{n}!!", "Haha, {n}!")
THANKS = ("Thanks, {n}!", "Aw thank you!", "Thanks so much, that means a lot.", "Haha thanks!")
FOLLOW_UPS = (
    "How about you?",
    "What have you been up to?",
    "How did it go?",
    "How are you feeling about it?",
    "Anything exciting coming up?",
    "What about you, anything new?",
)
OPENERS = ("Oh, guess what?", "Anyway,", "Oh and", "So,", "Also,", "Okay so")
SMALL_TALK = (
    ("What else is new?", "Not much, same old really."),
    ("How's the weather over there?", "Honestly can't complain!"),
    ("Did you have a good weekend?", "Yeah it was nice and quiet, thanks!"),
    ("You doing okay?", "Yeah, all good, thanks for checking in."),
)

# Everyday things people did, with a comment: more content nobody asks about, varied enough
# that a conversation of months does not repeat itself every few sessions.
PASTIMES = (
    "went for a long walk along the canal",
    "cleaned the whole flat top to bottom",
    "tried a new recipe with chickpeas and spinach",
    "spent the afternoon at the garden centre",
    "watched an old black and white film",
    "finally fixed the leaky tap in the bathroom",
    "had lunch with some old colleagues",
    "did a big shop at the farmers market",
    "took the bus into town to return some shoes",
    "sorted through a huge pile of old clothes",
    "stayed up way too late finishing a crossword",
    "went to a pub quiz with people from work",
    "baked cookies for the neighbours",
    "repotted all the plants on the windowsill",
    "drove my nephew to football practice",
    "helped a mate carry a wardrobe up three floors",
    "went swimming at the leisure centre",
    "spent hours fixing my bike chain",
    "queued forever at the post office",
    "made a massive pot of soup for the week",
    "went to a car boot sale and came back with a lamp",
    "rearranged the furniture in the bedroom",
    "caught up on laundry, five loads",
    "went to the cinema on my own",
    "had a video call with my grandparents",
    "spent the evening building flat pack shelves",
    "walked the long way home through the park",
    "went to a birthday drinks thing after work",
    "tidied the shed and found my old roller skates",
    "took the dog next door out for a run",
    "tried to learn a card trick from a video",
    "went to the market for fresh bread",
)
PASTIME_COMMENTS = (
    "it was exhausting",
    "honestly so relaxing",
    "not my best idea",
    "we should do that more often",
    "took way longer than expected",
    "felt great afterwards",
    "would not recommend lol",
    "kind of fun actually",
    "totally worth it",
    "my feet are killing me",
    "such a nice change of pace",
    "pretty uneventful but nice",
    "the weather was perfect for it",
    "i need a nap now",
    "no regrets",
)
PASTIME_TIMES = ("this morning", "after work", "at lunch", "earlier", "")
# A second sentence after a fact: content, but no fact of its own.
ELABORATIONS = (
    "it's been a nice change from staring at a screen all day at work",
    "i honestly didn't expect to enjoy it anywhere near this much",
    "the kids think the whole thing is absolutely hilarious",
    "my partner is a lot less excited about it than i am lol",
    "it's been on my list of things to do for ages now",
    "we'll see how long it lasts, you know what i'm like haha",
    "i keep telling literally everyone i meet about it",
    "still processing the whole thing if i'm honest",
    "long story, i'll tell you properly next time we catch up",
    "it's been a lot to juggle on top of everything at work",
    "my mum keeps asking me about it every time she calls",
    "i'll send you some photos later so you can see",
    "the whole week has felt a bit like that to be fair",
    "it's funny how these things work out sometimes",
    "i'm trying to be better about making time for stuff like that",
    "not sure what i expected but here we are",
)
COMPANIONS = (
    "with my partner",
    "with the kids",
    "with a couple of friends",
    "with my mum",
    "by myself",
    "with some people from the street",
)
THINGS = (
    "the bus to work",
    "my sleep",
    "the office coffee",
    "our street",
    "the gym",
    "my inbox",
    "the garden",
    "my knee",
    "work",
    "the traffic",
    "our landlord",
    "my laptop",
    "the kids' schedule",
    "the washing machine",
    "my motivation",
    "the local park",
    "my phone battery",
    "the group chat",
)
STATES = (
    ("a total mess", "bad"),
    ("surprisingly good", "good"),
    ("so unpredictable", "bad"),
    ("driving me mad", "bad"),
    ("better than usual", "good"),
    ("really hit and miss", "bad"),
    ("a bit of a nightmare", "bad"),
    ("weirdly fine", "good"),
    ("way too busy", "bad"),
    ("quieter than normal", "good"),
)
THING_TEMPLATES = ("{thing} has been {state} lately", "honestly {thing} has been {state} this week")
ELABORATION_TAILS = (
    "and i'm not even mad about it",
    "which says a lot about my week",
    "so that's where my head is at",
    "but that's a story for another day",
    "and honestly i needed that",
    "if that makes any sense at all",
    "so we'll see how it goes from here",
)
