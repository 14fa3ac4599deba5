"""A memory's claims: the few short statements it makes about a subject, and the keys that
tell which claims of two memories the judge should compare.

The judge reads two statements as clauses and compares every clause of one with every clause
of the other. For two one-sentence facts that is a handful of pairs; for two long texts (an
assistant's answer condensed to a page, a digest) it is hundreds, almost all about different
things, and the cost grows with the square of the texts' length. Worse, the more pairs, the
more chances for a false alarm between sentences that have nothing to do with each other.

So a long text is read as its claims, and only claims that could contradict are judged:

* a **claim** is one sentence of the text, of at most :data:`MAX_CLAIM_CHARS`, that states
  something about a subject (a question, or a sentence whose every clause has no subject a
  fact could be about, "it", "this", "there", is no claim); of a text's first
  :data:`MAX_SENTENCES` sentences, at most :data:`MAX_CLAIMS` are kept, those with a
  single-valued attribute (:func:`.keys.attribute_keys`) or a change or denial first, then
  in text order;
* each claim **offers** keys (its subject with the head of its relation, its subject alone,
  its blocking keys, the particular thing a duty is about) and **seeks** keys; two claims are
  judged when one seeks a key the other offers (:func:`may_contradict`). What the keys are is
  read off the judge's own rules, so a pair of sentences the judge would find contradictory
  shares one: the same subject (allowing an owner or a recurrence on one side, "we" / "our
  team") and the same relation head, or a preference on both sides; a blocking key (one
  attribute, a per-subject category, what a way of living rules out); a change or a denial
  seeks every claim about its subject (it may stand for any relation: "I switched to Zed",
  "I don't drive anymore"), including one about something the subject owns or named with
  one word more or less ("our cloud provider", "the streaming plan").

On the judge's labelled sets (``bench/judge_data``) the keys pair every pair the judge finds
contradictory (``tests/unit/engine/judge/test_claims.py``). Claims depend on the text alone and are
memoised by it; the engine keeps a fact's claims with its state (streams/engine/fact_index.py),
so a cycle never reads them again.

Like the rest of the judge: standard library only, no clock, no randomness, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .attributes import (
    COLLECTIVE_NOUNS,
    OWNERS,
    PRONOUNS,
    readings,
    subject_key,
    without_recurrence,
)
from .inferences import DUTY_RELATIONS, TAKE, _particular, owned
from .keys import NOT_SUBJECTS, attribute_keys
from .lexicons import COUNT_VERBS, PREFERENCE_RELATIONS
from .parse import RELOCATION_VERBS, Clause, parse
from .values import TEMPORAL_CATEGORY_OF, _as_date, is_time
from .words import Word, Words

MAX_CLAIMS = 8
"""At most this many claims per text: a long answer's sentences that state a single-valued
attribute, a change or a denial come first; the rest of a long text is context the judge
would find compatible with anything."""

MAX_SENTENCES = MAX_CLAIMS
"""Only a text's first sentences are read for claims: what bounds the work per memory. As
many as the claims kept: parsing is most of a claim's cost, and reading twice as many
sentences (to choose the attributes among them) was a tenth of the engine's time on long
user/assistant turns while the judge's labelled sets score the same either way."""

MAX_CLAIM_CHARS = 300
"""A longer sentence is no short statement of fact (a table row, a clause of a contract, a
list run together) and no claim: the parser's cost grows faster than its length."""

MAX_SUBJECT_WORDS = 4  # variants one word shorter are offered for subjects up to this long

_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "vs", "etc", "e.g", "i.e", "no", "approx"}
)
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n+")


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence a memory states, with the keys it offers to and seeks in other claims."""

    text: str
    offers: frozenset[str]
    seeks: frozenset[str]
    rank: int = 1  # 0: states an attribute, a change or a denial (kept first)


def blocking_keys(claims: tuple[Claim, ...]) -> frozenset[str]:
    """The (subject, single-valued attribute) keys the claims state (:func:`.keys.attribute_keys`
    of each claim): what the engine indexes facts by."""
    return frozenset(key[2:] for claim in claims for key in claim.offers if key[:2] == "a:")


def may_contradict(a: Claim, b: Claim) -> bool:
    """Whether the judge should compare two claims: one seeks a key the other offers."""
    return not (a.seeks.isdisjoint(b.offers) and b.seeks.isdisjoint(a.offers))


def owners(claim: Claim, speaker: str, names: frozenset[str]) -> frozenset[str | None]:
    """Whose each of the claim's subjects is, when ``speaker`` said it: the first person's and
    a thing no one is named as owning are the speaker's ("we're in Lisbon now", "book club is
    on thursdays": Priyanka's home, Jonathan's book club); a subject that names one of
    ``names`` (the conversation's speakers, lower-case) or anyone by name or possessive is
    theirs ("Priyanka is a nurse", "Dev's flat"); None: a pronoun of someone else ("she",
    "they", "you"), whose owner the sentence does not say. Two people each saying "our book
    club" speak of two book clubs."""
    return frozenset(_owner(clause.subject, speaker, names) for clause in parse(claim.text).clauses)


def _owner(subject: Words, speaker: str, names: frozenset[str]) -> str | None:
    for word in subject:
        if word.key in OWNERS:
            return speaker
        if word.key in PRONOUNS:
            return None
        if word.key in names or word.possessive or word.proper:
            return word.key
    return speaker


def same_owner(a: frozenset[str | None], b: frozenset[str | None]) -> bool:
    """Whether two claims' :func:`owners` may be the same: one shared, or one not known."""
    return None in a or None in b or not a.isdisjoint(b)


def sentences(text: str) -> list[str]:
    """The text's sentences: split after ``.``, ``!`` or ``?`` followed by space, and at line
    breaks, but not after an abbreviation ("Dr. Okafor") or an initial ("J. Smith")."""
    found: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].rsplit(None, 1)
        last = before[-1].lower().rstrip(".") if before else ""
        if match.group().strip() and (last in _ABBREVIATIONS or len(last) == 1):
            continue  # an abbreviation's or an initial's period
        found.append(text[start : match.end()].strip())
        start = match.end()
    found.append(text[start:].strip())
    return [sentence for sentence in found if sentence]


