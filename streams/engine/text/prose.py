"""Sentence mechanics shared by the writers: splitting, content words, third-person rewording.

The writers are extractive: they cut texts into sentences and clauses, keep some, and reword
pronouns. Everything here is plain string work that any rewording step may get wrong for an
odd sentence, so the writers check every rewording with :func:`~.facts.fact_terms` and keep the
original wording when a fact would be lost (see :func:`keeps_terms`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from streams.engine.text.dates import PRESENT_IN_ED
from streams.engine.text.facts import (
    fact_terms,
    full_stop_keeps_terms,
    is_starter,
    missing_terms,
    third_person_verb,
)

__all__ = [
    "clause_spans",
    "clauses",
    "content_words",
    "deduplicated",
    "grouped",
    "join_sentences",
    "keeps_terms",
    "reported",
    "sentences",
    "speaker_of",
    "split_reports",
    "third_person",
    "trimmed",
    "with_missing_lines",
]

# After ".", "!" or "?" and blanks, unless a lower-case word follows ("at 3 p.m. on Monday").
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[ \t]+(?![a-z])|\n")
# A comma before a digit is left alone: "March 14, 2026" must stay one date.
_CLAUSE_BREAK = re.compile(r"[;,][ \t]+(?![0-9])")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_TERMINAL = (".", "!", "?")

# Words that say nothing about the fact a statement states: two statements whose remaining
# words (and fact terms) are one inside the other repeat each other. Negators are NOT here:
# "does not use X" must never read as a repetition of "uses X".
FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "there", "here", "it", "its", "it's"}
    | {"i", "i'm", "i've", "i'll", "i'd", "me", "my", "mine", "we", "us", "our", "you", "your"}
    | {"he", "him", "his", "she", "her", "they", "them", "their", "theirs", "user", "user's"}
    | {"agent", "agent's", "system", "said", "asked", "says", "topics", "session", "also"}
    | {"is", "am", "are", "was", "were", "be", "been", "do", "does", "did", "have", "has", "had"}
    | {"and", "or", "but", "so", "if", "then", "than", "of", "in", "on", "at", "for", "with"}
    | {"by", "from", "to", "about", "as", "into", "again", "just", "really", "actually", "oh"}
    | {"well", "ok", "okay", "yes", "yeah", "sure", "thanks", "haha", "lol", "hmm", "what"}
    | {"where", "when", "who", "how", "which", "why", "can", "could", "will", "would", "should"}
)

# --- splitting ------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """``text`` cut after sentence-final punctuation and at line breaks, blanks dropped."""
    return [piece.strip() for piece in _SENTENCE_BREAK.split(text) if piece.strip()]


def clauses(sentence: str) -> list[str]:
    """``sentence`` cut at commas and semicolons (the pieces a writer may keep or drop)."""
    return [sentence[start:end] for start, end in clause_spans(sentence)]


def clause_spans(sentence: str) -> list[tuple[int, int]]:
    """Where the :func:`clauses` of ``sentence`` are, surrounding blanks left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for brk in [*_CLAUSE_BREAK.finditer(sentence), None]:
        end = len(sentence) if brk is None else brk.start()
        piece = sentence[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        if brk is not None:
            start = brk.end()
    return spans


def trimmed(sentence: str, keep: Callable[[str], bool]) -> str | None:
    """``sentence`` without its leading and trailing clauses that ``keep`` rejects, or None
    when it rejects them all. Clauses between two kept ones stay ("Carmen, my aunt, lives
    in Lyon"), so what is left is a piece of the sentence exactly as written."""
    kept = [(start, end) for start, end in clause_spans(sentence) if keep(sentence[start:end])]
    if not kept:
        return None
    return sentence[kept[0][0] : kept[-1][1]]


def join_sentences(pieces: list[str]) -> str:
    """Pieces joined into one line: a space after a finished sentence, "; " otherwise.

    Both separators keep every piece's facts apart: no fact term spans ". " or "; ".
    """
    joined = ""
    for piece in pieces:
        if joined:
            joined += " " if joined.endswith(_TERMINAL) else "; "
        joined += piece
    return joined


def content_words(text: str) -> frozenset[str]:
    """The case-folded words of ``text`` that carry meaning (length ≥ 3, not function words)."""
    words = (match.group(0).casefold().replace("’", "'") for match in _WORD.finditer(text))
    return frozenset(w for w in words if len(w) >= 3 and w not in FUNCTION_WORDS)


def keeps_terms(original: str, rewritten: str) -> bool:
    """Whether ``rewritten`` still states every fact term of ``original``."""
    return fact_terms(rewritten) >= fact_terms(original)


def with_missing_lines(content: str, sources: Sequence[tuple[str | None, str]]) -> str:
    """``content`` plus, verbatim, every source line holding a term ``content`` lacks.

    ``sources`` are (label, text) pairs; a labelled line is copied as "Label: line". The last
    resort behind the writers' no-lost-terms guarantee: fact terms never span a line break and
    a "Label: " prefix cannot change a line's terms, so a copied line keeps them all.
    """
    missing = missing_terms((text for _, text in sources), content)
    if not missing:
        return content
    extra = [
        f"{label}: {line}" if label else line
        for label, text in sources
        for line in text.split("\n")
        if fact_terms(line) & missing
    ]
    return "\n".join([content, *extra])


# --- third person ---------------------------------------------------------------------------

_PIECES = re.compile(r"([^\W\d_]+(?:['’][^\W\d_]+)?)")
_ADVERBS = frozenset(
    {"never", "always", "usually", "often", "sometimes", "really", "also", "just", "still"}
    | {"only", "mostly", "generally", "actually", "finally", "now", "recently", "already"}
    | {"rarely", "definitely", "honestly", "normally", "typically", "currently", "even"}
    | {"no", "longer", "totally", "absolutely", "kind", "sort", "of"}
    | {"ever", "barely", "hardly", "nearly", "almost", "once"}
    | {"first", "then", "soon", "later", "kinda", "sorta", "lowkey"}  # "I first brought her"
    | {"both", "either", "neither"}  # "I both love and hate it", "I either call or text"
    # degree and hedges: "I very nearly sent" had been "Margaret veries nearly sent" (blind
    # conversation 65), "I quite enjoy it" "Margaret quites enjoy it"
    | {"very", "so", "quite", "rather", "much", "pretty", "somehow", "maybe", "perhaps"}
)
_CHAT_VERBS = {"wanna": "wants to", "gotta": "has to", "gonna": "is going to"}
"""Chat's contracted verbs after I, in the third person."""
_LY_VERBS = frozenset(
    {"apply", "reply", "rely", "supply", "imply", "comply", "multiply", "ally", "bully"}
    | {"rally", "tally", "sully", "dally"}
)
"""English verbs ending in "ly" (few, and closed): every other word in "-ly" after a subject
is an adverb ("I genuinely don't recall"), which the verb after it agrees past."""
_KEEP_VERB = frozenset(
    {"can", "could", "will", "would", "shall", "should", "may", "might", "must", "was", "had"}
    | {"did", "got", "went", "made", "took", "saw", "said", "came", "knew", "thought", "found"}
    | {"gave", "told", "felt", "left", "kept", "began", "ran", "bought", "brought", "wrote"}
    | {"met", "sent", "spent", "built", "paid", "lost", "won", "ate", "drank", "drove", "flew"}
    | {"forgot", "grew", "heard", "held", "put", "quit", "set", "sold", "sat", "slept", "spoke"}
    | {"stood", "taught", "understood", "woke", "wore", "read", "became", "chose", "used"}
    | {"to", "and", "or", "but", "too", "as", "a", "the", "not"}
    | {"better"}  # "I better go": had better, a modal
    # the rest of English's irregular past tenses (a closed class), which no suffix marks
    | {"broke", "shut", "meant", "laid", "dealt", "lent", "bent", "hid", "bit", "lit", "slid"}
    | {"spat", "shook"}
    | {"stole", "struck", "swore", "swam", "sang", "sank", "rang", "drew", "threw", "blew"}
    | {"withdrew", "tore", "bore", "froze", "rode", "rose", "strove", "wove", "sought"}
    | {"fought", "caught", "dug", "clung", "flung", "hung", "spun", "stung", "swung", "fell"}
    | {"dove", "forgave", "forbade", "overcame", "underwent", "undertook", "upheld"}
    | {"withheld", "mistook", "misunderstood", "arose", "awoke", "befell", "beheld", "bid"}
    | {"bound", "bred", "fled", "fed", "led", "sped", "shone", "shot", "stank", "strode"}
    | {"stuck", "swept", "wept", "crept", "dreamt", "leapt", "knelt", "dwelt", "sprang"}
    | {"sprung", "shrank", "slung", "wound", "ground", "foresaw", "oversaw"}
)
_AUXILIARY = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "does not",
    "didn't": "did not",
    "can't": "cannot",
    "won't": "will not",
    "haven't": "has not",
    "wasn't": "was not",
    "weren't": "was not",
    "aren't": "is not",
    "couldn't": "could not",
    "wouldn't": "would not",
    "shouldn't": "should not",
    # the same typed without the apostrophe, as people often do
    "dont": "does not",
    "didnt": "did not",
    "cant": "cannot",
    "havent": "has not",
    "wasnt": "was not",
    "couldnt": "could not",
    "wouldnt": "would not",
    "shouldnt": "should not",
    "wont": "will not",
}
_INVERTING = frozenset(
    {"can", "could", "do", "does", "did", "will", "would", "should", "shall", "may", "might"}
    | {"must", "am", "are", "is", "was", "were", "have", "has", "had"}
)
_AFTER_NAMED = {"my": "their", "mine": "theirs", "me": "them", "myself": "themselves"}
_BY_ONESELF = re.compile(r"\bby\s+(?:myself|yourself|ourselves)\b", re.IGNORECASE)
""""by myself" is "alone": the name in its place ("we did it by Evan") says someone else did."""
_QUOTATION = re.compile(r'"[^"\n]*"|“[^”\n]*(?:”|$)|(?<![\w"])"(?=[^\W_])[^"\n]*$')
"""Words in double quotes: a title ("Pay Yourself First"), a line someone said, a phrase the
speaker quotes. Their pronouns are the quoted words' own, not the speaker's, and stay as
written (RealMem: 59 of 3,641 user turns quote such words). A quote opened before a word and
still open where the text ends runs to its end: a sentence cut out of a longer quotation, such
as an assistant's draft in the user's voice ("During our Epic go-live, I volunteered as a
super-user ..." had become "the agent volunteered"); a mark before a space or after a digit
(33" wide) opens nothing."""
_INVERTED_AGREEMENT = {"do": "does", "have": "has", "are": "is", "am": "is", "were": "was"}
_CLAUSE_STARTS = frozenset(
    {"and", "but", "or", "so", "then", "if", "because", "when", "that", "while", "as", "than"}
    | {"before", "after", "until", "till", "unless", "once", "since", "though", "although"}
    | {"whether", "where", "whenever", "wherever", "what", "whatever", "how", "why", "which"}
    | {"who"}
)
"""Words after which "you" opens a clause, and so is its subject: the verb after it agrees
with the name put in its place ("before you confirm" → "before Niamh confirms"; it had been
"before Niamh confirm")."""


