"""When the projector's vacuum owed for erasures falls due (projections.projector.VacuumDebt):
a user's erasure at once, forgotten memories once the oldest has waited the delay; and how
many dead rows a rewrite reports it kept for open transactions (projections.writer)."""

from __future__ import annotations

import pytest

from projections.projector import VACUUM_RETRY_MAX_SECONDS, VACUUM_RETRY_SECONDS, VacuumDebt
from projections.writer import held_back_rows


def test_nothing_is_due_before_an_erasure() -> None:
    assert not VacuumDebt(0).due()


def test_a_forget_waits_for_the_delay_and_a_users_erasure_does_not() -> None:
    debt = VacuumDebt(3600)
    debt.owed()
    assert not debt.due()
    debt.owed(at_once=True)
    assert debt.due()


def test_the_oldest_erasure_decides_when_the_vacuum_is_due() -> None:
    debt = VacuumDebt(3600)
    debt.owed()  # just now
    debt.owed(age=3600)  # written down an hour ago (by a projector that stopped)
    assert debt.due()
    debt.owed()  # a newer one cannot push it back
    assert debt.due()


def test_a_vacuum_settles_the_debt_and_a_refused_one_is_asked_again() -> None:
    debt = VacuumDebt(0)
    debt.owed()
    assert debt.due()
    debt.settle()
    assert not debt.due()
    debt.retry_in(0)
    assert debt.due()
    debt.retry_in(60)
    assert not debt.due()


def test_a_vacuum_that_keeps_failing_waits_longer_each_time_and_a_success_resets_it() -> None:
    debt = VacuumDebt(0)
    waits = [debt.failed() for _ in range(10)]
    assert waits[:3] == [VACUUM_RETRY_SECONDS, 2 * VACUUM_RETRY_SECONDS, 4 * VACUUM_RETRY_SECONDS]
    assert waits[-1] == VACUUM_RETRY_MAX_SECONDS and waits == sorted(waits)
    assert not debt.due()
    debt.paid()
    assert debt.failed() == VACUUM_RETRY_SECONDS


def test_a_debt_found_in_the_database_is_owed_but_never_cuts_a_backoff_short() -> None:
    debt = VacuumDebt(600)
    debt.found(age=600)  # another projector's, as old as the delay
    assert debt.due()
    debt.settle()
    debt.failed()  # its vacuum failed: a backoff stands
    debt.found(age=3600)
    assert not debt.due()


@pytest.mark.parametrize(
    ("detail", "rows"),
    [
        ("19 dead row versions cannot be removed yet.\nCPU: user: 0.00 s, system: 0.00 s.", 19),
        ("0 dead row versions cannot be removed yet.\nCPU: user: 0.01 s, elapsed: 0.02 s.", 0),
        ("19 tote Zeilenversionen können noch nicht entfernt werden.\nCPU: 0.00 s.", 19),
        ("CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.00 s.", 0),
        ("CPU: user: 0.00 s.\nsomething else", 0),
        (None, 0),
    ],
)
def test_held_back_rows_reads_the_rewrite_report_in_any_language(
    detail: str | None, rows: int
) -> None:
    assert held_back_rows(detail) == rows
