"""``memstream project`` with ``MEMSTREAM_PROJECTOR_PROCESSES`` > 1: that many projector
processes in one consumer group (streams/runtime/supervisor.py).

Why: in the bench's projector phase one process ran at 0.94 of a core while PostgreSQL used
0.38 and a core stood 0.6 idle (README, "Projector processes"): the rate was bound by one
interpreter, not by the machine. Projectors of disjoint ledger partitions never touch the
same rows, and everything the projector guarantees (offsets stored with the rows, stale
batches dropped after a rebalance) holds per process as it does per instance. The read
models are migrated once, by the supervisor, before any process starts.
"""

from __future__ import annotations

from projections.startup import database_name, migrate_when_reachable
from streams.config.settings import Settings
from streams.runtime.supervisor import Role, Supervisor, spawn_memstream

PROJECTOR = Role("projector", "projector_processes", "projector_metrics_port")


def run_projector_processes(settings: Settings) -> int:
    """Run the projector as configured: in this process when one is asked for, else as a
    supervisor of ``projector_processes`` of them. Returns the exit code."""
    if settings.projector_processes == 1:
        from projections.projector import run_projector

        run_projector(settings)
        return 0
    PROJECTOR.check_metrics_ports(settings)
    migrate_when_reachable(settings)
    plans = PROJECTOR.process_plans(settings)
    print(
        f"memstream projector: {len(plans)} processes, {settings.ledger_topic} -> "
        f"{database_name(settings.database_url)} (metrics {settings.metrics_bind}:"
        f"{plans[0].settings.projector_metrics_port}..{plans[-1].settings.projector_metrics_port})",
        flush=True,
    )
    return Supervisor(PROJECTOR.name, plans, spawn_memstream("project")).run()
