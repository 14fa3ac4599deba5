"""Long conversations for retention tests: months of chat, facts stated once, asked much later.

``long_conversations(users, sessions_per_user, seed)`` writes, for each user, a chat of many
sessions (15–40 turns, the user and the agent taking turns, the user first) 1–6 days (plus up
to 6 hours) apart, starting within an hour of ``BASE_TIME``. Most turns are
chit-chat; some user turns state a fact exactly once ("My sister Alice lives in Lisbon."), some
ask about a fact stated sessions earlier ("Where does Alice live again?"), and some correct a
fact in words that keep its subject ("Alice lives in Porto now."). The agent never repeats a
fact, so a fact survives consolidation only if the consolidated memories keep it.

Alongside the events, the workload lists every :class:`StatedFact` (the terms that identify its
value, the turn that stated it, the turn that corrected it) and every :class:`AskedQuestion`,
so a retention test can check, after consolidation, that the facts asked about (and the current
value of corrected ones) can still be found.

Events carry no session id: the engine derives sessions from 30 minutes of inactivity, and
turns here are 30–180 s apart inside a session and days apart between sessions. Deterministic
for a seed; the only clock is the fixed ``BASE_TIME``.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from streams.engine.model import CreatedBy, Memory, MemoryEvent, MemoryWritten

BASE_TIME = 1_790_000_000_000  # epoch ms, as in tests/workloads.py
SECOND_MS = 1_000
DAY_MS = 86_400_000
TURNS = (15, 40)
SESSION_GAP_DAYS = (1, 6)
TURN_GAP_SECONDS = (30, 180)
QUESTION_DELAY_SESSIONS = 3  # a question is about a fact stated at least this many sessions ago
CORRECTION_DELAY_SESSIONS = 2

__all__ = [
    "AGENT_ACKNOWLEDGEMENTS",
    "AGENT_DEFERRALS",
    "AGENT_FILLER",
    "AskedQuestion",
    "ConversationWorkload",
    "StatedFact",
    "USER_FILLER",
    "long_conversations",
]


@dataclass(frozen=True)
class StatedFact:
    """A fact a user stated once: ``terms`` are its values as the stating sentence words them,
    lower-cased: the slots its subject does not fix ("lisbon" for "where does Alice live").
    Taken from the plan, never read back from the text with the engine's functions."""

    user_id: str
    key: str
    terms: frozenset[str]
    memory_id: str
    corrected_by_memory_id: str | None
    still_true: bool


@dataclass(frozen=True)
class AskedQuestion:
    """A later turn asking about ``key``; ``expected`` is the StatedFact true when it was asked."""

    user_id: str
    key: str
    memory_id: str
    expected_memory_id: str


@dataclass(frozen=True)
class ConversationWorkload:
    events: list[MemoryEvent]
    facts: list[StatedFact]
    questions: list[AskedQuestion] = field(default_factory=list)
    sessions: list[tuple[str, ...]] = field(default_factory=list)  # memory ids, per session


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# --- what people say --------------------------------------------------------------------------

NAMES = _words(
    "Alice Bruno Chiara Dmitri Emeka Farah Greta Hiro Ines Jonas Keiko Lars Maya Nadia Oscar "
    "Priya Quentin Rosa Sven Tariq Ursula Viktor Wen Ximena Yusuf Zoe Amara Bastian Carmen Dario"
)
SURNAMES = _words("Silva Novak Okafor Tanaka Berg Moreau Rossi Kowalski Haddad Lindqvist")
CITIES = _words(
    "Lisbon Porto Berlin Munich Oslo Bergen Kyoto Osaka Austin Denver Nairobi Mombasa Lyon "
    "Marseille Seville Valencia Krakow Gdansk Toronto Montreal"
)
PROJECTS = _words("Atlas Orion Falcon Nimbus Quartz Juniper Cobalt Meridian Helios Tundra")
EVENTS = _words("launch offsite demo review workshop retreat hackathon audit")
DOCS = ("design doc", "runbook", "roadmap", "onboarding guide")
PRODUCTS = _words("Pagely Trackr Notion Figma Linear Datadog Miro Airtable")
EDITORS = ("Neovim", "Emacs", "VS Code", "IntelliJ", "Zed", "Helix", "Sublime Text")
EMPLOYERS = (
    "Acme Robotics",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Hooli",
    "Vandelay Imports",
    "Soylent Corp",
    "Wayne Enterprises",
)
ROLES = ("data engineer", "product manager", "designer", "backend developer", "analyst")
RELATIVES = ("cousin", "best friend", "neighbour", "old flatmate", "climbing partner")
PETS = _words("Biscuit Pepper Mochi Luna Rufus Ziggy Nala Olive")
SERVICES = ("Dropbox", "Spotify", "Evernote", "Netflix", "Trello", "Todoist")
MONTHS = _words(
    "January February March April May June July August September October November December"
)
WEEKDAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")

