"""The contradiction judge on the classes of issue 9: how people write updates and corrections,
and the guards that keep it from raising false alarms. One behaviour per test."""

from __future__ import annotations

import pytest

from streams.engine.judge import judge_contradiction

# --- corrections ----------------------------------------------------------------------------


def test_given_a_correction_when_judged_against_the_replaced_value_then_it_contradicts() -> None:
    """Given "Correction: X, not Y" and a statement of Y, when judged, then they contradict:
    the trailing "not Y" names the value that was replaced."""
    verdict = judge_contradiction(
        "Correction: the offsite is in Lisbon, not Porto.", "The offsite is in Porto."
    )

    assert verdict.contradicts
    assert verdict.cue == "negation"
    assert "porto" in verdict.explanation


def test_given_a_correction_when_judged_against_the_new_value_then_it_agrees() -> None:
    """Given "Correction: X, not Y" and a statement of X, when judged, then there is no
    contradiction: "not Y" does not negate the whole clause."""
    verdict = judge_contradiction(
        "Correction: the offsite is in Lisbon, not Porto.", "The offsite is in Lisbon."
    )

    assert not verdict.contradicts


# --- update wording -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "update"),
    [
        ("The demo is on Tuesday.", "The demo was moved to Thursday."),
        ("The review is at 2pm.", "The review was rescheduled to 4pm."),
        ("The mobile app is owned by Team Kestrel.", "The mobile app is now owned by Team Heron."),
        ("We use Slack for chat.", "We switched from Slack to Teams."),
        ("The team lead is Sarah.", "The team lead changed to Diego."),
        ("I eat meat.", "I no longer eat meat."),
    ],
)
def test_given_an_update_when_judged_against_the_earlier_value_then_it_contradicts(
    before: str, update: str
) -> None:
    """Given a statement and an update written as a change ("was moved to", "now", "switched
    from A to B", "no longer"), when judged, then they contradict: the update is a present
    claim about the same attribute, not a past fact."""
    verdict = judge_contradiction(before, update)

    assert verdict.contradicts, verdict.explanation


def test_given_an_update_when_judged_against_the_new_value_then_it_agrees() -> None:
    """Given "was moved to Thursday" and "is on Thursday", when judged, then they agree."""
    verdict = judge_contradiction("The demo was moved to Thursday.", "The demo is on Thursday.")

    assert not verdict.contradicts


# --- preference verbs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("liked", "disliked"),
    [
        ("I love jazz.", "I can't stand jazz."),
        ("I'm a big fan of horror films.", "I dislike horror films."),
        ("Meera enjoys board games.", "Meera hates board games."),
        ("I prefer tea.", "I don't like tea."),
    ],
)
def test_given_two_preference_verbs_of_opposite_polarity_when_judged_then_they_contradict(
    liked: str, disliked: str
) -> None:
    """Given like, love, enjoy, prefer or "be a fan of" against dislike, hate or "can't
    stand" for one thing, when judged, then they contradict: one preference relation."""
    verdict = judge_contradiction(liked, disliked)

    assert verdict.contradicts, verdict.explanation


def test_given_two_positive_preference_verbs_when_judged_then_they_agree() -> None:
    """Given "I adore opera" and "I enjoy opera", when judged, then they say the same."""
    verdict = judge_contradiction("I adore opera.", "I enjoy opera.")

    assert not verdict.contradicts


# --- auxiliaries ----------------------------------------------------------------------------


def test_given_a_perfect_with_never_when_judged_against_the_habit_then_it_contradicts() -> None:
    """Given "I've never used Terraform" and "I use Terraform daily", when judged, then they
    contradict: the relation is "use" ("have" is the auxiliary), and "never" covers now."""
    verdict = judge_contradiction("I've never used Terraform.", "I use Terraform daily.")

    assert verdict.contradicts
    assert verdict.cue == "negation"
    assert "never" in verdict.explanation


def test_given_a_perfect_with_never_when_judged_against_another_value_then_it_agrees() -> None:
    """Given "I've never used Terraform" and "I've used Pulumi", when judged, then they agree."""
    verdict = judge_contradiction("I've never used Terraform.", "I've used Pulumi.")

    assert not verdict.contradicts


