"""Statements into clauses: who (subject), what about them (relation), which value, with which
polarity and tense, and whether the statement reports a change or corrects an earlier one.

"Ingrid lives in Oslo and works at Equinor" is two clauses sharing a subject. "Correction: the
offsite is in Lisbon, not Porto" is the clause "the offsite is in Lisbon" plus the *replaced*
clause "the offsite is not in Porto": the trailing "not Y" names the value Y that was replaced,
it does not negate the whole statement. "The demo was moved to Thursday" is an *update*: a
present claim that the demo's slot is Thursday now, whatever relation the other statement used
("the demo is on Tuesday"), not a past fact. "I switched from Chrome to Firefox" also replaces
Chrome. "I've never used Terraform" is about using Terraform ("have" is the auxiliary of the
perfect), and the perfect "never" covers every time, now included.

"Bruno has a new phone number: X" states Bruno's phone number, as a change; "Ana's new email is
X" too. "I switched to Zed last week" changes to Zed (when the change happened is not part of
the value). "I switched to Zed now, it is my main editor" is two clauses, the second about Zed
("it" is the previous clause's subject, or what a person switched to or uses). "I use Helix as
my main editor" also states "my main editor is Helix".

Updates as people state them (issue 30): "Ana took over as team lead (from Tom)" says the team
lead is Ana now (and no longer Tom); "Mei has taken over the invoices from Ravi" and "Min-jun
handed scrum master over to Elise" name the new and the old holder; "Kira might take over" is a
plan, not a change. "we dropped Comcast" replaces Comcast as what we use or are with; "I
started eating meat again" is eating meat now, "I stopped ..." no longer. "the launch slipped to
October 3rd", "was pushed back to", "left Deloitte in June", "migrated to GCP over the summer":
the change's time and what brought it about ("after the reorg") are not part of the value, nor
what is said after a comma ("moved to Ovo, much cheaper"). "I moved to Leeds" (a person, a place)
is about where one lives. A statement with "also", "too" or "as well" adds a value and changes
none; one that opens with a revision ("Actually,", "Wait, no.", "Correction:") is an update; a
question ("When did I stop using Todoist?") claims nothing. Sentences are clauses, and so is a
clause after a comma that has its own subject and copula ("They raised prices, the plan is $15
now").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from ..memo import by_identity
from .lexicons import (
    AUXILIARIES,
    CHANGE_TIME_WORDS,
    COPULAS,
    DETERMINERS,
    DROP_RELATIONS,
    DROP_VERBS,
    DROPPED,
    FREQUENCY_ADVERBS,
    IRREGULAR_PARTICIPLES,
    IRREGULAR_PAST,
    JOIN_VERBS,
    LEAVE_RELATIONS,
    LEAVE_VERBS,
    LIMITING_ADVERBS,
    NEGATORS,
    NEW_ATTRIBUTE_NOUNS,
    PARTICIPLES,
    PARTICLES,
    PAST_ADVERBS,
    PAST_MARKERS,
    PLACE_PART_OF,
    POSSESSIVE_DETERMINERS,
    PREPOSITIONS,
    PRONOUN_SUBJECTS,
    RELATION_ALIAS_PHRASES,
    ROLE_NOUNS,
    UPDATE_VERBS,
)
from .normalise import EMAIL, capitalised, read
from .quantities import MONTH_NUMBER, may_start_amount, read_date, read_quantity
from .words import (
    ADVERB,
    ANTONYM_CANONICALS,
    CONTENT,
    NEGATOR,
    OTHER,
    PUNCTUATION,
    Word,
    Words,
    key_of,
    keys,
    phrase_key,
    show,
    verb_base,
)

PAST, PERFECT, PRESENT = "past", "perfect", "present"

_TOKEN = re.compile(
    EMAIL + r"|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+[a-z_]\w*|\d+(?:\.\d+)*|[^\W\d]\w*(?:'s)?|[,;:]"
)
_CLAUSE_JOINS = frozenset({"and", "but", "whereas", "while", "so"})
_COMMA_CLAUSE_SUBJECTS = PRONOUN_SUBJECTS - {"who"}  # "…, who …" describes, it does not assert
_UPDATE_TARGETS = frozenset({"to", "into"})
# Words between a change verb and its target that are not what was moved ("pushed back to",
# "moved our accounts over to", "migrated everything to").
_CHANGE_PARTICLES = frozenset({"back", "forward", "over", "out", "up", "down", "ahead", "along"})
# A change's time as a trailing phrase: "in May", "over the summer", "since spring".
_CHANGE_TIME_PREPOSITIONS = frozenset({"in", "on", "over", "during", "since", "from", "by", "at"})
_SEASONS = frozenset({"spring", "summer", "autumn", "fall", "winter"})
# Where a person moving house may be said to be ("I moved to Leeds" / "I live in Manchester").
_HOME_RELATIONS = frozenset(
    phrase_key(phrase) for phrase in ("live in", "be in", "be based in", "be at", "stay in")
)
RELOCATION_VERBS = frozenset({"move", "relocate"})  # a person moving: where they live
_CHANGE_CAUSES = frozenset({"after", "since", "following"})
_PRE_VERB_ADVERBS = frozenset({"only", "mainly", "mostly", "rarely", "hardly", "barely", "seldom"})
# Words that make what follows a plan or a wish, not a change that happened.
_NOT_YET = frozenset(
    {"will", "would", "could", "might", "may", "should", "shall", "to", "going", "plan"}
    | {"plans", "planning", "hope", "hoping", "want", "wants", "considering", "thinking"}
)
# "I started running", "I stopped eating meat": the activity now, or no longer.
_ONSET_VERBS = {"start": False, "begin": False, "stop": True}
_ONSET_STEMS = frozenset({"sta", "beg", "sto"})
_TIME_UNITS = frozenset(
    {"week", "weekend", "month", "year", "quarter", "term", "semester", "sprint"}
)
_COUNTING = frozenset({"next", "last", "first", "second", "third", "fourth", "following", "every"})
_DEFINITE = frozenset({"the", "this", "that", "these", "those"})
_NOBODY = frozenset({"nothing", "nobody", "none"})
_PERSONS = frozenset({"user", "we", "he", "she", "they", "you"})
_AS_ROLE_RELATIONS = frozenset(
    {("use",), ("run",), ("choose",), ("pick",), ("keep",), ("adopt",), ("buy",), ("get",)}
)
RELATION_ALIASES = {
    phrase_key(phrase): phrase_key(target) for phrase, target in RELATION_ALIAS_PHRASES.items()
}
LEAVE_RELATION_KEYS = frozenset(phrase_key(phrase) for phrase in LEAVE_RELATIONS)
PLACE_NAMES = frozenset(PLACE_PART_OF) | frozenset(
    parent for parents in PLACE_PART_OF.values() for parent in parents
)


@dataclass(frozen=True, slots=True)
class Clause:
    text: str  # the clause as normalised, for explanations
    subject: Words
    relation: Words  # the verb with its participle and particles ("is written in")
    value: Words
    negated: bool
    tense: str  # PAST, PERFECT or PRESENT
    update: bool = False  # stated as a change ("was moved to", "now"): a present claim
    replaced: bool = False  # the value a correction or a change replaced, stated as negated
    any_relation: bool = False  # a change states a value, whatever the relation was called
    relations_allowed: frozenset[tuple[str, ...]] | None = None  # limits ``any_relation``
    addition: bool = False  # "also", "too", "as well": one more value, not a new one
    definite: bool = False  # the value is a particular thing ("the dog", "our dog")
    descriptive: bool = False  # what the subject is like: "is supportive", "is draining me"

    @property
    def relation_key(self) -> tuple[str, ...]:
        return _relation_key(self)

    @property
    def is_copula(self) -> bool:
        return self.relation_key[:1] == ("be",)

    @property
    def predicate(self) -> Words:
        """What is said of the subject: the value, after a copula with its participle
        ("is married", "is engaged to Felix")."""
        return self.relation[1:] + self.value if self.is_copula else self.value

    @property
    def attribute(self) -> str:
        return _attribute(self)


@dataclass(frozen=True, slots=True)
class Statement:
    text: str  # the normalised statement, for explanations
    words: Words  # content words in order
    negators: tuple[str, ...]
    adverbs: tuple[str, ...]
    tense: str
    clauses: tuple[Clause, ...]
    question: bool = False  # "When did I stop using Todoist?": claims nothing

    @property
    def polarity(self) -> int:
        """0 affirmative, 1 negative: negators and antonym flips, modulo 2."""
        return (len(self.negators) + sum(word.flipped for word in self.words)) % 2


# --- tokens -------------------------------------------------------------------------------


def _role(tokens: list[str], i: int) -> str:
    token = tokens[i]
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if token in {",", ";", ":"}:
        return PUNCTUATION
    if token in NEGATORS:
        return OTHER if after in LIMITING_ADVERBS else NEGATOR  # "not just X": more than X
    if token in FREQUENCY_ADVERBS:
        return ADVERB
    if token == "may" and _is_month_may(tokens, i):
        return CONTENT
    if token in AUXILIARIES or token in DROPPED or token in PAST_ADVERBS:
        return OTHER
    if token in {"have", "has", "had"} and after == "been":
        return OTHER
    return CONTENT


def _is_month_may(tokens: list[str], i: int) -> bool:
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    before = tokens[i - 1] if i > 0 else None
    return after is None or after[0].isdigit() or before in PREPOSITIONS


def _words(normalised: str, proper: frozenset[str]) -> list[Word]:
    """Every token as a Word with its role; amounts and dates read as one word each."""
    tokens = _TOKEN.findall(normalised)
    words: list[Word] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if may_start_amount(token):
            date = read_date(tokens, i)
            if date is not None:
                surface = " ".join(t for t in tokens[i : i + date[1]] if t != ",")
                words.append(Word(surface, date[0].key, date=date[0]))
                i += date[1]
                continue
            quantity = read_quantity(tokens, i)
            if quantity is not None:
                surface = " ".join(tokens[i : i + quantity[1]])
                words.append(Word(surface, quantity[0].key, quantity=quantity[0]))
                i += quantity[1]
                continue
        role = _role(tokens, i)
        proper_name = token.removesuffix("'s") in proper
        words.append(_plain_word(token, role, proper_name))
        i += 1
    return words


@lru_cache(maxsize=65536)
def _plain_word(token: str, role: str, proper_name: bool) -> Word:
    """A word other than an amount or a date: one immutable ``Word`` per (token, role,
    proper) shared by every statement that has it, instead of one built per token (a frozen
    dataclass's ``__init__``: half of reading a statement's words)."""
    key, flipped = (token, False) if role == PUNCTUATION else key_of(token)
    possessive = token.endswith("'s") or token in POSSESSIVE_DETERMINERS
    return Word(token, key, role, flipped, proper_name, possessive)


# --- verbs --------------------------------------------------------------------------------


def _looks_plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))


def _is_progressive(token: str) -> bool:
    return token.endswith("ing") and verb_base(token) is not None


def _is_participle(token: str) -> bool:
    return token in IRREGULAR_PARTICIPLES or (
        token.endswith("ed") and verb_base(token) not in {None, token}
    )


def _find_verb(words: list[Word]) -> int | None:
    """Index of the main verb: a copula, an inflected known verb not preceded by a
    determiner, or a base-form known verb after a pronoun, auxiliary, negator or plural noun."""
    fallback = None
    for i, word in enumerate(words):
        token = word.surface
        if word.role != CONTENT or token.endswith(("'s", "ing")) or word.quantity or word.date:
            continue
        if token in COPULAS:
            return i
        base = verb_base(token)
        previous = words[i - 1] if i > 0 else None
        if base is None or (previous is not None and previous.surface in DETERMINERS):
            continue
        if token != base:
            if previous is not None:
                return i
            fallback = i if fallback is None else fallback
        elif previous is not None and (
            previous.surface in PRONOUN_SUBJECTS
            or previous.role != CONTENT
            or (_looks_plural(previous.surface) and not previous.proper)
            or (previous.surface in _PRE_VERB_ADVERBS and i > 1)  # "I only sleep 5 hours"
        ):
            return i
    return fallback


def _relation_end(words: list[Word], verb: int) -> int:
    """Index just past the relation: the verb, then (after a copula) a participle or a
    progressive verb, then particles ("is written in", "is using", "lives in")."""
    after_copula = words[verb].surface in COPULAS
    j = verb + 1
    while j < len(words):
        word = words[j]
        if word.role != CONTENT:
            j += 1
        elif word.surface in PARTICLES or (
            after_copula and (word.surface in PARTICIPLES or _is_progressive(word.surface))
        ):
            after_copula = False  # at most one participle, right after the copula
            j += 1
        else:
            break
    return j


def _next_content(words: list[Word], start: int) -> int | None:
    for j in range(start, len(words)):
        if words[j].role == CONTENT:
            return j
        if words[j].role == PUNCTUATION:
            return None
    return None


def _as_verb(word: Word) -> Word:
    """The verb's key is its base form ("used" → "use"), unless it folds onto an antonym."""
    if word.key in ANTONYM_CANONICALS or word.surface in COPULAS:
        return word
    base = verb_base(word.surface)
    return replace(word, key=base) if base is not None else word


