"""``memstream worker`` with ``MEMSTREAM_WORKER_PROCESSES`` > 1: that many workers in one
consumer group (streams/runtime/supervisor.py).

Why: a worker's engine, Faust's stream and the transactions' bookkeeping hold one
interpreter's lock. In the bench's worker phase one process ran at 0.96 of a core while the
broker used 0.22, with the second core idle (README, Benchmark, "Runs at 3616dd1"). The
input is keyed by user and all of a user's state lives with the partition that holds the
user, so workers of one group never share state; each process is an ordinary group member
with its own transactions, state changelog partitions and local store, and every guarantee
in "Failure semantics" holds per process as it does per instance.

Process ``k`` keeps its local store in ``<worker data dir>/process-k``: two processes must
never open one RocksDB directory. A process that comes back with other partitions than it
had restores them from the state changelog, as a new instance would.
"""

from __future__ import annotations

import sys

from streams.config.settings import Settings
from streams.runtime.supervisor import ProcessPlan, Role, Supervisor, spawn_memstream

WORKER = Role("worker", "worker_processes", "worker_metrics_port")


def process_plans(settings: Settings) -> list[ProcessPlan]:
    """The role's plans, each process with its own local store directory."""
    return WORKER.process_plans(
        settings, lambda k: {"worker_data_dir": settings.worker_data_dir / f"process-{k}"}
    )


def run_worker_processes(settings: Settings, loglevel: str = "INFO") -> int:
    """Run the worker as configured: in this process when one is asked for, else as a
    supervisor of ``worker_processes`` of them. Returns the exit code."""
    from streams.worker import TopologyError, check_topics, run_worker

    if settings.worker_processes == 1:
        run_worker(settings, loglevel=loglevel)
        return 0
    WORKER.check_metrics_ports(settings)
    try:  # once here, so a missing topic is said once rather than by every process
        check_topics(settings)
    except TopologyError as exc:
        print(f"memstream worker: {exc}", file=sys.stderr)
        return 2
    plans = process_plans(settings)
    print(
        f"memstream worker: {len(plans)} processes, {settings.events_topic} -> "
        f"{settings.ledger_topic} (local stores {settings.worker_data_dir}/process-0.."
        f"{len(plans) - 1}; metrics {settings.metrics_bind}:"
        f"{plans[0].settings.worker_metrics_port}..{plans[-1].settings.worker_metrics_port})",
        flush=True,
    )
    return Supervisor(WORKER.name, plans, spawn_memstream("worker", "--loglevel", loglevel)).run()