# --- single-valued attributes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Jamal is a software engineer.", "Jamal works as a data scientist."),  # job
        ("My role is head of sales.", "My role is marketing director."),  # role
        ("I'm working on the Orion project.", "My current project is Helios."),  # project
        ("The gala is at the Ritz.", "The gala is at the Savoy."),  # venue
        ("The retro is scheduled for Wednesday.", "The retro is scheduled for Friday."),  # when
        ("This package uses the MIT license.", "This package is BSD-licensed."),  # licence
        ("Our email vendor is Mailchimp.", "Our email vendor is SendGrid."),  # vendor
        ("Our cloud provider is AWS.", "Our cloud provider is Azure."),  # provider
        ("Tomas is married.", "Tomas is divorced."),  # relationship status
        ("Elif works remotely.", "Elif works on-site."),  # work arrangement
        ("Grace is vegan.", "Grace is keto."),  # diet
    ],
)
def test_given_a_single_valued_attribute_when_two_values_are_stated_then_they_conflict(
    first: str, second: str
) -> None:
    """Given two values of an attribute that holds one value at a time (job, role, current
    project, venue, schedule, licence, vendor, provider, relationship status, work
    arrangement, diet), when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "conflicting_value"


def test_given_a_single_valued_attribute_when_one_value_refines_the_other_then_it_agrees() -> None:
    """Given "Grace is vegan" and "Grace is vegetarian", when judged, then they agree: a vegan
    diet is a vegetarian one."""
    verdict = judge_contradiction("Grace is vegan.", "Grace is vegetarian.")

    assert not verdict.contradicts


# --- exclusive adjectives and verb antonyms -------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Wei is a full-time student.", "Wei is a part-time student."),
        ("The manager approved my leave request.", "The manager rejected my leave request."),
        ("The Slack channel is public.", "The Slack channel is private."),
        ("Ivan is vegetarian.", "Ivan eats meat."),
        ("The pool is heated.", "The pool is unheated."),
    ],
)
def test_given_exclusive_adjectives_or_opposite_verbs_when_judged_then_they_contradict(
    first: str, second: str
) -> None:
    """Given full-time / part-time, approves / rejects, public / private, vegetarian / eats
    meat, heated / unheated said of one subject, when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation


def test_given_a_diet_and_a_food_it_allows_when_judged_then_they_agree() -> None:
    """Given "Ivan is vegetarian" and "Ivan eats cheese", when judged, then they agree."""
    verdict = judge_contradiction("Ivan is vegetarian.", "Ivan eats cheese.")

    assert not verdict.contradicts


# --- quantified negation over a category ----------------------------------------------------


@pytest.mark.parametrize(
    ("denial", "member"),
    [
        ("The user has no children.", "The user's son starts school in May."),
        ("I don't have any siblings.", "My sister is a lawyer."),
        ("We don't use any databases.", "We use PostgreSQL."),
        ("I don't drink alcohol.", "I drink wine with dinner."),
        ("I don't own any pets.", "I walk my dog every morning."),
    ],
)
def test_given_a_denied_category_when_a_member_is_stated_then_they_contradict(
    denial: str, member: str
) -> None:
    """Given a negated category ("has no children", "doesn't use any databases") and a member
    of it (a son, PostgreSQL), when judged, then they contradict: the category covers it."""
    verdict = judge_contradiction(denial, member)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "negation"


def test_given_a_denied_category_when_someone_elses_member_is_stated_then_it_agrees() -> None:
    """Given "The user has no children" and "The user's nephew starts school", when judged,
    then they agree: a nephew is not a child of the user."""
    verdict = judge_contradiction(
        "The user has no children.", "The user's nephew starts school in May."
    )

    assert not verdict.contradicts