USER_FILLER = (
    "ok",
    "haha sure",
    "thanks!",
    "lol yes",
    "hmm, let me think about that for a second",
    "that makes sense",
    "right, right",
    "yeah that's fair",
    "good morning!",
    "sorry, I got distracted for a moment",
    "interesting, tell me more",
    "I'm a bit tired today, it has been a long week",
    "ok cool, that helps a lot",
    "sounds good to me",
    "can you say that again in simpler words?",
    "nice",
    "great, thanks for the help",
    "yes please",
    "no worries",
    "honestly I'm not sure yet",
    "let's keep going",
    "ha, fair point",
    "that's funny",
    "I guess so",
    "wait, really?",
    "oh wow",
    "alright, next thing",
    "back now, I was making tea",
    "I keep going back and forth on this one",
    "that was a really helpful way to put it, thank you",
)
AGENT_FILLER = (
    "Sure, happy to help with that.",
    "That makes sense.",
    "Sounds good!",
    "Of course.",
    "I understand, that sounds like a lot.",
    "Thanks for the update.",
    "Absolutely, let's do that.",
    "Right, that's a good point.",
    "I hear you, long weeks are tough.",
    "Great, anything else on your mind?",
    "No problem at all.",
    "Glad that helps!",
    "Interesting, tell me more about it.",
    "Take your time, there is no rush.",
    "That is a very reasonable way to look at it.",
)
AGENT_ACKNOWLEDGEMENTS = (
    "Got it.",
    "Noted, thanks for telling me.",
    "Okay, I'll keep that in mind.",
    "Thanks, I'll remember that.",
    "Good to know!",
)
AGENT_DEFERRALS = (
    "Let me check my notes on that.",
    "Good question, I'll look into it.",
    "One moment, let me check.",
)


# --- fact families ------------------------------------------------------------------------------

Slots = dict[str, str]


@dataclass(frozen=True)
class _Family:
    """One kind of fact: how to pick its subject and value, and how people word it."""

    name: str
    subject: Callable[[random.Random, _Pools], Slots | None]
    value: Callable[[random.Random], Slots]
    stating: tuple[str, ...]
    questions: tuple[str, ...]  # the first one defines the terms shared with the subject
    corrections: tuple[str, ...] = ()
    key: str = "{name}"


class _Pools:
    """Per-user pools of subjects drawn without replacement, so every key is distinct."""

    def __init__(self, rng: random.Random) -> None:
        self.names = rng.sample(NAMES, len(NAMES))
        self.projects = [f"{p} {e}" for p in PROJECTS for e in EVENTS]
        rng.shuffle(self.projects)
        self.docs = [f"{p} {d}" for p in PROJECTS for d in DOCS]
        rng.shuffle(self.docs)
        self.products = rng.sample(PRODUCTS, len(PRODUCTS))
        self.pets = rng.sample(PETS, len(PETS))
        self.services = rng.sample(SERVICES, len(SERVICES))
        self.cities = rng.sample(CITIES, len(CITIES))
        self.singletons: set[str] = set()

    @staticmethod
    def pop(pool: list[str]) -> str | None:
        return pool.pop() if pool else None


def _name(rng: random.Random, pools: _Pools) -> Slots | None:
    name = pools.pop(pools.names)
    return None if name is None else {"name": name, "rel": rng.choice(RELATIVES)}


def _project(rng: random.Random, pools: _Pools) -> Slots | None:
    project = pools.pop(pools.projects)
    return None if project is None else {"project": project}


def _doc(rng: random.Random, pools: _Pools) -> Slots | None:
    doc = pools.pop(pools.docs)
    return None if doc is None else {"doc": doc, "slug": doc.lower().replace(" ", "-")}


def _product(rng: random.Random, pools: _Pools) -> Slots | None:
    product = pools.pop(pools.products)
    return None if product is None else {"product": product}


def _pet(rng: random.Random, pools: _Pools) -> Slots | None:
    pet = pools.pop(pools.pets)
    return None if pet is None else {"pet": pet}


def _service(rng: random.Random, pools: _Pools) -> Slots | None:
    service = pools.pop(pools.services)
    return None if service is None else {"service": service}