# --- clauses ------------------------------------------------------------------------------


def _content(words: list[Word]) -> Words:
    return tuple(word for word in words if word.role == CONTENT)


def _text(words: list[Word]) -> str:
    return " ".join(word.surface for word in words if word.role != PUNCTUATION)


def _negations(words: list[Word]) -> int:
    """The negators that each deny: "nor" and "neither" after another negator continue its
    denial ("I don't have time for it, nor the energy"), they do not undo it."""
    count = 0
    for word in words:
        if word.role == NEGATOR and not (count and word.surface in _CONTINUING_NEGATORS):
            count += 1
    return count


_CONTINUING_NEGATORS = frozenset({"nor", "neither"})


def _starts_clause(words: list[Word], start: int) -> bool:
    """Whether the words after "and" make a clause of their own ("... and works at DNB",
    "... and our CTO is Ken Ito"), not a second value ("thrillers and poetry")."""
    rest = [word for word in words[start:] if word.role != PUNCTUATION]
    first = next((word for word in rest if word.role == CONTENT), None)
    if first is None or first.quantity or first.date:
        return False
    if first.surface in COPULAS or (
        verb_base(first.surface) is not None and not first.surface.endswith("ing")
    ):
        return True
    verb = _find_verb(rest)
    return verb is not None and any(word.role == CONTENT for word in rest[:verb])