def third_person(
    sentence: str, speaker: str | None, *, me: str | None = None, you: str | None = None
) -> str:
    """``sentence`` said by ``speaker`` reworded in the third person.

    First-person words name the speaker ("I", "my" → "the user", "the user's" when the user
    speaks; "the agent" when the agent does), second-person words name the other party, "we"
    and "our" become "they" and "their", and a verb after a replaced "I" agrees ("I live" →
    "the user lives"). An unknown speaker is taken to be the user: memories are about the user.
    ``me`` and ``you`` name the parties instead ("Caroline", "Melanie"): a conversation
    between two people is about both of them. "We" then stays as said: "they" would lose
    who it is, and the caller writes the speaker next to the sentence.
    Only pronouns, their verbs and auxiliaries change, so names, numbers and dates stay as
    written; callers still check the result with :func:`keeps_terms`.
    """
    named_parties = me is not None
    if me is None:
        me = (
            "the agent"
            if speaker == "agent"
            else "the system"
            if speaker == "system"
            else "the user"
        )
    if you is None:
        you = "the agent" if me == "the user" else "the user"
    if "sel" in sentence:
        sentence = _BY_ONESELF.sub("alone", sentence)
    parts = _PIECES.split(sentence)
    out = list(parts)
    quoted = _quoted_words(parts, sentence) if '"' in sentence or "“" in sentence else ()
    named = False  # once the speaker is named, "my" and "me" become "their" and "them"
    i = 1
    while i < len(parts):
        word = parts[i]
        low = word.casefold().replace("’", "'")
        if low not in _PRONOUNS or i in quoted or _hyphenated(parts, i):
            i += 2  # not a pronoun (most words): _clause_initial re-joins the text before it
            continue
        if named_parties and (low in _PLURAL or low == "us"):
            i += 2
            continue
        group = _you_group(parts, i) if named_parties and low == "you" else None
        if group is not None:
            # "are you guys playing?": the listener and others, a plural ("is Greg guys")
            said = f"{you} and {group}"
            out[i] = said[0].upper() + said[1:] if _sentence_initial(out, i) else said
            out[i + 1] = out[i + 2] = ""
            i += 4
            continue
        if low == "my" and _next_word(parts, i) in _EXCLAIMED and parts[i + 3 : i + 4] != [" "]:
            i += 2  # "oh my goodness": an exclamation, nobody's goodness
            continue
        if low == "you" and _one_of_several(parts, i):
            out[i] = "them"  # "each of you can be chased": not "each of Tomasz"
            i += 2
            continue
        if low in _CHAT_SPELLINGS and (word.isupper() or (word != low and low in _LETTERS)):
            i += 2  # "U", "UR": a letter or a name, not chat's "you"; "IM", a message
            continue
        if low == "u" and _next_word(parts, i) == "r":
            # "u r the best": chat's "you are"
            said = f"{you} is"
            out[i] = said[0].upper() + said[1:] if _sentence_initial(out, i) else said
            out[i + 1] = out[i + 2] = ""
            i += 4
            continue
        replacement, agreement = _pronoun(low, word, me, you, _clause_initial(parts, i))
        if replacement is None:
            i += 2
            continue
        if low in _WOULD_OR_HAD and _participle_follows(parts, i):
            replacement = replacement.replace(" would", " had")  # "I'd forgotten"
        elif low == "ur" and _next_word(parts, i) in _YOU_ARE_BEFORE:
            replacement = f"{you} is"  # "ur the best": you're
        if named and low in _AFTER_NAMED:
            replacement = _AFTER_NAMED[low]
        named = named or replacement.startswith(me)
        if agreement != "none" and _inverted(parts, i):
            agreement = "none"  # "where can I find" → "where can the user find"
            auxiliary = parts[i - 2]
            agreed = _INVERTED_AGREEMENT.get(auxiliary.casefold(), auxiliary)
            out[i - 2] = agreed.capitalize() if auxiliary[0].isupper() else agreed
        if _sentence_initial(out, i) or (word[0].isupper() and low.partition("'")[0] != "i"):
            # a capital kept where the writer gave one, but "I" has one wherever it stands
            # ("and I'm looking forward" was "and The agent is looking forward")
            replacement = replacement[0].upper() + replacement[1:]
        out[i] = replacement
        if agreement != "none" and not _compound(parts, i):
            _agree(parts, out, i, verbs=agreement == "full")
        i += 2
    return "".join(out)


