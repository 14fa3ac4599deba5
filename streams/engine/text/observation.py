"""Observations: a session's content-bearing turns as short, attributed, dated facts.

A conversation answers later questions only if its memory says who said what, and when. A raw
turn ("Hey Mel! I went to a support group yesterday, it was so powerful.") has neither a
usable speaker (the first person) nor a date ("yesterday"), and its greeting dilutes what an
embedder reads. An observation keeps the turn's facts, in the speaker's own words, with the
pronouns resolved to the people and the relative dates resolved from the turn's event time::

    8 May 2023: Caroline went to a support group yesterday (7 May 2023), it was so powerful.
    8 May 2023, Melanie: the kids loved the camping trip last weekend (29-30 April 2023).

The writer is extractive, like the narrative writer (:mod:`.narrative`): it drops phatic
sentences and clauses (greetings, thanks, backchannel, compliments, name-only exclamations,
questions), rewrites first and second person to the speakers' names
(:func:`~.prose.third_person`) and grounds dates (:mod:`.dates`); it never invents a fact.
A turn is kept when one of its sentences holds a content word: capitals, numbers and dates are
not required, so "i've been going to pottery class on tuesdays" is a fact like any other.

The day is written as people say it ("8 May 2023"), so a question that names the day finds it.
Vocatives are the participants' names (from ``speaker``, or a first name's first letters:
"Mel" for Melanie), never guessed from capitals: "Oscar, my guinea pig" keeps Oscar.

An answer that does not stand alone ("yes, last week!", "Luna and Oliver!") is written after
the question it answers, and the question's turn is one of its sources; one that goes on
about what its speaker said just before ("My sister lived in Tokyo." "Did she like it?" "She
loved it.") is one observation with it. A question nobody
answers is not an observation (the session's narrative lists it as unresolved).

With an assistant (a turn ``agent``: created by the agent), the person's turns are kept whole,
in their own words after their name and day ("8 May 2023, Kenta: Quizlet it is, I'll install
it tonight."): what a person tells an assistant is what they want and how they want it, a
later question of theirs is asked in the same first person, and nothing of it is the essay
that condensing is for (issue 38, RealMem: the user's turns rewritten to the third person and
trimmed of their phatic words lost a needed point in a third of them, found @5 0.19, where
kept whole they lose 3 %, found @5 0.29). Only their relative dates are grounded; a turn that
says nothing ("Thanks!") is still no observation. What they paste for the assistant to work on
(a job advert, a contract's clause: a long run of sentences without a first-person word) is
condensed as an answer is. The assistant's answers are condensed to
what they named, recommended or decided (:mod:`.answer`); a reply to an answer is one
observation with it ("8 May 2023, Kenta: I'll try it. Replying to the agent: the agent
recommends Quizlet."), both turns its sources, the reply first (what a contradiction judge
reads).

Part of the pure engine: no I/O, no clock; the same turns always give the same observations.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from streams.engine.text.answer import (
    ENDS_IN_ABBREVIATION,
    condensed_answer,
    named_again,
    picked_lines,
    topic_terms,
    without_emphasis,
)
from streams.engine.text.dates import (
    day_label,
    grounded,
    has_a_verb,
    resolve_dates,
    tells_what_happened,
)
from streams.engine.text.facts import MONTHS, fact_terms
from streams.engine.text.prose import third_person

__all__ = [
    "AGENT",
    "approves",
    "FIRST_PERSON",
    "Observation",
    "Turn",
    "bursts",
    "content_words",
    "digest_header",
    "is_passing_state",
    "is_phatic",
    "is_question",
    "moves_on",
    "names_several",
    "own_words",
    "participants",
    "people_named",
    "said_by",
    "split_sentences",
    "stated_part",
    "write_observations",
]

AGENT = "the agent"
"""How an observation names an assistant (a turn created by the agent)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a session: who said it (a name, or "the user"/"the agent") and when."""

    memory_id: str
    text: str
    speaker: str
    at: int  # event time, epoch ms (UTC)
    agent: bool = False  # said by an assistant (created_by "agent"): its answer is condensed
    earlier: tuple[str, ...] = ()  # the messages before this one in its burst (:func:`bursts`)
    after_gap: bool = False  # a turn between this and the one before is gone: no burst

    @property
    def ids(self) -> tuple[str, ...]:
        """The memories this turn is: its burst's earlier messages, then its own."""
        return (*self.earlier, self.memory_id)


@dataclass(frozen=True, slots=True)
class Observation:
    content: str
    source_ids: tuple[str, ...]  # the turns it states, the fact's own turn last
    speaker: str
    passing: bool = False  # only states a passing state ("the gym has been a mess lately")


def _discourse() -> dict[str, list[str]]:
    """``discourse_words.json``: NLTK's English stop words, general English discourse words
    (greetings, thanks, backchannel, reactions, hedges) and formulae ("take care")."""
    text = files(__package__).joinpath(_DISCOURSE_FILE).read_text(encoding="utf-8")
    return {key: words for key, words in json.loads(text).items() if not key.startswith("_")}


_DISCOURSE_FILE = "discourse_words.json"
_LISTS = _discourse()
FORMULAE = tuple(_LISTS.pop("formulae"))
"""Set phrases that say nothing whatever their words ("gotta run", "hang in there")."""
_FORMULA = re.compile(
    r"\b(?:" + "|".join(re.escape(f).replace("'", "['’]") for f in FORMULAE) + r")\b",
    re.IGNORECASE,
)
PHATIC_WORDS = frozenset(word for words in _LISTS.values() for word in words)
"""Lower-case words that state nothing a later question could ask about: a sentence whose
words are all here (participants' names aside) is phatic. Read once from
``discourse_words.json``; a content word wrongly listed there would drop real facts."""

_ADDRESSING = frozenset({"hi", "hey", "hello", "hiya", "heya", "thanks", "thank", "bye", "dear"})
"""Words a name follows when someone is addressed ("Hey Mel", "Thanks Jon"): a vocative."""