def _comma_clause(words: list[Word], i: int, current: list[Word]) -> bool:
    """ "I switched to Zed, it is my main editor": a comma before a pronoun and its verb
    starts a clause of its own; so does one before a subject and its verb after a clause that
    has its own verb ("They raised prices, the plan is $15 now"). Asked of every word: the
    comma is checked before the scan."""
    if words[i].surface != ",":
        return False
    following = next((word for word in words[i + 1 :] if word.role != PUNCTUATION), None)
    if following is None:
        return False
    if following.surface in _COMMA_CLAUSE_SUBJECTS:
        return _starts_clause(words, i + 1)
    opening = next((word for word in words[i + 1 :] if word.role == CONTENT), None)
    if opening is None or _find_verb(current) is None:
        return False
    rest = [word for word in words[i + 1 :] if word.role != PUNCTUATION]
    verb = _find_verb(rest)
    if verb is None or verb == 0:
        return False
    if opening.proper:
        # "Rebecca sold the Mini, Rebecca drives a Fiesta now": a name and its verb make a
        # clause; "I met Ana, Ben and Carl" is a list (no verb right after the name)
        return verb <= 2 and all(word.proper for word in rest[:verb])
    return rest[verb].surface in COPULAS


def _segments(words: list[Word]) -> list[list[Word]]:
    segments: list[list[Word]] = []
    current: list[Word] = []
    for i, word in enumerate(words):
        if (
            word.surface == ";"
            or (word.surface in _CLAUSE_JOINS and _starts_clause(words, i + 1))
            or _comma_clause(words, i, current)
        ):
            if current:
                segments.append(current)
            current = []
            continue
        current.append(word)
    if current:
        segments.append(current)
    return segments