_EXCLAIMED = frozenset({"god", "gosh", "goodness", "lord", "word", "days", "heavens", "bad"})
""""My" in an exclamation ("oh my goodness!", "my god.") or an apology ("my bad,"), the word
ending its phrase: said by nobody in particular, so no name takes its place ("Owen's
goodness"); before more words it is a possessive ("my word count")."""
_YOU_GROUPS = {
    "guys": "the others",  # not "all": "I'll tell you all about it"
    "lot": "the others",
    "folks": "the others",
    "two": "the other one",
    "both": "the other one",
}


_OF_SEVERAL = frozenset(
    {"each", "both", "either", "neither", "all", "any", "none", "one", "some", "most", "many"}
    | {"few", "two", "three", "four"}
)


def _one_of_several(parts: list[str], i: int) -> bool:
    """Whether "you" at ``parts[i]`` is a plural after "of" and a word that picks out of
    several ("each of you", "both of you"): a name in its place says one person is several."""
    return (
        i >= 4
        and parts[i - 1] == parts[i - 3] == " "
        and parts[i - 2].casefold() == "of"
        and parts[i - 4].casefold() in _OF_SEVERAL
    )


def _you_group(parts: list[str], i: int) -> str | None:
    """Who else "you" at ``parts[i]`` takes in, when a word after it makes it plural ("you
    guys", "you two"): "the others", "the other one"; None for "you" alone."""
    return _YOU_GROUPS.get(_next_word(parts, i))