# --- several slots changing together --------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Ingrid lives in Oslo and works at Equinor.", "Ingrid lives in Bergen and works at DNB."),
        ("The offsite is in Porto in June.", "The offsite is in Madrid in July."),
        ("The concert is on Friday at 8pm.", "The concert is on Saturday at 9pm."),
    ],
)
def test_given_several_slots_changed_together_when_judged_then_they_contradict(
    first: str, second: str
) -> None:
    """Given two statements whose slots all change ("lives in Oslo and works at Equinor" /
    "lives in Bergen and works at DNB"), when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation


def test_given_one_slot_kept_and_one_added_when_judged_then_it_agrees() -> None:
    """Given "lives in Oslo and works at Equinor" and "lives in Oslo and plays tennis", when
    judged, then they agree."""
    verdict = judge_contradiction(
        "Ingrid lives in Oslo and works at Equinor.", "Ingrid lives in Oslo and plays tennis."
    )

    assert not verdict.contradicts


# --- quantities, durations and dates --------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The budget is 2 million.", "The budget is 500 thousand."),
        ("We meet every 2 weeks.", "We meet every 10 days."),
        ("The launch is on the 5th of June.", "The launch is on July 9."),
        ("The contract runs for 18 months.", "The contract runs for two years."),
        ("The bag weighs 2 kg.", "The bag weighs 5 lbs."),
    ],
)
def test_given_different_amounts_in_different_units_when_judged_then_they_contradict(
    first: str, second: str
) -> None:
    """Given two amounts, periods or dates written in different units or forms that differ,
    when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "conflicting_value"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The contract runs for 18 months.", "The contract runs for a year and a half."),
        ("The budget is 2 million.", "The budget is 2,000,000."),
        ("We meet every 2 weeks.", "We meet every 14 days."),
        ("The launch is on the 5th of June.", "The launch is on June 5."),
        ("The salary is $85k.", "The salary is $85,000."),
    ],
)
def test_given_one_amount_in_two_units_when_judged_then_it_agrees(first: str, second: str) -> None:
    """Given one amount, period or date written in two units or forms, when judged, then
    there is no contradiction."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, verdict.explanation


# --- guards ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        ("I read thrillers.", "I read thrillers and poetry.", "refinement"),
        ("Sven is a lawyer.", "Sven is a lawyer specialising in tax.", "elaboration"),
        ("Ayesha lives in Lahore.", "Ayesha lives in Pakistan.", "part of"),
        ("I speak German.", "I speak Japanese.", "multi-valued"),
        ("Anna lives in Riga.", "Marta lives in Tallinn.", "different subject"),
        ("I lived in Toronto in 2015.", "I live in Vancouver.", "different time"),
        ("I prefer tea in the evening.", "I prefer coffee in the morning.", "different context"),
        ("The store opens at 9am.", "The store opens at 11am on Sundays.", "a narrower context"),
    ],
)
def test_given_a_compatible_pair_of_a_guarded_kind_when_judged_then_it_does_not_contradict(
    first: str, second: str, why: str
) -> None:
    """Given an elaboration, a refinement, a part, a multi-valued attribute, another subject,
    another time or another context, when judged, then there is no false alarm."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, f"{why}: {verdict.explanation}"
    assert verdict.confidence <= 0.7


# --- update wording of long conversations ---------------------------------------------------


@pytest.mark.parametrize(
    ("scheduled", "moved"),
    [
        (
            "Just a heads up, the Orion kickoff is scheduled for March 3.",
            "The Orion kickoff moved to April 10.",
        ),
        (
            "FYI, the board review is scheduled for 9 June.",
            "The board review was pushed to July 2.",
        ),
        ("By the way, the audit is set for the 4th of May.", "The audit got moved to 18 May."),
    ],
)
def test_given_a_scheduled_date_when_the_event_is_moved_then_it_contradicts(
    scheduled: str, moved: str
) -> None:
    """Given "X is scheduled for D1" (after an opener such as "Just a heads up,"), when a later
    statement says "X moved to D2", then they contradict: the move is a present claim about
    the same event's date."""
    verdict = judge_contradiction(scheduled, moved)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "conflicting_value"