@dataclass(frozen=True, slots=True)
class _Correction:
    kept: list[Word]  # the clause without the replaced value
    replaced_by: list[Word]  # the clause with the replaced value put back in


def _split_correction(words: list[Word]) -> _Correction | None:
    """ "X, not Y" / "X instead of Y" / "X rather than Y" (and "prefer X over Y"): the clause
    with X, and the same clause with Y in X's place."""
    prefers = any(word.key == "prefer" for word in words)
    for i, word in enumerate(words):
        if word.surface == "not" and i >= 2 and words[i - 1].surface == ",":
            start, cut = i + 1, i - 1
        elif word.surface in {"instead", "rather"} and i + 1 < len(words):
            if words[i + 1].surface not in {"of", "than"}:
                continue
            start, cut = i + 2, i
        elif word.surface in {"over", "to"} and prefers and i >= 2 and words[i - 1].key != "prefer":
            start, cut = i + 1, i
        else:
            continue
        end = next((j for j in range(start, len(words)) if words[j].role == PUNCTUATION), None)
        stop = len(words) if end is None else end
        alternative = [w for w in words[start:stop] if w.role == CONTENT]
        before = words[:cut]
        after = words[stop + 1 :] if end is not None else []
        replacement = _substituted(before, alternative)
        if replacement is None:
            return None
        return _Correction(before + after, replacement + after)
    return None


def _substituted(before: list[Word], alternative: list[Word]) -> list[Word] | None:
    """``before`` with its value replaced by ``alternative``: "the offsite is in Lisbon" with
    "Porto" gives "the offsite is in Porto"; "the blue folder" with "the red one" keeps the
    noun and gives "the red folder". Without a verb, the last words are replaced."""
    if not alternative:
        return None
    keeps_noun = alternative[-1].surface in {"one", "ones"}
    if keeps_noun:
        alternative = alternative[:-1]
    verb = _find_verb(before)
    start = 0 if verb is None else _relation_end(before, verb)
    positions = [i for i in range(start, len(before)) if before[i].role == CONTENT]
    if keeps_noun:
        positions = positions[:-1][-len(alternative) :]
    elif verb is None:
        positions = positions[-len(alternative) :]
    if not alternative or not positions:
        return None
    result = [word for i, word in enumerate(before) if i not in positions[1:]]
    first = positions[0]
    return result[:first] + alternative + result[first + 1 :]


def _change(
    text: str, subject: Words, verb: Word, value: Words, *, replaced: bool, negated: bool = False
) -> Clause:
    """A clause stated as a change: a present claim that matches whatever relation the
    other statement uses ("was moved to Thursday" / "is on Tuesday")."""
    return Clause(
        text,
        subject,
        (_as_verb(verb),),
        value,
        negated=negated or replaced,
        tense=PRESENT,
        update=True,
        replaced=replaced,
        any_relation=True,
    )