# A yes/no answer: its facts need the question it answers. Besides the words of one, English
# answers by echoing the question's auxiliary after a pronoun: "I did, I was so nervous",
# "We haven't." (the auxiliary ends its clause), or hedges it: "For sure!", "Probably", "I
# don't think so". An interjection may come first ("OMG yes!"), but not before "no": "Oh no,
# that's rough" is sympathy.
_ANSWER_WORDS = (
    r"(?:(?:yes|yeah|yep|yup|no(?![ \t]+way)|nope|nah|sure|for sure|definitely|of course|"
    r"absolutely|totally|certainly|maybe|probably|perhaps|hopefully|not really|not yet|"
    r"not at all|not sure|kind of|sort of)\b"
    r"|(?:i|we)[ \t]+(?:do[ \t]+not|don['’]t)?[ \t]*(?:think|hope|guess|believe)[ \t]+so\b"
    r"|(?:i|we|he|she|they|it|you)[ \t]+(?:do|does|did|am|is|are|was|were|have|has|had|can"
    r"|could|will|would|should)(?:n['’]t|[ \t]+not)?(?=[ \t]*(?:[,.!;]|$)))"
)
_ANSWER_START = re.compile(
    rf"^(?:(?:oh|ah|omg|wow|well|haha|lol|um+|hmm+)\b[ \t,.!]*(?!no\b))*{_ANSWER_WORDS}",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NAME_PREFIX = re.compile(r"^([A-Z][\w'.-]{0,40}(?: [A-Z][\w'.-]{0,40}){0,2}):[ \t]+(?=\S)")
# After ".", "!" or "?" (one or more) and blanks; chat is often lower-case, so the next
# word's case says nothing. Abbreviations that end in a full stop are not breaks.
_BREAK = re.compile(r"(?<=[.!?])[ \t]+|\n+")
SHORT_ANSWER_WORDS = 6  # content words below which a yes/no answer follows its question
NAMED_ANSWER_WORDS = 3  # and any other answer ("Luna and Oliver!")
# What refers back to something said before: a third person's pronouns, and demonstratives
_PERSONAL = "it|they|them|she|he|her|him"
_DEMONSTRATIVE = "that|this|there|those|these"
# A question that asks for a thing, a place, a time, a person or an amount (not "how is …")
_WH_NAMED = r"which|where|when|who|whom|whose|how[ \t]+(?:many|much|long|old|far|often|soon)"
_WH_THING = re.compile(
    r"(?:(?:since|until|till|from|for|with|to|at|in)[ \t]+)?"  # "Since when?", "With who?"
    rf"(?:{_WH_NAMED}|what(?![ \t]+about\b)(?!['’]s[ \t]+up\b))\b",
    re.IGNORECASE,
)
# A question for a named thing, a place, a time, a person or an amount, which a word answers
# ("Which color?", "Where to?"): not an invitation to news ("What's new?", "What else?")
_NAMED_THING = re.compile(
    rf"(?:{_WH_NAMED}"
    r"|what[ \t]+(?!(?:is|are|was|were|do|does|did|have|has|had|else|about|up|new)\b)"
    r"[^\W\d_]+)\b",
    re.IGNORECASE,
)
# A subject pronoun or an auxiliary: a sentence with one is a clause, not an answer's fragment
_CLAUSE_WORD = re.compile(
    r"\b(?:i|we|you|he|she|they|it|this|that|there|am|is|are|was|were|be|been|have|has|had"
    r"|do|does|did|will|would|can|could|should|shall|may|might|must)\b",
    re.IGNORECASE,
)


def participants(speakers: Sequence[str]) -> dict[str, str]:
    """Speaker → the other participant, by who speaks most: the person "you" means."""
    counts: dict[str, int] = {}
    for speaker in speakers:
        counts[speaker] = counts.get(speaker, 0) + 1
    ranked = sorted(counts, key=lambda s: (-counts[s], s))
    others: dict[str, str] = {}
    for speaker in ranked:
        other = next((s for s in ranked if s != speaker), None)
        others[speaker] = other if other is not None else _counterpart(speaker)
    return others


def _counterpart(speaker: str) -> str:
    """The other party of a one-sided session: the agent for the user and vice versa."""
    return AGENT if speaker == "the user" else "the user"


def name_prefix(text: str) -> tuple[str | None, str]:
    """A transcript line's "Name: " prefix and the words after it (the way many chat logs
    attribute turns), or (None, text)."""
    match = _NAME_PREFIX.match(text)
    if match is None:
        return None, text
    return match.group(1), text[match.end() :]


def split_sentences(text: str) -> list[str]:
    """``text`` cut after sentence-final punctuation whatever case follows, and at line
    breaks (chat is often lower-case), keeping abbreviations such as "p.m." or "Dr." whole."""
    pieces: list[str] = []
    start = 0
    for brk in _BREAK.finditer(text):
        piece = text[start : brk.start()]
        if ENDS_IN_ABBREVIATION.search(piece) and "\n" not in brk.group():
            continue
        if piece.strip():
            pieces.append(piece.strip())
        start = brk.end()
    if text[start:].strip():
        pieces.append(text[start:].strip())
    # an abbreviation skipped above left its sentence joined to the next: already whole
    return pieces


def content_words(text: str, names: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``text`` that state something: neither phatic nor function words, nor
    a participant's name (a vocative), nor a capitalised word standing alone after a
    greeting ("Hey Mel")."""
    words = []
    previous = ""
    for match in _WORD.finditer(text):
        word = match.group()
        low = _folded(word)
        vocative = previous in _ADDRESSING and word[:1].isupper()
        previous = low
        if low in PHATIC_WORDS or low in names or vocative:
            continue
        if len(low) > 3 and low[-1] == low[-2] and _ELONGATED.sub(r"\1", low) in PHATIC_WORDS:
            continue  # "heyy", "sooo", "yesss": an interjection said longer
        if word[:1].isupper() and _shortened(low, names):
            continue  # "Sam" for Samuel, "Mel" for Melanie: a participant called by a short name
        words.append(low)
    return words


_ELONGATED = re.compile(r"(\w)\1+$")


def _shortened(word: str, names: frozenset[str]) -> bool:
    """Whether ``word`` begins a participant's name, three letters or more ("sam" of
    "samuel"): the usual way a first name is shortened."""
    return len(word) >= 3 and any(n.startswith(word) and n != word for n in names)


def _folded(word: str) -> str:
    """A word as the word lists hold it: case-folded, with a typographic apostrophe."""
    return word.casefold().replace("’", "'")


_COMMON_VERBS = (
    "get|go|have|like|want|know|come|need|make|take|see|say|think|work|live|do|play|eat|feel"
    "|look|start|stay|keep|find|give|tell|try|leave|call|mean|love|hate|use|bring|buy|pay|meet"
    "|win|lose|run|move|ever|still|even|actually|really|not"
)
"""The commonest English verbs in their plain form (and the adverbs that come before one):
after an auxiliary and a name they make it a question without its mark."""
# Words a question may open with before it asks ("so what", "ok did you", "lol how many")
_OPENING_FILLER = r"(?:(?:yo|so|and|but|ok|okay|oh|hey|btw|lol|wait|also|anyway|um|hmm)\b[ \t,]*)*"
_QUESTION_LEAD = (
    r"(?:(?:[.…]+|[\u2600-\u27bf\U0001f300-\U0001faff]+|(?:no|nah|nope|yes|yeah|yep|ugh|omg)\b)"
    r"[ \t,]*)*"
)
"""What may open a question written without its mark besides filler: an ellipsis, an emoji,
a yes or no ("...no 😬 what does mum even like" asked what the answer "Freesias" named;
blind conversation 63). Not filler elsewhere: "no" opens an answer's statement."""
_UNMARKED_QUESTION = re.compile(
    _QUESTION_LEAD + _OPENING_FILLER + r"(?:"
    # an auxiliary before its subject: "did you end up adopting that cat"
    r"(?:do|have)(?:n['’]t)?[ \t]+(?:you|u|ya|i|we|he|she|they)\b"
    # (not "did it" told with its subject left out, before when: "did it three days ago")
    r"|(?!did[ \t]+(?:it|that|this)[ \t]+(?:already|yesterday|today|tonight|last|this|earlier"
    r"|again|just|myself|ourselves|\w+[ \t]+(?:days?|weeks?|months?)[ \t]+ago)\b)"
    r"(?:does|did|are|is|was|were|has|can|could|will|would|should)(?:n['’]t)?[ \t]+"
    r"(?:you|u|ya|i|we|he|she|they|it|there|your|his|her|their|the|that|this)\b"
    # ... or before a name and a verb: "and does tiago get a job too lol", "has Ana moved
    # out" ("did yoga this morning": no verb after its noun)
    r"|(?:does|did|can|could|will|would|should)(?:n['’]t)?[ \t]+[^\W\d_]+[ \t]+"
    rf"(?:{_COMMON_VERBS})\b"
    r"|(?:has|have)(?:n['’]t)?[ \t]+(?![a-z]+ly\b|just\b|already\b|also\b|finally\b|never\b"
    r"|(?:a|an|the|some|no|more|any|this|that|these|those|my|your|our|their|his|her|its)\b)"
    r"[^\W\d_]+[ \t]+[a-z]+ed\b"
    # a question word before an auxiliary, not a pseudo-cleft ("what's funny is ...")
    r"|(?!what(?:['’]s|[ \t]+is)[ \t]+[^\W\d_]+[ \t]+(?:is|was)\b)"
    r"(?:what|when|where|who|why|how)(?:['’](?:s|re|d|ll)\b|[ \t]+(?:do|does|did|are|is|was"
    r"|were|have|has|had|can|could|will|would|should)\b)"
    r"|how[ \t]+(?:many|much|long|old|far|often|come)\b"
    # a question word alone, or before the one thing it asks for, and nothing else: "whose
    # sock", "what colour", "which one", "why", "how so" ("what a day" exclaims)
    r"|(?:(?:what|which|whose)[ \t]+(?!(?:a|an)\b)[^\W\d_]+"
    r"|(?:what|which|whose|when|where|who|why|how)(?:[ \t]+(?:so|then|now|exactly))?)"
    r"(?:[ \t]+(?:lol|tho|though|then|now|again))?[ \t]*$"
    r")",
    re.IGNORECASE,
)


_CLOSING = "\"”’')*_"  # what may close a sentence after its mark: quotes, brackets, emphasis


def _final_marks(text: str) -> str:
    """The marks ``text`` ends with ("?!", "!!", "." or "")."""
    return text[len(text.rstrip(".!?…")) :]


def is_question(sentence: str) -> bool:
    """Whether ``sentence`` asks: a "?" among its final marks ("really?!"), or, written
    without one as chat often is ("did you end up adopting that cat", "lol how many turtles
    do you have now", "how did the home check go!!"), it opens as English questions do (an
    auxiliary before its subject, or a question word before an auxiliary) and ends with no
    "." (an exclamation mark alone is excitement, which "how cool is that!" shows by how it
    opens, and "Did it!" by being too short to ask), or it is a question word alone or
    before the one thing it asks for ("whose sock", "what colour", "why"). Without this, an
    answer to such a
    question lost it ("three. Shelly, Tank and Bubbles." no longer said they are turtles;
    "yesterday yeah. woman called pam came round" no longer said it was the home check) and
    the question was kept as a statement."""
    text = sentence.rstrip().rstrip(_CLOSING)
    final = _final_marks(text)
    if "?" in final:
        return True
    if "." in final or ("!" in final and len(text.split()) < 3):
        return False  # "Did it!": done, not asked
    return _UNMARKED_QUESTION.match(text.lstrip(" \t\"“'(")) is not None


APPROVAL = 0.5
"""The VADER compound score (-1 to 1) from which a reply's opening welcomes the answer: at 0.3
"ok" (0.30) and "sounds fine" would count; 0.5 takes "perfect" (0.57), "great, let's go with
the second one" (0.62), not "hmm not sure about that one" (-0.24) nor "this is a start.
However, it's lacking ..." (0.0). Blind conversations 38 and 39 at 0.3: 0.62 / 0.72 with
more characters (0.40 / 0.40)."""
OPENING_SENTENCES = 2
"""The sentences of a reply that :func:`approves` reads: a person welcomes an answer first
("Perfect, thanks! Now, what about ..."), then moves on."""


def approves(reply: str) -> bool:
    """Whether the person's ``reply`` opens by welcoming the answer before it, so that the
    answer keeps more (:data:`~.answer.APPROVED_SHARE`): the VADER sentiment (Hutto & Gilbert
    2014, a maintained lexicon of 7,500 English words and emoticons rated by people, with
    rules for negation, degree and "but") of its first sentences that ask nothing
    (:func:`is_question`) at least :data:`APPROVAL`. Pure: the lexicon is read once, and the
    same text always scores the same."""
    opening = " ".join(s for s in split_sentences(reply)[:OPENING_SENTENCES] if not is_question(s))
    return bool(opening) and _sentiment().polarity_scores(opening)["compound"] >= APPROVAL


@functools.cache
def _sentiment() -> SentimentIntensityAnalyzer:
    return SentimentIntensityAnalyzer()


def _asked(sentence: str) -> str:
    """A question as written down: with its question mark ("how did it go!!" → "how did it
    go?")."""
    text = sentence.rstrip()
    if "?" in _final_marks(text.rstrip(_CLOSING)):
        return text
    return text.rstrip("!") + "?"


def _questions(text: str) -> list[str]:
    """The questions ``text`` asks (:func:`is_question`), each with its question mark."""
    return [_asked(s) for s in split_sentences(text) if is_question(s)]


def is_phatic(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether ``sentence`` is chit-chat: a greeting, thanks, backchannel, praise, a
    name-only exclamation, or a question (a question states no fact; its answer does)."""
    if is_question(sentence):
        return True
    return not content_words(sentence, names)


def write_observations(turns: Sequence[Turn], max_chars: int = 1000) -> list[Observation]:
    """The observations of a session's ``turns`` (in time order), at most one per turn.

    A person's turn: every sentence that states something, trimmed of phatic clauses at either
    end, in the third person with the participants' names, relative dates followed by the date
    they name, prefixed by the turn's day in words; an answer that does not stand alone
    follows its question. A person's turn to an assistant: every sentence, in the person's
    own words (a request is a statement of what they want), what they pasted condensed. An
    assistant's turn: what it named, recommended or decided (:mod:`.answer`). A text longer
    than ``max_chars`` becomes several observations."""
    speakers = [turn.speaker for turn in turns]
    names = frozenset(_name_words(speakers))
    turns = bursts(turns, names)
    speakers = [turn.speaker for turn in turns]
    others = participants(speakers)
    agents = frozenset(turn.speaker for turn in turns if turn.agent)
    observations: list[Observation] = []
    previous: Turn | None = None
    earlier: Turn | None = None  # the turn before ``previous``
    # an assistant's answer its reply follows, and whom the answer addresses
    replied: tuple[Turn, list[str], str] | None = None
    called = {speaker: frozenset(_name_words([speaker])) for speaker in others}

    answers: list[Turn] = []  # the assistant's answers so far

    def words(unit: str) -> list[str]:
        return content_words(unit, names)

    for turn in turns:
        you = _addressee(turn, previous, called, others)
        if turn.agent:
            if replied is not None:
                observations.extend(_observe(*replied, None, max_chars))
            answers.append(turn)
            stated = condensed_answer(turn.text, max_chars, words)
            replied = (turn, stated, you) if stated or _asks(turn.text) else None
            earlier, previous = previous, turn
            continue
        to_agent = others.get(turn.speaker) in agents
        echoed = _echoed_words(previous, turn, names)
        last = _others_last_sentence(previous, turn)
        replying = _replies_to_a_wh_question(last)
        listener = (
            frozenset() if to_agent else called.get(others.get(turn.speaker, ""), frozenset())
        )
        stated = _stated(
            turn.text,
            names,
            requests=to_agent,
            echoed=echoed,
            replying=replying,
            listener=listener,
        )
        polar = bool(_ANSWER_START.match(turn.text.lstrip()))  # a yes or no opens it
        question = _question_answered(previous, turn, stated, names, polar)
        word_only = not stated and _answers_a_word(question, previous, last, names)
        if word_only:
            # "Blue." to "Which color?" is no small talk; "same old" to "What's new?" is
            stated = _stated(turn.text, names, echoed=echoed, answering=True, listener=listener)
        if question is not None and polar:
            stated = _answer(turn.text, stated)  # "Yes!" is phatic alone, a fact after it
        if to_agent and stated:
            stated = _said_to_an_assistant(turn.text, max_chars, words)
        picked: frozenset[int] = frozenset()
        follows = replied is not None and replied[0] is previous  # the answer it may reply to
        if replied is not None and follows:
            answering = replied[0]
            # "the second one", "the KD-8000": the answer keeps the item the reply chose
            picked = picked_lines(answering.text, turn.text, words)
            stated_of_answer = condensed_answer(
                answering.text, max_chars, words, picked, turn.text, approves(turn.text)
            )
            replied = (answering, stated_of_answer, replied[2])
        if (
            replied is not None
            and follows
            and stated
            and replied[1]
            and (picked or _replies_to(replied[1], turn, names, polar))
        ):
            # a reply to an assistant follows what it replies to: one memory of both
            reply, *moved_on = _topics(stated) if to_agent else [stated]
            observations.extend(
                _replying(
                    turn, reply, you, question, max_chars, replied, words, picked, quoted=to_agent
                )
            )
            for topic in moved_on:
                observations.extend(_observe(turn, topic, you, None, max_chars, quoted=True))
        else:
            if replied is not None:
                observations.extend(_observe(*replied, None, max_chars))
            if stated:
                # what an answer moves on to is no answer; a message that moves on tells two
                # things ("... bigger thing: thursday night rosa found him sweaty and
                # confused"; "maya is always right. ok flat news too, i saw one in
                # portobello"), each found by its own memory
                starts = _paragraph_starts(turn.text) if to_agent else frozenset()
                topics = _topics(stated, starts)
                heading = " ".join(topics[0])
                if (
                    len(topics) > 1
                    and question is None
                    and len(words(heading)) < 2
                    and not has_a_verb(heading)
                ):
                    # "few updates. 1) declan backed down ...": a heading of what follows
                    topics = [topics[0] + topics[1], *topics[2:]]
                stated, *news = topics
                written = _observe(turn, stated, you, question, max_chars, quoted=to_agent)
                skipped = replied[0] if replied is not None else None
                may_choose = to_agent and question is None  # from an earlier answer
                chose = _chosen_before(answers, skipped, turn, words) if may_choose else None
                if chose is not None:
                    # "leaning toward the kansai-hiroshima one", two answers after it was named
                    joined = _observe(turn, stated, you, None, max_chars, chose, quoted=True)
                    written = joined if len(joined) == 1 else written
                if question is None and not to_agent:
                    answer = (turn, stated, you)
                    taken_up = _taken_up(
                        observations, earlier, previous, answer, written, names, polar, max_chars
                    )
                    if taken_up is written:
                        taken_up = _said_of_that(observations, previous, turn, written, max_chars)
                    if taken_up is written:
                        taken_up = _told_on(
                            observations, earlier, previous, turn, written, names, max_chars
                        )
                    written = taken_up
                    if word_only and [o.source_ids for o in written] == [turn.ids]:
                        written = []  # "How come?" "work": not joined to what it answers
                elif question is not None and not to_agent:
                    written = _said_of_someone(
                        observations, earlier, turn, question, written, max_chars
                    )
                observations.extend(written)
                for topic in news:
                    observations.extend(
                        _observe(turn, topic, you, None, max_chars, quoted=to_agent)
                    )
        replied = None
        earlier, previous = previous, turn
    if replied is not None:
        observations.extend(_observe(*replied, None, max_chars))
    return observations


LOOKBACK_ANSWERS = 3
"""Earlier answers of the session in which a person's message may name an item again
(:func:`_chosen_before`): the cost of each message stays bounded, whatever the session's
length."""


def _chosen_before(
    answers: list[Turn], skipped: Turn | None, turn: Turn, words: Callable[[str], list[str]]
) -> tuple[Turn, list[str]] | None:
    """The latest earlier answer of the session (not ``skipped``, the one ``turn`` follows
    and does not reply to) whose items ``turn`` names again, with those items
    (:func:`~.answer.named_again`): "ok honestly leaning toward the kansai-hiroshima one
    but let me look at flights first" came after an answer on ticket prices, the one
    before it having named the "Kansai-Hiroshima Area Pass" (blind conversation 33). Its
    memory is one with those items, as a reply's is with the answer it follows. A message
    that replies to the answer it follows stays with that one: letting an earlier answer's
    items take it away cost RealMem's evidence @5 / @10 0.192 / 0.267 -> 0.188 / 0.261."""
    earlier = [answer for answer in answers[-LOOKBACK_ANSWERS - 1 :] if answer is not skipped]
    for answer in reversed(earlier[-LOOKBACK_ANSWERS:]):
        items = named_again(answer.text, turn.text, words)
        if items:
            return answer, items
    return None


TOPIC_WORDS = 6
"""Content words (of three letters or more) from which a person's turn after an assistant's
answer says enough to be about something else: with fewer ("sounds good, book the 9:40"), it
replies to the answer whatever words it uses."""


def _replies_to(kept: list[str], turn: Turn, names: frozenset[str], polar: bool) -> bool:
    """Whether ``turn`` replies to the assistant's answer before it (``kept``: the statements
    its memory keeps of it), so that one memory of both keeps what the reply is about: it
    answers yes or no, takes the answer up in its first sentence ("I don't like it, grocery
    stores are a different beast"; "Continue."), says too little to be about anything else
    (:data:`TOPIC_WORDS`), or shares a word with what its memory keeps of the answer. A word
    shared only with what the condensation drops had joined "our neighbour Peggy will water,
    she's a dote …" to what was kept of an answer on readying a garden for a holiday (its
    first courgettes, a geranium, strawberries): the memory was about the harvest and ranked
    below the context for "Which neighbour agreed to water the garden?" (blind conversations
    25 and 27: single-hop 0.80 -> 0.90 and answers 0.70 -> 0.75; RealMem evidence @5 / @10
    0.191 / 0.264 -> 0.190 / 0.261, points @2,000 0.258 -> 0.259).
    A message that opens by moving on (:data:`_MOVES_ON`: "Also my best friend Juliana wants
    to visit in december!", "Different topic tonight.") replies to nothing: joined to the
    answer on child benefits before it, blind conversation 64's "Also Lívia needs something
    after school ..." was a memory of both (blind 67: 0.75 -> 0.78; RealMem unchanged).
    A person moves on in the next message as often as they reply ("wetsuit came! ..." after
    the assistant's outline of a handoff document): one memory of both was about two things,
    and its embedding about neither (issue 38, conversation 11: the handoff document's answer
    was found 45th for a question about it)."""
    if polar:
        return True
    if moves_on(turn.text):
        return False  # "Also Lívia needs something after school ...": news, not a reply
    own = _topic_words(turn.text, names)
    if len(own) < TOPIC_WORDS:
        return True
    opening = next((s for s in split_sentences(turn.text) if _topic_words(s, names)), "")
    if _TAKES_UP.match(opening) or _refers_back(opening, names) or _GOES_ON.search(opening):
        return True
    return not own.isdisjoint(_topic_words(" ".join(kept), names))


def _refers_back(sentence: str, names: frozenset[str]) -> bool:
    """Whether a personal pronoun of ``sentence`` points outside it: one after the sentence's
    first topic word has that word for its antecedent as often ("I'm raising money for Cancer
    Care West, they were so good to my dad when he had treatment")."""
    found = _REFERS_TO_IT.search(sentence)
    return found is not None and not _topic_words(sentence[: found.start()], names)


# ... or asks for more of it, or for it again otherwise ("Continue.", "Try again with words in
# English", "based on the above")
_GOES_ON = re.compile(r"\b(?:continue|again|above|previous|instead)\b", re.IGNORECASE)


def _topic_words(text: str, names: frozenset[str]) -> frozenset[str]:
    """The content words of ``text`` that may name a topic (:func:`~.answer.topic_terms`)."""
    return topic_terms(content_words(text, names))


ANSWER_MIN_CHARS = 80
"""The least of an answer a reply's memory carries when both do not fit one memory: less is a
fragment of the answer, which is then a memory of its own."""


def _replying(
    turn: Turn,
    stated: list[str],
    you: str,
    question: tuple[Turn, str] | None,
    max_chars: int,
    replied: tuple[Turn, list[str], str],
    words: Callable[[str], list[str]],
    picked: frozenset[int],
    *,
    quoted: bool,
) -> list[Observation]:
    """``turn``'s observation with the assistant's answer it replies to (``replied``: the
    answer's turn, its kept statements and whom it addresses; ``picked``: the answer's lines
    the reply chose, :func:`~.answer.picked_lines`; ``words``: the session's content words,
    the function the answer was condensed with, so its parse is reused), when both fit one
    memory.
    When they do not, the answer keeps what fits after the reply (its worthiest statements,
    :mod:`.answer`), and where too little fits it is a memory of its own before the reply's:
    a memory cut in two gave the answer's second half the person's header ("8 June 2026,
    Oliver: Lodging: Rifugio Lagazuoi; Segment 2: …", the assistant's itinerary)."""
    answering, answer, addressed = replied
    both = _observe(turn, stated, you, question, max_chars, (answering, answer), quoted=quoted)
    if len(both) == 1:
        return both
    alone = _observe(turn, stated, you, question, max_chars, quoted=quoted)
    room = max_chars - len(f"{alone[0].content} {REPLYING_TO} {you}: ") if len(alone) == 1 else 0
    if room >= ANSWER_MIN_CHARS:
        fewer = condensed_answer(answering.text, room, words, picked, turn.text)
        both = _observe(turn, stated, you, question, max_chars, (answering, fewer), quoted=quoted)
        if fewer and len(both) == 1:
            return both
    return [*_observe(answering, answer, addressed, None, max_chars), *alone]


BURST_MESSAGE_CHARS = 80
BURST_MAX_CHARS = 300


def bursts(turns: Sequence[Turn], names: frozenset[str] = frozenset()) -> list[Turn]:
    """``turns`` with each burst of a person's short messages as one turn: chat sends one
    utterance in pieces ("his racing name was Lightning Bolt Express" / "im calling him
    noodle"; "omg" / "guess what" / "i got the job!!"), and a piece alone loses what the
    others say of it. A message joins the one before it when both are the same person's (not
    an assistant's), either is shorter than a short sentence (:data:`BURST_MESSAGE_CHARS`)
    and together they stay within :data:`BURST_MAX_CHARS`: longer messages each say a thing
    of their own, and one memory holding several is found by none of them (on hand-written
    conversations, joining every run of one person's turns lost two answers of 45 where
    joining short pieces lost none), nor across a turn no longer there (``after_gap``). A
    message that says nothing or asks (:func:`is_phatic`: "That's so cool!", "what did u
    name him??") stays a turn of its own, as the writer reads reactions and questions. The
    joined turn is the last message's, with its pieces on lines of their own (sentences,
    however they end) and the earlier ones in ``earlier``."""
    joined: list[Turn] = []
    alone = True  # the last turn is a reaction or a question: nothing joins it
    for turn in turns:
        last = joined[-1] if joined else None
        said = not turn.agent and not is_phatic(turn.text, names)
        if (
            last is not None
            and said
            and not alone
            and not turn.after_gap
            and not last.agent
            and last.speaker == turn.speaker
            and min(len(last.text.strip()), len(turn.text.strip())) < BURST_MESSAGE_CHARS
            and len(last.text) + len(turn.text) < BURST_MAX_CHARS
        ):
            text = f"{last.text.rstrip()}\n{turn.text.lstrip()}"
            joined[-1] = Turn(turn.memory_id, text, turn.speaker, turn.at, False, last.ids)
        else:
            joined.append(turn)
        alone = not said
    return joined


def _taken_up(
    observations: list[Observation],
    earlier: Turn | None,
    previous: Turn | None,
    answer: tuple[Turn, list[str], str],
    written: list[Observation],
    names: frozenset[str],
    polar: bool,
    max_chars: int,
) -> list[Observation]:
    """``written`` (a person's ``answer``: its turn, stated sentences and addressee), joined
    to what it goes on about when the question between names nothing and the answer refers
    back too, or answers yes or no (``polar``): "My sister lived in Tokyo for two years."
    "Did she like it?" "She loved it, she still talks about the food." is one memory; apart,
    "She loved it" says neither who nor what. Likewise a question for a thing that names
    nothing ("Since when?") answered by a fragment ("Since June! It's small."). The
    speaker's own earlier observation is taken from ``observations`` (the last one, of
    ``earlier``, with nothing of ``previous`` after it) and replaced by the joined one, which
    goes on as :func:`_observe` writes an answer after its question; ``written`` as it is
    otherwise."""
    if (
        earlier is None
        or previous is None
        or earlier.agent
        or previous.agent
        or len(written) != 1
        or not observations
        or observations[-1].source_ids[-1] != earlier.memory_id
        or observations[-1].speaker != written[0].speaker
    ):
        return written
    last = split_sentences(previous.text)[-1:]
    if not last or not is_question(last[0]):
        return written  # it answers what the question's turn ends with
    asked = _asked(last[0])
    refers = bool(_REFERS_TO_SOMEONE.search(asked))
    bare = _bare_wh(asked, names)  # "Wait, why?": whatever follows answers it
    thing = _asks_for_a_thing(asked) or bare
    if (_asks_about(asked, names) and not bare) or not (refers or thing):
        return written
    turn, stated, you = answer
    me = turn.speaker
    day = day_label(turn.at)
    before = observations[-1]
    opening = next(iter(split_sentences(_opening(written[0].content, day, me))), "")
    takes_up = (refers or polar) and (
        polar or _TAKES_UP.match(opening) or _REFERS_TO_IT.search(opening)
    )
    # "Since when?" "Since June!": read as said ("7 May 2023" added after "last night" is no
    # clause of "may")
    fragment = thing and not _CLAUSE_WORD.search(stated[0])
    if not (takes_up or fragment or bare) or not before.content.startswith(day):
        return written  # "the gym has been quiet" goes on about something else
    after_question = _observe(turn, stated, you, (previous, asked), max_chars)
    if len(after_question) != 1:
        return written
    joined = f"{before.content} {_opening(after_question[0].content, day, me)}"
    return _join_to_last(observations, joined, after_question[0], max_chars) or written


def _said_of_that(
    observations: list[Observation],
    previous: Turn | None,
    turn: Turn,
    written: list[Observation],
    max_chars: int,
) -> list[Observation]:
    """``written`` (``turn``, between people) joined after the other's observation just before
    it when it opens by saying something of "that", what the other just said ("Pogácsa would
    have found him in a minute." "That's exactly why Pogácsa is never visiting our flat.";
    "June 20th, 250,000 forints a month." "That's more than my pension!": apart, neither says
    what "that" is; blind conversation 59), or with a few words and no verb that can only go
    on from it ("still cant believe u beat me at scrabble" "312 to 240 😎": the score of
    what?; blind conversation 63). ``written`` as it is otherwise, or when one memory would
    not hold both."""
    if previous is None or previous.agent or previous.speaker == turn.speaker:
        return written
    of_that = _OF_THAT.match(turn.text.lstrip()) is not None
    fragment = None if of_that else _goes_on(turn.text)
    if not of_that and fragment is None:
        return written
    last = _last_and_said(observations, previous, turn, written)
    if last is None:
        return written
    before, said = last
    if of_that and not _OF_THAT.match(said):
        return written  # what opened with "that" was phatic ("That's great! we ...")
    if fragment is not None and said.split(None, 1)[0] not in fragment.split():
        return written  # the fragment was phatic, and what follows it stands alone
    joined = f"{_finished(before.content)} {turn.speaker}: {said}"
    return _join_to_last(observations, joined, written[0], max_chars) or written


def _last_and_said(
    observations: list[Observation], source: Turn, turn: Turn, written: list[Observation]
) -> tuple[Observation, str] | None:
    """The last of ``observations`` when ``written`` (``turn``'s) may go on from it
    (:func:`_last_of`: ``source``'s, of the same day), and what ``written`` says without its
    header; None otherwise."""
    day = day_label(turn.at)
    before = _last_of(observations, source, written, day)
    if before is None:
        return None
    return before, _opening(written[0].content, day, turn.speaker)


def _told_on(
    observations: list[Observation],
    earlier: Turn | None,
    previous: Turn | None,
    turn: Turn,
    written: list[Observation],
    names: frozenset[str],
    max_chars: int,
) -> list[Observation]:
    """``written`` (``turn``, between people) joined after its speaker's own observation
    before it when the other's turn between says nothing (a cheer: "NADIA! Oh my goodness!
    Tell me everything!") and ``turn`` opens by going on about it ("It was on Friday, at
    sunset at Lime Kiln Point."): told on, as after a question that names nothing
    (:func:`_taken_up`). Apart, "It was on Friday" said what of nothing, and "Owen proposed!"
    neither when nor where (blind conversation 75). ``written`` as it is otherwise."""
    if (
        earlier is None
        or previous is None
        or earlier.agent
        or previous.agent
        or earlier.speaker != turn.speaker
        or previous.speaker == turn.speaker
        or not _cheers(previous.text, names)
    ):
        return written
    last = _last_and_said(observations, earlier, turn, written)
    if last is None:
        return written
    before, said = last
    if not _TAKES_UP.match(said):
        return written  # "Tell me everything!" "We're moving to Leeds": news of its own
    joined = f"{_finished(before.content)} {said}"
    return _join_to_last(observations, joined, written[0], max_chars) or written


def _cheers(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` says nothing and asks nothing: a cheer or a call for more ("NADIA! Oh
    my goodness! Tell me everything!"), not a question ("Did she like it?": what follows
    answers it, :func:`_taken_up`)."""
    sentences = split_sentences(text)
    return all(is_phatic(s, names) and not is_question(s) for s in sentences)


GOES_ON_WORDS = 5
"""The most words a reply's first sentence may have to be read as going on from the other's
message when it has no verb ("312 to 240", "only the lace!!"): longer, it names a thing of
its own ("the new bakery on the corner by the station")."""


def _goes_on(text: str) -> str | None:
    """The short sentence ``text`` opens with when it has no verb and no pronoun and names a
    number or a thing (a determiner before it) without asking (else None): said after
    another's message, it is about that message's thing, unless the message goes on to say
    enough to be about something else (:data:`TOPIC_WORDS`: "Exactly my reaction. By the
    way, I have my first cello recital on June 24th"). A word alone is more often a reaction
    ("Ambitious!", "ugh thats grim") than a thing, and a reaction opens a message that goes
    on about something else."""
    first, *rest = split_sentences(text) or [""]
    goes_on = (
        len(first.split()) <= GOES_ON_WORDS
        and len(content_words(" ".join(rest))) < TOPIC_WORDS
        and _NAMES_A_THING.search(first) is not None
        and not is_question(first)
        and not _CLAUSE_WORD.search(first)
        and not has_a_verb(first)
        and not _IN_ED.search(first)  # "Update: standup moved to 9:15" has its verb
        and bool(content_words(first))
    )
    return first if goes_on else None


_IN_ED = re.compile(r"\b[^\W\d_]{3,}ed\b", re.IGNORECASE)
_NAMES_A_THING = re.compile(r"\d|\b(?:the|a|an|my|your|his|her|our|their)\b", re.IGNORECASE)


def _last_of(
    observations: list[Observation], source: Turn, written: list[Observation], day: str
) -> Observation | None:
    """The last of ``observations`` when it is ``source``'s (its last source, by its speaker)
    and of ``day``, and ``written`` is one observation that may go on from it; else None."""
    if len(written) != 1 or not observations:
        return None
    last = observations[-1]
    if (
        last.source_ids[-1] != source.memory_id
        or last.speaker != source.speaker
        or not last.content.startswith(day)
    ):
        return None
    return last


_OF_THAT = re.compile(
    r"(?:that|this)(?:['’]s|[ \t]+(?:is|was|means|explains)\b)|which[ \t]+(?:is|was|means)\b",
    re.IGNORECASE,
)
"""A sentence that says something of what was just said: "that's", "that was", "this is",
"that means", "which is"."""


def _join_to_last(
    observations: list[Observation], text: str, after: Observation, max_chars: int
) -> list[Observation]:
    """The observation of ``text``: the last of ``observations`` (taken from them) with
    ``after`` going on from it, both their sources; none when ``text`` is longer than one
    memory holds (each then stays as it is)."""
    if len(text) > max_chars:
        return []
    before = observations.pop()
    sources = (*before.source_ids, *after.source_ids)
    return [Observation(text, tuple(dict.fromkeys(sources)), after.speaker, False)]


def _said_of_someone(
    observations: list[Observation],
    earlier: Turn | None,
    turn: Turn,
    question: tuple[Turn, str],
    written: list[Observation],
    max_chars: int,
) -> list[Observation]:
    """``written`` (``turn`` after the ``question`` it answers) joined to its speaker's own
    observation before the question when someone in the question or the answer is whom the
    speaker spoke of there: the answer opens with "he", "she" or "they" and the question
    names no one ("Daniel keeps sending me rescue listings" "a second cat??" "he's a primary
    school teacher": apart, the teacher was no one, and "What does Daniel do for work?" found
    it 30th; blind conversation 52), or the question asks of "her" or "him" without saying
    again what was said ("mum's finally got a date for her hip" "how long has she been
    waiting?" "since september 2023. it's at withybush": which hospital, for what; blind
    conversation 55). ``written`` as it is otherwise, or when one memory would not hold
    both."""
    asked = question[1]
    if earlier is None or earlier.agent or earlier.speaker != turn.speaker:
        return written
    day = day_label(turn.at)
    before = _last_of(observations, earlier, written, day)
    if before is None:
        return written
    asks_of_someone = bool(_ASKS_OF_SOMEONE.search(asked)) and not (
        set(content_words(asked)) & set(content_words(before.content))  # said again
    )
    opens_with_someone = not _REFERS_TO_SOMEONE.search(asked) and bool(
        _OPENS_WITH_SOMEONE.match(turn.text.lstrip())
    )
    if not (asks_of_someone or opens_with_someone):
        return written
    joined = f"{_finished(before.content)} {_opening(written[0].content, day, turn.speaker)}"
    return _join_to_last(observations, joined, written[0], max_chars) or written


_OPENS_WITH_SOMEONE = re.compile(r"(?:he|she|they)(?:['’][a-z]+)?\b", re.IGNORECASE)
_ASKS_OF_SOMEONE = re.compile(r"\b(?:he|she|him|her|his)\b", re.IGNORECASE)


# A question that refers back to what the other said ("Did she like it?", "How was it?")
_REFERS_TO_SOMEONE = re.compile(rf"\b(?:{_PERSONAL}|his|{_DEMONSTRATIVE})\b", re.IGNORECASE)
# An answer that goes on about it ("She loved it", "It was great", "That's the one")
_TAKES_UP = re.compile(rf"(?:it|she|he|they|{_DEMONSTRATIVE})(?:['’][a-z]+)?\b", re.IGNORECASE)
# ... or says it in its first sentence ("Love it!", "We really enjoyed it"), not "this week"
_REFERS_TO_IT = re.compile(rf"\b(?:{_PERSONAL})\b", re.IGNORECASE)


def _opening(content: str, day: str, me: str) -> str:
    """What an observation of ``me`` on ``day`` says, without its "day, Name: " or "day: "."""
    for prefix in (f"{day}, {me}: ", f"{day}: "):
        if content.startswith(prefix):
            return content[len(prefix) :]
    return content


def _addressee(
    turn: Turn, previous: Turn | None, called: dict[str, frozenset[str]], others: dict[str, str]
) -> str:
    """Who "you" is in ``turn``: between two people, the other one (:func:`participants`);
    among more, the participant it calls by name ("…, Maria!"), else the one whose turn it
    follows (a reply is to the last speaker), else the one who speaks most."""
    if len(called) > 2:
        named = _called_by_name(turn.text, turn.speaker, called)
        if named is not None:
            return named
        if previous is not None and previous.speaker != turn.speaker:
            return previous.speaker
    return others.get(turn.speaker, _counterpart(turn.speaker))


def _called_by_name(text: str, speaker: str, called: dict[str, frozenset[str]]) -> str | None:
    """The one other participant ``text`` addresses by name: a first or last clause of a
    sentence (set off by a comma, or the whole sentence) that is only their name, or its
    start ("Sam" for Samuel), and words of address ("Maria, …", "…, Maria!", "Thanks Jon!");
    None when it calls no one, or several."""
    found: set[str] = set()
    for sentence in split_sentences(text):
        clauses = [c for c in _VOCATIVE_CLAUSE.split(sentence.strip(" \t.!?")) if c.strip()]
        for clause in {*clauses[:1], *clauses[-1:]}:
            words = {_folded(w) for w in _WORD.findall(clause)} - _ADDRESSING
            if not words:
                continue
            found.update(
                other
                for other, name in called.items()
                if other != speaker and all(w in name or _shortened(w, name) for w in words)
            )
    return found.pop() if len(found) == 1 else None


_VOCATIVE_CLAUSE = re.compile(r"[,;:—–]\s*")


REPLYING_TO = "Replying to"
_REPLY = re.compile(rf"(?<=[.!?\"”]) {REPLYING_TO} [^:\n]{{1,80}}: ")


def stated_part(content: str) -> str:
    """An observation without its "day, Name: " (or "day: ") prefix: what it states, the
    claim the contradiction judge reads."""
    return content.split(": ", 1)[-1]


def own_words(content: str) -> str:
    """What an observation's speaker said, without the answer it replies to ("… Replying to
    the agent: …", the other speaker's words): what a writer that reads the speaker's
    statements (the behavioural profile) must not take for theirs."""
    reply = _REPLY.search(content)
    return content if reply is None else content[: reply.start()]


_DAY = rf"[0-9]{{1,2}} (?:{'|'.join(MONTHS)}) [0-9]{{4}}"  # a header's day: "8 May 2023"
_HEADER = re.compile(rf"^{_DAY}(?:, (?P<speaker>[^:\n]{{1,80}}))?: ")


def said_by(content: str) -> tuple[str | None, str]:
    """Who an observation's header says spoke ("8 May 2023, Kenta: …" → "Kenta"; "8 May
    2023: the agent …", whose sentence starts with its speaker → "the agent"; None when
    there is no header or it names no one) and what follows the header."""
    header = _HEADER.match(content)
    if header is None:
        return None, content
    rest = content[header.end() :]
    speaker = header.group("speaker")
    if speaker is None and rest.casefold().startswith(AGENT + " "):
        speaker = AGENT
    return speaker, rest


PASTED_MIN_CHARS = 500
"""The least a run of a person's sentences without a first-person word (:data:`FIRST_PERSON`)
weighs to be material they handed over rather than words of their own: a job advert, a
contract's clause, a chapter to edit, a spreadsheet pasted for the assistant to work on.
Checked offline on RealMem's user turns, runs of 500 characters or more condensed 96,000 of
their 1.03 M characters and lost half the words of one needed point (runs from 300: 32
points; from 400: 4)."""


def _said_to_an_assistant(
    text: str, max_chars: int, words: Callable[[str], list[str]]
) -> list[str]:
    """A person's turn to an assistant: their own sentences whole, and what they pasted for the
    assistant to work on (:data:`PASTED_MIN_CHARS`) condensed as an answer is
    (:func:`~.answer.condensed_answer`: what it names, its numbers). A pasted document is
    what the person asked about, not what they said: kept whole it was 10 % of the user's
    side on RealMem and most of it answers no question; condensed, evidence @5 / @10 went
    0.192 / 0.267 -> 0.194 / 0.269 and needed points in context 0.253 -> 0.255. A sentence
    addressing the assistant ("you", "your") is no sign of the person's own words: pasted
    adverts and search results address a reader too (counting it kept 28,000 characters more
    and points fell back to 0.253)."""
    sentences = _whole(text)
    if len(text) < PASTED_MIN_CHARS:
        return sentences
    kept: list[str] = []
    pasted: list[str] = []
    for sentence in [*sentences, ""]:
        if sentence and not FIRST_PERSON.search(sentence):
            pasted.append(sentence)
            continue
        block = "\n".join(pasted)
        if len(block) >= PASTED_MIN_CHARS:
            kept.extend(condensed_answer(block, max_chars, words))
        else:
            kept.extend(pasted)
        pasted = []
        if sentence:
            kept.append(sentence)
    return kept


PARAGRAPH_TOPIC_CHARS = 200


def _paragraph_starts(text: str) -> frozenset[str]:
    """The first sentences of the paragraphs of ``text`` (a message to an assistant that
    replies to no answer) that open a topic of their own: a paragraph of
    :data:`PARAGRAPH_TOPIC_CHARS` or more after one as long, the two sharing no topic word. A
    letter to an assistant tells its news a paragraph each ("I had my annual check-up ...
    she's started me on amlodipine 5 mg ... I started it last Thursday." then the blood
    pressure monitor, then the readings): one memory of all of it was found by none of
    them (blind conversation 71: answers 0.42 -> 0.62; 66 0.72 -> 0.78; 67 found the Famag
    mixer and lost two answers to ranking, 0.78 -> 0.75; 61 lost one, 0.62 -> 0.60).
    Paragraphs that share a word go on with one topic, as RealMem's requests
    do (their context, their requirements, their question): split at every paragraph of 200
    characters, its evidence @5 / @10 fell 0.194 / 0.268 -> 0.191 / 0.259; split where
    they share none, 0.193 / 0.267, points @2,000 unchanged."""
    if "\n" not in text:
        return frozenset()
    paragraphs = [p for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    found = set()
    for before, paragraph in zip(paragraphs, paragraphs[1:], strict=False):
        if min(len(before), len(paragraph)) < PARAGRAPH_TOPIC_CHARS:
            continue
        if not _topic_words(before, frozenset()).isdisjoint(_topic_words(paragraph, frozenset())):
            continue
        first = _whole(paragraph)
        if first:
            found.add(first[0])
    return frozenset(found)


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _topics(stated: list[str], starts: frozenset[str] = frozenset()) -> list[list[str]]:
    """``stated`` (a person's sentences: a reply to an assistant's answer, an answer to a question,
    a message to an assistant or to another person) cut where a sentence after the first
    opens by moving on (:data:`_MOVES_ON`, or one of ``starts``: :func:`_paragraph_starts`):
    one memory per topic. The first replies, to be one memory with what it replies to; the
    others are news of their own ("constantly. ok my news. mum's finally got a date for her
    hip"). "no thats ok, I'll just bring the list. one more thing, I only roast tuesdays and
    fridays rn" was one memory with the answer's questions for a fire marshal, and ranked
    out of the context for "On which days did Rafael roast?" (blind conversation 53: all
    answers 0.60 -> 0.70, single-hop 0.50 -> 0.64; RealMem unchanged, evidence @5 / @10
    0.194 / 0.269, points 0.255). "Big decisions week. 1) I'm raising sourdough ... 2) Knee:
    off crutches since the 19th ... 3) Case Western visit ..." had been the first topic and
    one memory of the other three (blind conversation 67). Between people too: "maya is
    always right. ok flat news too, i saw one in portobello yesterday. Bath Street, ..." had
    been one memory with the reaction first, found for no question about the flat (blind
    conversation 72: all answers 0.57 -> 0.60; blind 65 had its messages' "Speaking of the
    flat, ..." cut off and lost one answer to ranking, 0.70 -> 0.68; the other p2p
    conversations unchanged). A first topic with its verb ("maya is always right.") is no
    heading of what follows."""
    topics: list[list[str]] = []
    for sentence in stated:
        if not topics or moves_on(sentence) or sentence in starts:
            topics.append([])
        topics[-1].append(sentence)
    return topics


_MOVES_ON = re.compile(
    r"[ \t]*(?:(?:ok|okay|so|and|right|anyway)[ \t,]+)?"
    r"(?:oh[ \t,]+and|also|btw|by[ \t]+the[ \t]+way|(?:in[ \t]+)?(?:[^\W\d_]+[ \t]+)?news\b"
    r"|different[ \t]+(?:topic|thing|question|subject)"
    r"|(?:one[ \t]+more|another|the[ \t]+other(?:[ \t]+big)?)[ \t]+thing"
    r"|(?:the[ \t]+)?(?:big(?:ger)?|main|last)[ \t]+thing(?=[ \t]*[:,—–-])"
    r"|on[ \t]+(?:another|a[ \t]+different)[ \t]+note|unrelated(?:ly)?|side[ \t]+note"
    r"|p\.?s\.?|speaking[ \t]+of|separately|changing[ \t]+(?:the[ \t]+)?(?:topic|subject)"
    r"|quick[ \t]+question|random(?:ly)?"
    # the next item of news counted out: "Two things. First, Aroha emailed ... Second: Elsa's
    # wedding is next Saturday" (blind conversation 73)
    r"|(?:second|third|fourth)(?:ly)?(?=[ \t]*[:,—–-])|lastly)\b"
    # an item of a list of news written inline: "few updates. 1) declan backed down ... 2) im
    # doing lisbon!! ... niamh from work is taking my dublin bib"
    r"|[ \t]*\(?\d{1,2}\)[ \t]",
    re.IGNORECASE,
)
"""English discourse markers that open a new topic ("oh and", "also", "btw", "other news",
"ok studio news:", "one more thing", "bigger thing:", "on another note", "speaking of", "PS")."""


def moves_on(sentence: str) -> bool:
    """Whether ``sentence`` opens a new topic: a discourse marker of one (:data:`_MOVES_ON`),
    or "now" before a topic named in a few words and no verb ("Now flights.", "Now the scary
    one: resigning.", "Now, about the car", "Now: I want to ask ..."), as people turn to the
    next thing on their list (blind conversations 73 and 74: "Visa application submitted two
    days ago! ... Now flights. We can't leave before August 9 because my sister Elsa is
    getting married ..." had been one memory). "Now I'm worried." goes on, and "now 12 to 17
    july" says what a thing moved to (blind conversation 58)."""
    if _MOVES_ON.match(sentence):
        return True
    now = _NOW_TOPIC.match(sentence)
    if now is None:
        return False
    if now.group("mark") in (":", "—", "–"):
        return True  # "Now: I want to ask for relocation assistance"
    words = now.group("head").split(",")[0].split()
    if not words or len(words) > NOW_TOPIC_WORDS or has_a_verb(" ".join(words)):
        return False  # "Now." and "Now the baby is sleeping." go on
    first = words[0].lower()
    if _BACK_TO_IT.intersection(w.lower() for w in words):
        return False  # "Now, about these estimated costs", "Now, for the next one": a reply
    return (
        first in _TOPIC_OPENERS  # "Now the visa.", "Now, about the car", "Now for something"
        or (words[0][:1].isupper() and first.split("'")[0] != "i")  # a name: "Now Juniper."
        # a plural noun alone ("Now flights."), not an imperative ("Now, execute.", "Now,
        # proceed with the research": RealMem's commands) nor a value ("now 12 to 17 july")
        or (len(words) == 1 and first.endswith("s") and not first.endswith("ss"))
    )


_TOPIC_OPENERS = frozenset(
    {"the", "a", "an", "my", "our", "your", "his", "her", "their", "some", "something"}
    | {"another", "about", "for", "regarding", "onto", "on", "to", "re"}
)
"""Words a topic "now" turns to opens with: a determiner or a preposition of topic."""
_BACK_TO_IT = frozenset({"this", "these", "that", "those", "it", "next", "same", "other"})
"""Words by which what "now" names is what was just said: RealMem's "Now, about these
estimated costs" and "Now, for the next one" reply to the answer before them (cut from it,
the persona's points @2,000 fell 0.279 -> 0.271)."""
NOW_TOPIC_WORDS = 4
"""The most words "now" may name a topic in ("Now the scary one:"): more is a clause."""
_NOW_TOPIC = re.compile(
    r"[ \t]*(?:(?:ok|okay|so|and|right)[ \t,]+)?now\b[ \t]*(?P<mark>[,:—–-]?)[ \t]*"
    r"(?P<head>[^.!?:;\n]*)(?:[.!?:;]|$)",
    re.IGNORECASE,
)


def _whole(text: str) -> list[str]:
    """Every sentence of ``text``, without markdown emphasis: a turn kept whole."""
    return [sentence for sentence in split_sentences(without_emphasis(text)) if sentence.strip()]


def _listed(statements: list[str]) -> str:
    """Statements as one list: "a; b; c." (empty: "")."""
    text = "; ".join(s.rstrip(" ;") for s in statements if s)
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def _finished(text: str) -> str:
    """``text`` ending as a sentence does."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", '"', "”")) else text + "."


def _ended(sentence: str) -> str:
    """``sentence`` with a full stop unless its own mark ends it, inside quotes or brackets
    too ('his name was "Bolt".', "(it's 6800!)"): a chat line ends with none."""
    text = sentence.rstrip()
    return text if text.rstrip(_CLOSING).endswith((".", "!", "?", "…")) else text + "."


def _asks(text: str) -> bool:
    """Whether ``text`` ends with a question (what a reply to it answers): its last sentence
    :func:`is_question`. A final mark decides that alone, so a long answer is only cut into
    sentences when it ends without one."""
    tail = text.rstrip().rstrip(_CLOSING)
    if tail.endswith((".", "!", "?")):
        return tail.endswith("?")
    sentences = split_sentences(text)
    return bool(sentences) and is_question(sentences[-1])


def _name_words(speakers: Sequence[str]) -> set[str]:
    """The case-folded words of the speakers' names: said in a turn, they are vocatives."""
    return {word.casefold() for speaker in speakers for word in _WORD.findall(speaker)}


def _echoed_words(previous: Turn | None, turn: Turn, names: frozenset[str]) -> frozenset[str]:
    """The content words of the other participant's statement just before ``turn`` (empty
    after a question or one's own turn): a sentence that only repeats them is a reaction
    ("Glad Maria found something that brings her joy" to Maria's news), not a fact."""
    if previous is None or previous.speaker == turn.speaker or previous.agent:
        return frozenset()
    if _asks(previous.text):
        return frozenset()
    return frozenset(content_words(previous.text, names))


_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you['’](?:re|ve|ll|d))\b", re.I)


def _stated(
    text: str,
    names: frozenset[str],
    *,
    requests: bool = False,
    echoed: frozenset[str] = frozenset(),
    answering: bool = False,
    replying: bool = False,
    listener: frozenset[str] = frozenset(),
) -> list[str]:
    """The sentences of ``text`` that state something, each without its leading and trailing
    phatic clauses ("Oh wow, ", ", haha") and its hedges.

    Every sentence with a content word is kept, between people as to an assistant: a turn's
    facts are often in its later sentences ("I went to a support group yesterday. It was run
    by a nurse from Leeds."), and no rule of English tells a follow-up fact from a remark by
    its length or by an "it" (issue 38 measured such a rule on real user turns: it dropped
    a third of the needed points with a third of the characters, no better than cutting
    at random). What is dropped says nothing: phatic sentences, questions (unless
    ``requests``: said to an assistant, a question says what the person wants), and
    reactions: sentences addressed to the other participant that only repeat their words
    (``echoed``). Between people, a turn whose sentences together say fewer than
    :data:`TURN_MIN_CONTENT_WORDS` and name nothing is small talk ("same old really"), unless
    it is ``answering`` a question ("Blue." to "Which color?"); said to an assistant it is a
    fact ("Also I am vegetarian."): nobody makes small talk with one. ``replying`` to a
    wh-question, a first sentence in a statement's word order with a question mark is said
    with a rising voice, not asked ("what is she into?" "She's gotten really into birding?")."""
    stating: list[str] = []
    counts: list[int] = []
    describing = False  # a sentence says what a third person is like: no small talk
    reminding = False  # the sentence before is a reminder ("Do you remember the claim?")
    for sentence in split_sentences(without_emphasis(text)):
        asked = is_question(sentence) or _asked_by_name(sentence, names)
        if asked and replying and not stating and _uptalk(sentence):
            sentence, asked = sentence.rstrip().rstrip("?") + ".", False
        opened = _trim_phatic(sentence, names) if asked else ""
        if asked and reminding and _says_more_of_it(sentence):
            asked = False  # "... the caravan claim? The same caravan 'flooded' in 3 counties?"
        elif asked and _REMINDER.match(opened):
            asked, reminding = False, True  # "Do you remember the caravan claim?": it tells
        else:
            reminding = False
            if asked and _BELIEVED.match(opened):
                asked = False  # "isn't Becca's wedding June 17?": what the speaker believes
            elif asked and _GUESS.match(opened):
                asked = False  # "Guess who was up at the allotment yesterday?": news
        if asked and not requests:
            told = _told_before_asking(sentence, names) or _told_after_asking(sentence, names)
            if told is None:
                continue
            sentence, asked = told, False  # "I adopted a dog named Rex, isn't he cute?"
        words = content_words(_FORMULA.sub(" ", sentence), names)
        describes = not asked and _DESCRIBES.match(sentence) is not None
        if len(words) < (TURN_MIN_CONTENT_WORDS if asked else 0 if describes else 1):
            continue  # a question that asks nothing in particular ("What next?")
        if echoed and not asked and set(words) <= echoed and _SECOND_PERSON.search(sentence):
            continue  # "glad you found something that brings you joy": a reaction
        trimmed = _trim_phatic(sentence, names, listener)
        if not trimmed:
            continue  # "Oh man, wow!", "Dude.": only a word of address names anything
        stating.append(trimmed)
        counts.append(len(words))
        describing = describing or describes
    if not stating:
        return []
    small = (
        sum(counts) < TURN_MIN_CONTENT_WORDS
        and not describing
        and not any(_specific(s, names) or _news(s) for s in stating)
    )
    if small and not (requests or answering):
        return []  # "same old really", "busy as always": small talk, not a fact
    return [plain for plain in (_without_hedges(s) for s in stating) if plain]


_DESCRIBES = re.compile(
    _OPENING_FILLER + r"(?:(?:he|she|they)(?:['’](?:s|re)|[ \t]+(?:is|are|was|were)\b)"
    r"|(?:my|our|his|her|their)[ \t]+[^\W\d_]+(?:['’]s|[ \t]+(?:is|are|was|were)\b))",
    re.IGNORECASE,
)
"""A sentence that says what someone or something of theirs is like ("she's lovely
honestly", "my boss is awful", "he's brilliant actually"): an opinion of a third person,
asked about later ("Does Sofie get along with her future mother-in-law?"), though its
adjective alone says nothing ("lovely" is a reaction in "that's lovely")."""
_LEADING_FILLER = re.compile(
    r"^(?:(?:oh|ah|anyway|and|but|so|well|also|plus|btw|by the way)\b[ \t]*,?[ \t]*)+(?=\w)",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"(?:,[ \t]*)?\b(?:if i['’]m honest|to be fair|honestly|literally|basically|lol|haha|tbh)\b"
    r"(?:[ \t]*,)?",
    re.IGNORECASE,
)


def _without_hedges(sentence: str) -> str:
    """``sentence`` without the words that only hedge or laugh ("honestly", "lol", "if i'm
    honest"): they tell an embedder nothing and cost a reader's budget."""
    sentence = _LEADING_FILLER.sub("", sentence)
    if not _HEDGE.search(sentence):
        return sentence
    text = re.sub(r"[ \t]{2,}", " ", _HEDGE.sub("", sentence)).strip(" \t,")
    text = re.sub(r"[ \t]+([,.!?])", r"\1", text)
    return text if content_words(text) or _DESCRIBES.match(text) else ""


TURN_MIN_CONTENT_WORDS = 2

# A past tense that tells no event: a state ("it was nice and quiet") or a wish ("Hope you
# slept well")
_STATE_PAST = re.compile(r"\b(?:was|were|had|did)\b", re.IGNORECASE)
_WISH = re.compile(r"^\W*(?:i[ \t]+)?(?:hope|hoping|wish)\b", re.IGNORECASE)


def _news(sentence: str) -> bool:
    """Whether ``sentence`` tells that something happened, however few its words ("Got
    engaged!!", "We adopted a puppy!"): news, not small talk."""
    return not _WISH.match(sentence) and tells_what_happened(_STATE_PAST.sub(" ", sentence))


def _specific(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` names something: a name other than a participant's, a number, a
    time, a date or a relative date."""
    if resolve_dates(text, 0):
        return True
    return any(term.casefold() not in names for term in fact_terms(text))


_I_OR_WE = frozenset({"i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've"})
SUBJECT_WORDS = (
    _I_OR_WE
    | {"we'd", "we'll", "he", "he's", "she", "she's", "they", "they're", "they've", "it"}
    | {"it's", "that", "that's", "this", "there", "there's", "my", "our", "his", "her", "their"}
    | {"its"}
)
"""English words that open a statement about the speaker or a third party (subject pronouns
and possessives): a clause that opens with one, before a question tagged onto it, is told,
not asked."""


# A question that reminds rather than asks: "(Do you) remember the caravan claim?", "Remember
# when we got lost in Rome?"; not "Do you remember what time it starts?"
_REMINDER = re.compile(
    r"(?i:(?:(?:do|did)[ \t]+(?:you|u|ya)[ \t]+)?remember[ \t]+)"
    r"(?:(?i:the|that|those|this|our|my|your|his|her|their|(?:when|how)[ \t]+(?:we|i|you|u))\b"
    r"|[A-Z])",
)


# A negative question about someone or something named, not the listener: it asks to confirm
# what the speaker believes ("Isn't Becca's wedding June 17?", "Didn't Mark move to Denver?");
# "isn't it", "wasn't that" react ("Isn't it beautiful?", "Wasn't that fun?")
_BELIEVED = re.compile(
    r"(?i:(?:is|are|was|were|does|do|did|has|have|had|wo|would|should)n['’]?t)[ \t]+"
    r"(?!(?i:you|u|ya|it|that|this|there|we|i)\b)(?:(?i:the|his|her|their|our|my|he|she|they)\b"
    r"|[A-Z])",
)
# A question the speaker asks only to tell its answer: "Guess who was up at the allotment
# yesterday? Me!", "guess what we found in the attic" (blind conversation 49: the day the
# potatoes were planted was in it alone)
_GUESS = re.compile(r"(?i:guess)[ \t]+(?i:who|what|where|which|how|when)\b")
_NOUN_PHRASE_START = frozenset(
    {"the", "that", "those", "this", "these", "a", "an", "our", "my", "his", "her", "their"}
    | {"when", "where", "how"}
)


def _says_more_of_it(sentence: str) -> bool:
    """Whether a question after a reminder only goes on naming what it reminds of, with a
    noun phrase or a clause of no question's word order ("Remember the caravan claim? The
    same caravan photographed 'flooded' in three counties?", "Remember Rome? When we got
    lost?"): told, as the reminder is; not a question of its own ("Was it 2019?", "What was
    his name?", "You know?")."""
    return _in_statement_order(sentence, _NOUN_PHRASE_START)


def _uptalk(sentence: str) -> bool:
    """Whether a question is in a statement's word order: it opens with its subject, a third
    person or the speaker ("She's gotten into birding?", "I think it was June?"), not with
    "you" (asking the listener to confirm) nor as a question opens (:func:`is_question`
    without its mark: "did she", "where is")."""
    return _in_statement_order(sentence, SUBJECT_WORDS - {"that", "this", "there"})


def _in_statement_order(sentence: str, openers: frozenset[str]) -> bool:
    """Whether ``sentence`` opens with one of ``openers`` and not as a question opens
    (:data:`_UNMARKED_QUESTION`), whatever its question mark."""
    text = sentence.strip().lstrip(" \t\"“'(")
    first = _WORD.match(text)
    if first is None or _folded(first.group()) not in openers:
        return False
    return _UNMARKED_QUESTION.match(text.rstrip().rstrip("?")) is None


def _told_before_asking(sentence: str, names: frozenset[str]) -> str | None:
    """The statement a question is tagged onto, if any: "I adopted a dog named Rex, isn't he
    cute?", "Yesterday, I went to Paris, you know?" state what comes before their last comma,
    and English marks that by a clause's subject, not by the question mark. The clauses before
    the last comma (their leading phatic clauses trimmed) when one of them opens with a
    subject word (:data:`SUBJECT_WORDS`); None for a question ("Now, what's next?", "Is it
    open, or not?", "You went, right?": about the listener, asked)."""
    head, comma, _ = sentence.rstrip().rpartition(",")
    if not comma or not content_words(head, names):
        return None
    told = _trim_phatic(head, names)
    openings = (_first_word(told[a:b]) for a, b in _clause_spans(told))
    if not any(word in SUBJECT_WORDS for word in openings):
        return None
    return told.rstrip(" ,;:") + "."


def _told_after_asking(sentence: str, names: frozenset[str]) -> str | None:
    """A question that chat runs on into a statement, with a comma and no question mark, as
    told: "did you finish the last of us, the finale wrecked me" tells that the finale wrecked
    its speaker, and its question says the finale of what. Told when the clauses after the
    first comma open with a subject word or a determiner (:data:`SUBJECT_WORDS`, "the") and
    mark a tense (a clause, not a noun phrase: "did you see the game, the one on Sunday"
    asks only)."""
    text = sentence.rstrip()
    if text.rstrip(_CLOSING).endswith("?"):
        return None
    _, comma, tail = text.partition(",")
    tail = tail.strip()
    if not comma or _first_word(tail) not in SUBJECT_WORDS | {"the"} or not has_a_verb(tail):
        return None
    if is_question(tail) or not content_words(tail, names):
        return None
    return _finished(text)


_FILLER_FIRST = re.compile(r"[ \t]*" + _OPENING_FILLER, re.IGNORECASE)


def _first_word(clause: str) -> str:
    """The first word of ``clause`` after the chat words that open anything ("ok also i
    finished the draft": "i"), case-folded; "" for none."""
    word = _WORD.match(clause, _FILLER_FIRST.match(clause).end())  # type: ignore[union-attr]
    return _folded(word.group()) if word is not None else ""


def _clause_spans(sentence: str) -> list[tuple[int, int]]:
    spans = []
    position = 0
    for piece in _CLAUSE.split(sentence):
        start = sentence.index(piece, position) if piece else position
        spans.append((start, start + len(piece)))
        position = start + len(piece)
    return [(a, b) for a, b in spans if sentence[a:b].strip()]


_CLAUSE = re.compile(r"[,;:—–]+[ \t]+|[ \t]+[—–-][ \t]+")  # "9:30" and "3,000" stay whole


def _trim_phatic(
    sentence: str, names: frozenset[str], listener: frozenset[str] = frozenset()
) -> str:
    """``sentence`` without its leading and trailing clauses that say nothing ("Oh wow, ",
    ", haha", "Hey Mel, ", "My friend, " before what I or you did, ", my friend" at the end,
    "Oh man, ": :func:`_addressed`); "" when those are all it has. A clause of one
    capitalised word that is no participant's name is a name said ("Oscar, my guinea pig"):
    it stays. A participant's name before a question to the listener, with no comma ("Greg
    did you buy him a sweater", "greg are u getting a dog"), is said to them too, and so is
    the ``listener``'s name ending a sentence with no comma ("im allergic callum": a person's,
    an assistant's name is a noun too, "a startup assistant"), unless as an object
    (:data:`_BEFORE_A_NAME`)."""
    sentence = _without_name_asked(sentence, names)
    last = _NAME_AT_END.search(sentence) if listener else None
    if (
        last is not None
        and _folded(last.group(2)) in listener
        and _folded(last.group(1)) not in _BEFORE_A_NAME
    ):
        sentence = sentence[: last.start(2)].rstrip() + sentence[last.end(2) :]
    spans = _clause_spans(sentence)
    saying = [
        i
        for i, (a, b) in enumerate(spans)
        if content_words(sentence[a:b], names) or _names_someone(sentence[a:b])
    ]
    stating = [i for i in saying if not _addressed(sentence, spans, i)]
    if not stating:  # "" when its only words are said to the listener ("Oh man, wow!")
        return "" if saying else sentence
    start, end = spans[stating[0]][0], spans[stating[-1]][1]
    trimmed = sentence[start:end].strip()
    if sentence.rstrip()[-1:] in "!." and not trimmed.endswith((".", "!", "?")):
        trimmed += "."
    return trimmed


def _names_someone(clause: str) -> bool:
    """Whether ``clause``, of stop words alone, says who with a verb ("it's just you, me and
    gwilym": the first clause is who; trimmed as phatic, blind conversation 58 had kept "me
    and gwilym" and lost whom the wedding was with)."""
    return bool(_WHO_IT_IS.search(clause.strip()))


_WHO_IT_IS = re.compile(
    r"\b(?:it|that)(?:['’]s|[ \t]+(?:is|was|will[ \t]+be))[ \t]+(?:just[ \t]+|only[ \t]+)?"
    r"(?:you|me|us|him|her|them)$",
    re.IGNORECASE,
)


_NAME_AT_END = re.compile(r"\b([^\W\d_]+['’]?[^\W\d_]*)[ \t]+([^\W\d_]+)(?=[^\w]*$)")
_BEFORE_A_NAME = frozenset(
    {
        "and",
        "or",
        "nor",
        "with",
        "to",
        "for",
        "from",
        "at",
        "by",
        "of",
        "about",
        "like",
        "than",
        "as",
        "is",
        "was",
        "are",
        "am",
        "'s",
        "its",
        "it's",
        "im",
        "i'm",
        "called",
        "named",
        "call",
        "calls",
        "the",
        "a",
        "an",
        "my",
        "your",
        "his",
        "her",
        "our",
        "their",
        "this",
        "that",
        "dear",
        "uncle",
        "aunt",
        "auntie",
        "cousin",
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "saint",
        "little",
        "big",
        "old",
        "young",
    }
)
"""Words after which a participant's name ends a sentence as its object or complement ("it's
just me and callum", "a text from jamie"): anywhere else the name that ends a sentence with no
comma before it is said to that participant ("im allergic callum", blind conversation 68, had
kept "Jamie is allergic callum")."""


# A word, then a question to the listener: an auxiliary before "you" ("Greg did you", "Greg
# are u"), "you" ("Greg you're a genius") or a question word ("Greg what happened")
_NAME_BEFORE_ASKING = re.compile(
    r"^[ \t]*([^\W\d_]+)[ \t]+(?=(?:(?:do|does|did|are|were|have|has|had|can|could|will|would"
    r"|should|is)(?:n['’]t)?[ \t]+)?(?:you|u|ya)\b|(?:what|when|where|who|why|how)\b)",
    re.IGNORECASE,
)
_MY_SOMEONE = re.compile(r"^my[ \t]+[^\W\d_]+$", re.IGNORECASE)
_FIRST_OR_SECOND = _I_OR_WE | {"you", "you're", "you've"}


ADDRESS_TERMS = frozenset(
    {"man", "dude", "bro", "bruh", "buddy", "pal", "mate", "guys", "folks", "girl", "boy"}
    | {"babe", "honey", "sweetie", "darling", "gosh", "geez", "jeez", "god", "lord"}
)
"""General English words of address and exclamation ("Oh man,", "Dude,", "Oh my god,"):
a first or last clause of nothing else (interjections and stop words aside, no article) is
said to the listener, not about anything. Only a clause of these alone: "the man next door"
and "a boy and a girl" keep their words."""


def _address_only(clause: str) -> bool:
    """Whether ``clause`` is only words of address or exclamation (:data:`ADDRESS_TERMS`),
    with interjections or "my" ("Oh man", "Oh my god", "Dude"), and no article."""
    words = [_folded(w) for w in _WORD.findall(clause)]
    if not words or {"a", "an", "the"} & set(words):
        return False
    addressed = [w for w in words if w in ADDRESS_TERMS]
    return bool(addressed) and all(w in ADDRESS_TERMS or w in PHATIC_WORDS for w in words)


def _addressed(sentence: str, spans: list[tuple[int, int]], i: int) -> bool:
    """Whether clause ``i`` of ``sentence`` is a vocative: a first or last clause (or the one
    clause) of words of address alone (:func:`_address_only`), or of the form "my <word>" ("My
    friend, I went to Paris", "I hear you, my guy"): a sentence's first clause before one
    about I, we or you, or its last clause. Rewritten to the third person it would name
    someone who is not there ("Kenta's friend, Kenta went to Paris"); "My sister, she lives
    in Lisbon" (a topic, taken up by "she") stays."""
    a, b = spans[i]
    clause = sentence[a:b].strip(" \t.!")
    if (i == 0 or i == len(spans) - 1) and _address_only(clause):
        return True  # "Oh man, …", "Dude, …", "…, bro", or all of it: "Proud of you bro"
    if len(spans) < 2 or not _MY_SOMEONE.match(clause):
        return False
    if i == len(spans) - 1:
        return True
    if i != 0:
        return False
    following = _WORD.match(sentence[spans[1][0] : spans[1][1]].strip())
    return following is not None and _folded(following.group()) in _FIRST_OR_SECOND


def _question_answered(
    previous: Turn | None, turn: Turn, stated: list[str], names: frozenset[str], polar: bool
) -> tuple[Turn, str] | None:
    """The other participant's turn and question an answer that does not stand alone replies
    to, if any: a yes/no answer of fewer than :data:`SHORT_ANSWER_WORDS` content words, any
    other of fewer than :data:`NAMED_ANSWER_WORDS` ("Luna and Oliver!" to "What are your
    pets' names?"), one that opens with such a fragment before saying more when the question
    asks for a thing ("St. Mary's. Dr. Okafor is doing it." to "Which hospital?"), and,
    between people, one whose first sentence names nothing the question names, which says
    what it is about only with it ("Finished in 4:12!" to "How did the marathon go?").
    ``polar``: the answer opens with a yes or no."""
    if previous is None or previous.speaker == turn.speaker:
        return None
    words = [content_words(s, names) for s in stated]  # each stated sentence's
    short = sum(map(len, words)) < (SHORT_ANSWER_WORDS if polar else NAMED_ANSWER_WORDS)
    fragment = not short and _fragment_first(stated, words)
    if not short and not fragment and previous.agent:
        return None  # a reply to an assistant carries the answer it replies to instead
    last = _last_question(previous.text, names)
    asked, told = last if last is not None else (None, "")
    if asked is not None and not previous.agent and _echoes(turn.text, asked, names):
        return previous, f"{asked}{told}"
    if asked is not None and _bare_wh(asked, names):
        return None  # "Wait, why?" asks about what the answer's speaker said: _taken_up
    if asked is None or not (
        _asks_about(asked, names)
        or (_asks_for_a_thing(asked) and _REFERS.search(asked))
        # "when's your last day?" asks for a day in words that are all time words; one that
        # refers to someone ("when does she go?") is left to what it goes on about
        or (_ASKS_WHEN.match(asked.lstrip()) and not _REFERS_TO_SOMEONE.search(asked))
    ):
        # "Doing okay?" "Yes, all good": small talk on both sides; but "How much is it?"
        # asks for an amount, which "$180 for 6 weeks" says only with it
        return None
    if (
        short
        or (fragment and _asks_for_a_thing(asked))
        # an answer whose first sentence names nothing the question names says what it is
        # about only with it
        or (not previous.agent and not set(words[0]).intersection(content_words(asked, names)))
    ):
        return previous, f"{asked}{told}"
    return None


_REFERS = re.compile(rf"\b(?:it|they|them|{_DEMONSTRATIVE}|one)\b", re.IGNORECASE)
_OPENING_PHRASE = re.compile(r"[,;:.!?…\u2600-\u27bf\U0001f300-\U0001faff]|[ \t][-–—][ \t]")


def _echoes(text: str, asked: str, names: frozenset[str]) -> bool:
    """Whether ``text`` opens by saying again what the yes/no question ``asked`` named, its
    yes ("WAIT the restaurant?? the place in graça??" "the place in graça 🙌 old tasca, tiny,
    …"): the answer's first phrase names only what the question does, so the question says
    what it is ("restaurant", blind conversation 40; alone, the memory was found 21st)."""
    if _WH_START.match(asked.lstrip()):
        return False
    opening = _OPENING_PHRASE.split(text.lstrip(), maxsplit=1)[0]
    echoed = content_words(opening, names)
    return bool(echoed) and set(echoed) <= set(content_words(asked, names))


def _last_question(text: str, names: frozenset[str]) -> tuple[str, str] | None:
    """The last question ``text`` asks, with its question mark; after the question before it
    when it only narrows that one ("What jobs are you thinking of? Anything that stands
    out?"); after the statement before it when the question names nothing and refers back
    to it ("A dance studio sounds amazing. Where will it be?"): "Where will it be?" alone no
    longer says what "it" is. Not after a statement about the speaker's own doings: a
    question that follows one asks about the listener's ("We tried a new brunch spot. How
    did it go?"). With it, what the turn says after it with no verb (:func:`_told_with`).
    None when ``text`` asks nothing."""
    sentences = split_sentences(text)
    at = max((i for i, s in enumerate(sentences) if _asks_the_other(s, names)), default=None)
    if at is None:
        return None
    question = _asked(_unaddressed(_without_name_asked(sentences[at], names)))
    return _question_in(sentences, at, question, names), _told_with(sentences[at + 1 :], names)


def _told_with(after: list[str], names: frozenset[str]) -> str:
    """What a question's turn says after it, when that is one phrase with no verb, as the
    question's own ("still on for sunday? flat unpacking + pizza", blind conversation 58: the
    answer "yes! i'll be there about 12" said what the Sunday was only with it), with a space
    before it; else nothing."""
    if len(after) != 1 or has_a_verb(after[0]) or is_question(after[0]):
        return ""
    words = content_words(after[0], names)
    return f" {_finished(after[0])}" if 0 < len(words) <= _TOLD_WITH_WORDS else ""


_TOLD_WITH_WORDS = 6
"""The most content words a phrase after a question may have to be read as part of it: a
noun phrase ("the thai place", "flat unpacking + pizza"), not news of its own."""


def _question_in(sentences: list[str], at: int, question: str, names: frozenset[str]) -> str:
    """The question of :func:`_last_question`, ``sentences[at]``, with what before it it
    needs."""
    if at > 0 and _bare_wh(question, names):
        # "Lol the drummer broke his wrist?? How?": a wh-word alone asks about what was just
        # said, and only with it says what it asks
        context = _trim_phatic(sentences[at - 1], names)
        if not content_words(context, names):
            return question
        return f"{_asked(context) if is_question(context) else _finished(context)} {question}"
    if (
        at > 0
        and (_FOLLOW_UP.match(question.lstrip(" \t\"“'(")) or _guess(question, names))
        and is_question(sentences[at - 1])
    ):
        # "What kinda jobs are you thinking of? Anything that stands out?", "Still with the
        # guy from your photos? Marcus?": the follow-up narrows the question before it, or
        # guesses its answer, and says nothing alone
        return f"{_asked(_unaddressed(sentences[at - 1]))} {question}"
    if at == 0 or _asks_about(question, names) or not _REFERS.search(question):
        return question
    context = _trim_phatic(sentences[at - 1], names)
    if is_question(context) or len(content_words(context, names)) < TURN_MIN_CONTENT_WORDS:
        return question  # "Lucky! How was it?": a reaction says what "it" is no more
    if FIRST_PERSON.search(context):
        return question  # "we tried a new brunch spot. How did it go?": "it" is not the brunch
    return f"{_finished(context)} {question}"


def _without_name_asked(sentence: str, names: frozenset[str]) -> str:
    """``sentence`` without a participant's name before its question ("jess did you book the
    cabin yet": "Did you book the cabin yet"), which the third person makes "jess did Jess"."""
    named = _NAME_BEFORE_ASKING.match(sentence)
    if named is None or _folded(named.group(1)) not in names:
        return sentence
    rest = sentence[named.end() :]
    return rest[:1].upper() + rest[1:]


def _asked_by_name(sentence: str, names: frozenset[str]) -> bool:
    """Whether ``sentence`` is a question without its mark after the listener's name ("jess
    did you book the cabin yet or are you still optimizing the spreadsheet"): found as the
    question an answer replied to, it had also been kept as a statement of its own ("Priya:
    Did Jess book the cabin yet ...", blind conversation 70)."""
    unnamed = _without_name_asked(sentence, names)
    return unnamed is not sentence and is_question(unnamed)


def _asks_the_other(sentence: str, names: frozenset[str]) -> bool:
    """Whether ``sentence`` is a question for the other to answer: not "Guess who was up at
    the allotment yesterday?", whose speaker answers it ("Me!")."""
    trimmed = _trim_phatic(sentence, names)  # "claire what colour": said to Claire
    return (is_question(sentence) or is_question(trimmed)) and not _GUESS.match(trimmed)


def _guess(question: str, names: frozenset[str]) -> bool:
    """Whether ``question`` is a word or two that ask nothing themselves ("Marcus?", "The
    blue one?": no wh-word, no auxiliary or pronoun, so no clause): a guess at the answer to
    the question before it."""
    words = _WORD.findall(question)
    return (
        0 < len(content_words(question, names)) <= GUESS_WORDS
        and len(words) <= GUESS_WORDS + 1
        and not any(w.casefold() in _ASKING_WORDS for w in words)
    )


GUESS_WORDS = 2
"""The most content words of a question that guesses ("Marcus?", "Skiing?", "The Lisbon
flat?"): with three or more it says enough to be asked alone."""
# Words by which a question asks rather than guesses: wh-words, auxiliaries, pronouns
_ASKING_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "is", "are", "was"}
    | {"were", "do", "does", "did", "can", "could", "will", "would", "should", "have", "has"}
    | {"you", "it", "he", "she", "they", "we", "i", "u", "ur", "that", "this"}
)


# A question of a wh-word alone ("How?", "Why not?", "Since when?", "With who?"): it asks
# about what was just said, and a word answers it ("pickleball")
_BARE_WH = re.compile(
    r"\b(?:(?:since|until|till|from|for|with|to|at|in)[ \t]+)?"
    r"(?:how(?:[ \t]+(?:come|so))?|why(?:[ \t]+not)?|when|where|who|whom|which[ \t]+one"
    r"|what[ \t]+for)[ \t]*[?!]*\?[?!]*$",
    re.IGNORECASE,
)


# A question for a reason, which a word gives ("Why not stay?" "too much drama")
_WHY = re.compile(r"(?:why|how[ \t]+come)\b", re.IGNORECASE)
# Words that open a surprised question and ask nothing themselves ("Wait, why?")
_SURPRISE = re.compile(r"\b(?:wait|hold[ \t]+on|hang[ \t]+on|seriously)\b", re.IGNORECASE)


def _bare_wh(question: str, names: frozenset[str]) -> bool:
    """Whether ``question`` is a wh-word alone, after words that say nothing ("Wait, why?",
    "OMG when??")."""
    found = _BARE_WH.search(question.strip())
    if found is None:
        return False
    return not content_words(_SURPRISE.sub(" ", question.strip()[: found.start()]), names)


# A question that only narrows the one before it, without a clause of its own: "Anything
# that stands out?", "Any luck?", "Or was it the train?"
_FOLLOW_UP = re.compile(r"(?:any(?:thing|one|body|where)?|something|or)\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|us|our|ours)\b|\bi['’]", re.IGNORECASE)
"""A word of the first person ("I", "I'm", "my", "we", "ours"): the speaker is in the text."""


def _unaddressed(question: str) -> str:
    """``question`` without a first or last clause said to the listener (:func:`_addressed`:
    "Which one first, my guy?", "Dude, where are you?"), which rewritten to the third person
    names someone who is not there ("the agent's guy")."""
    asked = question.rstrip().rstrip(_CLOSING).rstrip("?")
    spans = _clause_spans(asked)
    keep = [i for i in range(len(spans)) if not _addressed(asked, spans, i)]
    if not keep or len(keep) == len(spans):
        return question
    return asked[spans[keep[0]][0] : spans[keep[-1]][1]].strip().rstrip(" ,;:") + "?"


def _others_last_sentence(previous: Turn | None, turn: Turn) -> str | None:
    """The last sentence of the other participant's turn just before ``turn``, if any."""
    if previous is None or previous.speaker == turn.speaker:
        return None
    return next(reversed(split_sentences(previous.text)), None)


def _replies_to_a_wh_question(last: str | None) -> bool:
    """Whether a turn follows the other participant's wh-question (``last``: their last
    sentence, :func:`_others_last_sentence`): "what is she into rn"."""
    return last is not None and is_question(last) and _WH_START.match(last.lstrip()) is not None


_WH_START = re.compile(rf"{_OPENING_FILLER}(?:what|who|where|when|which|why|how)\b", re.IGNORECASE)
_ASKS_WHEN = re.compile(rf"{_OPENING_FILLER}when\b", re.IGNORECASE)


def _answers_a_word(
    question: tuple[Turn, str] | None,
    previous: Turn | None,
    last: str | None,
    names: frozenset[str],
) -> bool:
    """Whether a word or two of a turn answers a question: the ``question`` it replies to
    asks for a named thing ("Which color?"), or the other's turn just before (``previous``,
    whose ``last`` sentence :func:`_others_last_sentence` gives) ends with a wh-word alone
    ("How?" "pickleball"), which asks about what the turn's speaker said."""
    if question is not None:
        asked = question[1]
        return bool(
            _NAMED_THING.match(asked.lstrip())
            or _WHY.match(asked.lstrip())
            or _BARE_WH.search(asked)
        )
    if last is None or previous is None or previous.agent:
        return False
    return _bare_wh(last, names)


def _asks_for_a_thing(question: str) -> bool:
    """Whether ``question`` asks for a thing, a place, a time, a person or an amount
    ("Which hospital?", "How long did it take?"), which an answer may give in a word or two;
    not how someone is ("How is she?") nor an invitation ("What about you?")."""
    return bool(_WH_THING.match(question.lstrip(" \t\"“'(")))


def _fragment_first(stated: list[str], words: list[list[str]]) -> bool:
    """Whether an answer that says more opens with a fragment that only its question
    completes ("St. Mary's.", "Mostly!"): one or two content words (``words``: each stated
    sentence's) and no clause (no pronoun or auxiliary of its own)."""
    if len(stated) < 2:
        return False
    return 0 < len(words[0]) < NAMED_ANSWER_WORDS and not _CLAUSE_WORD.search(stated[0])


def _answer(text: str, stated: list[str]) -> list[str]:
    """A short answer's sentences: the one that answers ("Yes, last week!"), then those of
    the others that state something."""
    replies = [s for s in split_sentences(text) if not is_question(s)]
    if not replies:
        return stated
    first = _without_hedges(replies[0]) or replies[0]
    return [first, *(s for s in stated if s not in replies[0] and s not in first)]


def _asks_about(question: str, names: frozenset[str]) -> bool:
    """Whether a question asks about something: not only how someone is ("How's it going?",
    a formula), or how a time went ("Good weekend?")."""
    words = content_words(_FORMULA.sub(" ", question), names)
    return any(word not in TIME_WORDS for word in words)


def _observe(
    turn: Turn,
    stated: list[str],
    you: str,
    question: tuple[Turn, str] | None,
    max_chars: int,
    replied: tuple[Turn, list[str]] | None = None,
    *,
    quoted: bool = False,
) -> list[Observation]:
    """``turn``'s observations: its day in words, its speaker, what it states; after the
    question it answers when it does not stand alone, or after the assistant's answer it
    replies to (``replied``: that answer's kept statements), which it carries too. ``you``:
    whom the turn addresses (:func:`_addressee`). ``quoted``: said to an assistant, in the
    speaker's own words (dates grounded only)."""
    me = turn.speaker
    day = day_label(turn.at)
    if quoted:
        sentences = [grounded(s, turn.at, turn.text) for s in stated]
    else:
        sentences = [_attributed(s, me, you, turn.at, turn.text) for s in stated]
    # what an assistant named is a list of statements; a person's sentences are prose, each
    # ended as a sentence is when another follows (a chat line ends with none)
    if turn.agent:
        text = _listed(sentences)
    elif quoted:
        text = " ".join(sentences)
    else:
        text = " ".join([*(_ended(s) for s in sentences[:-1]), *sentences[-1:]])
    sources = turn.ids
    if replied is not None:  # the reply first: what its speaker says, then what it answers
        answering, answer = replied
        said = [_attributed(s, you, me, answering.at) for s in answer]
        if question is not None:
            said.append(_attributed(question[1], you, me, answering.at))
        text = f"{_finished(text)} {REPLYING_TO} {you}: {_listed(said)}"
        sources = (*answering.ids, *turn.ids)
        question = None
    elif question is not None:
        asking, asked = question
        asker = asking.speaker  # among three, not always whom the answer addresses
        text = f"{asker} asked: {_attributed(asked, asker, me, turn.at)} {me}: {text}"
        sources = (*asking.ids, *turn.ids)
    text = text.replace(f" ({day})", "")  # the prefix says that day
    named = f"{day}, {me}: "
    passing = question is None and replied is None and all(is_passing_state(s) for s in stated)
    parts = [part for part in _bounded(text, max_chars - len(named)) if part]
    # a part says who spoke: in its header, or first ("the agent asked: …", "the agent has
    # booked …"); a part after the first had the first's header, and so no speaker at all
    return [
        Observation(
            f"{day}: " + part
            if (question is not None and n == 0) or part.casefold().startswith(me.casefold())
            else named + part,
            sources,
            me,
            passing,
        )
        for n, part in enumerate(parts)
    ]


_PERIOD_NOW = re.compile(
    r"\b(?:lately|recently|these days|this week|at the moment|right now|currently|today)\b",
    re.IGNORECASE,
)
_STATE_SO_FAR = re.compile(
    r"(?:^|\b(?:has|have)[ \t]+|['’](?:s|ve)[ \t]+)been[ \t]+"
    r"(?:(?![^\W_]+(?:ing|ed|en)\b)[^\W_]"  # a state, not an activity or a participle
    r"|driving[ \t]+[^\W_]+[ \t]+(?:mad|crazy|nuts|up the wall))",
    re.IGNORECASE,
)


def is_passing_state(sentence: str) -> bool:
    """Whether ``sentence`` describes how something has been for the present period and
    nothing more ("the traffic has been a total mess lately", "my sleep has been weird this
    week"): true when said, not known to be true once that period is over. An event stays
    true ("we went to the coast this week", "I've been diagnosed with asthma recently": a
    participle is no state), and so does an activity ("i've been reading Dune lately") or a
    state with no period ("work has been crazy busy")."""
    return bool(_PERIOD_NOW.search(sentence) and _STATE_SO_FAR.search(sentence))


def _attributed(sentence: str, me: str, you: str, at: int, message: str | None = None) -> str:
    """``sentence`` said by ``me`` to ``you``, its dates grounded (in the tense of the
    ``message`` it is a sentence of, when it has none), in the third person. Grounded as said:
    the pronouns tell its tense ("carmen called me friday"; "called Theo" would not)."""
    return third_person(grounded(sentence, at, message), None, me=me, you=you)


def _bounded(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut between sentences, then between
    words; a text that fits is one piece."""
    limit = max(limit, 40)
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in split_sentences(text):
        for word in sentence.split(" ") if len(sentence) > limit else [sentence]:
            joined = f"{current} {word}" if current else word
            if len(joined) <= limit:
                current = joined
            else:
                if current:
                    pieces.append(current)
                current = word[:limit]
    if current:
        pieces.append(current)
    return pieces


TOPIC_COUNT = 4
TOPIC_MIN_MENTIONS = 2
"""A session's topic is a word said in at least two of its sentences: a word said once names
no topic, and ranking those (all tied) listed the alphabet's first ("bathroom, birds,
birthday, bought")."""
TIME_WORDS = frozenset(
    {"lately", "recently", "earlier", "later", "ago", "last", "next", "week", "weeks", "month"}
    | {"months", "year", "years", "day", "days", "weekend", "yesterday", "tomorrow", "tonight"}
    | {"morning", "lunch", "after", "before", "first", "once", "twice", "usual", "every"}
    | {"since", "until", "till"}
)
"""Words that say when, not what: a session's topics are what it was about, and a question
about a weekend alone ("Did Mel have a good weekend?") is small talk."""
VAGUE_WORDS = frozenset(
    {"went", "got", "took", "made", "did", "tried", "spent", "back", "along", "through"}
    | {"couple", "whole", "finally", "old", "new", "two", "three", "four", "five", "ten"}
)
"""Words too common in any chat to say what a session was about."""


@dataclass(frozen=True, slots=True)
class Digest:
    """A session told in brief: its observations carry the facts."""

    content: str
    topics: tuple[str, ...]
    unresolved_threads: tuple[str, ...]


_AND, _COMMA = " and ", ", "  # how a digest's header names its people


def names_several(who: str) -> bool:
    """Whether a header's ``who`` (:func:`said_by`) names several people, as a session's
    digest does ("8 May 2023, Caroline and Melanie: …"; :func:`write_digest`), where an
    observation names its one speaker."""
    return _AND in who or _COMMA in who


_JOINERS = re.compile(f"{_COMMA}|{_AND}")


def people_named(who: str) -> frozenset[str]:
    """The people a digest header's ``who`` names, whatever their order ("Niamh and Ciaran"
    and "Ciaran and Niamh" are one pair: whoever spoke first is named first)."""
    return frozenset(_JOINERS.split(who))


_DIGEST_HEADER = re.compile(
    rf"^(?P<first>{_DAY})(?: to (?P<last>{_DAY}))?, (?P<who>[^:\n]{{1,200}}?)"
    rf"(?:: (?P<topics>[^\W\d_][\w'’-]*(?:, [^\W\d_][\w'’-]*)*))?\.$"
)


def digest_header(line: str) -> tuple[str, str, str] | None:
    """The first day, last day and people of a session digest's header line (:func:`write_digest`:
    "8 May 2023, Caroline and Melanie: pottery, adoption."); None for any other line. An
    observation's header is followed by what was said, not by lower-case topic words."""
    found = _DIGEST_HEADER.match(line)
    if found is None or (found["topics"] and found["topics"] != found["topics"].lower()):
        return None
    return found["first"], found["last"] or found["first"], found["who"]


def write_digest(turns: Sequence[Turn], max_chars: int = 1000) -> Digest:
    """ONE short narrative of a session whose facts are observations: when, who, how long,
    what about (its most repeated content words), and the questions left open (asked, and
    not answered by the other participant's next turn)::

        8 May 2023, Caroline and Melanie: pottery, adoption, camping, kids.
        Unresolved: Melanie asked: has Caroline found a lawyer yet?
    """
    if not turns:
        return Digest("", (), ())
    speakers = [turn.speaker for turn in turns]
    names = frozenset(_name_words(speakers))
    people = sorted(set(speakers), key=speakers.index)
    others = participants(speakers)
    counts: dict[str, int] = {}
    for turn in turns:
        if turn.agent:
            continue  # an assistant's answer restates the request: the people say the topic
        for sentence in _stated(turn.text, names):
            for word in dict.fromkeys(content_words(sentence, names)):
                if _topical(word):
                    counts[word] = counts.get(word, 0) + 1
    repeated = [word for word in counts if counts[word] >= TOPIC_MIN_MENTIONS]
    topics = tuple(sorted(repeated, key=lambda w: -counts[w])[:TOPIC_COUNT])  # stable: first said
    first, last = day_label(turns[0].at), day_label(turns[-1].at)
    when = first if first == last else f"{first} to {last}"
    who = _AND.join(people) if len(people) <= 2 else _COMMA.join(people)
    header = f"{when}, {who}"
    header += f": {', '.join(topics)}." if topics else "."
    threads = tuple(
        f"{turn.speaker} asked: {_attributed(asked, turn.speaker, others[turn.speaker], turn.at)}"
        for turn, asked in _open_questions(turns, names)
    )
    lines = [header]
    for thread in threads:
        line = ("Unresolved: " if len(lines) == 1 else "") + thread
        if len("\n".join([*lines, line])) > max_chars:
            break
        lines.append(line)
    return Digest("\n".join(lines)[:max_chars], topics, threads)


def _closing(answer: str) -> str:
    """What an assistant's answer asks the person: its last line, when that is prose. A
    question elsewhere in an answer is a heading ("## IELTS or CELPIP?"), an item of a list
    or a line given to the person to say ("- "What's your best out-the-door price?""), none
    of them asked of the person; they had filled the session's "Unresolved" and "Open items"
    (blind conversation 64)."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if _NOT_PROSE.match(last):
        return ""
    return last


_NOT_PROSE = re.compile(r"(?:#|>|[-*+•|]|\d{1,3}[.)]|[\"“'‘])")


def _topical(word: str) -> bool:
    """Whether ``word`` may name what a session was about: no number ("3rd"), no time and no
    word every chat has."""
    return (
        len(word) > 2
        and not word[0].isdigit()
        and word not in TIME_WORDS
        and word not in VAGUE_WORDS
    )


def _open_questions(turns: Sequence[Turn], names: frozenset[str]) -> list[tuple[Turn, str]]:
    """Questions nobody answers: no one else speaks after them in the session (a reply that
    states nothing, "Grey as usual!" to "How's the weather?", answered small talk). The
    asker's own next messages come first in chat ("Did you get your results" / "Found the
    shortbread card ..." / "and yeah got 68 in marine ecology"): the question had stayed an
    open item of every summary after it (blind conversation 63)."""
    last_run = len(turns)  # where the session's last run of one speaker's turns begins
    while last_run > 0 and turns[last_run - 1].speaker == turns[-1].speaker:
        last_run -= 1
    found = []
    for turn in turns[last_run:]:  # after any other turn, someone else speaks
        questions = _questions(_closing(turn.text) if turn.agent else turn.text)
        if questions and content_words(questions[-1], names):  # not "How are you?"
            found.append((turn, questions[-1]))
    return found