_CHAT_SPELLINGS = frozenset({"u", "ur", "im", "ive"})
_LETTERS = frozenset({"u", "ur"})  # capitalised, a letter or a name ("U", "Ur"); "Im" is chat
# "ur" is "you're" before these ("ur the best", "ur so right"), "your" otherwise
_YOU_ARE_BEFORE = frozenset(
    {"the", "a", "an", "so", "such", "not", "welcome", "right", "gonna", "going", "too"}
)
_WOULD_OR_HAD = frozenset({"i'd", "you'd"})
# Past participles that do not end in -ed (the verbs in -en, "listen", "happen", are no
# participles)
_PARTICIPLES = frozenset(
    {"gone", "done", "been", "had", "got", "made", "met", "left", "lost", "found", "told"}
    | {"said", "heard", "seen", "known", "shown", "sent", "spent", "thought", "brought"}
    | {"bought", "kept", "felt", "run", "come", "become", "begun", "swum", "sung", "drunk"}
    | {"forgotten", "eaten", "taken", "given", "written", "driven", "broken", "fallen"}
    | {"chosen", "spoken", "stolen", "frozen", "hidden", "ridden", "risen", "shaken"}
    | {"woken", "beaten", "bitten", "proven", "gotten", "flown", "grown", "thrown", "worn"}
)