def _is_when(word: Word) -> bool:
    """A word that can say when a change happened: a date, a month, a season, a year."""
    return (
        word.date is not None
        or word.key in _SEASONS
        or (word.key.isdigit() and len(word.key) == 4 and word.key[:2] in {"19", "20"})
        or (word.key in MONTH_NUMBER and word.key != "may")
        or (word.key == "may" and word.role == CONTENT)
    )


def _to_comma(words: list[Word]) -> list[Word]:
    """The words up to a comma: "moved to Ovo for our energy, much cheaper"."""
    cut = next((i for i, word in enumerate(words) if word.surface == ","), None)
    return words if cut is None else words[:cut]


def _without_change_cause(value: Words) -> Words:
    """An updated value without what brought the change about: "after the reorg", "since
    we moved", "following the merger"."""
    at = next((i for i, word in enumerate(value) if i > 0 and word.surface in _CHANGE_CAUSES), None)
    return value[:at] if at is not None else value


def _without_change_time(value: Words) -> Words:
    """A change's new value without when the change happened: "switched to Zed last week",
    "moved to Porto two months ago", "changed to tulip77 yesterday", "left Spotify in May",
    "migrated to GCP over the summer"."""
    found = list(value)
    while found:
        last = found[-1].key
        before = found[-2] if len(found) >= 2 else None
        if last in CHANGE_TIME_WORDS:
            found.pop()
        elif before is not None and (
            (before.key in {"last", "this", "next"} and last.isalpha())  # "last week"
            or (last == "ago" and before.quantity is not None)  # "two months ago"
            or (before.key in _CHANGE_TIME_PREPOSITIONS and _is_when(found[-1]))  # "in May"
        ):
            del found[-2:]
        elif (
            before is not None
            and last in _TIME_UNITS
            and before.key not in _COUNTING
            and before.quantity is None
            and not before.key.isdigit()
        ):
            found.pop()  # "... this month": "this" is not a content word
        else:
            break
    return tuple(found) or value


_MEMBERSHIP_VERBS = LEAVE_VERBS | JOIN_VERBS
_CHANGE_VERBS = UPDATE_VERBS | _MEMBERSHIP_VERBS | DROP_VERBS
DROP_RELATION_KEYS = frozenset(phrase_key(phrase) for phrase in DROP_RELATIONS)


def _update_clauses(words: list[Word], inherited: Words, text: str) -> list[Clause] | None:
    """A change: "was moved to X", "switched from A to B", "left A", "joined B"."""
    if not any(
        word.role == CONTENT
        and _is_participle(word.surface)
        and verb_base(word.surface) in _CHANGE_VERBS
        for word in words
    ):
        # Every way through the loop below ends in None without one (most statements): it
        # took each participle's subject first ("talked" in "… talked about …").
        return None
    for i, word in enumerate(words):
        if word.role != CONTENT or not _is_participle(word.surface):
            continue
        base = verb_base(word.surface)
        subject = tuple(w for w in _content(words[:i]) if w.key not in {"be", "have"}) or inherited
        if not subject:
            return None
        negated = _negations(words) % 2 == 1
        if base in UPDATE_VERBS:
            target = next(
                (j for j in range(i + 1, len(words)) if words[j].surface in _UPDATE_TARGETS), None
            )
            if target is None:
                continue
            origin = next((j for j in range(i + 1, target) if words[j].surface == "from"), None)
            moved = tuple(
                w
                for w in _content(words[i + 1 : target if origin is None else origin])
                if w.surface not in _CHANGE_PARTICLES
            )
            if moved:
                subject = moved  # "the team moved the demo to Thursday": the demo moved
            new_value = _without_change_time(_content(_to_comma(words[target + 1 :])))
            change = _change(text, subject, word, new_value, replaced=False, negated=negated)
            if base in RELOCATION_VERBS and _is_person(subject) and _names_a_place(new_value):
                # "I moved to Leeds" is where I live, not where I work
                change = replace(change, relations_allowed=_HOME_RELATIONS)
            clauses = [change]
            if origin is not None:
                old_value = _content(words[origin + 1 : target])
                clauses.append(_change(text, subject, word, old_value, replaced=True))
            return clauses
        if base in DROP_VERBS and not negated:
            # "we dropped Comcast": what we used, are with, have, no longer
            dropped = _without_change_time(_content(_to_comma(words[i + 1 :])))
            change = _change(text, subject, word, dropped, replaced=True)
            return [replace(change, relations_allowed=DROP_RELATION_KEYS)]
        if base in _MEMBERSHIP_VERBS and not negated:
            # "left Spotify" / "joined Klarna": only about where someone works, lives, plays
            left = _without_change_time(_content(words[i + 1 :]))
            change = _change(text, subject, word, left, replaced=base in LEAVE_VERBS)
            return [replace(change, relations_allowed=LEAVE_RELATION_KEYS)]
    return None


