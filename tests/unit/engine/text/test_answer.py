"""An assistant's long answer condensed to what it named, recommended or decided."""

from __future__ import annotations

from streams.engine.text.answer import answer_budget, condensed_answer, without_emphasis
from streams.engine.text.observation import content_words

ANSWER = """Understood. My apologies for asking you to search when your time is so limited.

**For Your Commute (Monday - Friday: Audio Learning, 30-45 minutes):**

*   **Podcasts:**
    *   **"Wine Folly: Learn Wine"**: This podcast breaks down wine concepts in an accessible way.
    *   **"GuildSomm Podcast"**: In-depth discussions with industry experts.
*   **Flashcard App Recommendation:** I recommend **Quizlet**. It is user-friendly.

It's completely understandable that this feels like a lot at first.

Would you like me to set up the first week's plan now?"""


def _says(unit: str) -> bool:
    return bool(content_words(unit))


def test_an_answer_keeps_what_it_named_and_recommended_without_markdown() -> None:
    kept = condensed_answer(ANSWER, 1000, _says)
    text = " ".join(kept)
    assert "I recommend Quizlet" in text
    assert "**" not in text and not any(k.startswith("*") for k in kept)


def test_an_answer_drops_its_greeting_back_sympathy_and_questions() -> None:
    text = " ".join(condensed_answer(ANSWER, 1000, _says))
    assert "Understood" not in text
    assert "completely understandable" not in text
    assert "Would you like" not in text


def test_an_answer_keeps_at_most_its_budget() -> None:
    kept = condensed_answer(ANSWER, 1000, _says)
    assert sum(len(k) + 2 for k in kept) <= answer_budget(len(ANSWER), 1000) + 130
    assert answer_budget(100_000, 1000) == 1000  # never more than one memory holds


def test_a_short_plain_answer_that_names_nothing_keeps_nothing() -> None:
    assert condensed_answer("That's a great question, happy to help with that.", 1000, _says) == []


def test_emphasis_goes_and_words_stay() -> None:
    assert (
        without_emphasis("I recommend **Quizlet** and `Anki`.") == "I recommend Quizlet and Anki."
    )