def _next_word(parts: list[str], i: int) -> str:
    return parts[i + 2].casefold() if i + 2 < len(parts) and parts[i + 1] == " " else ""


def _participle_follows(parts: list[str], i: int) -> bool:
    """Whether a past participle follows the "'d" at ``parts[i]`` (adverbs skipped): "I'd
    forgotten", "I'd already moved", "I'd never been" are "I had"; "I'd love" is "I would"."""
    j = i + 2
    while j < len(parts) and parts[j - 1] == " " and parts[j].casefold() in _ADVERBS:
        j += 2
    if j >= len(parts) or parts[j - 1] != " ":
        return False
    word = parts[j].casefold()
    return word in _PARTICIPLES or (len(word) > 4 and word.endswith("ed"))


def _compound(parts: list[str], i: int) -> bool:
    """Whether the "I" at ``parts[i]`` ends a compound subject, which the word after it shows:
    nobody says "I are", so "my mom and I are" keeps its "are" ("Jon's mom and Jon are"), and
    "X and I both" names two ("Nadia and I both wake up": "Nadia and Jon both wake up", not
    "both wakes")."""
    if parts[i].casefold() != "i" or i + 2 >= len(parts) or parts[i + 1] != " ":
        return False
    after = parts[i + 2].casefold().replace("’", "'")
    if after in ("are", "aren't", "arent"):
        return True
    return after == "both" and i >= 2 and parts[i - 2].casefold() == "and"