def _tense(words: list[Word], verb: int, head: str) -> str:
    if any(word.surface in PAST_ADVERBS for word in words):
        return PAST
    if verb > 0 and words[verb - 1].surface in {"get", "gets"}:
        return PRESENT  # "I get paid monthly"
    if head in IRREGULAR_PAST or (head.endswith("ed") and verb_base(head) not in {None, head}):
        return PAST
    if any(word.surface in PAST_MARKERS for word in words[: verb + 1]):
        return PAST
    return PRESENT


def _plain_clause(words: list[Word], inherited: Words, text: str, update: bool) -> Clause | None:
    verb = _find_verb(words)
    if verb is None:
        return None
    head = words[verb].surface
    tense = _tense(words, verb, head)
    subject = _content(words[:verb])
    if len(subject) > 1 and subject[-1].surface in _PRE_VERB_ADVERBS:
        subject = subject[:-1]  # "I only sleep 5 hours": "only" is not the subject's
    subject = subject or inherited
    if words[verb].key == "have":
        following = _next_content(words, verb + 1)
        if following is None:
            return None  # "No, I haven't.": an auxiliary whose verb is left out, no claim
        if _is_participle(words[following].surface):
            tense = PAST if head == "had" else PERFECT
            verb = following  # "have" is the auxiliary: "I've never used Terraform"
    stops = False
    onset = (
        _ONSET_VERBS.get(verb_base(words[verb].surface) or "")
        if words[verb].surface[:3] in _ONSET_STEMS
        else None
    )
    if onset is not None:
        following = _next_content(words, verb + 1)
        if following is not None and _is_progressive(words[following].surface):
            verb, update, tense, stops = following, True, PRESENT, onset  # "started eating meat"
    end = _relation_end(words, verb)
    relation = tuple(
        _as_verb(word) if i == verb else word
        for i, word in enumerate(words[verb:end], start=verb)
        if word.role == CONTENT
    )
    value = _content(words[end:])
    if update:
        value = _without_change_cause(value)  # "is Victor now, after the merger"
    if not value and any(word.surface in _NOBODY for word in words[verb + 1 :]):
        value = (Word("nothing", "anything"),)  # "allergic to nothing": to anything, denied
    if tense == PERFECT and (
        any(word.surface == "since" for word in words[end:])
        or any(word.quantity is not None for word in value)
    ):
        tense = PRESENT  # "have worked there since 2019 / for 5 years": still true now
    if update:
        tense = PRESENT
    if any(word.key == "new" for word in subject):
        update, tense = True, PRESENT  # "Ana's new email is ...": the value now, after a change
    renamed = _new_attribute(words[end:], subject, relation)
    if renamed is not None:
        subject, value = renamed
        relation, update, tense = (Word("is", "be"),), True, PRESENT
    holder = relation[0].key == "be" and not relation[1:] and _names_a_holder(subject, value)
    if holder:
        subject, value = value, subject  # "Margaret is our accountant": our accountant is M.
    flips = sum(word.flipped for word in relation)
    if relation[0].key == "be":
        flips += sum(word.flipped for word in value)
    negated = (_negations(words) + flips + stops) % 2 == 1
    first = next((i for i in range(end, len(words)) if words[i].role == CONTENT), None)
    definite = first is not None and (
        words[first].possessive or (first > 0 and words[first - 1].surface in _DEFINITE)
    )
    descriptive = not holder and first is not None and _describes(words[verb + 1 : first], value)
    return Clause(
        text,
        subject,
        relation,
        value,
        negated,
        tense,
        update,
        definite=definite,
        descriptive=descriptive,
    )


def _describes(before: list[Word], value: Words) -> bool:
    """Whether a value says what its subject is like rather than which it is: one word, or
    a participle ("is supportive", "is boring", "is draining me"), with no determiner before
    it and no name or role ("is John", "is a nurse", "is head of sales", "is manager")."""
    head = value[0]
    return (
        not any(word.surface in DETERMINERS for word in before)
        and not (head.proper or head.possessive or head.key in ROLE_NOUNS)
        and (len(value) == 1 or _is_progressive(head.surface) or _is_participle(head.surface))
    )