@lru_cache(maxsize=16384)
def claims(text: str) -> tuple[Claim, ...]:
    """The claims of ``text`` (see the module doc), at most :data:`MAX_CLAIMS`. Memoised:
    claims depend on the text alone."""
    read = sentences(text)[:MAX_SENTENCES]
    found = [claim for claim in map(_claim, read) if claim is not None]
    if len(found) > MAX_CLAIMS:
        kept = sorted(range(len(found)), key=lambda i: (found[i].rank, i))[:MAX_CLAIMS]
        found = [found[i] for i in sorted(kept)]
    return tuple(found)


def tells_a_change(sentence: str) -> bool:
    """Whether ``sentence`` tells that someone or something moved, to a new place ("I moved
    to Boston last month", "we relocated to Leeds"): an event. A later move contradicts the
    state it began (where she lives now), but that it happened, and when, stays true, and
    people ask when it did. A thing moved to a time ("standup moved to 9:15") has only its
    latest time, which the next move replaces; a switch ("I switched to Zed") states what is
    used, which the next switch corrects; "I'm in Chicago now" tells no event."""
    return any(
        clause.any_relation
        and not clause.replaced
        and not clause.negated
        and clause.relation[0].key in RELOCATION_VERBS
        and clause.value
        and not _is_a_time(clause.value[0])  # where it moved to, before when it did
        for clause in parse(sentence).clauses
    )


def _is_a_time(word: Word) -> bool:
    return _as_date(word) is not None or is_time(word.key) or word.key in TEMPORAL_CATEGORY_OF


def is_one_claim(text: str) -> bool:
    """Whether ``text`` is a single sentence: the judge reads it whole, as it always has."""
    return len(sentences(text)) <= 1


def _claim(sentence: str) -> Claim | None:
    if sentence.endswith("?") or len(sentence) > MAX_CLAIM_CHARS:
        return None  # a question states nothing; a long sentence is no short claim
    offers: set[str] = set()
    seeks: set[str] = set()
    stated = False  # an attribute, a change or a denial
    for clause in parse(sentence).clauses:
        stated |= clause.negated or clause.update or clause.any_relation
        _clause_keys(clause, offers, seeks)
    if not offers:
        return None  # about nothing a fact could be about
    blocking = {f"a:{key}" for key in attribute_keys(sentence)}
    return Claim(
        sentence,
        frozenset(offers | blocking),
        frozenset(seeks | blocking),
        rank=0 if stated or blocking else 1,
    )


def _canonical(subject: tuple[str, ...]) -> tuple[str, ...]:
    """One form for the subjects :func:`.attributes.subjects_match` takes as the same: no
    recurrence, no owner's word ("our budget" is the budget), "our team" is "we"."""
    subject = without_recurrence(subject)
    if len(subject) == 2 and subject[0] == "we" and subject[1] in COLLECTIVE_NOUNS:
        return ("we",)
    if len(subject) > 1 and subject[0] in OWNERS:
        return subject[1:]
    return subject


def _about(subject: tuple[str, ...]) -> bool:
    return bool(subject) and not set(subject) <= NOT_SUBJECTS


def _shorter(subject: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The subject with one word left out ("streaming plan" → "plan", "streaming"), and its
    first word (the owner in "user cloud provider"): what a change about a subject named one
    word shorter, or about its owner, reaches."""
    if len(subject) < 2 or len(subject) > MAX_SUBJECT_WORDS:
        return set()
    found = {subject[:i] + subject[i + 1 :] for i in range(len(subject))}
    return found | {subject[:1]}


def _clause_keys(clause: Clause, offers: set[str], seeks: set[str]) -> None:
    if not clause.subject:
        return  # "be a developer.", "show me the draft": a fragment or a request, about no one
    changes = clause.update or clause.any_relation
    for reading in readings(clause):
        subject = _canonical(reading.subject)
        if not _about(subject):
            continue
        named = " ".join(subject)
        head = "prefer" if reading.relation[0] in PREFERENCE_RELATIONS else reading.relation[0]
        offers.add(f"r:{named}|{head}")
        seeks.add(f"r:{named}|{head}")
        offers.add(f"s:{named}")
        for variant in _shorter(tuple(reading.subject)) | _shorter(subject):
            offers.add(f"s:{' '.join(_canonical(variant))}")
        if changes or clause.negated:
            seeks.add(f"s:{named}")  # a change or a denial may be about any relation
    for holder, _ in owned(clause):  # "the user's son": said of the user too
        if _about(_canonical(holder)):
            offers.add(f"s:{' '.join(_canonical(holder))}")
    if clause.negated and clause.relation_key[0] in COUNT_VERBS:
        owner = _canonical(subject_key(clause.subject))
        if _about(owner):
            seeks.add(f"s:{' '.join(owner)}")  # "has no children" / "the user's son"
    if clause.relation_key in DUTY_RELATIONS or clause.relation_key == TAKE:
        held = _particular(clause)
        if held:
            offers.add(f"d:{' '.join(held)}")
            seeks.add(f"d:{' '.join(held)}")
