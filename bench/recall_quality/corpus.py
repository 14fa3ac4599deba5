"""A generated corpus of long two-person conversations with questions and gold answers.

``generate(conversations, seed)`` writes, per conversation, two named speakers chatting over
20+ sessions a few days to two weeks apart (from early 2023), 18-26 turns a session, about a
minute apart. Turns are 1-3 sentences: greetings, thanks, backchannel, compliments, name-only
exclamations and questions (phatic talk), and facts in everyday lower-case words ("i've been
going to a pottery class on tuesdays"), some dated relative to the day they are said
("yesterday", "last Fri", "next month"), some about third parties ("my sister Ana"), some
answering the other speaker's question, some correcting an earlier fact sessions later.

Every fact is planned as a structured record first (who, what, value, when it was said, the
absolute date a relative expression means) and only then put into words from the templates
of :mod:`bench.recall_quality.phrases`; every question and gold answer is derived from those
records, never by reading the text. So the corpus grades the engine's writers without
sharing a line of code with them: this module must never import ``streams.engine.text`` or
``streams.engine.judge``. Deterministic for a seed (one ``random.Random``, no clock).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from random import Random
from typing import Literal

from bench.recall_quality import phrases
from bench.recall_quality.phrases import article
from bench.recall_quality.when import (
    MONTHS,
    When,
    future_expressions,
    ordinal,
    past_expressions,
    stated_date,
)

START = date(2023, 1, 2)
START_SPREAD_DAYS = 60  # a conversation starts within this many days of START
SESSIONS = (22, 26)
SESSION_GAP_DAYS = (3, 14)
TURNS_PER_SESSION = (18, 26)
TURN_GAP_SECONDS = (50, 70)
SESSION_HOURS = (9, 20)  # sessions start in the day (UTC), so a session never crosses midnight

SINGLE_PER_SPEAKER = 11
PAIRS_PER_SPEAKER = 4
EVENTS_PER_SPEAKER = 12
UPDATES_PER_SPEAKER = 4
# Content nobody asks about fills a session's remaining turns: most turns carry content.
CONTENT_SHARE_OF_TURNS = 0.82

QuestionKind = Literal["single_hop", "multi_hop", "temporal", "update"]
QUESTION_KINDS: tuple[QuestionKind, ...] = ("single_hop", "multi_hop", "temporal", "update")


Role = Literal["phatic", "fact", "content"]


@dataclass(frozen=True, slots=True)
class Fragment:
    """One sentence of a turn and its role: ``phatic`` (greeting, thanks, backchannel,
    compliment, name-only exclamation, a question), ``fact`` (states a planned fact) or
    ``content`` (an elaboration: content words, but no fact of its own)."""

    text: str
    role: Role

    @property
    def phatic(self) -> bool:
        return self.role == "phatic"


@dataclass(frozen=True, slots=True)
class Turn:
    turn_id: str  # the memory id it is written under
    conversation_id: str
    session_id: str
    session_index: int
    speaker: str
    fragments: tuple[Fragment, ...]
    at: int  # epoch ms, UTC
    fact_ids: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(f.text for f in self.fragments)

    @property
    def phatic(self) -> bool:
        return not self.fact_ids

    @property
    def fact_text(self) -> str:
        """The turn's sentences that state its facts (phatic talk and elaboration left out)."""
        return " ".join(f.text for f in self.fragments if f.role == "fact")


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact as planned, before it was put into words."""

    fact_id: str
    subject: str  # whom it is about: a speaker, or a third party ("Ana")
    attribute: str  # "class", "home", "event", ...; "chatter" for content nobody asks about
    value: str  # the slot value; for a dated event, the absolute date it happened on
    stated_by: str
    turn_id: str
    said_on: date
    when: str | None = None  # the time expression as said ("last Fri")
    relative: bool = False  # ``when`` is relative to the day it was said
    corrects: str | None = None  # the fact whose value this one replaces


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str
    conversation_id: str
    user_id: str
    kind: QuestionKind
    text: str
    gold: str
    evidence: tuple[str, ...]  # the turn ids that hold the answer
    facts: tuple[str, ...]  # the fact ids it asks about
    stale: str | None = None  # update questions: the value the correction replaced


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    index: int
    day: date
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    conversation_id: str
    user_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    facts: tuple[Fact, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> Iterator[Turn]:
        for session in self.sessions:
            yield from session.turns


@dataclass(frozen=True)
class Corpus:
    seed: int
    conversations: tuple[Conversation, ...]

    @property
    def turns(self) -> list[Turn]:
        return [t for c in self.conversations for t in c.turns]

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]

    @property
    def facts(self) -> list[Fact]:
        return [f for c in self.conversations for f in c.facts]


def generate(conversations: int = 5, seed: int = 7) -> Corpus:
    """``conversations`` conversations, each with its own pair of speakers and user id."""
    if conversations < 1:
        raise ValueError("conversations must be at least 1")
    rng = Random(seed)
    # 20 names make 10 pairs; an 11th conversation has the first one's names again
    pairs = rng.sample(range(len(phrases.SPEAKERS)), 2 * min(conversations, 10))
    made = []
    for index in range(conversations):
        a, b = pairs[(2 * index) % len(pairs)], pairs[(2 * index + 1) % len(pairs)]
        made.append(_Planner(rng, index + 1, (phrases.SPEAKERS[a], phrases.SPEAKERS[b])).write())
    return Corpus(seed, tuple(made))


# --- planning: facts as records, placed into sessions ---------------------------------------


@dataclass
class _Said:
    """A statement planned for a session: its words and the record behind them."""

    key: int
    owner: int  # 0 or 1: which speaker says it
    text: str
    attribute: str
    value: str
    subject: str
    when: When | None = None
    corrects: int | None = None  # key of the statement it corrects
    ask: str | None = None  # how the other speaker may ask for it (vocative slot {n})
    mood: str = "good"


@dataclass
class _Asked:
    kind: QuestionKind
    text: str
    gold: str
    keys: tuple[int, ...]
    stale: str | None = None


@dataclass
class _Pools:
    """Slot values drawn without replacement within a conversation, so two asked-about facts
    never share a value and a question has one right answer (a list that runs out is drawn
    again: only the chatter's pastimes ever do)."""

    rng: Random
    left: dict[str, list[str]] = field(default_factory=dict)

    def take(self, name: str, values: Sequence[str]) -> str:
        if not self.left.get(name):
            self.left[name] = self.rng.sample(list(values), len(values))
        return self.left[name].pop()


class _Planner:
    def __init__(self, rng: Random, index: int, speakers: tuple[tuple[str, str], ...]) -> None:
        self.rng = rng
        self.conversation_id = f"conv-{index:02d}"
        self.user_id = f"recall-quality-{index:02d}"
        self.names = [s[0] for s in speakers]
        self.nicknames = [s[1] for s in speakers]
        self.pools = _Pools(rng)
        start = START + timedelta(days=rng.randrange(START_SPREAD_DAYS))
        days = [start]
        for _ in range(rng.randint(*SESSIONS) - 1):
            days.append(days[-1] + timedelta(days=rng.randint(*SESSION_GAP_DAYS)))
        self.days = days
        self.sessions: list[list[_Said]] = [[] for _ in days]
        self.asked: list[_Asked] = []
        self.relations: list[set[str]] = [set(), set()]
        self.turn_targets: list[int] = []
        self.next_key = 0

    # -- the plan ------------------------------------------------------------------------------

    def write(self) -> Conversation:
        for owner in (0, 1):
            self._plan_speaker(owner)
        for session, said in enumerate(self.sessions):
            target = self.rng.randint(*TURNS_PER_SESSION)
            self.turn_targets.append(target)
            while len(said) < round(target * CONTENT_SHARE_OF_TURNS) - 2:
                counts = [sum(1 for s in said if s.owner == o) for o in (0, 1)]
                if counts[0] == counts[1]:
                    owner = self.rng.randrange(2)
                else:
                    owner = 0 if counts[0] < counts[1] else 1
                said.append(self._chatter(owner, session))
            self.rng.shuffle(said)
            said.sort(key=lambda s: s.corrects is not None)  # never before what it corrects
        return _Writer(self).conversation()

    def _plan_speaker(self, owner: int) -> None:
        rng = self.rng
        updates = rng.sample(sorted(phrases.UPDATES), UPDATES_PER_SPEAKER)
        pairs = rng.sample([*phrases.PAIR_TOPICS, "third_job", "third_move"], PAIRS_PER_SPEAKER)
        taken = set(pairs) | {u for u in updates if u in phrases.TOPICS}
        singles = [t for t in phrases.SINGLE_TOPICS if t not in taken]
        for name in rng.sample(singles, min(SINGLE_PER_SPEAKER, len(singles))):
            self._single(owner, phrases.TOPICS[name])
        for name in pairs:
            if name == "third_job":
                self._third_party(owner, "job")
            elif name == "third_move":
                self._third_party(owner, "move")
            else:
                self._pair(owner, phrases.TOPICS[name])
        for name in updates:
            self._update(owner, phrases.UPDATES[name])
        for _ in range(EVENTS_PER_SPEAKER):
            event = phrases.EVENTS[int(self.pools.take("event", _EVENT_INDEXES))]
            self._event(owner, event)

    def _single(self, owner: int, topic: phrases.Topic) -> None:
        session = self._least_busy(0, len(self.days) - 1)
        said, slots = self._topic_statement(owner, topic, session)
        self._ask("single_hop", self.rng.choice(topic.questions), said.value, (said.key,), slots)

    def _pair(self, owner: int, topic: phrases.Topic) -> None:
        first = self._least_busy(0, len(self.days) - 3)
        second = self._least_busy(first + 2, len(self.days) - 1)
        one, slots = self._topic_statement(owner, topic, first)
        two, _ = self._topic_statement(owner, topic, second)
        gold = f"{one.value} and {two.value}"
        self._ask(
            "multi_hop", self.rng.choice(topic.pair_questions), gold, (one.key, two.key), slots
        )

    def _topic_statement(
        self, owner: int, topic: phrases.Topic, session: int
    ) -> tuple[_Said, dict[str, str]]:
        value = self.pools.take(topic.name, topic.values)
        slots = {"v": value, "a": article(value), "S": self.names[owner]}
        slots["wd"] = self.rng.choice(phrases.WEEKDAYS_PLAIN)
        slots["animal"] = self.rng.choice(phrases.ANIMALS)
        slots["a"] = article(slots["animal"] if topic.name == "pet" else value)
        subject = self.names[owner]
        if topic.name == "relative_city":
            relation, person = self._third_person(owner)
            slots.update(rel=relation, P=person)
        text = self.rng.choice(topic.statements).format(**slots)
        ask = self.rng.choice(topic.asks) if topic.asks else None
        said = self._place(owner, session, text, topic.name, value, subject, ask=ask)
        return said, slots

    def _third_person(self, owner: int) -> tuple[str, str]:
        relation = self.rng.choice([r for r in phrases.RELATIONS if r not in self.relations[owner]])
        self.relations[owner].add(relation)
        return relation, self.pools.take("person", phrases.THIRD_PARTIES)

    def _third_party(self, owner: int, kind: str) -> None:
        relation, person = self._third_person(owner)
        first = self._least_busy(0, len(self.days) - 3)
        second = self._least_busy(first + 2, len(self.days) - 1)
        intro = self.rng.choice(phrases.INTRODUCTIONS).format(rel=relation, P=person)
        met = self._place(owner, first, intro, "relation", relation, person)
        if kind == "job":
            value = self.pools.take("job", phrases.JOBS)
            templates, questions = phrases.THIRD_PARTY_JOB, phrases.THIRD_PARTY_JOB_QUESTIONS
        else:
            value = self.pools.take("city", phrases.CITIES)
            templates, questions = phrases.THIRD_PARTY_MOVE, phrases.THIRD_PARTY_MOVE_QUESTIONS
        text = self.rng.choice(templates).format(P=person, v=value, a=article(value))
        heard = self._place(owner, second, text, f"third_party_{kind}", value, person)
        slots = {"S": self.names[owner], "rel": relation}
        self._ask("multi_hop", self.rng.choice(questions), value, (met.key, heard.key), slots)

    def _update(self, owner: int, update: phrases.Update) -> None:
        last = len(self.days) - 1
        first = self._least_busy(0, last - 5)
        if update.name == "launch":
            second = self._least_busy(first + 2, min(first + 4, last))
            old_day = self.days[second] + timedelta(days=self.rng.randint(10, 30))
            new_day = old_day + timedelta(days=self.rng.randint(14, 35))
            old, new = _month_day(old_day), _month_day(new_day)
            old_gold, new_gold = _day_month(old_day), _day_month(new_day)
        else:
            second = self._least_busy(first + 3, last)
            old, new = self._two_values(update.name)
            old_gold, new_gold = old, new
        slots = {"S": self.names[owner]}
        text = self.rng.choice(update.firsts).format(
            v=old, a=article(old), wd=self.rng.choice(phrases.WEEKDAYS_PLAIN)
        )
        said = self._place(owner, first, text, update.name, old_gold, self.names[owner])
        text = self.rng.choice(update.updates).format(v=new, a=article(new), old=old)
        fixed = self._place(
            owner, second, text, update.name, new_gold, self.names[owner], corrects=said.key
        )
        self._ask(
            "update", self.rng.choice(update.questions), new_gold, (fixed.key,), slots, old_gold
        )
        if update.pair_questions and self.rng.random() < 0.7:
            self._ask(
                "multi_hop",
                self.rng.choice(update.pair_questions),
                f"{old} and {new}",
                (said.key, fixed.key),
                slots,
            )

    def _two_values(self, name: str) -> tuple[str, str]:
        values = {
            "home": ("city", phrases.CITIES),
            "job": ("job", phrases.JOBS),
            "lead": ("person", phrases.THIRD_PARTIES),
            "club": ("club_day", phrases.WEEKDAYS_PLAIN),
            "standup": ("standup", phrases.STANDUP_TIMES),
            "car": ("car", phrases.CARS),
        }
        pool, choices = values[name]
        if name in ("club", "standup"):  # per speaker, not drawn from the conversation's pool
            old, new = self.rng.sample(list(choices), 2)
            return old, new
        return self.pools.take(pool, choices), self.pools.take(pool, choices)

    def _event(self, owner: int, event: phrases.Event) -> None:
        session = self._least_busy(0, len(self.days) - 1)
        day = self.days[session]
        if event.future and self.rng.random() < 0.25:
            when = stated_date(day, self.rng.randint(10, 40))
        else:
            options = (
                future_expressions(day) if event.future else past_expressions(day, event.long_ago)
            )
            when = _choose_when(self.rng, options)
        slots = {"S": self.names[owner], "when": when.phrase}
        if event.slot == "city":
            slots["city"] = self.pools.take("city", phrases.CITIES)
        elif event.slot == "band":
            slots["band"] = self.pools.take("band", phrases.BANDS)
        said = self._place(
            owner,
            session,
            event.statement.format(**slots),
            "event",
            when.gold,
            self.names[owner],
            when=when,
            mood=event.mood,
        )
        self._ask("temporal", event.question, when.gold, (said.key,), slots)

    def _chatter(self, owner: int, session: int) -> _Said:
        rng = self.rng
        when = None
        kind = rng.random()
        if kind < 0.3:
            thing = self.pools.take("thing", phrases.THINGS)
            state, mood = rng.choice(phrases.STATES)
            text = rng.choice(phrases.THING_TEMPLATES).format(thing=thing, state=state)
        elif kind < 0.55:
            template, mood = rng.choice(phrases.CHATTER)
            if "{when}" in template:
                when = _choose_when(rng, past_expressions(self.days[session]))
            text = template.format(when=when.phrase if when else "")
        else:
            pastime = self.pools.take("pastime", phrases.PASTIMES)
            comment, mood = rng.choice(phrases.PASTIME_COMMENTS), "good"
            who = rng.choice(("i", "we"))
            if rng.random() < 0.5:
                pastime += " " + rng.choice(phrases.COMPANIONS)
            if rng.random() < 0.3:
                when = _choose_when(rng, past_expressions(self.days[session]))
                text = f"{who} {pastime} {when.phrase}, {comment}"
            else:
                time = rng.choice(phrases.PASTIME_TIMES)
                text = f"{who} {pastime}{' ' + time if time else ''}, {comment}"
        self.next_key += 1
        return _Said(
            self.next_key, owner, text, "chatter", text, self.names[owner], when, mood=mood
        )

    # -- helpers -------------------------------------------------------------------------------

    def _least_busy(self, low: int, high: int) -> int:
        low, high = max(0, low), max(min(high, len(self.days) - 1), max(0, low))
        candidates = list(range(low, high + 1))
        self.rng.shuffle(candidates)
        return min(candidates, key=lambda s: len(self.sessions[s]))

    def _place(
        self,
        owner: int,
        session: int,
        text: str,
        attribute: str,
        value: str,
        subject: str,
        *,
        when: When | None = None,
        corrects: int | None = None,
        ask: str | None = None,
        mood: str = "good",
    ) -> _Said:
        self.next_key += 1
        said = _Said(
            self.next_key, owner, text, attribute, value, subject, when, corrects, ask, mood
        )
        self.sessions[session].append(said)
        return said

    def _ask(
        self,
        kind: QuestionKind,
        template: str,
        gold: str,
        keys: tuple[int, ...],
        slots: dict[str, str],
        stale: str | None = None,
    ) -> None:
        self.asked.append(_Asked(kind, template.format(**slots), gold, keys, stale))


_EVENT_INDEXES = tuple(str(i) for i in range(len(phrases.EVENTS)))


def _choose_when(rng: Random, options: Sequence[When]) -> When:
    """A kind of expression first ("last <weekday>", "yesterday" ...), then one wording."""
    families = sorted({w.family for w in options})
    family = rng.choice(families)
    return rng.choice([w for w in options if w.family == family])


def _month_day(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {ordinal(day.day)}"


def _day_month(day: date) -> str:
    return f"{day.day} {MONTHS[day.month - 1]}"


# --- writing: sessions of alternating turns -------------------------------------------------


@dataclass
class _Draft:
    who: int
    fragments: list[Fragment]
    said: list[_Said] = field(default_factory=list)
    mood: str | None = None  # what a reaction to it should sound like; None: nothing to react to


class _Writer:
    """Puts each session's planned statements into alternating turns with phatic talk
    around them, then numbers turns and records facts and questions."""

    def __init__(self, plan: _Planner) -> None:
        self.plan = plan
        self.rng = plan.rng

    def conversation(self) -> Conversation:
        plan = self.plan
        sessions: list[Session] = []
        facts: list[Fact] = []
        turn_of: dict[int, str] = {}
        fact_of: dict[int, str] = {}
        for index, (day, said) in enumerate(zip(plan.days, plan.sessions, strict=True)):
            session_id = f"{plan.conversation_id}-s{index + 1:02d}"
            drafts = self._session(said, plan.turn_targets[index])
            start = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(
                hours=self.rng.randint(*SESSION_HOURS), minutes=self.rng.randrange(60)
            )
            at = int(start.timestamp() * 1000)
            turns = []
            for number, draft in enumerate(drafts, 1):
                turn_id = f"{session_id}-t{number:02d}"
                ids = []
                for s in draft.said:
                    fact_id = f"{plan.conversation_id}-f{len(facts) + 1:03d}"
                    turn_of[s.key], fact_of[s.key] = turn_id, fact_id
                    facts.append(
                        Fact(
                            fact_id,
                            s.subject,
                            s.attribute,
                            s.value,
                            plan.names[s.owner],
                            turn_id,
                            day,
                            s.when.phrase if s.when else None,
                            bool(s.when and s.when.relative),
                            fact_of[s.corrects] if s.corrects is not None else None,
                        )
                    )
                    ids.append(fact_id)
                turns.append(
                    Turn(
                        turn_id,
                        plan.conversation_id,
                        session_id,
                        index + 1,
                        plan.names[draft.who],
                        tuple(draft.fragments),
                        at,
                        tuple(ids),
                    )
                )
                at += self.rng.randint(*TURN_GAP_SECONDS) * 1000
            sessions.append(Session(session_id, index + 1, day, tuple(turns)))
        questions = tuple(
            Question(
                f"{plan.conversation_id}-q{number:03d}",
                plan.conversation_id,
                plan.user_id,
                asked.kind,
                asked.text,
                asked.gold,
                tuple(dict.fromkeys(turn_of[k] for k in asked.keys)),
                tuple(fact_of[k] for k in asked.keys),
                asked.stale,
            )
            for number, asked in enumerate(plan.asked, 1)
        )
        return Conversation(
            plan.conversation_id,
            plan.user_id,
            (plan.names[0], plan.names[1]),
            tuple(sessions),
            tuple(facts),
            questions,
        )

    # -- one session ---------------------------------------------------------------------------

    def _session(self, said: list[_Said], target: int) -> list[_Draft]:
        """Turns alternate; a speaker with something left to say says it (after a reaction to
        the last turn, now and then), otherwise replies with phatic talk."""
        rng = self.rng
        first = rng.randrange(2)
        drafts: list[_Draft] = []
        drafts.append(_Draft(first, [self._phatic(phrases.GREETINGS, 1 - first)]))
        drafts.append(_Draft(1 - first, [self._phatic(phrases.GREETING_REPLIES, first)]))
        queues = [[s for s in said if s.owner == who] for who in (0, 1)]
        who = first
        while queues[0] or queues[1]:
            if queues[who]:
                statement = queues[who].pop(0)
                if statement.ask and rng.random() < 0.5:
                    self._ask_for(drafts[-1], statement)
                    drafts.append(self._answer(statement))
                else:
                    drafts.append(self._stated(drafts[-1], statement))
            elif rng.random() < 0.3:
                self._small_talk(drafts)
                continue
            else:
                self._react(drafts)
            who = 1 - drafts[-1].who
        while len(drafts) < target - 2:
            self._small_talk(drafts)
        closer = 1 - drafts[-1].who
        drafts.append(_Draft(closer, [self._phatic(phrases.CLOSINGS, 1 - closer)]))
        drafts.append(_Draft(1 - closer, [self._phatic(phrases.CLOSING_REPLIES, closer)]))
        return drafts

    def _stated(self, last: _Draft, said: _Said) -> _Draft:
        rng = self.rng
        fragments: list[Fragment] = []
        if last.mood is not None and rng.random() < 0.6:
            fragments.append(self._reaction(last.mood, last.who))
        elif rng.random() < 0.15:
            fragments.append(Fragment(rng.choice(phrases.OPENERS), "phatic"))
        fragments.append(self._fact(said))
        if len(fragments) < 3 and rng.random() < 0.85:
            fragments.append(self._elaboration())
        if len(fragments) < 3 and rng.random() < 0.15:
            fragments.append(Fragment(rng.choice(phrases.FOLLOW_UPS), "phatic"))
        return _Draft(said.owner, fragments, [said], said.mood)

    def _ask_for(self, asker_turn: _Draft, said: _Said) -> None:
        """The other speaker's last turn ends with the question ``said`` answers."""
        assert said.ask is not None
        fragments = [f for f in asker_turn.fragments if f.text not in phrases.FOLLOW_UPS][:2]
        fragments.append(Fragment(said.ask.format(n=self._vocative(said.owner)), "phatic"))
        asker_turn.fragments = fragments

    def _answer(self, said: _Said) -> _Draft:
        fragments = [self._fact(said)]
        if self.rng.random() < 0.85:
            fragments.append(self._elaboration())
        return _Draft(said.owner, fragments, [said], said.mood)

    def _elaboration(self) -> Fragment:
        text = self.rng.choice(phrases.ELABORATIONS)
        if self.rng.random() < 0.8:
            text += ", " + self.rng.choice(phrases.ELABORATION_TAILS)
        return Fragment(_sentence(self.rng, text), "content")

    def _react(self, drafts: list[_Draft]) -> None:
        """The other speaker's reply to the last turn: phatic talk only."""
        last = drafts[-1]
        if last.mood is None:
            drafts.append(_Draft(1 - last.who, [self._phatic(phrases.BACKCHANNEL, last.who)]))
            return
        fragments = [self._reaction(last.mood, last.who)]
        if self.rng.random() < 0.8:
            fragments.append(Fragment(self.rng.choice(phrases.FOLLOW_UPS), "phatic"))
        drafts.append(_Draft(1 - last.who, fragments))

    def _small_talk(self, drafts: list[_Draft]) -> None:
        question, answer = self.rng.choice(phrases.SMALL_TALK)
        who = 1 - drafts[-1].who
        drafts.append(_Draft(who, [Fragment(question, "phatic")]))
        drafts.append(_Draft(1 - who, [Fragment(answer, "phatic")]))

    def _reaction(self, mood: str, about: int) -> Fragment:
        if mood == "bad":
            return self._phatic(phrases.SYMPATHY, about)
        pool = phrases.EXCLAMATIONS if self.rng.random() < 0.3 else phrases.COMPLIMENTS
        return self._phatic(pool, about)

    def _phatic(self, pool: Sequence[str], listener: int) -> Fragment:
        return Fragment(self.rng.choice(pool).format(n=self._vocative(listener)), "phatic")

    def _vocative(self, who: int) -> str:
        plan = self.plan
        return plan.nicknames[who] if self.rng.random() < 0.6 else plan.names[who]

    def _fact(self, said: _Said) -> Fragment:
        return Fragment(_sentence(self.rng, said.text), "fact")


def _sentence(rng: Random, text: str) -> str:
    """``text`` ended as chat ends a sentence: a full stop, now and then "!"."""
    return text if text[-1] in "!?." else text + rng.choice((".", ".", ".", "!"))