def _new_attribute(
    after: list[Word], subject: Words, relation: Words
) -> tuple[Words, Words] | None:
    """ "Bruno has a new phone number: 555-0100" states Bruno's phone number (as a change):
    the subject with the attribute noun, and the value after it."""
    if relation[0].key != "have" or relation[1:] or not subject:
        return None
    content = [i for i, word in enumerate(after) if word.role == CONTENT]
    if len(content) < 3 or after[content[0]].key != "new":
        return None
    nouns: list[Word] = []
    for i in content[1:]:
        word = after[i]
        typed = word.quantity or word.date or word.proper or not word.surface.isalpha()
        if (
            typed
            or word.surface in PARTICLES
            or any(w.role == PUNCTUATION for w in after[content[0] : i])
        ):
            break
        nouns.append(word)
    rest = tuple(after[i] for i in content[1 + len(nouns) :])
    if not nouns or not rest or len(nouns) > 3 or nouns[-1].key not in NEW_ATTRIBUTE_NOUNS:
        return None
    owner = replace(subject[-1], possessive=True)
    return subject[:-1] + (owner, *nouns), rest


def _names_a_holder(subject: Words, value: Words) -> bool:
    """ "Margaret is our accountant": a bare name said to hold someone's role."""
    return (
        0 < len(subject) <= 3
        and not any(word.possessive for word in subject)
        and bool(value)
        and value[0].possessive
    )


def _is_addition(words: list[Word], text: str) -> bool:
    """ "I also play the ukulele", "I like swimming too", "... as well": one more value."""
    if not ("also" in text or "too" in text or "well" in text or "additionally" in text):
        return False
    surfaces = [word.surface for word in words if word.role != PUNCTUATION]
    return (
        "also" in surfaces
        or "additionally" in surfaces
        or surfaces[-1:] == ["too"]
        or surfaces[-2:] == ["as", "well"]
    )


def _takeover_clauses(words: list[Word], inherited: Words, text: str) -> list[Clause] | None:
    """ "Ana took over as team lead (from Tom)": the team lead is Ana now (not Tom). "Mei has
    taken over the invoices from Ravi": Mei has them now, Ravi no longer does."""
    at = next(
        (
            i
            for i, word in enumerate(words[:-1])
            if word.key == "take" and words[i + 1].surface == "over"
        ),
        None,
    )
    if at is None:
        return _handover_clauses(words, inherited, text)
    if any(word.surface in _NOT_YET for word in words[:at]):
        return None  # "Kira might take over as captain": a plan, not a change
    subject = tuple(w for w in _content(words[:at]) if w.key not in {"be", "have"}) or inherited
    after = words[at + 2 :]
    origin = next((j for j, word in enumerate(after) if word.surface == "from"), None)
    held = _without_change_time(_content(after[:origin]))
    previous = _without_change_time(_content(after[origin + 1 :])) if origin is not None else ()
    if not subject or not held or _negations(words):
        return None
    verb = words[at]
    if held[0].surface == "as":  # "took over as team lead": the role's holder is someone else
        role = held[1:]
        if not role:
            return None
        holder = Clause(
            text, role, (Word("is", "be"),), subject, False, PRESENT, update=True, definite=True
        )
        clauses = [holder]
        if previous:
            clauses.append(replace(holder, value=previous, negated=True, replaced=True))
        return clauses
    clauses = [_change(text, subject, verb, held, replaced=False)]
    if previous:
        clauses.append(_change(text, previous, verb, held, replaced=True))
    return clauses


def _handover_clauses(words: list[Word], inherited: Words, text: str) -> list[Clause] | None:
    """ "Min-jun handed scrum master over to Elise": the scrum master is Elise now, not
    Min-jun."""
    at = next((i for i, word in enumerate(words) if word.key == "hand"), None)
    if at is None or any(word.surface in _NOT_YET for word in words[:at]):
        return None
    over = next((j for j in range(at + 1, len(words)) if words[j].surface == "over"), None)
    if over is None:
        return None
    to = next((j for j in range(over + 1, len(words)) if words[j].surface == "to"), None)
    if to is None:
        return None
    role = _content(words[at + 1 : over]) or _content(words[over + 1 : to])
    holder = _without_change_time(_content(_to_comma(words[to + 1 :])))
    previous = tuple(w for w in _content(words[:at]) if w.key not in {"be", "have"}) or inherited
    if not role or not holder or not previous or _negations(words):
        return None
    new = Clause(
        text, role, (Word("is", "be"),), holder, False, PRESENT, update=True, definite=True
    )
    return [new, replace(new, value=previous, negated=True, replaced=True)]


def _says_now(words: list[Word]) -> bool:
    """Whether the words say the clause holds now, instead of before: "now", but not "now
    that", which gives a reason ("now that we have the plan, ..."), no change."""
    return any(
        word.surface == "now" and (i + 1 == len(words) or words[i + 1].surface != "that")
        for i, word in enumerate(words)
    )