@pytest.mark.parametrize(
    ("stated", "new"),
    [
        ("Omar's phone number is 415-555-0199.", "Omar has a new phone number: 628-555-0142."),
        (
            "Lena's mobile number is +49 (30) 1234-5678.",
            "Lena has a new mobile number: +49 30 8765 4321.",
        ),
        (
            "Sofia's email is sofia.r@example.net.",
            "Sofia has a new email address: sofia.ramos@work.example.",
        ),
        ("You can reach Carla at carla@oldmail.net.", "Carla's new email is carla.p@hey.com."),
    ],
)
def test_given_a_contact_detail_when_someone_has_a_new_one_then_it_contradicts(
    stated: str, new: str
) -> None:
    """Given "X's phone number is A" (or "you can reach X at A"), when a later statement says
    "X has a new phone number: B" or "X's new email is B", then they contradict: "has a new
    <attribute>" updates that attribute, and a phone number or an email address is one value."""
    verdict = judge_contradiction(stated, new)

    assert verdict.contradicts, verdict.explanation


def test_given_one_phone_number_with_and_without_its_country_code_when_judged_then_it_agrees() -> (
    None
):
    """Given "Omar has a new phone number: 628-555-0142", when judged against "Omar's phone
    number is +1 628-555-0142", then they agree: the digits are the same number."""
    verdict = judge_contradiction(
        "Omar has a new phone number: 628-555-0142.", "Omar's phone number is +1 628-555-0142."
    )

    assert not verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("ended", "now"),
    [
        ("So the catering bill ended up at £840.", "The catering bill is now £910."),
        ("The renovation quote ended up being €18,000.", "The renovation quote is now €21,500."),
        (
            "The team budget for the offsite is $8,000.",
            "The team budget for the offsite is now €9,500.",
        ),
    ],
)
def test_given_an_amount_that_ended_up_at_a_value_when_it_is_now_another_then_it_contradicts(
    ended: str, now: str
) -> None:
    """Given "X ended up at A" (a statement of X's value, not a past event), when a later
    statement says "X is now B" (in the same or another currency), then they contradict."""
    verdict = judge_contradiction(ended, now)

    assert verdict.contradicts, verdict.explanation


