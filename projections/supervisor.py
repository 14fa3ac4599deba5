"""``memstream project`` with ``MEMSTREAM_PROJECTOR_PROCESSES`` > 1: that many projector
processes in one consumer group (memstream/supervisor.py).

Why: in the bench's projector phase one process ran at 0.94 of a core while PostgreSQL used
0.38 and a core stood 0.6 idle (README, "Projector processes"): the rate was bound by one
interpreter, not by the machine. Projectors of disjoint ledger partitions never touch the
same rows, and everything the projector guarantees (offsets stored with the rows, stale
batches dropped after a rebalance) holds per process as it does per instance. The read
models are migrated once, by the supervisor, before any process starts.
"""

from __future__ import annotations

from memstream.settings import Settings
from memstream.supervisor import (
    ProcessPlan,
    Supervisor,
    check_metrics_ports,
    process_instance_id,
    process_metrics_port,
    spawn_memstream,
)
from projections.startup import database_name, migrate_when_reachable


def process_plans(settings: Settings) -> list[ProcessPlan]:
    """One plan per process: each a single projector, with its own instance id (when the
    instance has one) and metrics port."""
    return [
        ProcessPlan(
            k,
            settings.with_overrides(
                projector_processes=1,
                instance_id=process_instance_id(settings, k),
                projector_metrics_port=process_metrics_port(settings.projector_metrics_port, k),
            ),
        )
        for k in range(settings.projector_processes)
    ]


def run_projector_processes(settings: Settings) -> int:
    """Run the projector as configured: in this process when one is asked for, else as a
    supervisor of ``projector_processes`` of them. Returns the exit code."""
    if settings.projector_processes == 1:
        from projections.projector import run_projector

        run_projector(settings)
        return 0
    check_metrics_ports(
        "projector",
        settings.projector_metrics_port,
        settings.projector_processes,
        "MEMSTREAM_PROJECTOR_METRICS_PORT",
        "MEMSTREAM_PROJECTOR_PROCESSES",
    )
    migrate_when_reachable(settings)
    plans = process_plans(settings)
    print(
        f"memstream projector: {len(plans)} processes, {settings.ledger_topic} -> "
        f"{database_name(settings.database_url)} (metrics {settings.metrics_bind}:"
        f"{plans[0].settings.projector_metrics_port}..{plans[-1].settings.projector_metrics_port})",
        flush=True,
    )
    return Supervisor("projector", plans, spawn_memstream("project")).run()
