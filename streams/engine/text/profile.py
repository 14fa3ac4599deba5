"""Seed 004's procedural synthesis: all semantic memories → ONE behavioural profile.

Separate from :mod:`.narrative` only to keep each writer readable; import it from there. The
lexicons are data (``profile_cues.json``), read once, so tuning a cue is not a code change.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from streams.engine.judge import judge_contradiction
from streams.engine.text.facts import fact_terms, find_terms
from streams.engine.text.observation import AGENT, FIRST_PERSON, names_several, own_words, said_by
from streams.engine.text.prose import (
    content_words,
    deduplicated,
    grouped,
    join_sentences,
    keeps_terms,
    reported,
    sentences,
    speaker_of,
    split_reports,
    without_discourse,
)

__all__ = [
    "RECURRING",
    "ProfileCues",
    "ProfileSection",
    "SupersessionMemo",
    "profile_cues",
    "write_profile",
]

_CUES_FILE = "profile_cues.json"
RECURRING = "Recurring across"
"""How the built-in insight writer opens a learning pattern ("Recurring across 11 sessions
(ontological): rafting, trip."): topics the narratives share, no statement of the user's."""
_META = re.compile(
    rf"^(?:Session of |Episodes of |Emotional arcs?: |Unresolved: |Open items: |{RECURRING} )"
)
_ATTRIBUTION = re.compile(r"^The (?:user|agent|system) said:? ")
_USER_PREDICATE = re.compile(r"^The user (?!said\b|asked\b|'s\b)(.+?)[.!]?$")
_CHANGE = re.compile(r"\b(?:now|moved|new|no longer|anymore|instead|switched)\b", re.IGNORECASE)
_FREQUENCY = frozenset({"weekly", "daily", "monthly", "usual", "usually", "regular", "regularly"})
_CHANGE_WORDS = frozenset(
    {"now", "moved", "new", "anymore", "instead", "switched", "actually", "currently"}
    | {"these", "days", "today", "updated", "longer"}
)
STATEMENT_MAX_CHARS = 300
"""A longer sentence is no habit or preference but material the user pasted (a table, a job
advert, a contract's clause: RealMem's longest usable statements, up to 2,000 characters);
one of them filled most of what a profile holds, and as the newest sources' profile grows
until it does not fit, one near the newest left the profile empty ("no preferences or habits
stated yet" for a user who had stated dozens). A habit said in a sentence is shorter: on
RealMem 95 % of the usable statements are under 270 characters; in six conversations of
people texting and of a person with an assistant, 3 of 353 are over 300, each a run-on
message of news ("did my first open water swim last Sunday ... honestly kind of terrible"),
none a habit."""
TITLE = "Behavioural profile of the user."
EMPTY = "Behavioural profile of the user: no preferences or habits stated yet."


@dataclass(frozen=True, slots=True)
class ProfileSection:
    name: str
    cues: tuple[str, ...]
    needs_marker: bool  # take a statement only if it also names a habit or preference


@dataclass(frozen=True, slots=True)
class ProfileCues:
    """The lexicons of ``profile_cues.json``: sections in output order, and marker words."""

    sections: tuple[ProfileSection, ...]
    markers: tuple[str, ...]
    preference_words: tuple[str, ...]
    fallback_section: str


@dataclass(frozen=True, slots=True)
class _Statement:
    order: int
    section: str
    usable: bool  # the section takes it (it names a habit or preference, if it must)
    sentence: str  # third person, attributed
    claim: str  # without the attribution, for the cues and the contradiction judge


@functools.cache
def profile_cues() -> ProfileCues:
    """The lexicons, read once from this package."""
    package = __package__ or __name__.rpartition(".")[0]
    raw = json.loads((resources.files(package) / _CUES_FILE).read_text(encoding="utf-8"))
    sections = tuple(
        ProfileSection(
            str(section["name"]),
            tuple(str(cue).casefold() for cue in section["cues"]),
            bool(section["needs_marker"]),
        )
        for section in raw["sections"]
    )
    fallback = str(raw["fallback_section"])
    if fallback not in {section.name for section in sections}:
        raise ValueError(f"{_CUES_FILE}: fallback_section {fallback!r} is not a section")
    return ProfileCues(
        sections,
        tuple(str(word).casefold() for word in raw["markers"]),
        tuple(str(word).casefold() for word in raw["preference_words"]),
        fallback,
    )


@functools.cache
def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    """Whole words or phrases, longest first; an optional plural "s" is allowed."""
    alternatives = "|".join(re.escape(cue) for cue in sorted(cues, key=lambda c: (-len(c), c)))
    return re.compile(r"(?<![\w-])(?:" + alternatives + r")s?(?![\w-])")


def write_profile(texts: Sequence[str], memo: SupersessionMemo | None = None) -> str:
    """ONE behavioural profile of the user from all their semantic memories.

    Each statement (not questions, not the narratives' bookkeeping lines) goes to the section
    whose cue words it mentions most: "Communication preferences", "Technical preferences",
    "Work patterns", "Personal context" (ties: the earlier section). The first three take a
    statement only if it also names a habit or a preference ("usually", "every", "prefers",
    "works at", "switched"), so one-off facts such as a budget or a date stay out; a statement
    with a preference word and no cue goes to the fallback section; others are not used. A
    statement that a later one contradicts is left out, the later one supersedes it ("Keiko
    lives in Kyoto now" after "… Keiko lives in Toronto"). Each section is a paragraph: what
    the user does is one sentence ("The user prefers …, runs … and works at …"), reported
    statements follow. Every fact term of the statements used is kept.

    ``memo`` (one per user) makes a re-synthesis cost what was added since the last one: when
    the statements start with the last synthesis's statements, only the new ones are judged
    against the others. It changes no result.
    """
    cues = profile_cues()
    statements = _statements(texts, cues)
    superseded, superseding = (memo or SupersessionMemo()).superseded(statements)
    paragraphs: list[str] = []
    for section in cues.sections:
        mine = [
            s.sentence
            for s in statements
            if s.section == section.name
            and s.order not in superseded
            and (s.usable or s.order in superseding)
        ]
        kept = deduplicated(mine)
        if kept:
            paragraphs.append(f"{section.name}: {_prose(kept)}")
    return "\n".join([TITLE, *paragraphs]) if paragraphs else EMPTY


def _statements(texts: Sequence[str], cues: ProfileCues) -> list[_Statement]:
    found: list[_Statement] = []
    for text in texts:
        for section, usable, said, claim in _text_statements(text, cues):
            found.append(_Statement(len(found), section, usable, said, claim))
    return found


@functools.lru_cache(maxsize=65536)
def _text_statements(text: str, cues: ProfileCues) -> tuple[tuple[str, bool, str, str], ...]:
    """(section, usable, sentence, claim) of each statement of one memory's text. Memoised:
    a re-synthesis reads mostly the texts the last one read."""
    found: list[tuple[str, bool, str, str]] = []
    for line in own_words(text).split("\n"):
        line = line.strip()
        said, line = said_by(line)
        if not line or _META.match(line) or said == AGENT:
            continue  # an assistant's answer is not the user's behaviour
        if said is not None and names_several(said):
            continue  # a session's digest ("8 May 2023, Naomi and the agent: car, miles."):
            # its topics, which a summary carries, are no statement
        speaker, body = speaker_of(line)
        for sentence in sentences(body):
            for piece in split_reports(sentence):
                if piece.endswith("?") or len(piece) > STATEMENT_MAX_CHARS:
                    continue
                claim = _ATTRIBUTION.sub("", piece)
                placed = _section_of(claim, cues)
                if placed is not None:
                    section, usable = placed
                    usable = usable and not _someone_else_s(claim, said)
                    found.append((section, usable, reported(piece, speaker), claim))
    return tuple(found)


def _section_of(claim: str, cues: ProfileCues) -> tuple[str, bool] | None:
    """The section whose cues ``claim`` mentions most, and whether that section takes it."""
    folded = claim.casefold()
    hits = [(len(_cue_pattern(section.cues).findall(folded)), section) for section in cues.sections]
    count, best = max(hits, key=lambda hit: hit[0])  # max keeps the first: section order
    if count:
        return best.name, _names_a(cues.markers, folded) or not best.needs_marker
    if _names_a(cues.preference_words, folded):
        return cues.fallback_section, True
    return None


_LIKE_AS_A_VERB = re.compile(
    r"(?:\b(?:i|we|you|they|he|she|do|does|did|would|to|not|really|also|still|always|usually|"
    r"never|genuinely|actually)|n['’]t|['’]d)[ \t]+$"
)
"""What comes before "like" when it is the verb ("I like", "would like", "don't like", "really
like"): otherwise it compares or gives an example ("slogans like #5", "looks like a real book",
"like you said"), which names no preference. Plain English grammar."""


def _names_a(words: tuple[str, ...], folded: str) -> bool:
    """Whether ``folded`` says one of ``words`` (markers, or preference words), "like" only
    as a verb (:data:`_LIKE_AS_A_VERB`)."""
    for found in _cue_pattern(words).finditer(folded):
        if found.group() != "like" or _LIKE_AS_A_VERB.search(folded, 0, found.start()):
            return True
    return False


_SOMEONE_ELSE = re.compile(
    r"(?:(?i:he|she|they)\b|(?P<name>[A-Z][\w'’-]*)[ \t]+(?:says|said|thinks|thought|tells|told|"
    r"wants|wanted|likes|liked|loves|loved|prefers|preferred|hates|hated|asks|asked|suggests|"
    r"suggested|recommends|recommended|mentions|mentioned|insists|insisted)\b)",
)
"""A statement whose subject is another person, after its discourse words
(:func:`~.prose.without_discourse`): "he/she/they …", or someone named saying or wanting
something ("Opal says he likes numbers and short decks")."""


def _someone_else_s(claim: str, speaker: str | None) -> bool:
    """Whether ``claim`` is about someone other than the user: its subject another person
    (:data:`_SOMEONE_ELSE`, not the speaker named in the third person) and nothing in it in
    the first person. A profile describes the user; what the user's manager likes was the
    user's "Communication preferences" (a person's conversation with an assistant, issue 38)."""
    if FIRST_PERSON.search(claim):
        return False
    other = _SOMEONE_ELSE.match(without_discourse(claim))
    if other is None:
        return False
    name = other.group("name")
    return name is None or speaker is None or name.casefold() != speaker.casefold()


@dataclass(frozen=True, slots=True)
class _ClaimFeatures:
    words: frozenset[str]
    plain: frozenset[str]
    names: dict[str, int]  # entity → where it starts in the claim
    changed: bool


@functools.lru_cache(maxsize=65536)
def _features(claim: str) -> _ClaimFeatures:
    return _ClaimFeatures(
        content_words(claim),
        _plain_words(claim),
        {t.term: t.start for t in reversed(find_terms(claim)) if t.kind == "entity"},
        _CHANGE.search(claim) is not None,
    )


class SupersessionMemo:
    """Which statements later ones supersede, resumable: the statements already decided and
    the sets as they stood after them. Deciding statement k depends only on statements
    before it, so when a synthesis's statements start with the last one's, the walk resumes
    at the first new statement and gives the same sets as a walk from the start."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, str]] = []  # (section, claim) of each decided statement
        self.dropped: set[int] = set()
        self.superseding: set[int] = set()

    def superseded(self, statements: list[_Statement]) -> tuple[frozenset[int], frozenset[int]]:
        """(statements a later statement of the same section contradicts, those later ones).

        A later statement that supersedes a used one is used in its place even when it names
        no habit itself ("… is at 18:30 on Fridays now" after "weekly one-on-one … at 12:30").

        The contradiction judge compares whole statements; when a later statement shares a
        name with an earlier one and says it changed ("now", "moved", "no longer"), the two are
        also compared from that name on, so "the user's cousin Keiko lives in Toronto" and
        "Keiko lives in Kyoto now" are recognised as the same subject. The judge is cautious
        (two values that differ in two places may hold in different contexts), so a plain
        restatement also counts: a changed statement about the same name in the same words,
        only its facts differing ("weekly one-on-one with Nadia is at 10:00 on Tuesdays" →
        "one-on-one with Nadia is at 13:00 on Thursdays now").
        """
        keys = [(s.section, s.claim) for s in statements]
        if keys[: len(self.keys)] != self.keys:
            self.keys, self.dropped, self.superseding = [], set(), set()
        features = [_features(s.claim) for s in statements]
        for later in statements[len(self.keys) :]:
            self._decide(later, statements, features)
        self.keys = keys
        return frozenset(self.dropped), frozenset(self.superseding)

    def _decide(
        self, later: _Statement, statements: list[_Statement], features: list[_ClaimFeatures]
    ) -> None:
        new = features[later.order]
        for earlier in statements[: later.order]:
            if earlier.section != later.section or earlier.order in self.dropped:
                continue
            if not (earlier.usable or earlier.order in self.superseding):
                # Never shown, and superseding it would make nothing shown: the verdict
                # cannot change the profile, so it is not asked for.
                continue
            old = features[earlier.order]
            shared = sorted(old.names.keys() & new.names.keys())
            if len(old.words & new.words) < 2 and not shared:
                continue  # judging is for statements about the same thing
            pairs = [(earlier.claim, later.claim)]
            if new.changed:
                pairs += [
                    (earlier.claim[old.names[name] :], later.claim[new.names[name] :])
                    for name in shared
                ]
            restated = (
                new.changed
                and bool(shared)
                and old.plain - new.plain <= _FREQUENCY
                and new.plain - old.plain <= _CHANGE_WORDS
                and fact_terms(earlier.claim) != fact_terms(later.claim)
            )
            if restated or any(judge_contradiction(a, b).contradicts for a, b in pairs):
                self.dropped.add(earlier.order)
                if earlier.usable or earlier.order in self.superseding:
                    self.superseding.add(later.order)


def _plain_words(claim: str) -> frozenset[str]:
    """Content words that are not part of a fact term: the wording around the facts."""
    in_terms: set[str] = set()
    for found in find_terms(claim):
        in_terms |= content_words(found.surface)
    return content_words(claim) - in_terms


def _prose(statements: list[str]) -> str:
    """Statements as a paragraph: the user's own predicates become one sentence."""
    predicates: list[str] = []
    others: list[str] = []
    for statement in statements:
        match = _USER_PREDICATE.match(statement)
        if match:
            predicates.append(match.group(1))
        else:
            others.append(statement)
    parts: list[str] = []
    if predicates:
        listed = predicates[0]
        if len(predicates) > 1:
            listed = ", ".join(predicates[:-1]) + " and " + predicates[-1]
        parts.append(f"The user {listed}.")
    parts.extend(grouped(others))
    joined = join_sentences(parts)
    original = join_sentences(statements)
    return joined if keeps_terms(original, joined) else original