def _trip(rng: random.Random, pools: _Pools) -> Slots | None:
    city = pools.pop(pools.cities)
    return None if city is None else {"trip": city}


def _singleton(name: str) -> Callable[[random.Random, _Pools], Slots | None]:
    def subject(rng: random.Random, pools: _Pools) -> Slots | None:
        if name in pools.singletons:
            return None
        pools.singletons.add(name)
        return {}

    return subject


def _date(rng: random.Random) -> str:
    month, day = rng.choice(MONTHS), rng.randint(1, 28)
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(day, "th")
    return rng.choice(
        (f"{month} {day}", f"{day} {month}", f"the {day}{suffix} of {month}", f"{month} {day}th")
    ).replace(f"{day}th", f"{day}{suffix}")


def _time(rng: random.Random) -> str:
    hour, minute = rng.randint(7, 18), rng.choice((0, 15, 30, 45))
    twelve = hour % 12 or 12
    meridiem = "am" if hour < 12 else "pm"
    if minute == 0:
        return rng.choice((f"{twelve}{meridiem}", f"{twelve} {meridiem[0]}.m.", f"{hour}:00"))
    return rng.choice((f"{hour}:{minute:02d}", f"{twelve}:{minute:02d}{meridiem}"))


def _money(rng: random.Random) -> str:
    amount = rng.randrange(2_000, 60_000, 250)
    return rng.choice((f"{amount} euros", f"€{amount:,}", f"${amount:,}"))


def _phone(rng: random.Random) -> str:
    a, b, c = rng.randint(200, 989), rng.randint(200, 999), rng.randint(1000, 9999)
    return rng.choice((f"+1 ({a}) {b}-{c}", f"{a}-{b}-{c}", f"+44 20 {b}{c % 10} {c}"))


FAMILIES: tuple[_Family, ...] = (
    _Family(
        "city",
        _name,
        lambda rng: {"city": rng.choice(CITIES)},
        (
            "My {rel} {name} lives in {city}.",
            "Oh, by the way, my {rel} {name} lives in {city} these days.",
            "{name}, my {rel}, lives in {city}.",
        ),
        ("Where does {name} live again?", "Remind me, which city does {name} live in?"),
        ("{name} lives in {city} now.", "Actually {name} lives in {city} now, she moved."),
    ),
    _Family(
        "date",
        _project,
        lambda rng: {"date": _date(rng)},
        (
            "The {project} is on {date}.",
            "Just a heads up, the {project} is scheduled for {date}.",
        ),
        ("When is the {project} again?", "What date is the {project}?"),
        ("The {project} moved to {date}.",),
        key="{project}",
    ),
    _Family(
        "budget",
        _project,
        lambda rng: {"amount": _money(rng)},
        (
            "Our budget for the {project} is {amount}.",
            "So the budget for the {project} ended up at {amount}.",
        ),
        ("What was our budget for the {project}?",),
        ("The budget for the {project} is now {amount}.",),
        key="{project}",
    ),
    _Family(
        "editor",
        _singleton("editor"),
        lambda rng: {"tool": rng.choice(EDITORS)},
        ("I switched to {tool} last week.", "I've been using {tool} as my main editor lately."),
        ("Which editor did I say I switched to?", "What editor am I using these days?"),
        ("I switched to {tool} now, it is my main editor.",),
        key="editor",
    ),
    _Family(
        "one-on-one",
        _name,
        lambda rng: {"time": _time(rng), "weekday": rng.choice(WEEKDAYS)},
        ("My weekly one-on-one with {name} is at {time} on {weekday}s.",),
        ("When is my one-on-one with {name}?",),
        ("My one-on-one with {name} is at {time} on {weekday}s now.",),
    ),
    _Family(
        "email",
        _name,
        lambda rng: {"domain": rng.choice(("example.com", "mail.example.org", "corp.example"))},
        ("You can reach {name} at {email}.", "{name}'s email is {email}."),
        ("What's {name}'s email address?",),
        ("{name}'s new email is {email}.",),
    ),
    _Family(
        "phone",
        _name,
        lambda rng: {"phone": _phone(rng)},
        ("{name}'s phone number is {phone}.",),
        ("What's {name}'s number again?",),
        ("{name} has a new phone number: {phone}.",),
    ),
    _Family(
        "birthday",
        _name,
        lambda rng: {"date": _date(rng)},
        (
            "{name}'s birthday is on {date}.",
            "It's {name}'s birthday on {date}, don't let me forget.",
        ),
        ("When is {name}'s birthday?",),
    ),
    _Family(
        "pet",
        _pet,
        lambda rng: {"years": str(rng.randint(2, 14))},
        ("Our dog {pet} is {years} years old.", "My cat {pet} is {years} years old now."),
        ("How old is {pet}?",),
        key="{pet}",
    ),
    _Family(
        "kids",
        _singleton("kids"),
        lambda rng: {"kids": str(rng.randint(1, 4))},
        ("I have {kids} kids, which keeps me busy.",),
        ("How many kids did I tell you I have?",),
        key="kids",
    ),
    _Family(
        "employer",
        _singleton("employer"),
        lambda rng: {"company": rng.choice(EMPLOYERS), "role": rng.choice(ROLES)},
        ("I work at {company} as a {role}.",),
        ("Where do I work again?",),
        ("I work at {company} now, as a {role}.",),
        key="employer",
    ),
    _Family(
        "doc",
        _doc,
        lambda rng: {"n": str(rng.randint(10, 999))},
        ("The {doc} is at https://docs.example.com/{slug}-{n}.",),
        ("Where can I find the {doc}?",),
        ("The {doc} moved to https://docs.example.com/{slug}-{n}.",),
        key="{doc}",
    ),
    _Family(
        "conversion",
        _product,
        lambda rng: {"pct": f"{rng.randint(1, 40)}.{rng.randint(0, 9)}"},
        ("Our conversion rate for {product} is {pct}% this quarter.",),
        ("What was the conversion rate for {product}?",),
        ("The conversion rate for {product} is now {pct}%.",),
        key="{product}",
    ),
    _Family(
        "run",
        _singleton("run"),
        lambda rng: {"km": str(rng.randint(3, 21)), "weekday": rng.choice(WEEKDAYS)},
        ("I run {km} km every {weekday}.",),
        ("How far do I usually run?",),
        ("I run {km} km every {weekday} now.",),
        key="run",
    ),
    _Family(
        "flight",
        _trip,
        lambda rng: {"time": _time(rng), "date": _date(rng)},
        ("My flight to {trip} leaves at {time} on {date}.",),
        ("When does my flight to {trip} leave?",),
        ("My flight to {trip} now leaves at {time} on {date}.",),
        key="{trip}",
    ),
    _Family(
        "stopped",
        _service,
        lambda rng: {"when": f"{rng.choice(MONTHS)} {rng.randint(2019, 2025)}"},
        ("I stopped using {service} in {when}.",),
        ("When did I stop using {service}?",),
        key="{service}",
    ),
)