def test_given_an_amount_that_ended_up_at_a_value_when_stated_again_then_it_agrees() -> None:
    """Given "the catering bill ended up at £840", when judged against "the catering bill is
    £840", then they agree."""
    verdict = judge_contradiction(
        "The catering bill ended up at £840.", "The catering bill is £840."
    )

    assert not verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("weekly", "now"),
    [
        (
            "My weekly check-in with Priya is at 10am on Mondays.",
            "My check-in with Priya is at 3pm on Thursdays now.",
        ),
        (
            "My weekly piano lesson is at 5pm on Wednesdays.",
            "My piano lesson is at 6:30pm on Saturdays now.",
        ),
        (
            "My fortnightly call with the landlord is on Fridays at noon.",
            "My call with the landlord is on Tuesdays at 5pm now.",
        ),
    ],
)
def test_given_a_weekly_meeting_when_its_time_and_day_change_then_it_contradicts(
    weekly: str, now: str
) -> None:
    """Given a recurring meeting with "weekly" on one side only, when its time and weekday
    differ, then they contradict: "weekly" does not make another subject, and a meeting held
    once a week is on one day, so "on Mondays" is its day, not a context."""
    verdict = judge_contradiction(weekly, now)

    assert verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My daily standup is at 9am on Mondays.", "My daily standup is at 10am on Fridays."),
        ("The pool opens at 6am on weekdays.", "The pool opens at 9am on Sundays now."),
        (
            "My weekly check-in with Priya is at 10am on Mondays.",
            "My weekly check-in with Dan is at 3pm on Thursdays.",
        ),
        ("My weekly sync with Ana is at 2pm.", "My monthly sync with Ana is at 4pm."),
    ],
)
def test_given_days_as_contexts_or_other_meetings_when_judged_then_it_agrees(
    first: str, second: str
) -> None:
    """Given an event held on several days (a daily standup, opening hours) or two meetings
    (another person, another recurrence), when times differ by day, then there is no
    contradiction."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I switched to Emacs last month.", "I switched to Neovim now, it is my primary editor."),
        (
            "I switched to Sublime Text a few weeks ago.",
            "I've been using Atom as my main editor these days.",
        ),
        (
            "I've been using Firefox as my main browser lately.",
            "I moved over to Chrome, it's my main browser now.",
        ),
        (
            "I've been using Notion as my main notes app lately.",
            "I changed to Obsidian, it's my main notes app now.",
        ),
        (
            "We run Postgres as our primary database.",
            "We switched to MySQL, it is our main database now.",
        ),
    ],
)
def test_given_a_tool_switch_when_another_main_tool_is_stated_then_it_contradicts(
    first: str, second: str
) -> None:
    """Given "switched to X" or "using X as my main <tool>", when a later statement switches
    to Y or makes Y "my main <tool>", then they contradict: "main" or "primary" makes the
    attribute single-valued, "it" is the tool switched to, and when the switch happened ("last
    month") is not part of the value."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I switched to Neovim now, it is my main editor.", "Neovim is my main editor."),
        ("I moved over to Chrome, it's my main browser now.", "I use Firefox for testing."),
        ("I switched to Emacs last month.", "I used Vim at my old job."),
        ("I switched to Python last week.", "I use VS Code."),
    ],
)
def test_given_a_tool_switch_when_a_compatible_use_is_stated_then_it_agrees(
    first: str, second: str
) -> None:
    """Given a switch to a main tool, when the same tool, a tool for another context, a past
    tool or a tool of another kind is stated, then there is no contradiction."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("described", "plain"),
    [
        ("My cousin Leon lives in Graz.", "Leon lives in Linz now."),
        (
            "Nadia, my old roommate, lives in Tallinn.",
            "Actually Nadia lives in Riga now, she moved.",
        ),
        (
            "Oh, by the way, my climbing partner Ivo lives in Leiden these days.",
            "Ivo lives in Delft now.",
        ),
    ],
)
def test_given_a_person_described_in_apposition_when_they_move_then_it_contradicts(
    described: str, plain: str
) -> None:
    """Given "my cousin Leon" or "Nadia, my old roommate" as a subject, when a later statement
    names the same person plainly with another city, then they contradict: the description
    in apposition names the same person."""
    verdict = judge_contradiction(described, plain)

    assert verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My cousin Leon lives in Graz.", "Leon's sister lives in Linz."),
        ("Ana has a new dog: Biscuit.", "Ana's dog is Pepper."),
        ("You can reach Carla at carla@oldmail.net.", "Carla's work email is carla@acme.io."),
        (
            "Lena has a new mobile number: +49 30 8765 4321.",
            "Lena's office number is +49 30 1111 2222.",
        ),
    ],
)
def test_given_another_attribute_or_a_multi_valued_one_when_judged_then_it_agrees(
    first: str, second: str
) -> None:
    """Given someone else's attribute (Leon's sister), a new member of a multi-valued set (a
    second dog) or another contact detail (a work email, an office number), when judged, then
    there is no contradiction."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, verdict.explanation


# --- updates as people state them (issue 30) -----------------------------------------------


@pytest.mark.parametrize(
    ("before", "update"),
    [
        ("The plumber comes at 10am.", "Wait, no. The plumber comes at 2pm."),
        ("We're staying at the Hilton.", "Actually, we're staying at the Marriott."),
        ("Kim is the project lead.", "Raj took over as project lead."),
        ("Ravi handles the invoices.", "Mei has taken over the invoices from Ravi."),
        ("Min-jun is our scrum master.", "Min-jun handed scrum master over to Elise."),
        ("The release is on March 3rd.", "the release slipped to March 17th"),
        ("The bake sale is on Friday.", "The bake sale has been pushed back to Monday."),
        ("I ride a Vespa.", "Sold the Vespa. I ride a Kawasaki these days."),
        ("The membership fee is £30 a year.", "As of January the membership fee is £35."),
        ("Swim practice starts at 6:30.", "Starting next week, swim practice starts at 7."),
        ("Amira chairs the committee.", "Amira no longer chairs the committee."),
        ("I'm on the early shift.", "switched to the late shift this month"),
        ("Our plumber is Dave from Quickfix.", "we ended up going with a different plumber"),
        ("Lily is 4.", "Lily turned 5 on Sunday."),
        ("Arjun lives in Pune.", "Arjun's in Bangalore now for his new job."),
        ("I'm pescatarian.", "i've started eating meat again"),
        ("I take the train to work.", "i drive to work now"),
        ("Our Wi-Fi provider is Comcast.", "we dropped comcast and went with a different provider"),
        ("The streaming plan costs $12 a month.", "They hiked it, the plan is $15 a month now."),
        ("We're with Octopus for energy.", "we moved to ovo for our energy, much cheaper"),
        ("My running shoes are Brooks.", "i've switched to asics for running"),
        ("I go climbing on Tuesdays.", "climbing is on saturdays for me now"),
        ("Kai's school is Hillside Primary.", "Kai changed schools, he's at Oakwood now."),
    ],
)
def test_given_an_update_as_people_state_it_when_judged_against_the_old_value_then_it_contradicts(
    before: str, update: str
) -> None:
    """Given a fact and an update written as people write them (a revision opener, "took over
    as", "slipped to", "these days", "as of", "starting next week", "no longer", lower-case chat
    without its "I", "went with a different X", "turned 5", "started eating meat again", a new
    commute, what a supplier is for), when judged, then they contradict."""
    verdict = judge_contradiction(before, update)

    assert verdict.contradicts, verdict.explanation