def _clauses(words: list[Word], inherited: Words) -> list[Clause]:
    text = _text(words)
    update = _says_now(words)
    correction = _split_correction(words)
    kept = correction.kept if correction is not None else words
    takes_over = " over " in text or text.endswith(" over")
    clauses = _takeover_clauses(kept, inherited, text) if takes_over else None
    if clauses is None:
        clauses = _update_clauses(kept, inherited, text)
    if clauses is None:
        clause = _plain_clause(kept, inherited, text, update)
        clauses = [] if clause is None else [clause]
    clauses = [found for clause in clauses for found in _as_role(clause)]
    if correction is not None and clauses:
        replaced = _plain_clause(correction.replaced_by, clauses[0].subject, text, update)
        if replaced is not None:
            clauses.append(replace(replaced, negated=not replaced.negated, replaced=True))
    if clauses and _is_addition(words, text):
        clauses = [replace(clause, addition=True, update=False) for clause in clauses]
    return [clause for clause in clauses if not _free_relative(clause)]


_WH_WORDS = frozenset({"where", "what", "how", "why", "when", "who", "whatever", "wherever"})


def _free_relative(clause: Clause) -> bool:
    """A copula whose value is a clause of its own states no value of its subject: "that's
    where their head is at", "this is what I need", "that's why I left" (a lone "who" is
    a cleft's, "It's Dr. Okafor who is my GP", and stays)."""
    value = clause.value
    return clause.is_copula and len(value) > 1 and value[0].key in _WH_WORDS


def _is_person(subject: Words) -> bool:
    return bool(subject) and all(word.key in _PERSONS or word.proper for word in subject)


def _names_a_place(value: Words) -> bool:
    """A value that names a place or a proper name ("Leeds", "Canary Wharf")."""
    return bool(value) and (value[0].proper or value[0].key in PLACE_NAMES)


def _resolve_it(segment: list[Word], previous: Clause) -> list[Word]:
    """A clause opening with "it" speaks of the previous clause's subject, or of its value
    when the subject is a person ("I switched to Zed, it is my main editor": Zed is)."""
    first = next((i for i, word in enumerate(segment) if word.role == CONTENT), None)
    if first is None or segment[first].surface != "it":
        return segment
    if not _is_person(previous.subject):
        referent = previous.subject
    elif previous.any_relation or previous.relation_key in _AS_ROLE_RELATIONS:
        referent = previous.value  # what a person switched to, uses, runs
    else:
        return segment
    if not referent or len(referent) > 4:
        return segment
    return segment[:first] + list(referent) + segment[first + 1 :]


def _as_role(clause: Clause) -> list[Clause]:
    """ "I use Helix as my main editor" also states "my main editor is Helix"."""
    if clause.relation_key not in _AS_ROLE_RELATIONS or clause.negated:
        return [clause]
    value = clause.value
    at = next((i for i, word in enumerate(value) if word.surface == "as"), None)
    if at is None or at == 0:
        return [clause]
    role = value[at + 1 :]
    if len(role) < 2 or not role[0].possessive:
        return [clause]
    used = replace(clause, value=value[:at])
    holder = replace(clause, subject=role, relation=(Word("is", "be"),), value=value[:at])
    return [used, holder]


@by_identity(maxsize=65536)
def _relation_key(clause: Clause) -> tuple[str, ...]:
    """The relation as compared. Memoised: asked for every pair a clause is judged in."""
    relation = clause.relation
    if len(relation) > 1 and relation[0].key == "be" and _is_progressive(relation[1].surface):
        relation = relation[1:]  # "is using" means "uses"
    key = keys(relation)
    return RELATION_ALIASES.get(key, key)


@by_identity(maxsize=65536)
def word_keys(statement: Statement) -> tuple[str, ...]:
    """The keys of a statement's content words. Memoised like :func:`_relation_key`."""
    return keys(statement.words)


@by_identity(maxsize=65536)
def _attribute(clause: Clause) -> str:
    """What a clause states of its subject, as shown in explanations. Memoised: every
    explanation of an unrelated pair names it."""
    return show(clause.subject + clause.relation)


@lru_cache(maxsize=16384)
def parse(text: str) -> Statement:
    """The statement's words and clauses. Memoised: a cycle judges one new fact against many
    old ones, and a profile re-synthesis judges the same statements again; a ``Statement``
    is immutable and depends on the text alone."""
    normalised, revises = read(text)
    words = _words(normalised, capitalised(text))
    content = _content(words)
    clauses: list[Clause] = []
    subject: Words = ()
    for segment in _segments(words):
        if clauses:
            segment = _resolve_it(segment, clauses[-1])
        found = _clauses(segment, subject)
        if found and not subject:
            subject = found[0].subject
        if revises:  # "Actually, X": X holds instead of what was said before
            found = [
                clause if clause.replaced else replace(clause, update=True) for clause in found
            ]
        clauses += found
    return Statement(
        text=_text(words),
        words=content,
        negators=tuple(word.surface for word in words if word.role == NEGATOR),
        adverbs=tuple(word.surface for word in words if word.role == ADVERB),
        tense=clauses[0].tense if clauses else PRESENT,
        clauses=tuple(clauses),
        question=text.rstrip().endswith("?"),
    )