def _fill(template: str, slots: Slots) -> str:
    text = template.format(**slots)
    return text[0].upper() + text[1:]


def value_terms(slots: Slots, subject: Slots, text: str) -> frozenset[str]:
    """The values a sentence states: the slots its subject does not fix that it words."""
    return frozenset(
        value.casefold()
        for name, value in slots.items()
        if name not in subject and says(text, value)
    )


def says(text: str, term: str) -> bool:
    """Whether ``text`` words ``term`` as a whole (case aside)."""
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE) is not None


def _slots(family: _Family, subject: Slots, rng: random.Random) -> Slots:
    slots = {**subject, **family.value(rng)}
    if family.name == "email":
        slots["email"] = (
            f"{subject['name'].lower()}.{rng.choice(SURNAMES).lower()}@{slots['domain']}"
        )
    return slots


# --- the generator ----------------------------------------------------------------------------


@dataclass
class _Open:
    """A fact as the generator tracks it: its subject, its live version, who asked about it."""

    family: _Family
    key: str
    subject: Slots
    slots: Slots
    session: int
    facts: list[int]  # indexes into the workload's fact list, oldest first
    asked: int = 0


def long_conversations(users: int, sessions_per_user: int, seed: int) -> ConversationWorkload:
    """Months of chat for ``users`` users, ``sessions_per_user`` sessions each (see module doc)."""
    rng = random.Random(seed)
    events: list[MemoryEvent] = []
    facts: list[StatedFact] = []
    questions: list[AskedQuestion] = []
    sessions: list[tuple[str, ...]] = []
    for u in range(users):
        user = f"user-{u}"
        pools = _Pools(rng)
        known: list[_Open] = []
        at = BASE_TIME + rng.randint(0, 3_600) * SECOND_MS  # users start within an hour
        for s in range(sessions_per_user):
            if s:
                at += (
                    rng.randint(*SESSION_GAP_DAYS) * DAY_MS + rng.randint(0, 6 * 3_600) * SECOND_MS
                )
            count = rng.randint(*TURNS)
            plan = _plan(rng, pools, known, s, user_turns=(count + 1) // 2)
            ids: list[str] = []
            pending_reply: str | None = None
            for t in range(count):
                if t:
                    at += rng.randint(*TURN_GAP_SECONDS) * SECOND_MS
                memory_id = f"{user}-s{s:03d}-t{t:02d}"
                speaker: CreatedBy
                if t % 2 == 0:
                    speaker = "user"
                    item = plan.get(t // 2)
                    content, pending_reply = _user_turn(
                        rng, item, user, memory_id, facts, questions
                    )
                else:
                    speaker = "agent"
                    content = pending_reply or rng.choice(AGENT_FILLER)
                    pending_reply = None
                ids.append(memory_id)
                memory = Memory(
                    memory_id=memory_id,
                    user_id=user,
                    content=content,
                    layer="working",
                    kind="message",
                    importance=round(rng.uniform(0.2, 0.9), 2),
                    valence=round(rng.uniform(-1.0, 1.0), 2),
                    created_by=speaker,
                    conversation_id=f"{user}-chat",
                    session_id=None,
                    created_at=at,
                )
                event_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                events.append(
                    MemoryEvent(event_id, user, at, MemoryWritten(memory), source="tests")
                )
            sessions.append(tuple(ids))
    events.sort(key=lambda e: (e.occurred_at, e.user_id, e.event_id))
    return ConversationWorkload(events, facts, questions, sessions)


_Item = tuple[str, _Open]  # ("state" | "ask" | "correct", fact)


def _plan(
    rng: random.Random, pools: _Pools, known: list[_Open], session: int, user_turns: int
) -> dict[int, _Item]:
    """Which user turns of this session state, ask about or correct which facts."""
    items: list[_Item] = []
    for _ in range(rng.randint(1, 3)):
        fresh = _new_fact(rng, pools, session)
        if fresh is not None:
            known.append(fresh)
            items.append(("state", fresh))
    old = [f for f in known if session - f.session >= QUESTION_DELAY_SESSIONS]
    if old:
        rng.shuffle(old)
        old.sort(key=lambda f: f.asked)  # stable: never asked first, in shuffled order
        for fact in old[: rng.randint(1, 2)]:
            fact.asked += 1
            items.append(("ask", fact))
    correctable = [
        f
        for f in known
        if f.family.corrections
        and len(f.facts) == 1
        and session - f.session >= CORRECTION_DELAY_SESSIONS
        and not any(fact is f for _, fact in items)
    ]
    if correctable and rng.random() < 0.45:
        items.append(("correct", rng.choice(correctable)))
    turns = rng.sample(range(1, user_turns), min(len(items), user_turns - 1))
    return dict(zip(turns, items, strict=False))


def _new_fact(rng: random.Random, pools: _Pools, session: int) -> _Open | None:
    for family in rng.sample(FAMILIES, len(FAMILIES)):
        subject = family.subject(rng, pools)
        if subject is not None:
            slots = _slots(family, subject, rng)
            key = f"{family.name}:{family.key.format(**subject)}"
            return _Open(family, key, subject, slots, session, [])
    return None


def _user_turn(
    rng: random.Random,
    item: _Item | None,
    user: str,
    memory_id: str,
    facts: list[StatedFact],
    questions: list[AskedQuestion],
) -> tuple[str, str | None]:
    """The user's words for this turn, and what the agent answers (None: chit-chat)."""
    if item is None:
        return rng.choice(USER_FILLER), None
    action, fact = item
    if action == "ask":
        text = _fill(rng.choice(fact.family.questions), fact.subject)
        expected = facts[fact.facts[-1]].memory_id
        questions.append(AskedQuestion(user, fact.key, memory_id, expected))
        return text, rng.choice(AGENT_DEFERRALS)
    if action == "correct":
        previous = facts[fact.facts[-1]]
        for _ in range(20):  # a correction must change the value
            slots = _slots(fact.family, fact.subject, rng)
            text = _fill(rng.choice(fact.family.corrections), slots)
            terms = value_terms(slots, fact.subject, text)
            if terms and not terms <= previous.terms:
                break
        facts[fact.facts[-1]] = StatedFact(
            previous.user_id, previous.key, previous.terms, previous.memory_id, memory_id, False
        )
    else:
        text = _fill(rng.choice(fact.family.stating), fact.slots)
        terms = value_terms(fact.slots, fact.subject, text)
    if not terms:
        raise AssertionError(f"a {fact.family.name} fact without value terms: {text!r}")
    fact.facts.append(len(facts))
    facts.append(StatedFact(user, fact.key, terms, memory_id, None, True))
    return text, rng.choice(AGENT_ACKNOWLEDGEMENTS)