def _hyphenated(parts: list[str], i: int) -> bool:
    """Whether the word at ``parts[i]`` is joined to the next or the one before by a hyphen
    ("me-time", "I-95", "you-know-who"): a piece of a compound, not a pronoun ("them-time")."""
    after, before = parts[i + 1], parts[i - 1]
    if after.startswith("-") and (after == "-" and i + 2 < len(parts) or after[1:2].isalnum()):
        return True
    return before.endswith("-") and (before == "-" and i >= 2 or before[-2:-1].isalnum())


def _quoted_words(parts: list[str], sentence: str) -> frozenset[int]:
    """The indexes in ``parts`` (``_PIECES.split(sentence)``: words at odd indexes) of the
    words inside a :data:`_QUOTATION`."""
    spans = [match.span() for match in _QUOTATION.finditer(sentence)]
    inside = set()
    at = 0
    for index, part in enumerate(parts):
        if index % 2 and any(start < at < end for start, end in spans):
            inside.add(index)
        at += len(part)
    return frozenset(inside)


_SINGULAR: dict[str, tuple[str, str]] = {
    # word → (replacement, with {me} and {you} for the parties; agreement, "you" for "full"
    # at the start of a clause and "aux" elsewhere)
    "i": ("{me}", "full"),
    "i'm": ("{me} is", "none"),
    "i've": ("{me} has", "none"),
    "i'll": ("{me} will", "none"),
    "i'd": ("{me} would", "none"),
    "me": ("{me}", "none"),
    "my": ("{me}'s", "none"),
    "mine": ("{me}'s", "none"),
    "myself": ("{me}", "none"),
    "you": ("{you}", "you"),
    "you're": ("{you} is", "none"),
    "you've": ("{you} has", "none"),
    "you'll": ("{you} will", "none"),
    "you'd": ("{you} would", "none"),
    "your": ("{you}'s", "none"),
    "yours": ("{you}'s", "none"),
    "yourself": ("{you}", "none"),
    # as chat writes them (lower-case only: "U.S." is no pronoun)
    "u": ("{you}", "you"),
    "ur": ("{you}'s", "none"),
    "im": ("{me} is", "none"),  # not "IM", an instant message
    "ive": ("{me} has", "none"),
}
_PLURAL = {
    "we": "they",
    "we're": "they are",
    "we've": "they have",
    "we'll": "they will",
    "we'd": "they would",
    "our": "their",
    "ours": "theirs",
    "ourselves": "themselves",
}
_PRONOUNS = frozenset(_SINGULAR) | frozenset(_PLURAL) | {"us"}
"""The case-folded words :func:`_pronoun` may replace ("us" only when written so)."""


def _pronoun(
    low: str, word: str, me: str, you: str, clause_initial: bool
) -> tuple[str | None, str]:
    """(replacement, agreement): how a following verb must agree with a singular subject.

    "full": auxiliaries and verbs ("I live" → "the user lives"); "aux": auxiliaries only, for a
    "you" that may be an object ("tell you things" must not become "tell the user thing"s).
    """
    singular = _SINGULAR.get(low)
    if singular is not None:
        template, agreement = singular
        if agreement == "you":
            agreement = "full" if clause_initial else "aux"
        return template.format(me=me, you=you), agreement
    if low in _PLURAL:
        return _PLURAL[low], "none"
    if word == "us":  # never "US", the country
        return "them", "none"
    return None, "none"


