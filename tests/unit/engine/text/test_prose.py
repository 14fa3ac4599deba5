"""Reported speech in the third person (``streams.engine.text.prose.third_person``): which
words it rewrites, and that a sentence without them comes back as written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine.text.prose import _PRONOUNS, _pronoun, third_person

WORDS = st.sampled_from(sorted(_PRONOUNS) + ["us", "US", "Us", "I", "My", "You're", "we’ve"])


@given(word=WORDS | st.text(max_size=12), clause_initial=st.booleans())
def test_only_the_listed_pronouns_and_a_lower_case_us_are_replaced(
    word: str, clause_initial: bool
) -> None:
    """``third_person`` skips every other word without asking ``_pronoun``: this is what
    makes that skip change nothing."""
    low = word.casefold().replace("’", "'")
    replacement, _ = _pronoun(low, word, "the user", "the agent", clause_initial)

    if low == "us":
        assert (replacement is None) == (word != "us")  # "US" is the country
    else:
        assert (replacement is None) == (low not in _PRONOUNS)


@pytest.mark.parametrize(
    ("sentence", "speaker", "expected"),
    [
        ("I live in Oslo", "user", "The user lives in Oslo"),
        ("Can you send me the notes", "user", "Can the agent send the user the notes"),
        ("We moved our standup to 9:30", "user", "They moved their standup to 9:30"),
        ("Tell us about the US office", "user", "Tell them about the US office"),
        ("Ana talked about on-call with Bo", "user", "Ana talked about on-call with Bo"),
        ("My sister said you're late", "agent", "The agent's sister said the user is late"),
    ],
)
def test_pronouns_name_the_parties_and_other_words_stay_as_written(
    sentence: str, speaker: str, expected: str
) -> None:
    assert third_person(sentence, speaker) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "I've decided to go with \"Create the world you've always imagined\".",
            'The user has decided to go with "Create the world you\'ve always imagined".',
        ),
        (
            'My plan follows "Pay Yourself First" now',
            'The user\'s plan follows "Pay Yourself First" now',
        ),
        (
            "She told me “I’ll call you” and I waited",
            "She told the user “I’ll call you” and the user waited",
        ),
        ('I said "fine" and you agreed', 'The user said "fine" and the agent agreed'),
        ('An unclosed " quote and I left', 'An unclosed " quote and the user left'),
        ('The fridge is 33" wide and I love it', 'The fridge is 33" wide and the user loves it'),
        # a quotation cut before its end (an assistant's draft in the user's voice) runs to
        # the end of the text
        (
            'Open with: "During the go-live I volunteered as a super-user, and it changed how I',
            'Open with: "During the go-live I volunteered as a super-user, and it changed how I',
        ),
        ("Say “thank you so much, I am thrilled", "Say “thank you so much, I am thrilled"),
    ],
)
def test_words_in_quotation_marks_keep_their_pronouns(sentence: str, expected: str) -> None:
    """A title or a line someone said is quoted as written: its "you" is not the agent."""
    assert third_person(sentence, "user") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I need some me-time", "The user needs some me-time"),
        ("I drove up I-95 with you-know-who", "The user drove up I-95 with you-know-who"),
        # a dash between spaces joins nothing
        ("I called you - me, of all people", "The user called the agent - them, of all people"),
    ],
)
def test_a_pronoun_in_a_hyphenated_compound_is_no_pronoun(sentence: str, expected: str) -> None:
    assert third_person(sentence, "user") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("My mom and I are doing a baking class", "Jon's mom and Jon are doing a baking class"),
        ("Sam and I aren't going", "Sam and Jon aren't going"),
        # "both" after "X and I": both are the subject (it had become "Jon boths wake up")
        ("nadia and I both wake up at 3am", "nadia and Jon both wake up at 3am"),
        ("Nadia and I both woke up", "Nadia and Jon both woke up"),
        # "I" alone still agrees
        ("We went out and I am tired", "We went out and Jon is tired"),
    ],
)
def test_i_at_the_end_of_a_compound_subject_keeps_its_plural_verb(
    sentence: str, expected: str
) -> None:
    assert third_person(sentence, None, me="Jon", you="Gina") == expected


@pytest.mark.parametrize(
    ("sentence", "start"),
    [
        ("I both love and hate it", "Jon both loves "),
        ("I either call or text", "Jon either calls "),
    ],
)
def test_the_verb_after_i_both_or_i_either_agrees(sentence: str, start: str) -> None:
    """The first verb of a correlative ("both ... and") agrees; it had been "Jon boths love".
    (The verb after "and" stays as said: agreement reads only the verb after the subject.)"""
    assert third_person(sentence, None, me="Jon", you="Gina").startswith(start)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # chat's "u" and "ur"
        ("Thank u SO much for coming", "Thank Gina SO much for coming"),
        ("I got ur old job", "Jon got Gina's old job"),
        ("ur the best", "Gina is the best"),
        ("the U.S. is big", "the U.S. is big"),
        ("u r the best", "Gina is the best"),
        # "im" and "ive", in any case but capitals ("IM", a message)
        ("im calling him noodle", "Jon is calling him noodle"),
        ("Im so tired", "Jon is so tired"),
        ("ive never been", "Jon has never been"),
        ("send me an IM", "send Jon an IM"),
        # "'d" before a participle is "had"
        ("I'd forgotten how small babies are", "Jon had forgotten how small babies are"),
        ("I'd never been there", "Jon had never been there"),
        ("I'd love to come", "Jon would love to come"),
        ("I'd listen to him", "Jon would listen to him"),
        # a past tense and an adverb are no verb to agree
        ("I broke my toe", "Jon broke their toe"),
        ("busier than I ever was", "busier than Jon ever was"),
        ("when I first brought her home", "when Jon first brought her home"),
        ("I kinda love it", "Jon kinda loves it"),
        # nor is a word of degree or a hedge (blind conversation 65: "veries nearly sent")
        ("I very nearly sent a message", "Jon very nearly sent a message"),
        ("I quite enjoy it", "Jon quite enjoys it"),
        ("I very much want that", "Jon very much wants that"),
        ("I so want to go", "Jon so wants to go"),
        ("I maybe need one", "Jon maybe needs one"),
        # chat's contracted verbs
        ("I wanna come to japan", "Jon wants to come to japan"),
        ("I gotta tape it", "Jon has to tape it"),
        ("you better call me", "Gina better call Jon"),
    ],
)
def test_chat_spellings_had_and_past_tenses_read_as_people_write_them(
    sentence: str, expected: str
) -> None:
    assert third_person(sentence, None, me="Jon", you="Gina") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("are you guys playing anything soon?", "are Gina and the others playing anything soon?"),
        ("You guys were great!", "Gina and the others were great!"),
        ("Are you two coming?", "Are Gina and the other one coming?"),
        ("I'll tell you all about it", "Jon will tell Gina all about it"),  # "all": everything
        ("Are you coming?", "Is Gina coming?"),
    ],
)
def test_you_with_a_word_that_makes_it_plural_is_the_listener_and_others(
    sentence: str, expected: str
) -> None:
    assert third_person(sentence, None, me="Jon", you="Gina") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Before you confirm with Declan, check it", "Before Gina confirms with Declan, check it"),
        ("I'll wait until you finish the form", "Jon will wait until Gina finishes the form"),
        ("Unless you want the Yaris, take the loan", "Unless Gina wants the Yaris, take the loan"),
        ("It costs more than you think", "It costs more than Gina thinks"),
        ("Tell me what you need", "Tell Jon what Gina needs"),
        ("Call me after you get home", "Call Jon after Gina gets home"),
        ("after you, the doctor sees Tom", "after Gina, the doctor sees Tom"),  # no verb
        ("I'll send you a list", "Jon will send Gina a list"),  # an object: no agreement
    ],
)
def test_you_after_a_word_that_opens_a_clause_is_its_subject_and_its_verb_agrees(
    sentence: str, expected: str
) -> None:
    """The agent's condensed answers had "before Niamh confirm with Declan" (conversation 15)."""
    assert third_person(sentence, None, me="Jon", you="Gina") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("so at 9am I was googling vans", "so at 9am Jon was googling vans"),
        ("at 10am you were asleep", "at 10am Gina was asleep"),
        ("Am I late?", "Is Jon late?"),  # a question's auxiliary still agrees
    ],
)
def test_the_am_of_a_time_is_no_auxiliary_before_the_subject(sentence: str, expected: str) -> None:
    """ "at 9am I was googling" had become "at 9is Inês was googling" (conversation 18)."""
    assert third_person(sentence, None, me="Jon", you="Gina") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("each of you can be chased for the rent", "each of them can be chased for the rent"),
        ("Both of you are welcome", "Both of them are welcome"),
        ("one of your friends", "one of Gina's friends"),  # a possessive names the listener
        ("I'm proud of you", "Jon is proud of Gina"),
    ],
)
def test_you_picked_out_of_several_is_them(sentence: str, expected: str) -> None:
    """ "each of you can be chased for the full rent" had become "each of Tomasz can be
    chased" (conversation 17: the assistant's answer to Tomasz about him and a flatmate)."""
    assert third_person(sentence, None, me="Jon", you="Gina") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I need a new laptop", "Samuel needs a new laptop"),
        ("I really need a break", "Samuel really needs a break"),
        ("I feed the neighbour's cat", "Samuel feeds the neighbour's cat"),
        ("I agreed to it", "Samuel agreed to it"),  # a past tense in -eed stays
        ("I renamed the repo", "Samuel renamed the repo"),
        ("we did it all by myself", "we did it all alone"),
        ("Did you build it by yourself?", "Did Evan build it alone?"),
    ],
)
def test_a_verb_ending_in_ed_agrees_when_present_and_by_myself_is_alone(
    sentence: str, expected: str
) -> None:
    assert third_person(sentence, "Samuel", me="Samuel", you="Evan") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I genuinely don't recall it", "Kenta genuinely does not recall it"),
        ("I seriously doubt that", "Kenta seriously doubts that"),
        ("I barely sleep on Sundays", "Kenta barely sleeps on Sundays"),
        ("I apply for two jobs a week", "Kenta applies for two jobs a week"),
        ("I rely on the train", "Kenta relies on the train"),
        ("I probably reply too late", "Kenta probably replies too late"),
    ],
)
def test_a_word_in_ly_after_the_subject_is_an_adverb_unless_it_is_one_of_the_verbs(
    sentence: str, expected: str
) -> None:
    assert third_person(sentence, "Kenta", me="Kenta", you="the agent") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I meant the other one", "Kenta meant the other one"),
        ("I laid it all out", "Kenta laid it all out"),
        ("I forbade it", "Kenta forbade it"),
        ("I dont know yet", "Kenta does not know yet"),
        ("I cant make it", "Kenta cannot make it"),
        ("I didnt say that", "Kenta did not say that"),
    ],
)
def test_irregular_past_tenses_stay_and_contractions_typed_without_apostrophe_agree(
    sentence: str, expected: str
) -> None:
    assert third_person(sentence, "Kenta", me="Kenta", you="the agent") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "It sounds like a solid plan, and I'm looking forward to it.",
            "It sounds like a solid plan, and the agent is looking forward to it.",
        ),
        ("Sure, I'd be happy to help.", "Sure, the agent would be happy to help."),
        (
            "Then, I'll send it and I've noted it.",
            "Then, the agent will send it and the agent has noted it.",
        ),
        ("I'm sorry, I'm not sure.", "The agent is sorry, the agent is not sure."),
    ],
)
def test_i_and_its_contractions_are_lower_case_inside_a_sentence(
    sentence: str, expected: str
) -> None:
    """ "I" is written with a capital wherever it stands, so its capital says nothing of where
    the sentence starts ("and I'm looking forward" had become "and The agent is")."""
    assert third_person(sentence, "agent") == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Oh my goodness. That photo.", "Oh my goodness. That photo."),
        ("oh my god!!", "oh my god!!"),
        ("my bad, I forgot", "my bad, Jon forgot"),
        ("my word count is 300", "Jon's word count is 300"),
        ("My Lord of the Rings box set", "Jon's Lord of the Rings box set"),
    ],
)
def test_my_in_an_exclamation_is_nobodys(sentence: str, expected: str) -> None:
    """Blind conversation 41: "Oh my goodness. That photo." had become "Owen's goodness."."""
    assert third_person(sentence, None, me="Jon", you="Gina") == expected
