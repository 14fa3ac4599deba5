"""``memstream consolidate``: request cycles and, with ``--wait``, report what they did.

For ``--all`` the users are the ones the read models know. Each request's cycle id is
derived from the request's event id, so the command waits for exactly its own cycles'
reports and prints seed 001's aggregate report (users processed, totals, per-user lines).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from memstream.publisher import MemoryPublisher
from memstream.waiting import wait_until
from projections.rows import REPORT_COLUMNS
from projections.schema import LAYER_TABLES
from streams.config.settings import Settings
from streams.engine.cycle import cycle_id_of

# The report's counters, in the read model's column order (processed … decayed).
REPORT_FIELDS = REPORT_COLUMNS[
    REPORT_COLUMNS.index("processed") : REPORT_COLUMNS.index("duration_ms")
]


@dataclass(frozen=True)
class UserReport:
    user_id: str
    trigger: str
    profile: str
    counts: dict[str, int]
    warnings: list[str]


def known_users(settings: Settings) -> list[str]:
    union = " UNION ".join(f"SELECT DISTINCT user_id FROM {t}" for t in LAYER_TABLES.values())
    with psycopg.connect(settings.database_url) as conn:
        return sorted(row[0] for row in conn.execute(union).fetchall())


def request_cycles(
    settings: Settings,
    users: list[str],
    *,
    conversation_id: str | None = None,
    force: bool = False,
    profile: str | None = None,
) -> dict[str, str]:
    """Publish one request per user; returns user -> cycle id."""
    cycles = {}
    with MemoryPublisher(settings, source="cli") as publisher:
        for user in users:
            event_id = publisher.request_consolidation(
                user, conversation_id=conversation_id, force=force, profile=profile
            )
            cycles[user] = cycle_id_of(user, event_id)
    return cycles


def request_operations(settings: Settings, users: list[str], operation: str) -> dict[str, str]:
    """Publish one ``procedural`` or ``identity_reset`` request per user; user -> cycle id."""
    with MemoryPublisher(settings, source="cli") as publisher:
        return {
            user: cycle_id_of(user, publisher.request_operation(user, operation)) for user in users
        }


def wait_for_reports(
    settings: Settings, cycles: dict[str, str], timeout: float
) -> list[UserReport]:
    wanted = list(cycles.values())
    columns = ", ".join(REPORT_FIELDS)

    def fetch() -> list[UserReport]:
        with psycopg.connect(settings.database_url) as conn:
            rows = conn.execute(
                f"SELECT user_id, trigger, profile, warnings, {columns} "
                f"FROM consolidation_reports WHERE cycle_id = ANY(%s) ORDER BY user_id",
                (wanted,),
            ).fetchall()
        return [
            UserReport(
                user,
                trigger,
                profile,
                dict(zip(REPORT_FIELDS, counts, strict=True)),
                list(warnings),
            )
            for user, trigger, profile, warnings, *counts in rows
        ]

    reports: list[UserReport] = []

    def all_reported() -> bool:
        nonlocal reports
        reports = fetch()
        return len(reports) == len(wanted)

    wait_until(
        all_reported,
        timeout=timeout,
        interval=0.5,
        what=f"reports of {len(wanted)} consolidation cycle(s)",
        describe=lambda: (
            f"{len(reports)} arrived; is `memstream worker` and `memstream project` running?"
        ),
    )
    return reports


def format_aggregate(reports: list[UserReport]) -> str:
    totals = {name: sum(r.counts[name] for r in reports) for name in REPORT_FIELDS}
    lines = [
        f"users processed: {len(reports)}",
        "totals: " + ", ".join(f"{name} {value}" for name, value in totals.items()),
    ]
    for report in reports:
        counts = ", ".join(f"{k} {v}" for k, v in report.counts.items() if v)
        warnings = f" warnings: {'; '.join(report.warnings)}" if report.warnings else ""
        lines.append(
            f"  {report.user_id} [{report.profile}]: {counts or 'nothing to do'}{warnings}"
        )
    return "\n".join(lines)