def _sentence_initial(out: list[str], i: int) -> bool:
    before = "".join(out[:i]).rstrip()
    return not before or before.endswith((".", "!", "?", ":", '"', "“"))


def _clause_initial(parts: list[str], i: int) -> bool:
    before = "".join(parts[:i]).rstrip()
    if not before or before.endswith((".", "!", "?", ":", ",", ";")):
        return True
    return i >= 2 and parts[i - 2].casefold() in _CLAUSE_STARTS and parts[i - 1] == " "


def _inverted(parts: list[str], i: int) -> bool:
    """Whether the pronoun at ``parts[i]`` follows its auxiliary, as in a question; a word
    written onto a number is none ("at 9am I was" had become "at 9is Inês was")."""
    return (
        i >= 2
        and parts[i - 1] == " "
        and parts[i - 2].casefold() in _INVERTING
        and not parts[i - 3][-1:].isdigit()
    )


def _agree(parts: list[str], out: list[str], i: int, *, verbs: bool) -> None:
    """Make the verb after a singular subject at ``parts[i]`` agree, skipping adverbs."""
    j = i + 2
    while j < len(parts) and parts[j - 1] == " ":
        low = parts[j].casefold().replace("’", "'")
        if low in _AUXILIARY:
            out[j] = _AUXILIARY[low]
            return
        if low in _ADVERBS or (len(low) > 4 and low.endswith("ly") and low not in _LY_VERBS):
            j += 2
            continue
        if verbs and low in _CHAT_VERBS:
            out[j] = _CHAT_VERBS[low]  # "I wanna come": "Theo wants to come", not "wannas"
            return
        if (
            verbs
            and parts[j].islower()
            and low not in _KEEP_VERB
            and (low in PRESENT_IN_ED or not low.endswith(("ed", "ing", "'s")))
            and "'" not in low
        ):
            out[j] = third_person_verb(parts[j])
        return


# --- reported speech (summary and profile) -------------------------------------------------

_LABEL = re.compile(r"^(User|Agent|System):[ \t]+")
_SAID = re.compile(r"^(The (?:user|agent|system) said) (.+?)[.!]?$")
_DISCOURSE = re.compile(
    r"^(?:(?:so|oh|well|actually|anyway|also|just|ok|okay|yeah|yes|and|but|btw|by the way)"
    r"(?:,[ \t]*|[ \t]+))+",
    re.IGNORECASE,
)


def speaker_of(line: str) -> tuple[str | None, str]:
    """A narrative line's speaker ("User: …" → "user") and the words after the label."""
    label = _LABEL.match(line)
    if label is None:
        return None, line
    return label.group(1).casefold(), line[label.end() :]


def without_discourse(sentence: str) -> str:
    """``sentence`` without the discourse words it opens with ("so", "oh", "well", "ok", "and",
    …): what it says starts after them."""
    return _DISCOURSE.sub("", sentence)


def reported(sentence: str, speaker: str | None) -> str:
    """``sentence`` said by ``speaker`` in the third person, attributed when it must be.

    "User: my sister lives in Lisbon" → "The user's sister lives in Lisbon." (the pronoun
    names the speaker); "Agent: the launch is on March 14" → "The agent said the launch is on
    March 14."; questions → "The user asked: where does the user …?". Unlabelled text is
    taken as the user's (already reported speech has no pronouns left to change).
    Falls back to quoting ("The user said: …") and then to the sentence as written when a
    rewording would lose a fact term.
    """
    if speaker is None:
        rewritten = _capitalised(third_person(sentence, None))
    else:
        who = f"The {speaker}"
        if sentence.endswith("?"):
            rewritten = f"{who} asked: {_decapitalised(third_person(sentence, speaker))}"
        else:
            reworded = third_person(sentence, speaker)
            if reworded.casefold().startswith(who.casefold()):
                rewritten = _capitalised(reworded)
            else:
                rewritten = f"{who} said {_decapitalised(without_discourse(reworded) or reworded)}"
        if not keeps_terms(sentence, rewritten):
            rewritten = f"{who} said: {sentence}"
    if not keeps_terms(sentence, rewritten):
        rewritten = sentence
    if rewritten.endswith(_TERMINAL):
        return rewritten
    finished = rewritten + "."
    if full_stop_keeps_terms(rewritten) or keeps_terms(rewritten, finished):
        return finished
    return rewritten