@pytest.mark.parametrize(
    ("fact", "look_alike"),
    [
        ("I play the acoustic guitar.", "I now play the electric guitar too."),
        ("We bank with Barclays.", "We also opened an account with Monzo."),
        ("Tom is the captain.", "Kira might take over as captain next season."),
        ("We live in Bristol.", "We're thinking about moving to Cardiff."),
        ("The marathon is on April 21.", "The half marathon was postponed to May 5."),
        ("The library closes at 8pm.", "The library café closes at 6pm now."),
        ("The café is on the corner.", "The café is on Instagram now."),
        ("My brother is at university.", "My brother is at work now."),
        ("I live in London.", "I'm in Berlin now for a conference."),
        ("I stopped using Trello in April 2021.", "When did I stop using Todoist?"),
        ("Jess walks our dog in the mornings.", "Marco walks the dog in the evenings now."),
        ("Raj is the project lead.", "Raj took over as project lead last month."),
        ("I drink coffee in the morning.", "These days I drink green tea in the afternoon."),
    ],
)
def test_given_a_look_alike_of_an_update_when_judged_then_it_agrees(
    fact: str, look_alike: str
) -> None:
    """Given a statement that looks like an update but is not one (an addition with "also" or
    "too", a plan, another subject named with one word more, another attribute, a stay, a
    question, another context, the same value restated), when judged, then there is no
    contradiction."""
    verdict = judge_contradiction(fact, look_alike)

    assert not verdict.contradicts, verdict.explanation


def test_given_a_value_added_with_also_when_judged_then_it_keeps_the_other() -> None:
    """Given "I use Python" and "I also use Go", when judged, then they agree: "also" adds a
    value, it does not replace one (two languages of one category would otherwise conflict)."""
    verdict = judge_contradiction("I use Python.", "I also use Go.")

    assert not verdict.contradicts
    assert "also" in verdict.explanation


def test_given_a_question_when_judged_then_it_claims_nothing() -> None:
    """Given a fact and a question about something like it, when judged, then there is no
    contradiction: a question states nothing."""
    verdict = judge_contradiction(
        "I stopped using Spotify in 2023.", "When did I stop using Dropbox?"
    )

    assert not verdict.contradicts
    assert "question" in verdict.explanation


def test_given_a_duty_taken_over_when_judged_then_the_explanation_names_both_holders() -> None:
    """Given "Jess walks our dog" and "Marco walks the dog now", when judged, then they
    contradict, and the explanation names the new holder and the old one."""
    verdict = judge_contradiction("Jess walks our dog.", "Marco walks the dog now.")

    assert verdict.contradicts
    assert verdict.cue == "conflicting_value"
    assert "marco" in verdict.explanation and "jess" in verdict.explanation


def test_given_a_revision_opener_when_judged_then_plain_values_conflict() -> None:
    """Given a venue and the same sentence with another venue after "my bad," (a revision),
    when judged, then they contradict; without the opener two plain venues of "is at" could
    both hold."""
    plain = judge_contradiction(
        "The recital is at the town hall.", "The recital is at the community centre."
    )
    revised = judge_contradiction(
        "The recital is at the town hall.", "my bad, the recital is at the community centre"
    )

    assert not plain.contradicts
    assert revised.contradicts, revised.explanation