def _capitalised(text: str) -> str:
    """Capitalise a leading "the" only: capitalising any other word could make it a name."""
    return "T" + text[1:] if text.startswith("the ") else text


def _decapitalised(text: str) -> str:
    """Lower-case a leading starter word ("The launch …" → "the launch …"): starters are
    never fact terms, so this cannot change the text's terms."""
    word = text.split(" ", 1)[0]
    if word[:1].isupper() and word[1:] == word[1:].lower() and is_starter(word):
        return text[0].lower() + text[1:]
    return text


def grouped(statements: list[str]) -> list[str]:
    """Consecutive "The user said …" statements as one: "The user said a; b; c."."""
    result: list[str] = []
    i = 0
    while i < len(statements):
        said = _SAID.match(statements[i])
        if said is None:
            result.append(statements[i])
            i += 1
            continue
        prefix, parts, run = said.group(1), [said.group(2)], [statements[i]]
        i += 1
        while i < len(statements) and (more := _SAID.match(statements[i])) is not None:
            if more.group(1) != prefix:
                break
            parts.append(more.group(2))
            run.append(statements[i])
            i += 1
        merged = f"{prefix} " + "; ".join(parts) + "."
        result.extend([merged] if keeps_terms(" ".join(run), merged) else run)
    return result


def split_reports(sentence: str) -> list[str]:
    """A grouped "The user said a; b." back into "The user said a." and "The user said b."."""
    said = _SAID.match(sentence)
    if said is None or "; " not in said.group(2):
        return [sentence]
    return [f"{said.group(1)} {part}." for part in said.group(2).split("; ")]


@dataclass(frozen=True, slots=True)
class _Claim:
    terms: frozenset[str]
    words: frozenset[str]


def deduplicated(statements: list[str]) -> list[str]:
    """The statements without those another statement repeats, and without empty ones.

    A statement goes when another one states all its fact terms and all its content words
    ("The agent said Alice lives in Lisbon." after "The user's sister Alice lives in Lisbon.");
    the first of equal statements stays. Negators are content words, so "does not use X" never
    repeats "uses X". Whole statements, never clauses cut out of them, are compared and
    dropped: a clause out of its sentence ("lives in Lyon") says something else. A dropped
    statement's terms are all stated by one that stays.
    """
    claims = [_Claim(fact_terms(s), content_words(s)) for s in statements]
    postings: dict[str, list[int]] = {}
    for position, claim in enumerate(claims):
        for key in _keys(claim):
            postings.setdefault(key, []).append(position)
    kept: list[str] = []
    for position, claim in enumerate(claims):
        keys = _keys(claim)
        if not keys:
            continue  # neither a fact term nor a content word: filler
        rarest = min(keys, key=lambda key: (len(postings[key]), key))
        if not any(
            other != position and _covers(claims[other], claim, other < position)
            for other in postings[rarest]
        ):
            kept.append(statements[position])
    return kept


def _keys(claim: _Claim) -> frozenset[str]:
    return frozenset({f"t:{term}" for term in claim.terms} | {f"w:{w}" for w in claim.words})


def _covers(big: _Claim, small: _Claim, big_first: bool) -> bool:
    if not (small.terms <= big.terms and small.words <= big.words):
        return False
    return big_first or (big.terms, big.words) != (small.terms, small.words)
